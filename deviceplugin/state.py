"""The plugin's view of one node: filled by a chip feed (the emulator, or a test), read by the servicer.

Every change bumps `version` and wakes the ListAndWatch streams waiting on it, so a new device list goes
out as soon as the feed applies an event.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

from emulator.levels import UNHEALTHY

from .health import device_health
from .model import Chip, Node

__all__ = ["NodeState", "Snapshot"]


@dataclass(frozen=True)
class Snapshot:
    version: int
    node: Node | None
    chips: dict[int, Chip]
    in_use: frozenset[int]
    stale: bool  # the feed lost the emulator: every chip is reported Unhealthy until re-listed
    health: dict[int, str] = field(default_factory=dict)

    def healthy(self) -> list[int]:
        return sorted(p for p, h in self.health.items() if h != UNHEALTHY)


class NodeState:
    def __init__(self, node: Node | None = None, chips: Iterable[Chip] = (), *, grace_tolerance: bool = False):
        self._cond = threading.Condition()
        self._version = 0
        self._wakes = 0
        self._node = node
        self._chips: dict[int, Chip] = {c.phy_id: c for c in chips}
        self._in_use: frozenset[int] = frozenset()
        self._stale = node is None
        self._grace = grace_tolerance
        self._snapshot: Snapshot | None = None

    # writers -----------------------------------------------------------------------------------------
    def replace(self, node: Node, chips: Iterable[Chip]) -> None:
        """A full re-list: the node and all its chips; clears staleness."""
        with self._cond:
            self._node = node
            self._chips = {c.phy_id: c for c in chips}
            self._stale = False
            self._bump()

    def update_chip(self, chip: Chip) -> None:
        with self._cond:
            if self._chips.get(chip.phy_id) == chip:
                return
            self._chips[chip.phy_id] = chip
            self._bump()

    def set_in_use(self, phy_ids: Iterable[int]) -> None:
        with self._cond:
            new = frozenset(phy_ids)
            if new != self._in_use:
                self._in_use = new
                self._bump()

    def add_in_use(self, phy_ids: Iterable[int]) -> None:
        with self._cond:
            self.set_in_use(self._in_use | set(phy_ids))

    def set_stale(self) -> None:
        with self._cond:
            if not self._stale:
                self._stale = True
                self._bump()

    def wake_all(self) -> None:
        """Wake every waiter without a change (streams that are shutting down)."""
        with self._cond:
            self._wakes += 1
            self._cond.notify_all()

    def _bump(self) -> None:
        self._version += 1
        self._snapshot = None
        self._cond.notify_all()

    # readers -----------------------------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        with self._cond:
            if self._snapshot is None:
                in_use = self._in_use | {p for p, c in self._chips.items() if c.processes}
                if self._node is None:
                    health: dict[int, str] = {}
                elif self._stale:
                    health = dict.fromkeys(self._chips, UNHEALTHY)
                else:
                    health = device_health(self._node, self._chips, in_use, grace_tolerance=self._grace)
                self._snapshot = Snapshot(
                    self._version, self._node, dict(self._chips), frozenset(in_use), self._stale, health
                )
            return self._snapshot

    def wait_newer(self, version: int, timeout: float) -> Snapshot:
        """The first snapshot newer than `version`, or the current one after `timeout` seconds."""
        with self._cond:
            wakes = self._wakes
            self._cond.wait_for(lambda: self._version > version or self._wakes != wakes, timeout=timeout)
        return self.snapshot()
