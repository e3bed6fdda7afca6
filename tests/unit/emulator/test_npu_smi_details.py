# ruff: noqa: UP031  -- verbatim captures are wider than the line limit
from __future__ import annotations

import pytest
from npu_nodes import faulty, node_910a, node_910b, node_a3

from emulator.npu_smi import cli, topo

USAGES_910B = """\
\tNPU ID                         : 0
\tChip Count                     : 1

\tDDR Capacity(MB)               : 0
\tDDR Usage Rate(%)              : 0
\tDDR Hugepages Total(page)      : 0
\tDDR Hugepages Usage Rate(%)    : 0
\tHBM Capacity(MB)               : 65536
\tHBM Usage Rate(%)              : 4
\tAicore Usage Rate(%)           : 0
\tAivector Usage Rate(%)         : 0
\tAicpu Usage Rate(%)            : 0
\tCtrlcpu Usage Rate(%)          : 0
\tDDR Bandwidth Usage Rate(%)    : 0
\tHBM Bandwidth Usage Rate(%)    : 0
\tChip ID                        : 0
"""

COMMON_910B = """\
\tNPU ID                         : 1
\tChip Count                     : 1

\tChip ID                        : 0
\tMemory Usage Rate(%)           : 0
\tHBM Usage Rate(%)              : 4
\tAicore Usage Rate(%)           : 0
\tAicore Freq(MHZ)               : 1800
\tAicore curFreq(MHZ)            : 800
\tAicore Count                   : 24
\tTemperature(C)                 : 46
\tNPU Real-time Power(W)         : 93.4

\tChip Name                      : mcu
\tTemperature(C)                 : 38
"""

LIST_HEAD = """\
\tTotal Count                    : 8

\tNPU ID                         : 0
\tChip Count                     : 1

\tNPU ID                         : 1
\tChip Count                     : 1
"""

HEALTH_OK = """\
\tHealth Status                  : OK
\tError Code                     : NA
\tError Information              : NA
"""

ECC_910A = """\
\tNPU ID                                   : 0
\tChip Count                               : 1

\tDDR Single Bit Error Count               : 0
\tDDR Double Bit Error Count               : 0
\tDDR Single Bit Aggregate Total Err Cnt   : 0
\tDDR Double Bit Aggregate Total Err Cnt   : 0
\tDDR Single Bit Isolated Pages Count      : 0
\tDDR Double Bit Isolated Pages Count      : 0
\tHBM Single Bit Error Count               : 0
\tHBM Double Bit Error Count               : 0
\tHBM Single Bit Aggregate Total Err Cnt   : 0
\tHBM Double Bit Aggregate Total Err Cnt   : 0
\tHBM Single Bit Isolated Pages Count      : 0
\tHBM Double Bit Isolated Pages Count      : 0
\tChip ID                                  : 0
"""

TOPO_910B_HEAD = (
    "           NPU0       NPU1       NPU2       NPU3       NPU4       NPU5       NPU6       NPU7       CPU Affinity\n"
    "NPU0       X          HCCS       HCCS       HCCS       HCCS       HCCS       HCCS       HCCS       144-167\n"
    "NPU1       HCCS       X          HCCS       HCCS       HCCS       HCCS       HCCS       HCCS       0-23\n"
)
TOPO_LEGEND = """
Legend:
  X    = Self
  SYS  = Path traversing PCIe and NUMA nodes. Nodes are connected through SMP, such as QPI, UPI.
  PHB  = Path traversing PCIe and the PCIe host bridge of a CPU.
  PIX  = Path traversing a single PCIe switch
  PXB  = Path traversing multipul PCIe switches
  HCCS = Connection traversing HCCS.
"""


def run(args: list[str], state: tuple) -> str:
    return cli.run(args, state)


def test_usages_matches_capture() -> None:
    assert run(["info", "-t", "usages", "-i", "0"], node_910b()) == USAGES_910B


def test_common_matches_capture() -> None:
    node, chips = node_910b()
    chips[1].update(ai_core_count=24, temperature_c=46, power_w=93.4, mcu_temperature_c=38)
    assert run(["info", "-t", "common", "-i", "1"], (node, chips)) == COMMON_910B


def test_list_910b_has_no_product_name() -> None:
    out = run(["info", "-l"], node_910b())
    assert out.startswith(LIST_HEAD)
    assert "Product Name" not in out


def test_list_910a_prints_product_and_serial_after_npu_id() -> None:
    lines = run(["info", "-l"], node_910a()).splitlines()
    assert lines[2] == "\tNPU ID                         : 0"
    assert lines[3].startswith("\tProduct Name                   : ")
    assert lines[4].startswith("\tSerial Number                  : ")


def test_a3_list_counts_cards_with_two_chips() -> None:
    lines = run(["info", "-l"], node_a3()).splitlines()
    assert lines[0] == "\tTotal Count                    : 8"
    assert lines[3] == "\tChip Count                     : 2"


def test_mapping_910b() -> None:
    lines = run(["info", "-m"], node_910b()).splitlines()
    assert lines[0] == "\t%-30s %-30s %-30s %-30s" % ("NPU ID", "Chip ID", "Chip Logic ID", "Chip Name")
    assert lines[1] == "\t%-30s %-30s %-30s %-30s" % ("0", "0", "0", "Ascend 910B3")
    assert lines[2] == "\t%-30s %-30s %-30s %-30s" % ("0", "1", "-", "Mcu")


