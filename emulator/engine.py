"""The state engine: the only writer of emulator state.

Every mutation validates first (raising LookupError / ValueError and changing nothing), then changes the
in-memory state, writes the touched rows and the resulting events in one SQLite transaction, and only then
publishes the events. Time-driven changes (delayed starts, durations, repeats, escalation windows,
recovery windows) run from a timer heap that `tick()` drains.
"""

from __future__ import annotations

import heapq
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .catalogue import Catalogue, FaultEntry
from .chipstate import ECC_FIELDS, TELEMETRY_FIELDS, ActiveFault, ChipState, Recovering, chip_view
from .clock import ClockAnchor, EmulatedClock
from .events import EventLog
from .inventory import Inventory
from .selector import ChipKey, Selector, resolve
from .store import Store

MAX_TARGETS = 1_000_000


class Repeat(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    count: int = Field(ge=1, le=10_000, description="total occurrences, the first included")
    interval_s: float = Field(gt=0)


class FaultRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    selector: Selector
    kind: str | None = None
    code: str | None = None
    level: str | None = Field(default=None, description="only for codes missing from the catalogue")
    start_after_s: float = Field(default=0, ge=0)
    duration_s: float | None = Field(default=None, gt=0)
    repeat: Repeat | None = None

    @model_validator(mode="after")
    def _kind_or_code(self) -> FaultRequest:
        if (self.kind is None) == (self.code is None):
            raise ValueError("give exactly one of 'kind' and 'code'")
        return self


@dataclass(slots=True)
class Fault:
    id: str
    entry: FaultEntry
    selector: dict[str, Any]
    targets: list[ChipKey]
    created_ms: int
    start_ms: int
    duration_ms: int | None
    repeat_count: int = 1
    repeat_interval_ms: int = 0
    occurrences: int = 0
    state: str = "scheduled"  # scheduled | active | completed | expired | cleared
    ended_ms: int | None = None
    occurrence_ends: list[int] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id, "kind": self.entry.kind, "code": self.entry.code, "level": self.entry.level,
            "fault_type": self.entry.fault_type, "entry": self.entry.model_dump(), "selector": self.selector,
            "targets": [{"node": n, "phy_id": p} for n, p in self.targets], "created_ms": self.created_ms,
            "start_ms": self.start_ms, "duration_ms": self.duration_ms, "repeat_count": self.repeat_count,
            "repeat_interval_ms": self.repeat_interval_ms, "occurrences": self.occurrences, "state": self.state,
            "ended_ms": self.ended_ms, "occurrence_ends": self.occurrence_ends,
        }

    def public(self) -> dict[str, Any]:
        body = self.to_json()
        del body["entry"], body["occurrence_ends"]
        return body

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Fault:
        return cls(id=d["id"], entry=FaultEntry.model_validate(d["entry"]), selector=d["selector"],
                   targets=[(t["node"], t["phy_id"]) for t in d["targets"]], created_ms=d["created_ms"],
                   start_ms=d["start_ms"], duration_ms=d["duration_ms"], repeat_count=d["repeat_count"],
                   repeat_interval_ms=d["repeat_interval_ms"], occurrences=d["occurrences"], state=d["state"],
                   ended_ms=d["ended_ms"], occurrence_ends=d["occurrence_ends"])


