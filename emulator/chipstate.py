"""Mutable per-chip state and the chip object derived from it at a given emulated time.

Only chips that were ever touched have a ChipState; the others show their profile defaults. The chip
object (docs/architecture.md) is a pure function of (static info, state, now), so time-driven changes
such as a link fault escalating to PreSeparateNPU after 20 s need no stored transition.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .catalogue import FaultEntry
from .inventory import ChipInfo, NodeInfo
from .levels import most_severe, network_health, severity

ECC_FIELDS = ("ddr_single_bit", "ddr_double_bit", "hbm_single_bit", "hbm_double_bit", "hbm_single_bit_total",
              "hbm_double_bit_total", "hbm_single_bit_isolated_pages", "hbm_double_bit_isolated_pages")
TELEMETRY_FIELDS = ("temperature_c", "hbm_temperature_c", "power_w", "voltage_v", "aicore_util_pct",
                    "aivector_util_pct", "aicpu_util_pct", "ctrlcpu_util_pct", "hbm_bw_util_pct", "hbm_used_mb",
                    "ddr_used_mb", "hugepages_total", "hugepages_used", "aicore_cur_freq_mhz")


@dataclass(slots=True)
class ActiveFault:
    fault_id: str
    entry: FaultEntry
    since_ms: int

    def level_at(self, now_ms: int) -> str:
        t = self.entry.timeout
        if t is not None and now_ms >= self.since_ms + t.after_s * 1000:
            return t.level
        return self.entry.level

    def next_change_ms(self, now_ms: int) -> int | None:
        t = self.entry.timeout
        if t is None:
            return None
        due = int(self.since_ms + t.after_s * 1000)
        return due if due > now_ms else None


@dataclass(slots=True)
class Recovering:
    """A cleared fault whose level holds until `until_ms` (MindCluster's RecoverTimeout)."""

    fault_id: str
    entry: FaultEntry
    level: str
    since_ms: int
    until_ms: int


@dataclass(slots=True)
class ChipState:
    telemetry: dict[str, Any] = field(default_factory=dict)
    ecc: dict[str, int] = field(default_factory=dict)
    processes: list[dict[str, Any]] = field(default_factory=list)
    link_up: bool = True
    active: list[ActiveFault] = field(default_factory=list)
    recovering: list[Recovering] = field(default_factory=list)
    occurrences: dict[str, list[int]] = field(default_factory=dict)  # code -> emulated ms of each occurrence
    separated_by: list[str] = field(default_factory=list)  # codes whose frequency rule separated the chip

    def add_ecc(self, name: str, count: int) -> None:
        if count:
            self.ecc[name] = self.ecc.get(name, 0) + count

    def next_change_ms(self, now_ms: int) -> int | None:
        dues = [d for a in self.active if (d := a.next_change_ms(now_ms)) is not None]
        dues += [r.until_ms for r in self.recovering if r.until_ms > now_ms]
        return min(dues, default=None)

    def drop_expired_recovery(self, now_ms: int) -> bool:
        kept = [r for r in self.recovering if r.until_ms > now_ms]
        changed = len(kept) != len(self.recovering)
        self.recovering = kept
        return changed

    def to_json(self) -> dict[str, Any]:
        return {
            "telemetry": self.telemetry, "ecc": self.ecc, "processes": self.processes, "link_up": self.link_up,
            "active": [{"fault_id": a.fault_id, "entry": a.entry.model_dump(), "since_ms": a.since_ms}
                       for a in self.active],
            "recovering": [{"fault_id": r.fault_id, "entry": r.entry.model_dump(), "level": r.level,
                            "since_ms": r.since_ms, "until_ms": r.until_ms} for r in self.recovering],
            "occurrences": self.occurrences, "separated_by": self.separated_by,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ChipState:
        return cls(
            telemetry=data["telemetry"], ecc=data["ecc"], processes=data["processes"], link_up=data["link_up"],
            active=[ActiveFault(a["fault_id"], FaultEntry.model_validate(a["entry"]), a["since_ms"])
                    for a in data["active"]],
            recovering=[Recovering(r["fault_id"], FaultEntry.model_validate(r["entry"]), r["level"],
                                   r["since_ms"], r["until_ms"]) for r in data["recovering"]],
            occurrences=data["occurrences"], separated_by=data["separated_by"],
        )


_EMPTY = ChipState()


def chip_view(node: NodeInfo, info: ChipInfo, state: ChipState | None, now_ms: int) -> dict[str, Any]:
    """The chip object of docs/architecture.md."""
    st = state or _EMPTY
    spec = node.profile.spec
    defaults = spec.telemetry_defaults
    tel: dict[str, Any] = {
        "temperature_c": defaults.temperature_c, "hbm_temperature_c": defaults.hbm_temperature_c,
        "power_w": defaults.power_w, "voltage_v": defaults.voltage_v, "aicore_util_pct": 0,
        "aivector_util_pct": 0, "aicpu_util_pct": 0, "ctrlcpu_util_pct": 0, "hbm_bw_util_pct": 0,
        "hbm_used_mb": defaults.hbm_used_mb, "ddr_used_mb": defaults.ddr_used_mb,
        "hugepages_total": 0, "hugepages_used": 0, "aicore_cur_freq_mhz": defaults.aicore_cur_freq_mhz,
    }
    tel.update(st.telemetry)

    present = True
    link_up = st.link_up
    current: list[tuple[FaultEntry, dict[str, Any]]] = []
    for a in st.active:
        eff = a.entry.effects
        present = present and eff.present is not False
        link_up = link_up and eff.link_up is not False
        if eff.temperature_c is not None:
            tel["temperature_c"] = max(tel["temperature_c"], eff.temperature_c)
        current.append((a.entry, {"id": a.fault_id, "kind": a.entry.kind, "code": a.entry.code,
                                  "level": a.level_at(now_ms), "fault_type": a.entry.fault_type,
                                  "since_ms": a.since_ms, "state": "active"}))
    for r in st.recovering:
        if r.until_ms > now_ms:
            current.append((r.entry, {"id": r.fault_id, "kind": r.entry.kind, "code": r.entry.code,
                                      "level": r.level, "fault_type": r.entry.fault_type, "since_ms": r.since_ms,
                                      "state": "recovering", "until_ms": r.until_ms}))
    levels = [f["level"] for _, f in current] + (["ManuallySeparateNPU"] if st.separated_by else [])
    network_levels = [f["level"] for e, f in current if e.fault_type == "CardNetworkUnhealthy"]
    level = most_severe(levels)
    if current:
        npu_smi_health = max(current, key=lambda ef: severity(ef[1]["level"]))[0].npu_smi_health
    else:
        npu_smi_health = "Alarm" if st.separated_by else "OK"
    faults = [f for _, f in current]

    ecc = {name: st.ecc.get(name, 0) for name in ECC_FIELDS}
    return {
        "node": node.name, "phy_id": info.phy_id, "logic_id": info.logic_id, "card_id": info.card_id,
        "chip_index": info.chip_index, "name": spec.chip_name, "bus_id": info.bus_id,
        "numa_node": info.numa_node, "cpu_affinity": info.cpu_affinity, "ring": info.ring,
        "ai_core_count": spec.ai_core_count, "hbm_total_mb": spec.hbm_total_mb, "ddr_total_mb": spec.ddr_total_mb,
        "aicore_freq_mhz": spec.aicore_freq_mhz,
        **tel,
        "ecc": ecc,
        "device_ip": info.device_ip, "netmask": "255.255.0.0", "super_device_id": info.super_device_id,
        "vdie_id": info.vdie_id, "serial_number": info.serial_number,
        "present": present, "link_up": link_up,
        "fault_level": level,
        "fault_codes": sorted({f["code"] for f in faults if f["code"]}),
        "npu_smi_health": npu_smi_health,
        "network_healthy": network_health(most_severe(network_levels)) == "Healthy",
        "manually_separated": bool(st.separated_by),
        "faults": faults,
        "processes": list(st.processes),
    }
