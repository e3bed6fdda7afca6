"""The static inventory of an emulated cluster: nodes and chips as a cluster spec and its profiles fix them.

Nothing here changes at run time; mutable chip state lives in `chipstate.py`. The addressing schemes
(host IPs, device IPs, SuperDeviceIDs, VDie IDs) are npu-emu's own and are documented in docs/emulator.md.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from .profiles import ClusterSpec, Profile, load_profile

NOT_SUPPORTED = -2  # superPodID / serverIndex value the device plugin writes when the product has none


@dataclass(slots=True, frozen=True)
class ChipInfo:
    node: str
    phy_id: int
    card_id: int
    chip_index: int
    bus_id: str
    numa_node: int
    cpu_affinity: str
    ring: int
    device_ip: str
    super_device_id: int | None
    vdie_id: str
    serial_number: str

    @property
    def logic_id(self) -> int:
        return self.phy_id


@dataclass(slots=True, frozen=True)
class NodeInfo:
    name: str
    index: int
    profile: Profile
    tor_id: int
    super_pod_id: int
    server_index: int
    host_ip: str
    chips: tuple[ChipInfo, ...]

    def summary(self) -> dict[str, Any]:
        spec = self.profile.spec
        return {
            "name": self.name, "index": self.index, "profile": self.profile.name, "product": spec.product,
            "generation": spec.generation, "chip_name": spec.chip_name, "chip_count": spec.chip_count,
            "tor_id": self.tor_id, "super_pod_id": self.super_pod_id, "server_index": self.server_index,
            "host_ip": self.host_ip, "host_arch": spec.host_arch,
            "versions": spec.versions.model_dump(), "board": spec.board.model_dump(),
            "topology": spec.topology.model_dump(), "labels": dict(spec.node_labels),
        }


def _host_ip(index: int) -> str:
    return f"172.16.{index // 254}.{index % 254 + 1}"


def _device_ip(node_index: int, phy_id: int) -> str:
    # One /16 per rank plane (phy id), so chip k of every node shares a subnet, as parameter planes do.
    return f"10.{64 + phy_id}.{node_index // 254}.{node_index % 254 + 1}"


def _hex_words(seed: str, words: int) -> str:
    digest = hashlib.sha256(seed.encode()).hexdigest().upper()
    return "-".join(digest[i * 8:(i + 1) * 8] for i in range(words))


def _build_chips(node: str, node_index: int, profile: Profile, server_index: int) -> tuple[ChipInfo, ...]:
    spec = profile.spec
    ring_of = {chip: r for r, ring in enumerate(spec.topology.rings) for chip in ring}
    if spec.topology.sio_pairs:
        ring_of = {chip: r for r, pair in enumerate(spec.topology.sio_pairs) for chip in pair}
    chips = []
    for phy_id, slot in enumerate(spec.chips):
        super_device_id = server_index * spec.chip_count + phy_id if spec.generation == "A3" else None
        chips.append(ChipInfo(
            node=node, phy_id=phy_id, card_id=phy_id // spec.chips_per_card,
            chip_index=phy_id % spec.chips_per_card, bus_id=slot.bus_id.upper(), numa_node=slot.numa_node,
            cpu_affinity=slot.cpu_affinity, ring=ring_of[phy_id], device_ip=_device_ip(node_index, phy_id),
            super_device_id=super_device_id, vdie_id=_hex_words(f"{node}/{phy_id}/vdie", 5),
            serial_number=f"NPU{_hex_words(f'{node}/{phy_id}/sn', 2).replace('-', '')[:13]}",
        ))
    return tuple(chips)


class Inventory:
    """All nodes of one emulated cluster, in spec order, addressable by name."""

    def __init__(self, spec: ClusterSpec, profiles: dict[str, Profile] | None = None) -> None:
        self.spec = spec
        self.profiles: dict[str, Profile] = dict(profiles or {})
        self.nodes: dict[str, NodeInfo] = {}
        index = 0
        super_pod = 0
        per_tor = spec.spec.nodes_per_tor
        for group in spec.spec.node_groups:
            profile = self.profiles.get(group.profile) or load_profile(group.profile)
            self.profiles[group.profile] = profile
            for i in range(group.count):
                name = group.name_pattern.format(index=i)
                if name in self.nodes:
                    raise ValueError(f"node name {name!r} appears twice in cluster spec {spec.metadata.name!r}")
                if group.super_pod_size:
                    pod_id = super_pod + i // group.super_pod_size
                    server_index = i % group.super_pod_size
                else:
                    pod_id = server_index = NOT_SUPPORTED
                chips = _build_chips(name, index, profile, max(server_index, 0))
                self.nodes[name] = NodeInfo(name=name, index=index, profile=profile, tor_id=index // per_tor,
                                            super_pod_id=pod_id, server_index=server_index,
                                            host_ip=_host_ip(index), chips=chips)
                index += 1
            if group.super_pod_size:
                super_pod += -(-group.count // group.super_pod_size)

    def node(self, name: str) -> NodeInfo:
        try:
            return self.nodes[name]
        except KeyError:
            raise LookupError(f"unknown node {name!r}") from None

    def chip(self, node: str, phy_id: int) -> ChipInfo:
        chips = self.node(node).chips
        if not 0 <= phy_id < len(chips):
            raise LookupError(f"node {node!r} has no chip {phy_id} (it has chips 0-{len(chips) - 1})")
        return chips[phy_id]

    @property
    def chip_count(self) -> int:
        return sum(len(n.chips) for n in self.nodes.values())
