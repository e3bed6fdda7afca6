from __future__ import annotations

from npu_nodes import capture_910b, faulty, node_910a, node_910b, node_a3

from emulator.npu_smi import table

# Reference §4.1, verbatim (gpustat fixture / Atlas 800I A2 blog capture).
CAPTURE_910B = """\
+------------------------------------------------------------------------------------------------+
| npu-smi 25.0.rc1.2               Version: 25.0.rc1.2                                           |
+---------------------------+---------------+----------------------------------------------------+
| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|
| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |
+===========================+===============+====================================================+
| 0     910B2C              | OK            | 118.6       47                0    / 0             |
| 0                         | 0000:6B:02.0  | 6           0    / 0          35738/ 65536         |
+===========================+===============+====================================================+
| 1     910B2C              | OK            | 143.2       49                0    / 0             |
| 0                         | 0000:65:02.0  | 11          0    / 0          35761/ 65536         |
+===========================+===============+====================================================+
+---------------------------+---------------+----------------------------------------------------+
| NPU     Chip              | Process id    | Process name             | Process memory(MB)      |
+===========================+===============+====================================================+
| 0       0                 | 6513          | rayWorkerDict            | 617                     |
| 0       0                 | 33776         | VLLMWorker_TP            | 31747                   |
+===========================+===============+====================================================+
| 1       0                 | 33777         | VLLMWorker_TP            | 31747                   |
+===========================+===============+====================================================+
"""

# Reference §4.2 / a public 910A capture: the DDR row of an Atlas 800 9000 chip.
ROW_910A = "| 0                         | 0000:61:00.0  | 0           920  / 13553      0    / 32768         |"
NO_PROC_0 = ("| No running processes found in NPU 0                                                            |")


def test_910b_capture_byte_for_byte() -> None:
    node, chips = capture_910b()
    assert table.render_info(node, chips) == CAPTURE_910B


def test_every_line_is_98_columns() -> None:
    for node, chips in (node_910b(), node_910a(), node_a3()):
        for line in table.render_info(node, chips).splitlines():
            assert len(line) == 98, line


def test_910a_ddr_row() -> None:
    node, chips = node_910a()
    chip = dict(chips[0], bus_id="0000:61:00.0", ddr_used_mb=920, ddr_total_mb=13553, hbm_used_mb=0,
                aicore_util_pct=0)
    lines = table.render_info(node, [chip]).splitlines()
    assert ROW_910A in lines


def test_no_processes_row_and_separator() -> None:
    node, chips = node_910b()
    lines = table.render_info(node, chips).splitlines()
    i = lines.index(NO_PROC_0)
    assert lines[i + 1].startswith("+====")
    assert sum(1 for line in lines if line.startswith("| No running processes found in NPU")) == 8


def test_faulty_chip_shows_its_health() -> None:
    node, chips = node_910b()
    chips[3] = faulty(chips[3], health="Warning")
    lines = table.render_info(node, chips).splitlines()
    row = next(line for line in lines if line.startswith("| 3     910B3"))
    assert row.split("|")[2].strip() == "Warning"
    other = next(line for line in lines if line.startswith("| 2     910B3"))
    assert other.split("|")[2].strip() == "OK"


def test_lost_chip_is_omitted() -> None:
    node, chips = node_910b()
    chips[5]["present"] = False
    text = table.render_info(node, chips)
    assert "| 5     910B3" not in text
    assert "No running processes found in NPU 5" not in text
    assert "| 4     910B3" in text and "| 6     910B3" in text


def test_a3_rows_carry_phy_id_and_die1_has_no_power() -> None:
    node, chips = node_a3()
    lines = table.render_info(node, chips).splitlines()
    assert lines[4].startswith("| Chip  Phy-ID              | Bus-Id")
    # card 3 holds phy 6 (die 0) and phy 7 (die 1)
    i = next(n for n, line in enumerate(lines) if line.startswith("| 3     Ascend910"))
    assert lines[i + 1].startswith("| 0     6                   | ")
    assert lines[i + 2].startswith("| 3     Ascend910           | OK            | -           ")
    assert lines[i + 3].startswith("| 1     7                   | ")
    assert lines[i + 4].startswith("+====")
