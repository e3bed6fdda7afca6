"""`npu-smi info -l`, `-m` and the key/value `-t TYPE -i N [-c C]` sub-commands (reference §4.3).

Key/value lines use the C source's "\t%-30s : %s"; the ECC lines "\t%-40s : %u".
"""
# ruff: noqa: UP031  -- printf-style on purpose: the formats mirror the C source of npu-smi

from __future__ import annotations

from .table import cards, is_a3

# typing and collections.abc cost milliseconds at start-up: annotations only, imported for type checkers
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeAlias

    Node: TypeAlias = dict[str, Any]
    Chip: TypeAlias = dict[str, Any]
    Block: TypeAlias = Callable[[Node, Chip], list[str]]
    Render: TypeAlias = Callable[[Node, int, list[Chip], Chip | None], list[str]]

KV = "\t%-30s : %s"
KV_ECC = "\t%-40s : %s"
MAP = "\t%-30s %-30s %-30s %-30s"
MAP_A3 = "\t%-30s %-30s %-30s %-30s %-30s"

# Descriptions for `-t health` of the codes npu-emu's catalogue injects; unknown codes fall back to the
# fault's own description or kind.
CODE_DESCRIPTIONS = {
    "80E01801": "HBM multi-bit ECC error (uncorrectable)",
    "81078603": "The network port of the parameter plane is down",
    "40F84E00": "The device is lost (device not ready)",
    "80C98009": "AI Core bus error",
    "80CB8009": "AI Vector bus error",
}


def kv(key: str, value: object) -> str:
    return KV % (key, value)


def _pct(used: Any, total: Any) -> int:
    total = int(total or 0)
    return int(used or 0) * 100 // total if total > 0 else 0


def _has_ddr(node: Node) -> bool:
    return node.get("generation") == "910A"


def _omits_product(node: Node) -> bool:
    return node.get("generation") in ("910B", "A3") or is_a3(node)


def render_list(node: Node, chips: list[Chip]) -> str:
    grouped = cards(chips)
    out = [kv("Total Count", len(grouped))]
    for card, members in grouped:
        out.append("")
        out.append(kv("NPU ID", card))
        if not _omits_product(node):
            out.append(kv("Product Name", node.get("product", "NA")))
            out.append(kv("Serial Number", members[0].get("serial_number") or "NA"))
        out.append(kv("Chip Count", len(members)))
    return "\n".join(out) + "\n"


def render_mapping(node: Node, chips: list[Chip]) -> str:
    a3 = is_a3(node)
    if a3:
        out = [MAP_A3 % ("NPU ID", "Chip ID", "Chip Logic ID", "Chip Phy-ID", "Chip Name")]
    else:
        out = [MAP % ("NPU ID", "Chip ID", "Chip Logic ID", "Chip Name")]
    for card, members in cards(chips):
        for chip in members:
            raw = str(chip.get("name", ""))
            name = raw if raw.startswith("Ascend") else "Ascend " + raw
            if a3:
                out.append(MAP_A3 % (card, chip.get("chip_index", 0), chip.get("logic_id", 0),
                                     chip.get("phy_id", 0), name))
            else:
                out.append(MAP % (card, chip.get("chip_index", 0), chip.get("logic_id", 0), name))
        mcu = (card, len(members), "-", "-", "Mcu") if a3 else (card, len(members), "-", "Mcu")
        out.append((MAP_A3 if a3 else MAP) % mcu)
    return "\n".join(out) + "\n"


def _card_head(card: int, members: list[Chip], fmt: str = KV) -> list[str]:
    return [fmt % ("NPU ID", card), fmt % ("Chip Count", len(members)), ""]


def _mcu_temp(chip: Chip) -> int:
    return int(chip.get("mcu_temperature_c", int(chip.get("temperature_c") or 0) - 3))


