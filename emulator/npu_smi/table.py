"""`npu-smi info`: the 98-column summary table and its process section (reference §4.1, §4.2).

The printf formats are the reconstructed ones of the reference; they reproduce the 910B capture byte for
byte. Chips are grouped into cards by `card_id`; chips with `present: false` are not shown.
"""
# ruff: noqa: UP031  -- printf-style formats and verbatim 98-column lines of the C source

from __future__ import annotations

# typing and collections.abc cost milliseconds at start-up: annotations only, imported for type checkers
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeAlias

    Node: TypeAlias = dict[str, Any]
    Chip: TypeAlias = dict[str, Any]

TOP = "+" + "-" * 96 + "+"
SEP = "+" + "-" * 27 + "+" + "-" * 15 + "+" + "-" * 52 + "+"
DSEP = "+" + "=" * 27 + "+" + "=" * 15 + "+" + "=" * 52 + "+"
HEADER = "| npu-smi %-24s Version: %-52s |"
COLS_1 = "| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|"
COLS_2 = "| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |"
COLS_2_A3 = "| Chip  Phy-ID              | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |"
ROW_1 = "| %-5d %-20s| %-13s | %-11s %-17d %-5d/ %-13d |"
ROW_2 = "| %-26d| %04X:%02X:%02X.%-2X | %-11u %-5d/ %-10d %-5d/ %-13d |"
ROW_2_A3 = "| %-5d %-20u| %04X:%02X:%02X.%-2X | %-11u %-5d/ %-10d %-5d/ %-13d |"
PROC_COLS = "| NPU     Chip              | Process id    | Process name             | Process memory(MB)      |"
PROC_ROW = "| %-7d %-18d| %-13d | %-24s | %-24d|"
NO_PROC = "| %-95s|"


def is_a3(node: Node) -> bool:
    return node.get("generation") == "A3" or (node.get("topology") or {}).get("kind") == "superpod"


def present(chips: list[Chip]) -> list[Chip]:
    return [c for c in chips if c.get("present", True)]


def cards(chips: list[Chip]) -> list[tuple[int, list[Chip]]]:
    """Present chips grouped by card id, both sorted."""
    by_card: dict[int, list[Chip]] = {}
    for c in present(chips):
        card = c.get("card_id")
        by_card.setdefault(int(card if card is not None else c.get("phy_id") or 0), []).append(c)
    return [(k, sorted(v, key=lambda c: int(c.get("chip_index", 0)))) for k, v in sorted(by_card.items())]


def parse_bus(bus: str) -> tuple[int, int, int, int]:
    """'0000:C1:00.0' -> (0, 0xC1, 0, 0)."""
    try:
        dom, b, rest = bus.split(":")
        dev, _, fn = rest.partition(".")
        return int(dom, 16), int(b, 16), int(dev, 16), int(fn or "0", 16)
    except ValueError:
        return 0, 0, 0, 0


def _power(chip: Chip, a3: bool) -> str:
    if a3 and int(chip.get("chip_index", 0)) % 2 == 1:
        return "-"  # A3 die 1 has no separate power reading
    return "%.1f" % float(chip.get("power_w", 0.0))


def _i(chip: Chip, key: str) -> int:
    return int(chip.get(key) or 0)


def render_info(node: Node, chips: list[Chip]) -> str:
    a3 = is_a3(node)
    versions = node.get("versions") or {}
    out = [
        TOP,
        HEADER % (versions.get("npu_smi", ""), versions.get("driver", "")),
        SEP,
        COLS_1,
        COLS_2_A3 if a3 else COLS_2,
        DSEP,
    ]
    grouped = cards(chips)
    for card, members in grouped:
        for chip in members:
            out.append(ROW_1 % (card, chip.get("name", ""), chip.get("npu_smi_health", "OK"), _power(chip, a3),
                                _i(chip, "temperature_c"), _i(chip, "hugepages_used"),
                                _i(chip, "hugepages_total")))
            mem = (_i(chip, "aicore_util_pct"), _i(chip, "ddr_used_mb"), _i(chip, "ddr_total_mb"),
                   _i(chip, "hbm_used_mb"), _i(chip, "hbm_total_mb"))
            bus = parse_bus(str(chip.get("bus_id", "")))
            if a3:
                out.append(ROW_2_A3 % (_i(chip, "chip_index"), _i(chip, "phy_id"), *bus, *mem))
            else:
                out.append(ROW_2 % (_i(chip, "chip_index"), *bus, *mem))
        out.append(DSEP)
    out += [SEP, PROC_COLS, DSEP]
    for card, members in grouped:
        procs = [(chip, p) for chip in members for p in chip.get("processes") or []]
        if not procs:
            out.append(NO_PROC % ("No running processes found in NPU %d" % card))
        for chip, p in procs:
            out.append(PROC_ROW % (card, _i(chip, "chip_index"), int(p.get("pid", 0)), str(p.get("name", "")),
                                   int(p.get("memory_mb", 0))))
        out.append(DSEP)
    return "\n".join(out) + "\n"
