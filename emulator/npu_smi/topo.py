"""`npu-smi info -t topo`: the link matrix with CPU affinity (reference §4.4).

910B: HCCS everywhere (verbatim capture). 910A: HCCS inside each ring; between rings SYS when the chips sit
on different NUMA nodes, PIX otherwise (the reference only infers "PIX/SYS"). A3: HCCS everywhere and
SIO between the two dies of a pair (the newer legend lists SIO). These choices are in docs/npu-smi.md.
"""
# ruff: noqa: UP031  -- printf-style on purpose: the formats mirror the C source of npu-smi

from __future__ import annotations

from .table import present

# typing and collections.abc cost milliseconds at start-up: annotations only, imported for type checkers
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeAlias

    Node: TypeAlias = dict[str, Any]
    Chip: TypeAlias = dict[str, Any]

CELL = "%-11s"
LEGEND = [
    "Legend:",
    "  X    = Self",
    "  SYS  = Path traversing PCIe and NUMA nodes. Nodes are connected through SMP, such as QPI, UPI.",
    "  PHB  = Path traversing PCIe and the PCIe host bridge of a CPU.",
    "  PIX  = Path traversing a single PCIe switch",
    "  PXB  = Path traversing multipul PCIe switches",
    "  HCCS = Connection traversing HCCS.",
]
SIO_LEGEND = "  SIO  = Connection traversing SIO."


def link(node: Node, a: Chip, b: Chip) -> str:
    pa, pb = int(a.get("phy_id", 0)), int(b.get("phy_id", 0))
    if pa == pb:
        return "X"
    topo = node.get("topology") or {}
    kind = topo.get("kind")
    if kind == "superpod":
        pairs = {frozenset(int(x) for x in p) for p in topo.get("sio_pairs") or []}
        return "SIO" if frozenset((pa, pb)) in pairs else "HCCS"
    if kind == "rings":
        for ring in topo.get("rings") or []:
            if pa in ring and pb in ring:
                return "HCCS"
        return "SYS" if a.get("numa_node") != b.get("numa_node") else "PIX"
    return "HCCS"


def render_topo(node: Node, chips: list[Chip]) -> str:
    shown = present(chips)
    labels = ["NPU%d" % int(c.get("phy_id", 0)) for c in shown]
    out = [CELL % "" + "".join(CELL % lab for lab in labels) + "CPU Affinity"]
    for lab, a in zip(labels, shown, strict=True):
        cells = "".join(CELL % link(node, a, b) for b in shown)
        out.append(CELL % lab + cells + str(a.get("cpu_affinity", "")))
    legend = list(LEGEND)
    if (node.get("topology") or {}).get("kind") == "superpod":
        legend.append(SIO_LEGEND)
    return "\n".join(out) + "\n\n" + "\n".join(legend) + "\n"