def test_mapping_a3_has_phy_id_column() -> None:
    lines = run(["info", "-m"], node_a3()).splitlines()
    assert "Chip Phy-ID" in lines[0]
    assert lines[8].split() == ["2", "1", "5", "5", "Ascend910"]


def test_health_ok_and_with_fault() -> None:
    node, chips = node_910b()
    assert run(["info", "-t", "health", "-i", "0", "-c", "0"], (node, chips)) == HEALTH_OK
    chips[2] = faulty(chips[2], code="80E01801", health="Warning")
    chips[2]["fault_codes"].append("81078603")
    out = run(["info", "-t", "health", "-i", "2"], (node, chips)).splitlines()
    assert out[0] == "\tHealth Status                  : Warning"
    assert out[1] == "\tError Code                     : 80E01801 81078603"
    assert out[2].startswith("\tError Information              : HBM multi-bit ECC")
    assert len(out) == 4 and out[3].strip() != ""


def test_ecc_910a_layout_and_counters() -> None:
    node, chips = node_910a()
    assert run(["info", "-t", "ecc", "-i", "0"], (node, chips)) == ECC_910A
    chips[0]["ecc"]["hbm_double_bit"] = 2
    out = run(["info", "-t", "ecc", "-i", "0"], (node, chips))
    assert "\tHBM Double Bit Error Count               : 2\n" in out


def test_ecc_910b_has_no_ddr_aggregate() -> None:
    out = run(["info", "-t", "ecc", "-i", "0"], node_910b())
    assert "DDR Single Bit Error Count" in out
    assert "DDR Single Bit Aggregate" not in out


def test_temp_has_mcu_block() -> None:
    node, chips = node_910b()
    chips[0].update(temperature_c=39, mcu_temperature_c=36)
    assert run(["info", "-t", "temp", "-i", "0"], (node, chips)).splitlines() == [
        "\tNPU ID                         : 0", "\tChip Count                     : 1", "",
        "\tNPU Temperature (C)            : 39", "\tChip ID                        : 0", "",
        "\tLM75A_TE (C)                   : 36", "\tLM75B_TE (C)                   : 36",
        "\tChip Name                      : MCU"]


def test_memory_910b() -> None:
    out = run(["info", "-t", "memory", "-i", "1"], node_910b()).splitlines()
    assert "\tHBM Capacity(MB)               : 65536" in out
    assert "\tDDR Capacity(MB)               : 0" in out
    assert "\tHBM Temperature(C)             : 38" in out


def test_board_910a_and_910b() -> None:
    a = run(["info", "-t", "board", "-i", "0"], node_910a()).splitlines()
    assert a[1] == "\tSoftware Version               : 23.0.5"
    assert "\tPCI Device ID                  : 0xD801" in a
    assert a[-1] == "\tChip Count                     : 1"
    b = run(["info", "-t", "board", "-i", "0"], node_910b()).splitlines()
    assert b[1].startswith("\tProduct Name")
    assert "\tBoard ID                       : 0x60" in b
    c = run(["info", "-t", "board", "-i", "0", "-c", "0"], node_910b()).splitlines()
    assert c[2] == "\tChip Type                      : Ascend"
    assert c[8] == "\tVDie ID                        : 185011D4 21104518 A0C4ED94 14CC040A 56102000"


def test_topo_910b_full_mesh() -> None:
    out = run(["info", "-t", "topo"], node_910b())
    assert out.startswith(TOPO_910B_HEAD)
    assert out.endswith(TOPO_LEGEND)


def test_topo_910a_rings_and_sys_across_numa() -> None:
    node, chips = node_910a()
    assert topo.link(node, chips[0], chips[3]) == "HCCS"
    assert topo.link(node, chips[0], chips[4]) == "SYS"
    chips[4]["numa_node"] = chips[0]["numa_node"]
    assert topo.link(node, chips[0], chips[4]) == "PIX"


def test_topo_a3_sio_pairs() -> None:
    node, chips = node_a3()
    assert topo.link(node, chips[4], chips[5]) == "SIO"
    assert topo.link(node, chips[5], chips[6]) == "HCCS"
    assert "SIO  = Connection traversing SIO." in run(["info", "-t", "topo"], (node, chips))


@pytest.mark.parametrize("args", [["info", "-t", "board"], ["info", "-t", "board", "-i", "x"]])
def test_missing_or_bad_card_id(args: list[str]) -> None:
    with pytest.raises(cli.UsageError, match="Error parameter of -i"):
        run(args, node_910b())


def test_unknown_card_and_chip() -> None:
    with pytest.raises(cli.UsageError, match="card id 9 is invalid"):
        run(["info", "-t", "board", "-i", "9"], node_910b())
    with pytest.raises(cli.UsageError, match="chip id 1 is invalid"):
        run(["info", "-t", "board", "-i", "0", "-c", "1"], node_910b())


def test_bad_type_prints_usage() -> None:
    with pytest.raises(cli.UsageError) as e:
        run(["info", "-t", "nonsense", "-i", "0"], node_910b())
    assert str(e.value).startswith("Error parameter of -t\nUsage: npu-smi info <watch|proc|-h|-m|-l|-t type>")


def test_real_but_unemulated_type() -> None:
    with pytest.raises(cli.UsageError, match="does not support querying flash"):
        run(["info", "-t", "flash", "-i", "0"], node_910b())


def test_physical_id_option() -> None:
    out = run(["info", "-t", "health", "-p", "5"], node_a3())
    assert out == HEALTH_OK
