from __future__ import annotations

from npu_nodes import faulty, node_910a, node_910b
from prometheus_client.parser import text_string_to_metric_families

from emulator.metrics import render_metrics


def _samples(text: str) -> dict[tuple[str, str, str], float]:
    """(metric, node, id) -> value."""
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, s.labels.get("node", ""), s.labels.get("id", ""))] = s.value
    return out


def test_label_set_and_names() -> None:
    node, chips = node_910b()
    text = render_metrics([(node, chips)])
    lines = text.splitlines()
    line = next(x for x in lines if x.startswith("npu_chip_info_aicore_current_freq{") and 'id="0"' in x)
    assert line.startswith(
        'npu_chip_info_aicore_current_freq{container_name="",id="0",model_name="910B3-Ascend-V1",namespace="",'
        'node="npu-node-0",pcie_bus_info="0000:C1:00.0",pod_name="",'
        'vdie_id="185011D4-21104518-A0C4ED94-14CC040A-56102000"} 800')
    names = {f.name for f in text_string_to_metric_families(text)}
    for want in ("machine_npu_nums", "npu_chip_info_health_status", "npu_chip_info_network_status",
                 "npu_chip_info_link_status", "npu_chip_info_error_code", "npu_chip_info_error_code_9",
                 "npu_chip_info_temperature", "npu_chip_info_power", "npu_chip_info_voltage",
                 "npu_chip_info_utilization", "npu_chip_info_hbm_total_memory",
                 "npu_chip_info_hbm_used_memory",
                 "npu_chip_info_hbm_utilization", "npu_chip_info_hbm_temperature",
                 "npu_chip_info_hbm_ecc_double_bit_error_cnt", "npu_chip_info_name"):
        assert want in names, want


def test_healthy_node_values() -> None:
    node, chips = node_910b()
    s = _samples(render_metrics([(node, chips)]))
    assert s[("machine_npu_nums", "npu-node-0", "")] == 8
    assert s[("npu_chip_info_health_status", "npu-node-0", "3")] == 1
    assert s[("npu_chip_info_link_status", "npu-node-0", "3")] == 1
    assert s[("npu_chip_info_error_code", "npu-node-0", "3")] == 0
    assert s[("npu_chip_info_hbm_total_memory", "npu-node-0", "3")] == 65536
    assert s[("npu_chip_info_hbm_utilization", "npu-node-0", "3")] == round(3276 * 100 / 65536, 2)


def test_faults_show_in_health_error_codes_and_ecc() -> None:
    node, chips = node_910b()
    chips[2] = faulty(chips[2], code="80E01801", level="RestartBusiness")
    chips[2]["fault_codes"].append("81078603")
    chips[2]["ecc"]["hbm_double_bit"] = 1
    chips[5] = faulty(chips[5], code="81078603", level="NotHandleFault")
    chips[5].update(link_up=False, network_healthy=False)
    s = _samples(render_metrics([(node, chips)]))
    assert s[("npu_chip_info_health_status", "npu-node-0", "2")] == 0
    assert s[("npu_chip_info_error_code", "npu-node-0", "2")] == 0x80E01801
    assert s[("npu_chip_info_error_code_1", "npu-node-0", "2")] == 0x81078603
    assert s[("npu_chip_info_error_code_2", "npu-node-0", "2")] == 0
    assert s[("npu_chip_info_hbm_ecc_double_bit_error_cnt", "npu-node-0", "2")] == 1
    # NotHandleFault keeps the chip healthy for kubelet, but the link is down
    assert s[("npu_chip_info_health_status", "npu-node-0", "5")] == 1
    assert s[("npu_chip_info_link_status", "npu-node-0", "5")] == 0
    assert s[("npu_chip_info_network_status", "npu-node-0", "5")] == 0


def test_lost_card_and_multi_node() -> None:
    a, ac = node_910b("node-a")
    b, bc = node_910a("node-b", index=1)
    ac[7]["present"] = False
    s = _samples(render_metrics([(a, ac), (b, bc)]))
    assert s[("machine_npu_nums", "node-a", "")] == 7
    assert s[("machine_npu_nums", "node-b", "")] == 8
    assert s[("npu_chip_info_health_status", "node-a", "7")] == 0
    assert s[("npu_chip_info_link_status", "node-a", "7")] == -1
    assert ("npu_chip_info_temperature", "node-a", "7") not in s
    assert s[("npu_chip_info_hbm_total_memory", "node-b", "0")] == 32768


def test_timestamps_optional() -> None:
    node, chips = node_910b()
    text = render_metrics([(node, chips)], timestamp_ms=1723621883587)
    assert any(line.endswith(" 1723621883587") for line in text.splitlines() if line.startswith("npu_chip"))
