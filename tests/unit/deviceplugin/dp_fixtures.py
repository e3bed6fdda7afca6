"""Shared builders for the device-plugin unit tests."""

from __future__ import annotations

from deviceplugin.model import Chip, Node, Topology


def node_910b(name: str = "node-0") -> Node:
    return Node(
        name=name,
        generation="910B",
        chip_name="910B3",
        chip_count=8,
        host_ip="172.16.0.1",
        topology=Topology("full-mesh", (tuple(range(8)),)),
    )


def node_910a(name: str = "node-a") -> Node:
    return Node(
        name=name,
        generation="910A",
        chip_name="910A",
        chip_count=8,
        topology=Topology("rings", ((0, 1, 2, 3), (4, 5, 6, 7))),
    )


def chips(n: int = 8) -> list[Chip]:
    return [Chip(phy_id=p, card_id=p, numa_node=p // 4, device_ip=f"10.0.0.{p}") for p in range(n)]
