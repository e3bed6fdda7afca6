"""Prometheus text for `/metrics` with the NPU Exporter's metric names and labels (reference §9).

Chip metrics carry label set 1 (`container_name`, `id`, `model_name`, `namespace`, `pcie_bus_info`,
`pod_name`, `vdie_id`) plus `node`, because one emulator serves many nodes (docs/metrics.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from emulator.levels import HEALTHY, kubelet_health

Node = dict[str, Any]
Chip = dict[str, Any]

CHIP_LABELS = ("container_name", "id", "model_name", "namespace", "node", "pcie_bus_info", "pod_name",
               "vdie_id")
ERROR_CODE_SLOTS = 10  # npu_chip_info_error_code and _error_code_1 .. _error_code_9

# (metric suffix, help, value getter) for the chip readings; all gauges.
READINGS: tuple[tuple[str, str, str], ...] = (
    ("temperature", "the npu temperature (C)", "temperature_c"),
    ("power", "the npu power (W)", "power_w"),
    ("voltage", "the npu voltage (V)", "voltage_v"),
    ("utilization", "the ai core utilization (%)", "aicore_util_pct"),
    ("vector_utilization", "the ai vector utilization (%)", "aivector_util_pct"),
    ("aicore_current_freq", "the ai core current frequency (MHz)", "aicore_cur_freq_mhz"),
    ("hbm_total_memory", "the hbm total memory (MB)", "hbm_total_mb"),
    ("hbm_used_memory", "the hbm used memory (MB)", "hbm_used_mb"),
    ("hbm_temperature", "the hbm temperature (C)", "hbm_temperature_c"),
    ("hbm_bandwidth_utilization", "the hbm bandwidth utilization (%)", "hbm_bw_util_pct"),
)
ECC: tuple[tuple[str, str], ...] = (
    ("hbm_ecc_single_bit_error_cnt", "hbm_single_bit"),
    ("hbm_ecc_double_bit_error_cnt", "hbm_double_bit"),
    ("hbm_ecc_total_single_bit_error_cnt", "hbm_single_bit_total"),
    ("hbm_ecc_total_double_bit_error_cnt", "hbm_double_bit_total"),
    ("hbm_ecc_single_bit_isolated_pages_cnt", "hbm_single_bit_isolated_pages"),
    ("hbm_ecc_double_bit_isolated_pages_cnt", "hbm_double_bit_isolated_pages"),
)


def model_name(chip: Chip) -> str:
    """ChipName-ChipType-Version, e.g. 910B3-Ascend-V1."""
    return f"{chip.get('name', '')}-Ascend-V1"


def chip_labels(node: Node, chip: Chip) -> list[str]:
    return ["", str(chip.get("phy_id", "")), model_name(chip), "", str(node.get("name", "")),
            str(chip.get("bus_id", "")), "", str(chip.get("vdie_id") or "")]


def error_code_value(code: str) -> int:
    """Fault codes are hex strings (80E01801); the exporter reports the code as its integer value."""
    try:
        return int(str(code).removeprefix("0x").removeprefix("0X"), 16)
    except ValueError:
        return 0


class NpuCollector(Collector):
    """Collects from a snapshot of (node, chips) pairs; built per scrape."""

    def __init__(self, nodes: Sequence[tuple[Node, list[Chip]]], timestamp_ms: int | None = None) -> None:
        self.nodes = nodes
        self.ts = None if timestamp_ms is None else timestamp_ms / 1000.0

    def collect(self) -> Iterator[Metric]:
        machine_npu = GaugeMetricFamily("machine_npu_nums", "the number of npu chips on the machine",
                                        labels=["node"])
        machine_card = GaugeMetricFamily("machine_card_nums", "the number of npu cards on the machine",
                                         labels=["node"])
        fams: dict[str, GaugeMetricFamily] = {}

        def fam(suffix: str, help_: str, extra: tuple[str, ...] = ()) -> GaugeMetricFamily:
            name = "npu_chip_info_" + suffix
            if name not in fams:
                fams[name] = GaugeMetricFamily(name, help_, labels=[*CHIP_LABELS, *extra])
            return fams[name]

        for node, chips in self.nodes:
            present = [c for c in chips if c.get("present", True)]
            machine_npu.add_metric([str(node.get("name", ""))], len(present), timestamp=self.ts)
            cards = {c.get("card_id", c.get("phy_id")) for c in present}
            machine_card.add_metric([str(node.get("name", ""))], len(cards), timestamp=self.ts)
            for chip in sorted(chips, key=lambda c: int(c.get("phy_id", 0))):
                self._chip(node, chip, fam)
        yield machine_npu
        yield machine_card
        yield from fams.values()

    def _chip(self, node: Node, chip: Chip, fam: Any) -> None:
        labels = chip_labels(node, chip)
        network_help = "the npu network status: 1 healthy, 0 unhealthy, -1 unknown"
        link_help = "the npu link status: 1 UP, 0 DOWN, -1 unknown"
        ts = self.ts
        present = bool(chip.get("present", True))
        healthy = present and kubelet_health(str(chip.get("fault_level", "NormalNPU"))) == HEALTHY
        fam("health_status", "the npu health status: 1 healthy, 0 unhealthy, -1 unknown").add_metric(
            labels, 1 if healthy else 0, timestamp=ts)
        if not present:  # card lost: the exporter can read nothing else from it
            fam("network_status", network_help).add_metric(labels, -1, timestamp=ts)
            fam("link_status", link_help).add_metric(labels, -1, timestamp=ts)
            return
        fam("network_status", network_help).add_metric(
            labels, 1 if chip.get("network_healthy", True) else 0, timestamp=ts)
        fam("link_status", link_help).add_metric(labels, 1 if chip.get("link_up", True) else 0, timestamp=ts)
        codes = [error_code_value(c) for c in chip.get("fault_codes") or []]
        for slot in range(ERROR_CODE_SLOTS):
            suffix = "error_code" if slot == 0 else f"error_code_{slot}"
            fam(suffix, "the npu error code (the n-th active fault code)").add_metric(
                labels, codes[slot] if slot < len(codes) else 0, timestamp=ts)
        for suffix, help_, key in READINGS:
            fam(suffix, help_).add_metric(labels, float(chip.get(key) or 0), timestamp=ts)
        total = float(chip.get("hbm_total_mb") or 0)
        used = float(chip.get("hbm_used_mb") or 0)
        fam("hbm_utilization", "the hbm utilization (%)").add_metric(
            labels, round(used * 100 / total, 2) if total else 0.0, timestamp=ts)
        ecc = chip.get("ecc") or {}
        fam("hbm_ecc_enable_flag", "whether hbm ecc is enabled").add_metric(labels, 1, timestamp=ts)
        for suffix, key in ECC:
            fam(suffix, "the " + suffix.replace("_", " ")).add_metric(
                labels, float(ecc.get(key) or 0), timestamp=ts)
        fam("process_info_num", "the number of processes on the npu").add_metric(
            labels, len(chip.get("processes") or []), timestamp=ts)
        fam("name", "the npu name, value 1", ("name",)).add_metric(
            [*labels, f"Ascend{chip.get('name', '')}"], 1, timestamp=ts)


def render_metrics(nodes: Iterable[tuple[Node, list[Chip]]], timestamp_ms: int | None = None) -> str:
    """Prometheus text exposition (0.0.4) of every chip of every node."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(NpuCollector(list(nodes), timestamp_ms))
    return generate_latest(registry).decode()
