"""device-info ConfigMap: the verbatim A3 example (ascend-stack.md §2.3) reproduced byte for byte."""

from __future__ import annotations

import json

from deviceplugin.deviceinfo import check_code, configmap_data, device_info_cfg, device_list
from deviceplugin.gojson import marshal
from deviceplugin.health import device_health
from deviceplugin.model import Chip, Fault, Node, Topology

A3_EXAMPLE = (
    r'{"DeviceInfo":{"DeviceList":{"huawei.com/Ascend910":"Ascend910-0,Ascend910-1,Ascend910-2,Ascend910-3,'
    r'Ascend910-5,Ascend910-6,Ascend910-7","huawei.com/Ascend910-Fault":"[{\"fault_type\":\"CardNetworkUnhealthy'
    r"\",\"npu_name\":\"Ascend910-0\",\"large_model_fault_level\":\"PreSeparateNPU\",\"fault_level\":\""
    r"PreSeparateNPU\",\"fault_handling\":\"PreSeparateNPU\",\"fault_code\":\"81078603\",\"fault_time_and_level_map"
    r"\":{\"81078603\":{\"fault_time\":1744168468259,\"fault_level\":\"PreSeparateNPU\"}}},{\"fault_type\":\""
    r"CardUnhealthy\",\"npu_name\":\"Ascend910-4\",\"large_model_fault_level\":\"SeparateNPU\",\"fault_level\":\""
    r"SeparateNPU\",\"fault_handling\":\"SeparateNPU\",\"fault_code\":\"A8028801,A4028801,80E18402,80E18401\",\""
    r"fault_time_and_level_map\":{\"80E18401\":{\"fault_time\":1744167455784,\"fault_level\":\"NotHandleFault\"},"
    r"\"80E18402\":{\"fault_time\":1744167455784,\"fault_level\":\"SeparateNPU\"},\"A4028801\":{\"fault_time\":"
    r"1744167455784,\"fault_level\":\"NotHandleFault\"},\"A8028801\":{\"fault_time\":1744167455784,\"fault_level"
    r'\":\"SeparateNPU\"}}}]","huawei.com/Ascend910-NetworkUnhealthy":"Ascend910-0","huawei.com/Ascend910-'
    r'Recovering":"","huawei.com/Ascend910-Unhealthy":"Ascend910-4"},"UpdateTime":1744182144},"SuperPodID":-2,'
    r'"ServerIndex":-2,"CheckCode":"a550811fdfafb5717555526816af2ca4ac6c3e102f5907574048578e0c8fcc73"}'
)
NODE = Node(name="n", generation="910B", super_pod_id=-2, server_index=-2, topology=Topology("full-mesh"))


def test_check_code_of_verbatim_device_info() -> None:
    cfg = json.loads(A3_EXAMPLE)
    assert check_code(cfg["DeviceInfo"]) == cfg["CheckCode"]
    assert device_info_cfg(NODE, cfg["DeviceInfo"]["DeviceList"], cfg["DeviceInfo"]["UpdateTime"]) == A3_EXAMPLE


def test_example_rebuilt_from_chips() -> None:
    t = 1744167455784
    chips = {p: Chip(phy_id=p) for p in range(8)}
    chips[0] = Chip(
        phy_id=0,
        fault_level="PreSeparateNPU",
        network_healthy=False,
        faults=(Fault("f1", "81078603", "PreSeparateNPU", "CardNetworkUnhealthy", 1744168468259),),
    )
    chips[4] = Chip(
        phy_id=4,
        fault_level="SeparateNPU",
        faults=(
            Fault("f2", "A8028801", "SeparateNPU", "CardUnhealthy", t),
            Fault("f3", "A4028801", "NotHandleFault", "CardUnhealthy", t),
            Fault("f4", "80E18402", "SeparateNPU", "CardUnhealthy", t),
            Fault("f5", "80E18401", "NotHandleFault", "CardUnhealthy", t),
        ),
    )
    health = device_health(NODE, chips)
    assert health[0] == "Healthy" and health[4] == "Unhealthy"  # network faults don't make a chip Unhealthy
    devices = device_list(chips, health, used=())
    assert device_info_cfg(NODE, devices, 1744182144) == A3_EXAMPLE


def test_healthy_node_and_used_chips() -> None:
    chips = {p: Chip(phy_id=p) for p in range(8)}
    devices = device_list(chips, device_health(NODE, chips), used={1, 2})
    assert devices["huawei.com/Ascend910-Fault"] == "[]"
    assert devices["huawei.com/Ascend910"] == "Ascend910-0,Ascend910-3,Ascend910-4,Ascend910-5,Ascend910-6,Ascend910-7"
    data = configmap_data(NODE, devices, 1, separated=[3])
    assert data["ManuallySeparateNPU"] == "Ascend910-3"
    assert list(json.loads(data["DeviceInfoCfg"])) == ["DeviceInfo", "SuperPodID", "ServerIndex", "CheckCode"]


def test_go_marshal_escapes_html() -> None:
    assert marshal({"a": "<&>"}) == '{"a":"\\u003c\\u0026\\u003e"}'
