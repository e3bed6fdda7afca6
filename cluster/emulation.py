"""The emulated hardware beside a control plane: `npu-emu serve` for the cluster's nodes, and the device
plugin's fleet mode publishing it to Kubernetes (allocatable, chip assignment, device-info ConfigMaps)."""

from __future__ import annotations

import sys
from pathlib import Path

from .components import Component, HttpProbe
from .control_plane import ControlPlane, free_port

EMULATOR = "npu-emu-serve"
FLEET = "npu-emu-fleet"


def emulator_args(*, cluster_spec: str | None, profile: str, nodes: int, name_pattern: str,
                  super_pod_size: int) -> list[str]:
    """`npu-emu serve` flags describing the same nodes as the kwok fleet."""
    if cluster_spec:
        return [f"--cluster={cluster_spec}"]
    return [f"--profile={profile}", f"--nodes={nodes}", f"--name-pattern={name_pattern}",
            f"--super-pod-size={super_pod_size}"]


def emulation_components(cp: ControlPlane, port: int, cluster_args: list[str]) -> list[Component]:
    url = f"http://127.0.0.1:{port}"
    emulator = Component(
        name=EMULATOR, binary=Path(sys.executable),
        args=("-m", "emulator", "serve", f"--state={cp.dir / 'emulator.db'}", "--host=127.0.0.1",
              f"--port={port}", "--reset", *cluster_args),
        ports={"healthz": port}, ready_probe=HttpProbe(f"{url}/healthz"))
    fleet = Component(
        name=FLEET, binary=Path(sys.executable),
        args=("-m", "deviceplugin", "fleet", f"--emulator-url={url}", f"--kubeconfig={cp.kubeconfig}"))
    return [emulator, fleet]


def start_emulation(cp: ControlPlane, cluster_args: list[str]) -> str:
    """Start the emulator, then fleet mode, detached (`npu-emu cluster down` stops them); return the URL."""
    port = free_port()
    record = cp.record()
    record.ports[EMULATOR] = {"healthz": port}
    cp._write_record(record)
    emulator, fleet = emulation_components(cp, port, cluster_args)
    cp.start_components([emulator], detach=True)
    cp.start_components([fleet], detach=True)
    return f"http://127.0.0.1:{port}"