def render_board(node: Node, card: int, members: list[Chip], chip: Chip | None) -> list[str]:
    board = node.get("board") or {}
    versions = node.get("versions") or {}
    first = members[0]
    if chip is not None:
        return [
            kv("NPU ID", card), kv("Chip ID", chip.get("chip_index", 0)), kv("Chip Type", "Ascend"),
            kv("Chip Name", chip.get("name", "")), kv("Chip Version", "V1"),
            kv("Board ID", board.get("board_id", "NA")), kv("PCB ID", board.get("pcb_id", "NA")),
            kv("BOM ID", board.get("bom_id", "NA")),
            kv("VDie ID", str(chip.get("vdie_id") or "NA").replace("-", " ")),
            kv("NDie ID", str(chip.get("ndie_id") or "NA").replace("-", " ")),
            kv("Chip Position ID", chip.get("chip_index", 0)), kv("PCIe Bus Info", chip.get("bus_id", "")),
            kv("Firmware Version", versions.get("firmware", "NA")),
        ]
    out = [kv("NPU ID", card)]
    if _omits_product(node):
        out += [kv("Product Name", node.get("product", "NA")), kv("Model", "NA"),
                kv("Manufacturer", "Huawei"), kv("Serial Number", first.get("serial_number") or "NA")]
    out += [
        kv("Software Version", versions.get("driver", "NA")),
        kv("Firmware Version", versions.get("firmware", "NA")),
        kv("Compatibility", "OK"), kv("Board ID", board.get("board_id", "NA")),
        kv("PCB ID", board.get("pcb_id", "NA")), kv("BOM ID", board.get("bom_id", "NA")),
        kv("PCIe Bus Info", first.get("bus_id", "")), kv("Slot ID", card), kv("Class ID", "NA"),
        kv("PCI Vendor ID", board.get("pci_vendor_id", "NA")),
        kv("PCI Device ID", board.get("pci_device_id", "NA")),
        kv("Subsystem Vendor ID", board.get("subsystem_vendor_id", "NA")),
        kv("Subsystem Device ID", board.get("subsystem_device_id", "NA")), kv("Chip Count", len(members)),
    ]
    return out


def _descriptions(chip: Chip) -> list[str]:
    by_code = {str(f.get("code", "")).upper(): f for f in chip.get("faults") or []}
    out = []
    for code in chip.get("fault_codes") or []:
        f = by_code.get(str(code).upper(), {})
        out.append(CODE_DESCRIPTIONS.get(str(code).upper()) or f.get("description") or f.get("kind")
                   or "Unknown fault")
    return out


def health_lines(chip: Chip) -> list[str]:
    codes = [str(c).upper() for c in chip.get("fault_codes") or []]
    out = [kv("Health Status", chip.get("npu_smi_health", "OK"))]
    if not codes:
        return [*out, kv("Error Code", "NA"), kv("Error Information", "NA")]
    out.append(kv("Error Code", " ".join(codes)))
    descs = _descriptions(chip)
    out.append(kv("Error Information", descs[0]))
    # further descriptions one per line, aligned under the first value
    out += ["\t" + " " * 33 + d for d in descs[1:]]
    return out


def render_health(node: Node, card: int, members: list[Chip], chip: Chip | None) -> list[str]:
    if chip is not None or len(members) == 1:
        return health_lines(chip or members[0])
    out: list[str] = []
    for c in members:
        if out:
            out.append("")
        out += [kv("Chip ID", c.get("chip_index", 0)), *health_lines(c)]
    return out


def _ecc_block(node: Node, chip: Chip) -> list[str]:
    e = chip.get("ecc") or {}
    rows = [("DDR Single Bit Error Count", e.get("ddr_single_bit", 0)),
            ("DDR Double Bit Error Count", e.get("ddr_double_bit", 0))]
    if _has_ddr(node):
        rows += [("DDR Single Bit Aggregate Total Err Cnt", e.get("ddr_single_bit_total", rows[0][1])),
                 ("DDR Double Bit Aggregate Total Err Cnt", e.get("ddr_double_bit_total", rows[1][1])),
                 ("DDR Single Bit Isolated Pages Count", e.get("ddr_single_bit_isolated_pages", 0)),
                 ("DDR Double Bit Isolated Pages Count", e.get("ddr_double_bit_isolated_pages", 0))]
    rows += [("HBM Single Bit Error Count", e.get("hbm_single_bit", 0)),
             ("HBM Double Bit Error Count", e.get("hbm_double_bit", 0)),
             ("HBM Single Bit Aggregate Total Err Cnt", e.get("hbm_single_bit_total", 0)),
             ("HBM Double Bit Aggregate Total Err Cnt", e.get("hbm_double_bit_total", 0)),
             ("HBM Single Bit Isolated Pages Count", e.get("hbm_single_bit_isolated_pages", 0)),
             ("HBM Double Bit Isolated Pages Count", e.get("hbm_double_bit_isolated_pages", 0)),
             ("Chip ID", chip.get("chip_index", 0))]
    return [KV_ECC % (k, "%u" % int(v or 0)) for k, v in rows]


def _temp_block(node: Node, chip: Chip) -> list[str]:
    return [kv("NPU Temperature (C)", int(chip.get("temperature_c") or 0)),
            kv("Chip ID", chip.get("chip_index", 0))]


