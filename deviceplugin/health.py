"""Kubelet health of each chip, by MindCluster's rules (shared/reference/ascend-stack.md §3.2).

The level rules themselves live in emulator.levels; this module adds what needs the node's shape: the
in-use exceptions and reset groups (a chip being reset takes its whole reset group Unhealthy with it).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from emulator.levels import HEALTHY, UNHEALTHY, kubelet_health, most_severe, network_health

from .constants import RESET_LEVELS
from .model import Chip, Node

__all__ = ["card_level", "chip_health", "device_health", "is_network_healthy", "reset_groups"]


def reset_groups(node: Node, chips: Collection[int]) -> list[frozenset[int]]:
    """Chips reset together: 910A a ring of 4, 910B training all 8, A3 the associated chip (SIO pair)."""
    topo = node.topology
    if topo.kind == "rings" and topo.rings:
        return [frozenset(r) for r in topo.rings]
    if topo.kind == "superpod":
        pairs = topo.sio_pairs or tuple(tuple(sorted(chips))[i : i + 2] for i in range(0, len(chips), 2))
        return [frozenset(p) for p in pairs]
    return [frozenset(chips)]


NETWORK_FAULT = "CardNetworkUnhealthy"


def card_level(chip: Chip) -> str:
    """The chip's level without its network faults: those make it NetworkUnhealthy, not Unhealthy (§2.3)."""
    if not any(f.fault_type == NETWORK_FAULT for f in chip.faults):
        return chip.fault_level
    levels = [f.level for f in chip.faults if f.fault_type != NETWORK_FAULT]
    if chip.manually_separated:
        levels.append("ManuallySeparateNPU")
    return most_severe(levels)


def chip_health(chip: Chip, *, in_use: bool, grace_tolerance: bool = False) -> str:
    if not chip.present:
        return UNHEALTHY
    return kubelet_health(card_level(chip), in_use=in_use, grace_tolerance=grace_tolerance)


def is_network_healthy(chip: Chip) -> bool:
    if not chip.network_healthy:
        return False
    levels = [f.level for f in chip.faults if f.fault_type == NETWORK_FAULT]
    return all(network_health(level) == HEALTHY for level in levels)


def device_health(
    node: Node, chips: Mapping[int, Chip], in_use: Collection[int] = (), *, grace_tolerance: bool = False
) -> dict[int, str]:
    """Healthy/Unhealthy per phy id, reset groups applied."""
    health = {
        phy: chip_health(chip, in_use=phy in in_use, grace_tolerance=grace_tolerance) for phy, chip in chips.items()
    }
    resetting = {phy for phy, chip in chips.items() if chip.fault_level in RESET_LEVELS and health[phy] == UNHEALTHY}
    if resetting:
        for group in reset_groups(node, list(chips)):
            if group & resetting:
                for phy in group:
                    if phy in health:
                        health[phy] = UNHEALTHY
    return health
