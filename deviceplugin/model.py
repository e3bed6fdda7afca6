"""Typed views of the emulator's node and chip JSON (docs/architecture.md), as the plugin needs them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .constants import DEVICE_ID_PREFIX

TopologyKind = Literal["rings", "full-mesh", "superpod"]


@dataclass(frozen=True)
class Fault:
    id: str
    code: str
    level: str
    fault_type: str
    since_ms: int

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Fault:
        return cls(
            id=str(d.get("id", "")),
            code=str(d.get("code", "")).upper().removeprefix("0X"),
            level=str(d.get("level", "NotHandleFault")),
            fault_type=str(d.get("fault_type", "CardUnhealthy")),
            since_ms=int(d.get("since_ms") or 0),
        )


@dataclass(frozen=True)
class Chip:
    phy_id: int
    logic_id: int = 0
    card_id: int = 0
    numa_node: int | None = None
    ring: int | None = None
    fault_level: str = "NormalNPU"
    network_healthy: bool = True
    present: bool = True
    manually_separated: bool = False
    device_ip: str = ""
    super_device_id: int | None = None
    faults: tuple[Fault, ...] = ()
    processes: int = 0
    chip_index: int = 0
    ai_core_count: int = 0
    hbm_total_mb: int = 0

    @property
    def device_id(self) -> str:
        return device_name(self.phy_id)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Chip:
        numa = d.get("numa_node")
        sdid = d.get("super_device_id")
        return cls(
            phy_id=int(d["phy_id"]),
            logic_id=int(d.get("logic_id", d["phy_id"])),
            card_id=int(d.get("card_id", d["phy_id"])),
            numa_node=None if numa is None or int(numa) < 0 else int(numa),
            ring=None if d.get("ring") is None else int(d["ring"]),
            fault_level=str(d.get("fault_level") or "NormalNPU"),
            network_healthy=bool(d.get("network_healthy", True)),
            present=bool(d.get("present", True)),
            manually_separated=bool(d.get("manually_separated", False)),
            device_ip=str(d.get("device_ip") or ""),
            super_device_id=None if sdid is None else int(sdid),
            faults=tuple(Fault.from_json(f) for f in d.get("faults") or ()),
            processes=len(d.get("processes") or ()),
            chip_index=int(d.get("chip_index", 0)),
            ai_core_count=int(d.get("ai_core_count", 0)),
            hbm_total_mb=int(d.get("hbm_total_mb", 0)),
        )


@dataclass(frozen=True)
class Topology:
    kind: TopologyKind
    rings: tuple[tuple[int, ...], ...] = ()
    sio_pairs: tuple[tuple[int, ...], ...] = ()

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Topology:
        return cls(
            kind=d.get("kind", "full-mesh"),
            rings=tuple(tuple(int(c) for c in r) for r in d.get("rings") or ()),
            sio_pairs=tuple(tuple(int(c) for c in p) for p in d.get("sio_pairs") or ()),
        )


@dataclass(frozen=True)
class Node:
    name: str
    generation: str = "910B"
    chip_name: str = "910B3"
    chip_count: int = 8
    super_pod_id: int = -2
    server_index: int = -2
    host_ip: str = ""
    topology: Topology = field(default_factory=lambda: Topology("full-mesh"))
    driver_version: str = ""
    labels: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Node:
        versions = d.get("versions") or {}
        return cls(
            name=str(d["name"]),
            generation=str(d.get("generation", "910B")),
            chip_name=str(d.get("chip_name", "")),
            chip_count=int(d.get("chip_count", 0)),
            super_pod_id=int(d.get("super_pod_id", -2)),
            server_index=int(d.get("server_index", -2)),
            host_ip=str(d.get("host_ip") or ""),
            topology=Topology.from_json(d.get("topology") or {}),
            driver_version=str(versions.get("driver", "")),
            labels={str(k): str(v) for k, v in (d.get("labels") or {}).items()},
        )


def device_name(phy_id: int) -> str:
    return f"{DEVICE_ID_PREFIX}{phy_id}"


def parse_device_name(name: str) -> int:
    """Ascend910-3 -> 3; ValueError for anything else (vNPU ids are not emulated)."""
    if not name.startswith(DEVICE_ID_PREFIX) or not name[len(DEVICE_ID_PREFIX) :].isdigit():
        raise ValueError(f"not a physical Ascend910 device id: {name!r}")
    return int(name[len(DEVICE_ID_PREFIX) :])