class Engine:
    def __init__(self, inventory: Inventory, catalogue: Catalogue, store: Store, clock: EmulatedClock) -> None:
        self.inventory = inventory
        self.catalogue = catalogue
        self.store = store
        self.clock = clock
        self.events = EventLog(store)
        self.chips: dict[ChipKey, ChipState] = {}
        self.faults: dict[str, Fault] = {}
        self._timers: list[tuple[int, int, str, Any]] = []
        self._timer_seq = itertools.count()
        self._fingerprints: dict[ChipKey, str] = {}
        self._dirty_chips: set[ChipKey] = set()
        self._dirty_faults: set[str] = set()
        self._next_fault = int(store.get_meta("next_fault") or 1)
        self.on_change: list[Callable[[set[ChipKey]], None]] = []  # chips whose object changed
        self.on_commit: list[Callable[[], None]] = []
        self._restore()

    # ---- restore -----------------------------------------------------------------------------------------
    def _restore(self) -> None:
        now = self.clock.now_ms()
        for node, phy, data in self.store.chips():
            if node in self.inventory.nodes:
                key = (node, phy)
                self.chips[key] = ChipState.from_json(data)
                self._fingerprints[key] = self._fingerprint(key, now)
                self._schedule_chip(key, now)
        for data in self.store.faults():
            fault = Fault.from_json(data)
            self.faults[fault.id] = fault
            self._schedule_fault(fault)

    # ---- queries -----------------------------------------------------------------------------------------
    def chip(self, node: str, phy_id: int) -> dict[str, Any]:
        info = self.inventory.chip(node, phy_id)
        return chip_view(self.inventory.node(node), info, self.chips.get((node, phy_id)), self.clock.now_ms())

    def node_chips(self, node: str) -> list[dict[str, Any]]:
        info = self.inventory.node(node)
        now = self.clock.now_ms()
        return [chip_view(info, c, self.chips.get((node, c.phy_id)), now) for c in info.chips]

    def node(self, node: str) -> dict[str, Any]:
        return {**self.inventory.node(node).summary(), "chips": self.node_chips(node)}

    def fault(self, fault_id: str) -> Fault:
        try:
            return self.faults[fault_id]
        except KeyError:
            raise LookupError(f"unknown fault {fault_id!r}") from None

    # ---- mutations ---------------------------------------------------------------------------------------
    def inject(self, request: FaultRequest) -> Fault:
        return self.inject_many([request])[0]

    def inject_many(self, requests: list[FaultRequest]) -> list[Fault]:
        """Inject all or none: every request is validated before any state changes."""
        plans = []
        for req in requests:
            entry = self.catalogue.resolve(kind=req.kind, code=req.code, level=req.level)
            targets = resolve(req.selector, self.inventory)
            if entry.node_wide:
                nodes = dict.fromkeys(n for n, _ in targets)
                targets = [(n, c.phy_id) for n in nodes for c in self.inventory.node(n).chips]
            if len(targets) > MAX_TARGETS:
                raise ValueError(f"selector names {len(targets)} chips; at most {MAX_TARGETS} per fault")
            plans.append((req, entry, targets))
        now = self.clock.now_ms()
        faults = []
        for req, entry, targets in plans:
            fault = Fault(
                id=f"f-{self._next_fault}", entry=entry, selector=req.selector.model_dump(exclude_defaults=True),
                targets=targets, created_ms=now, start_ms=now + int(req.start_after_s * 1000),
                duration_ms=None if req.duration_s is None else int(req.duration_s * 1000),
                repeat_count=req.repeat.count if req.repeat else 1,
                repeat_interval_ms=int(req.repeat.interval_s * 1000) if req.repeat else 0,
            )
            self._next_fault += 1
            self.faults[fault.id] = fault
            self._dirty_faults.add(fault.id)
            if fault.start_ms <= now:
                self._occur(fault, now)
            self.events.stage("fault.injected", now, data=fault.public())
            faults.append(fault)
            self._schedule_fault(fault)
        self._commit(now)
        return faults

    def clear_fault(self, fault_id: str) -> Fault:
        fault = self.fault(fault_id)
        now = self.clock.now_ms()
        if fault.state in ("scheduled", "active"):
            self._end_occurrence(fault, now)
            fault.state = "cleared"
            fault.ended_ms = now
            self._dirty_faults.add(fault.id)
            self.events.stage("fault.cleared", now, data=fault.public())
            self._commit(now)
        return fault

    def set_telemetry(self, node: str, phy_id: int, fields: dict[str, Any]) -> dict[str, Any]:
        self.inventory.chip(node, phy_id)
        unknown = set(fields) - set(TELEMETRY_FIELDS) - {"processes", "link_up", "ecc"}
        if unknown:
            raise ValueError(f"unknown telemetry field(s): {', '.join(sorted(unknown))}")
        ecc = fields.get("ecc") or {}
        bad_ecc = set(ecc) - set(ECC_FIELDS)
        if bad_ecc:
            raise ValueError(f"unknown ecc counter(s): {', '.join(sorted(bad_ecc))}")
        now = self.clock.now_ms()
        st = self._state((node, phy_id))
        for name, value in fields.items():
            if name == "processes":
                st.processes = list(value)
            elif name == "link_up":
                st.link_up = bool(value)
            elif name == "ecc":
                st.ecc.update(value)
            else:
                st.telemetry[name] = value
        self._commit(now)
        return self.chip(node, phy_id)

    def clear_separation(self, node: str, phy_id: int) -> dict[str, Any]:
        self.inventory.chip(node, phy_id)
        st = self.chips.get((node, phy_id))
        if st is None or not st.separated_by:
            raise ValueError(f"chip {phy_id} of node {node!r} is not manually separated")
        now = self.clock.now_ms()
        st = self._state((node, phy_id))
        st.separated_by = []
        st.occurrences = {}
        self._commit(now)
        return self.chip(node, phy_id)

    def set_clock(self, *, speed: float | None = None, advance_s: float | None = None) -> ClockAnchor:
        anchor = self.clock.anchor
        if speed is not None:
            anchor = self.clock.set_speed(speed)
        if advance_s:
            anchor = self.clock.advance(advance_s)
        now = self.clock.now_ms()
        self.events.stage("clock.changed", now, data={"speed": anchor.speed, "now_ms": now})
        self._commit(now, meta={"clock": [anchor.wall_s, anchor.emulated_ms, anchor.speed]})
        self.tick()
        return anchor

    # ---- time --------------------------------------------------------------------------------------------
    def next_due_ms(self) -> int | None:
        return self._timers[0][0] if self._timers else None

    def tick(self) -> None:
        """Run every timer that is due at the current emulated time."""
        now = self.clock.now_ms()
        if not self._timers or self._timers[0][0] > now:
            return
        while self._timers and self._timers[0][0] <= now:
            due, _, action, arg = heapq.heappop(self._timers)
            if action == "chip":
                st = self.chips.get(arg)
                if st is not None:
                    st.drop_expired_recovery(now)
                    self._dirty_chips.add(arg)
                    self._schedule_chip(arg, now)
            else:
                fault = self.faults.get(arg)
                if fault is None or fault.state not in ("scheduled", "active"):
                    continue
                if action == "occur" and fault.occurrences < fault.repeat_count:
                    self._occur(fault, due)
                elif action == "end" and fault.occurrence_ends and fault.occurrence_ends[0] <= now:
                    fault.occurrence_ends.pop(0)
                    if fault.occurrences >= fault.repeat_count and not fault.occurrence_ends:
                        self._end_occurrence(fault, due)
                        fault.state = "expired"
                        fault.ended_ms = due
                        self.events.stage("fault.cleared", due, data=fault.public())
                    elif fault.repeat_interval_ms and fault.duration_ms is not None:
                        self._end_occurrence(fault, due)
                    self._dirty_faults.add(fault.id)
                self._schedule_fault(fault)
        self._commit(now)

    # ---- internals ---------------------------------------------------------------------------------------
    def _state(self, key: ChipKey) -> ChipState:
        st = self.chips.get(key)
        if st is None:
            st = self.chips[key] = ChipState()
        self._dirty_chips.add(key)
        return st

    def _occur(self, fault: Fault, at_ms: int) -> None:
        """One occurrence of `fault` on every target chip."""
        entry = fault.entry
        eff = entry.effects
        fault.occurrences += 1
        fault.state = "active" if not entry.counter_only else fault.state
        for key in fault.targets:
            st = self._state(key)
            st.add_ecc("hbm_single_bit", eff.hbm_single_bit_ecc)
            st.add_ecc("hbm_single_bit_total", eff.hbm_single_bit_ecc)
            st.add_ecc("hbm_double_bit", eff.hbm_double_bit_ecc)
            st.add_ecc("hbm_double_bit_total", eff.hbm_double_bit_ecc)
            st.add_ecc("hbm_double_bit_isolated_pages", eff.hbm_double_bit_isolated_pages)
            if entry.counter_only:
                continue
            if not any(a.fault_id == fault.id for a in st.active):
                st.active.append(ActiveFault(fault.id, entry, at_ms))
            if entry.frequency and entry.code:
                window_start = at_ms - entry.frequency.window_s * 1000
                times = [t for t in st.occurrences.get(entry.code, []) if t > window_start] + [at_ms]
                st.occurrences[entry.code] = times
                if len(times) >= entry.frequency.count and entry.code not in st.separated_by:
                    st.separated_by.append(entry.code)
            self._schedule_chip(key, at_ms)
        if fault.duration_ms is not None and not entry.counter_only:
            fault.occurrence_ends.append(at_ms + fault.duration_ms)
        if entry.counter_only and fault.occurrences >= fault.repeat_count:
            fault.state = "completed"
            fault.ended_ms = at_ms
        self._dirty_faults.add(fault.id)

    def _end_occurrence(self, fault: Fault, at_ms: int) -> None:
        entry = fault.entry
        for key in fault.targets:
            st = self.chips.get(key)
            if st is None:
                continue
            mine = [a for a in st.active if a.fault_id == fault.id]
            if not mine:
                continue
            st = self._state(key)
            st.active = [a for a in st.active if a.fault_id != fault.id]
            if entry.recover_after_s:
                level = mine[0].level_at(at_ms)
                st.recovering.append(Recovering(fault.id, entry, level, mine[0].since_ms,
                                                at_ms + int(entry.recover_after_s * 1000)))
            self._schedule_chip(key, at_ms)

    def _schedule_fault(self, fault: Fault) -> None:
        if fault.state not in ("scheduled", "active"):
            return
        if fault.occurrences < fault.repeat_count:
            due = fault.start_ms + fault.occurrences * fault.repeat_interval_ms
            heapq.heappush(self._timers, (due, next(self._timer_seq), "occur", fault.id))
        if fault.occurrence_ends:
            heapq.heappush(self._timers, (fault.occurrence_ends[0], next(self._timer_seq), "end", fault.id))

    def _schedule_chip(self, key: ChipKey, now_ms: int) -> None:
        st = self.chips.get(key)
        due = st.next_change_ms(now_ms) if st else None
        if due is not None:
            heapq.heappush(self._timers, (due, next(self._timer_seq), "chip", key))

    def _fingerprint(self, key: ChipKey, now_ms: int) -> str:
        node, phy = key
        view = chip_view(self.inventory.node(node), self.inventory.chip(node, phy), self.chips.get(key), now_ms)
        return json.dumps(view, sort_keys=True, separators=(",", ":"))

    def _commit(self, now_ms: int, meta: dict[str, Any] | None = None) -> None:
        changed: set[ChipKey] = set()
        for key in sorted(self._dirty_chips):
            fp = self._fingerprint(key, now_ms)
            if fp != self._fingerprints.get(key):
                self._fingerprints[key] = fp
                changed.add(key)
                self.events.stage("chip.changed", now_ms, node=key[0], phy_id=key[1], data=json.loads(fp))
        try:
            with self.store.transaction() as tx:
                for key in self._dirty_chips:
                    st = self.chips.get(key)
                    if st is not None:
                        tx.put_chip(key[0], key[1], st.to_json())
                for fault_id in self._dirty_faults:
                    tx.put_fault(fault_id, self.faults[fault_id].to_json())
                tx.put_meta("next_fault", self._next_fault)
                for k, v in (meta or {}).items():
                    tx.put_meta(k, v)
                self.events.write_staged(tx)
        except BaseException:
            self.events.discard_staged()
            raise
        finally:
            self._dirty_chips.clear()
            self._dirty_faults.clear()
        self.events.publish_staged()
        for notify in self.on_commit:
            notify()
        if changed:
            for callback in self.on_change:
                callback(changed)
