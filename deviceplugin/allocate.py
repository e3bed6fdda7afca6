"""What an Allocate response carries for a set of chips (ascend-stack.md §1.5.3-1.5.4)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from . import constants as k
from .v1beta1 import api_pb2

__all__ = ["container_response"]


def _spec(host: str, container: str) -> api_pb2.DeviceSpec:
    return api_pb2.DeviceSpec(host_path=host, container_path=container, permissions="rw")


def container_response(
    phy_ids: Sequence[int], *, ascend_docker: bool, devfs_root: Path | None
) -> api_pb2.ContainerAllocateResponse:
    """Env only under the Ascend Docker Runtime; otherwise DeviceSpecs in the real plugin's order.

    `devfs_root` is the emulator's devfs root (as `npu-emu serve --devfs-root`): host paths are
    <devfs_root>/dev/..., container paths always /dev/...; default devices are listed only if they exist.
    """
    ids = sorted(phy_ids)
    resp = api_pb2.ContainerAllocateResponse()
    if ascend_docker:
        resp.envs[k.ENV_VISIBLE_DEVICES] = ",".join(map(str, ids))
        resp.envs[k.ENV_RUNTIME_OPTIONS] = ""
        return resp
    root = (devfs_root if devfs_root is not None else Path("/")) / "dev"
    for name in k.DEFAULT_DEVICES:
        if (root / name).exists():
            resp.devices.append(_spec(str(root / name), f"/dev/{name}"))
    for phy in ids:
        resp.devices.append(_spec(str(root / f"davinci{phy}"), f"/dev/davinci{phy}"))
    for sub in k.EXTRA_DEVICE_DIRS:
        if (root / sub).is_dir():
            for entry in sorted((root / sub).iterdir()):
                resp.devices.append(_spec(str(entry), f"/dev/{sub}/{entry.name}"))
    return resp
