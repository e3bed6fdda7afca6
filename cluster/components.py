"""External processes as data: what to run, with which arguments, and how to tell it is ready.

Builders here are pure (no I/O), so their output is unit-tested and shown by `cluster status`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Component", "HttpProbe", "build_vc_controller_manager", "build_vc_scheduler"]


@dataclass(frozen=True, slots=True)
class HttpProbe:
    """Ready when GET `url` answers 200. TLS certificates are not verified (local self-signed servers)."""

    url: str


@dataclass(frozen=True, slots=True)
class Component:
    """One external process: binary, arguments, environment, the ports it binds, its readiness probe."""

    name: str
    binary: Path
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    ports: Mapping[str, int] = field(default_factory=dict)
    ready_probe: HttpProbe | None = None
    workdir: Path | None = None

    @property
    def argv(self) -> list[str]:
        return [str(self.binary), *self.args]


def _volcano_common(kubeconfig: Path, listen_port: int, healthz_port: int) -> tuple[str, ...]:
    return (
        f"--kubeconfig={kubeconfig}",
        # No leader election: one replica, and no volcano-system namespace to hold the lock.
        "--leader-elect=false",
        f"--listen-address=127.0.0.1:{listen_port}",
        "--enable-healthz=true",
        f"--healthz-address=127.0.0.1:{healthz_port}",
        "-v=2",
    )


def build_vc_scheduler(binary: Path, *, kubeconfig: Path, scheduler_conf: Path, listen_port: int,
                       healthz_port: int, dump_dir: Path, schedule_period_ms: int = 200) -> Component:
    """vc-scheduler with npu-emu's scheduler config, bound to 127.0.0.1."""
    args = (
        *_volcano_common(kubeconfig, listen_port, healthz_port),
        f"--scheduler-conf={scheduler_conf}",
        f"--schedule-period={schedule_period_ms}ms",
        "--enable-metrics=true",
        f"--cache-dump-dir={dump_dir}",
    )
    return Component(
        name="vc-scheduler", binary=binary, args=args,
        ports={"listen": listen_port, "healthz": healthz_port},
        ready_probe=HttpProbe(f"http://127.0.0.1:{healthz_port}/healthz"),
    )


def build_vc_controller_manager(binary: Path, *, kubeconfig: Path, listen_port: int,
                                healthz_port: int) -> Component:
    """vc-controller-manager (job, podgroup, queue, ... controllers), bound to 127.0.0.1."""
    args = (
        *_volcano_common(kubeconfig, listen_port, healthz_port),
        "--kube-api-qps=500",
        "--kube-api-burst=1000",
        "--worker-threads=8",
    )
    return Component(
        name="vc-controller-manager", binary=binary, args=args,
        ports={"listen": listen_port, "healthz": healthz_port},
        ready_probe=HttpProbe(f"http://127.0.0.1:{healthz_port}/healthz"),
    )
