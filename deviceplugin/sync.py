"""What one node's Kubernetes objects should say now, and what changed since the last write.

Used by kubelet mode (one node) and fleet mode (many): device-info ConfigMap data, healthy-chip count for
capacity/allocatable, and fault Events for faults that appeared or went away.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from dataclasses import dataclass, field

from .deviceinfo import configmap_data, device_list
from .events import FaultEvent, fault_event
from .health import is_network_healthy
from .model import Chip, Fault
from .state import Snapshot

__all__ = ["NodeSync", "SyncPlan", "schedulable"]


def schedulable(snap: Snapshot) -> list[int]:
    """Healthy chips whose network is healthy too: what a distributed job may be given."""
    return [p for p in snap.healthy() if p in snap.chips and is_network_healthy(snap.chips[p])]


@dataclass(frozen=True)
class SyncPlan:
    configmap: dict[str, str] | None  # None: unchanged
    healthy: int | None  # None: unchanged
    events: list[FaultEvent]
    device_list: dict[str, str]

    @property
    def empty(self) -> bool:
        return self.configmap is None and self.healthy is None and not self.events


@dataclass
class NodeSync:
    node: str
    written_devices: dict[str, str] | None = None
    written_healthy: int | None = None
    known_faults: dict[str, tuple[Chip, Fault]] = field(default_factory=dict)
    # Fleet mode: leave NetworkUnhealthy chips out of capacity/allocatable. npu-emu has no ascend-for-volcano,
    # which skips them when it places distributed jobs (ascend-stack.md §5.3); Volcano only sees the count.
    count_network_unhealthy: bool = True

    def plan(self, snap: Snapshot, used: Collection[int], *, now_s: int | None = None) -> SyncPlan:
        node = snap.node
        if node is None:
            return SyncPlan(None, None, [], {})
        devices = device_list(snap.chips, snap.health, used)
        cm = None
        if devices != self.written_devices:
            separated = [p for p, c in snap.chips.items() if c.manually_separated]
            cm = configmap_data(node, devices, int(time.time()) if now_s is None else now_s, separated)
        healthy = len(schedulable(snap)) if not self.count_network_unhealthy else len(snap.healthy())
        events: list[FaultEvent] = []
        if not snap.stale:
            current = {f.id or f"{c.phy_id}/{f.code}": (c, f) for c in snap.chips.values() for f in c.faults}
            for key, (chip, fault) in current.items():
                if key not in self.known_faults:
                    events.append(fault_event(self.node, chip, fault, recovered=False))
            for key, (chip, fault) in self.known_faults.items():
                if key not in current:
                    events.append(fault_event(self.node, chip, fault, recovered=True))
            self.known_faults = current
        return SyncPlan(cm, healthy if healthy != self.written_healthy else None, events, devices)

    def written(self, plan: SyncPlan) -> None:
        """Record a plan as written (call only after the writes succeeded)."""
        if plan.configmap is not None:
            self.written_devices = plan.device_list
        if plan.healthy is not None:
            self.written_healthy = plan.healthy
