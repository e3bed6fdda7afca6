"""npu-emu's real Kubernetes control plane without Docker, and its pytest plugin.

Importing this package is cheap; submodules import the kubernetes client and rich only when used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["BinariesMissing", "ControlPlane", "find_binaries", "fleet_inventory"]

if TYPE_CHECKING:
    from .binaries import BinariesMissing, find_binaries
    from .control_plane import ControlPlane
    from .inventory import fleet_inventory

_EXPORTS = {
    "BinariesMissing": "binaries",
    "find_binaries": "binaries",
    "ControlPlane": "control_plane",
    "fleet_inventory": "inventory",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'cluster' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"cluster.{module}"), name)
