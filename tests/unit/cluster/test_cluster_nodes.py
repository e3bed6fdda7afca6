import json

import pytest

from cluster.inventory import fleet_inventory
from cluster.nodes import ASCEND_RESOURCE, KWOK_NODE_ANNOTATION, build_node


def _first(**kwargs):
    inv = fleet_inventory(**kwargs)
    return next(iter(inv.nodes.values()))


@pytest.mark.parametrize(
    ("profile", "accelerator_type", "servertype", "chip_name", "memory", "chips"),
    [
        ("atlas-800t-a2", "module-910b-8", "Ascend910B-20", "910B3", "64G", 8),
        ("atlas-800-9000", "module", "Ascend910-32", "910A", "32G", 8),
        ("atlas-900-a3-superpod", "module-a3-16-super-pod", "Ascend910-24", "910_9392", "64G", 16),
    ],
)
def test_labels_come_from_the_profile(profile, accelerator_type, servertype, chip_name, memory, chips):
    node = build_node(_first(profile=profile, count=2), "c1")
    labels = node["metadata"]["labels"]
    assert labels["accelerator-type"] == accelerator_type
    assert labels["servertype"] == servertype
    assert labels["node.kubernetes.io/npu.chip.name"] == chip_name
    assert labels["mind-cluster/npu-chip-memory"] == memory
    assert labels["accelerator"] == "huawei-Ascend910"
    assert labels["host-arch"] == "huawei-arm"
    assert labels["kubernetes.io/arch"] == "arm64"
    assert labels["npu-emu.io/cluster"] == "c1"
    assert labels["npu-emu.io/profile"] == profile
    assert labels["huawei.com/driver.version"]
    status = node["status"]
    assert status["capacity"][ASCEND_RESOURCE] == str(chips)
    assert status["allocatable"] == status["capacity"]
    assert status["capacity"]["pods"] == "110"


def test_910b_annotations():
    node = build_node(_first(profile="atlas-800t-a2", count=1), "c1")
    ann = node["metadata"]["annotations"]
    assert ann[KWOK_NODE_ANNOTATION] == "fake"
    infos = json.loads(ann["baseDeviceInfos"])
    assert sorted(infos) == [f"Ascend910-{i}" for i in range(8)]
    assert all(set(v) == {"IP", "SuperDeviceID"} for v in infos.values())
    assert len({v["IP"] for v in infos.values()}) == 8
    assert ann["serverType"] == ""
    # The device plugin writes -2 when the product has no SuperPoD.
    assert ann["superPodID"] == "-2"
    assert ann["serverIndex"] == "-2"
    assert "huawei.com/topotree.superpodid" not in node["metadata"]["labels"]


def test_a3_superpod_annotations():
    inv = fleet_inventory(profile="atlas-900-a3-superpod", count=4, super_pod_size=2)
    nodes = [build_node(n, "c1") for n in inv.nodes.values()]
    ann = [n["metadata"]["annotations"] for n in nodes]
    assert [a["serverType"] for a in ann] == ["A3"] * 4
    assert [a["superPodID"] for a in ann] == ["0", "0", "1", "1"]
    assert [a["serverIndex"] for a in ann] == ["0", "1", "0", "1"]
    assert [n["metadata"]["labels"]["huawei.com/topotree.superpodid"] for n in nodes] == ["0", "0", "1", "1"]
    ids = [v["SuperDeviceID"] for a in ann for v in json.loads(a["baseDeviceInfos"]).values()]
    assert len(ids) == 64
    assert len(set(ids[:32])) == 32  # unique within a SuperPoD


def test_mixed_cluster_spec_names_and_node_count():
    inv = fleet_inventory(cluster_spec="mixed-small")
    nodes = [build_node(n, "m") for n in inv.nodes.values()]
    assert len(nodes) == 10
    types = {n["metadata"]["labels"]["accelerator-type"] for n in nodes}
    assert types == {"module-910b-8", "module", "module-a3-16-super-pod"}


def test_fleet_inventory_rejects_bad_input():
    with pytest.raises(ValueError):
        fleet_inventory(profile="atlas-800t-a2", count=0)
    with pytest.raises(ValueError):
        fleet_inventory()
    with pytest.raises(ValueError, match="unknown profile"):
        fleet_inventory(profile="no-such-profile", count=1)


def test_nodes_can_be_created_ready():
    from datetime import UTC, datetime

    node = _first(profile="atlas-800t-a2", count=1)
    now = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    status = build_node(node, "c", ready=True, now=now)["status"]
    conds = {c["type"]: c for c in status["conditions"]}
    assert conds["Ready"]["status"] == "True"
    assert conds["Ready"]["lastHeartbeatTime"] == "2026-01-02T03:04:05Z"
    assert {conds[t]["status"] for t in ("MemoryPressure", "DiskPressure", "PIDPressure")} == {"False"}
    assert status["phase"] == "Running"
    assert status["nodeInfo"]["kubeletVersion"].startswith("kwok-")
    assert "conditions" not in build_node(node, "c")["status"]  # default: kwok makes it Ready
