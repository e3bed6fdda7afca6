"""Adapter to the emulator's profiles and inventory (emulator/profiles.py, emulator/inventory.py).

cluster/ reads the emulator's data model but never changes it; this module is the only place that
imports it, so a change there shows up in one spot.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from emulator.inventory import Inventory, NodeInfo

__all__ = ["fleet_inventory", "fleet_nodes"]


def fleet_inventory(*, cluster_spec: str | Path | None = None, profile: str | None = None,
                    count: int = 0, name_pattern: str = "npu-node-{index}", nodes_per_tor: int = 8,
                    super_pod_size: int = 0) -> Inventory:
    """An Inventory from a cluster spec (name or path), or from one profile and a node count."""
    from emulator.inventory import Inventory
    from emulator.profiles import load_cluster_spec, simple_cluster_spec

    if cluster_spec is not None:
        if profile is not None:
            raise ValueError("give either a cluster spec or a profile, not both")
        return Inventory(load_cluster_spec(cluster_spec))
    if profile is None:
        raise ValueError("give a cluster spec or a profile")
    if count < 1:
        raise ValueError(f"node count must be at least 1, got {count}")
    return Inventory(simple_cluster_spec(profile, count, name_pattern=name_pattern,
                                         nodes_per_tor=nodes_per_tor, super_pod_size=super_pod_size))


def fleet_nodes(inventory: Inventory) -> list[NodeInfo]:
    return list(inventory.nodes.values())
