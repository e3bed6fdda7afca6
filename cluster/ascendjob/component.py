"""The controller as a cluster/ Component, for whoever starts it next to the control plane
(`npu-emu cluster up`, the pytest stack in tests/e2e/ascendjob)."""

from __future__ import annotations

import sys
from pathlib import Path

from ..components import Component, HttpProbe

__all__ = ["build_ascendjob_controller"]


def build_ascendjob_controller(*, kubeconfig: Path, healthz_port: int, ranktable_root: Path | None = None,
                               workers: int = 4, log_level: str = "info") -> Component:
    args = ["-m", "cluster.ascendjob", f"--kubeconfig={kubeconfig}", f"--healthz-port={healthz_port}",
            f"--workers={workers}", f"--log-level={log_level}"]
    if ranktable_root is not None:
        args.append(f"--ranktable-root={ranktable_root}")
    return Component(name="ascendjob-controller", binary=Path(sys.executable), args=tuple(args),
                     ports={"healthz": healthz_port},
                     ready_probe=HttpProbe(f"http://127.0.0.1:{healthz_port}/healthz"))
