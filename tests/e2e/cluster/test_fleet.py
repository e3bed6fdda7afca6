"""kwok Ascend nodes: Ready, with the device plugin's labels and the Ascend resource."""

from __future__ import annotations

import json

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.cluster]


def test_910b_fleet_is_ready_with_ascend_capacity(ascend_fleet, kube_client):
    from kubernetes.client import CoreV1Api

    core = CoreV1Api(kube_client)
    sel = ",".join(f"{k}={v}" for k, v in ascend_fleet.node_selector.items())
    nodes = core.list_node(label_selector=sel).items
    assert sorted(n.metadata.name for n in nodes) == sorted(ascend_fleet.names)
    for node in nodes:
        ready = [c for c in node.status.conditions if c.type == "Ready"]
        assert ready and ready[0].status == "True"
        assert node.status.allocatable["huawei.com/Ascend910"] == "8"
        assert node.status.capacity["pods"] == "110"
        labels = node.metadata.labels
        assert labels["accelerator-type"] == "module-910b-8"
        assert labels["servertype"] == "Ascend910B-20"
        assert labels["node.kubernetes.io/npu.chip.name"] == "910B3"
        assert len(json.loads(node.metadata.annotations["baseDeviceInfos"])) == 8


def test_mixed_cluster_spec(ascend_nodes_factory, kube_client):
    from kubernetes.client import CoreV1Api

    fleet = ascend_nodes_factory(cluster_spec="mixed-small")
    core = CoreV1Api(kube_client)
    sel = ",".join(f"{k}={v}" for k, v in fleet.node_selector.items())
    nodes = {n.metadata.name: n for n in core.list_node(label_selector=sel).items}
    assert len(nodes) == 10
    chips = sorted(int(n.status.allocatable["huawei.com/Ascend910"]) for n in nodes.values())
    assert chips == [8] * 6 + [16] * 4
    a3 = [n for n in nodes.values() if n.metadata.labels["accelerator-type"] == "module-a3-16-super-pod"]
    assert {n.metadata.annotations["serverType"] for n in a3} == {"A3"}