def _usages_block(node: Node, chip: Chip) -> list[str]:
    out = [
        kv("DDR Capacity(MB)", int(chip.get("ddr_total_mb") or 0)),
        kv("DDR Usage Rate(%)", _pct(chip.get("ddr_used_mb"), chip.get("ddr_total_mb"))),
        kv("DDR Hugepages Total(page)", int(chip.get("hugepages_total") or 0)),
        kv("DDR Hugepages Usage Rate(%)", _pct(chip.get("hugepages_used"), chip.get("hugepages_total"))),
        kv("HBM Capacity(MB)", int(chip.get("hbm_total_mb") or 0)),
        kv("HBM Usage Rate(%)", _pct(chip.get("hbm_used_mb"), chip.get("hbm_total_mb"))),
        kv("Aicore Usage Rate(%)", int(chip.get("aicore_util_pct") or 0)),
    ]
    if not _has_ddr(node):  # the 910A capture has no Aivector line
        out.append(kv("Aivector Usage Rate(%)", int(chip.get("aivector_util_pct") or 0)))
    out += [
        kv("Aicpu Usage Rate(%)", int(chip.get("aicpu_util_pct") or 0)),
        kv("Ctrlcpu Usage Rate(%)", int(chip.get("ctrlcpu_util_pct") or 0)),
        kv("DDR Bandwidth Usage Rate(%)", int(chip.get("ddr_bw_util_pct") or 0)),
        kv("HBM Bandwidth Usage Rate(%)", int(chip.get("hbm_bw_util_pct") or 0)),
        kv("Chip ID", chip.get("chip_index", 0)),
    ]
    return out


def _memory_block(node: Node, chip: Chip) -> list[str]:
    ddr = int(chip.get("ddr_total_mb") or 0)
    return [
        kv("DDR Capacity(MB)", ddr),
        kv("DDR Clock Speed(MHz)", int(chip.get("ddr_clock_mhz", 2933 if ddr else 0))),
        kv("HBM Capacity(MB)", int(chip.get("hbm_total_mb") or 0)),
        kv("HBM Clock Speed(MHz)", int(chip.get("hbm_clock_mhz", 1600))),
        kv("HBM Temperature(C)", int(chip.get("hbm_temperature_c") or 0)),
        kv("HBM Manufacturer ID", chip.get("hbm_manufacturer_id", "0x57")),
        kv("Chip ID", chip.get("chip_index", 0)),
    ]


def _common_block(node: Node, chip: Chip) -> list[str]:
    return [
        kv("Chip ID", chip.get("chip_index", 0)),
        kv("Memory Usage Rate(%)", _pct(chip.get("ddr_used_mb"), chip.get("ddr_total_mb"))),
        kv("HBM Usage Rate(%)", _pct(chip.get("hbm_used_mb"), chip.get("hbm_total_mb"))),
        kv("Aicore Usage Rate(%)", int(chip.get("aicore_util_pct") or 0)),
        kv("Aicore Freq(MHZ)", int(chip.get("aicore_freq_mhz") or 0)),
        kv("Aicore curFreq(MHZ)", int(chip.get("aicore_cur_freq_mhz") or 0)),
        kv("Aicore Count", int(chip.get("ai_core_count") or 0)),
        kv("Temperature(C)", int(chip.get("temperature_c") or 0)),
        kv("NPU Real-time Power(W)", "%.1f" % float(chip.get("power_w") or 0.0)),
    ]


def _per_chip(block: Block, fmt: str = KV, mcu: Callable[[list[Chip]], list[str]] | None = None) -> Render:
    def render(node: Node, card: int, members: list[Chip], chip: Chip | None) -> list[str]:
        out = _card_head(card, members, fmt)
        for i, c in enumerate([chip] if chip is not None else members):
            if i:
                out.append("")
            out += block(node, c)
        if mcu is not None and chip is None:
            out += ["", *mcu(members)]
        return out
    return render


def _temp_mcu(members: list[Chip]) -> list[str]:
    t = _mcu_temp(members[0])
    return [kv("LM75A_TE (C)", t), kv("LM75B_TE (C)", t), kv("Chip Name", "MCU")]


def _common_mcu(members: list[Chip]) -> list[str]:
    return [kv("Chip Name", "mcu"), kv("Temperature(C)", _mcu_temp(members[0]))]


TYPES: dict[str, Render] = {
    "board": render_board,
    "health": render_health,
    "ecc": _per_chip(_ecc_block, KV_ECC),
    "temp": _per_chip(_temp_block, mcu=_temp_mcu),
    "usages": _per_chip(_usages_block),
    "memory": _per_chip(_memory_block),
    "common": _per_chip(_common_block, mcu=_common_mcu),
}
