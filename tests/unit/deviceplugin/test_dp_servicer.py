"""Servicer logic without sockets."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from dp_fixtures import chips, node_910a, node_910b

from deviceplugin.servicer import AllocateError, DevicePluginServicer, PluginOptions, list_response
from deviceplugin.state import NodeState
from deviceplugin.v1beta1 import api_pb2
from deviceplugin.volcano import PodInfo, oldest_candidate


def req(*containers: list[str]) -> api_pb2.AllocateRequest:
    return api_pb2.AllocateRequest(
        container_requests=[api_pb2.ContainerAllocateRequest(devices_ids=c) for c in containers]
    )


class FakePods:
    def __init__(self, pods: list[PodInfo]) -> None:
        self.list = pods
        self.consumed: list[tuple[PodInfo, dict[str, str]]] = []
        self.calls = 0

    def pods(self, *, fresh: bool = False) -> list[PodInfo]:
        self.calls += 1
        return [p for p in self.list if p.key not in {c[0].key for c in self.consumed}]

    def mark_consumed(self, pod: PodInfo, annotations: dict[str, str]) -> None:
        self.consumed.append((pod, dict(annotations)))


def pod(name: str, devices: str, ptime: int) -> PodInfo:
    return PodInfo(
        "default",
        name,
        f"uid-{name}",
        "node-0",
        "Pending",
        {"huawei.com/Ascend910": devices, "predicate-time": str(ptime)},
    )


def test_list_response_has_health_and_numa() -> None:
    state = NodeState(node_910b(), chips())
    resp = list_response(state.snapshot())
    assert [d.ID for d in resp.devices][:3] == ["Ascend910-0", "Ascend910-1", "Ascend910-2"]
    assert resp.devices[5].topology.nodes[0].ID == 1
    assert {d.health for d in resp.devices} == {"Healthy"}


def test_reset_ring_goes_unhealthy_together() -> None:
    cs = chips()
    cs[1] = dataclasses.replace(cs[1], fault_level="RestartNPU")
    snap = NodeState(node_910a(), cs).snapshot()
    assert [snap.health[p] for p in range(8)] == ["Unhealthy"] * 4 + ["Healthy"] * 4
    cs[1] = dataclasses.replace(cs[1], fault_level="RestartBusiness")  # not a reset: only the chip
    snap = NodeState(node_910a(), cs).snapshot()
    assert [p for p in range(8) if snap.health[p] == "Unhealthy"] == [1]


def test_in_use_exception() -> None:
    cs = chips()
    cs[2] = dataclasses.replace(cs[2], fault_level="PreSeparateNPU")
    state = NodeState(node_910b(), cs)
    assert state.snapshot().health[2] == "Unhealthy"
    state.set_in_use({2})
    assert state.snapshot().health[2] == "Healthy"


def test_plain_allocate_device_specs(tmp_path: Path) -> None:
    (tmp_path / "dev").mkdir()
    for name in ("davinci_manager", "devmm_svm", "hisi_hdc", "davinci0", "davinci3"):
        (tmp_path / "dev" / name).touch()
    state = NodeState(node_910b(), chips())
    svc = DevicePluginServicer(state, PluginOptions(volcano=False, devfs_root=tmp_path))
    resp = svc.allocate(req(["Ascend910-3", "Ascend910-0"]))
    specs = [(d.host_path, d.container_path, d.permissions) for d in resp.container_responses[0].devices]
    assert specs == [
        (str(tmp_path / "dev" / "davinci_manager"), "/dev/davinci_manager", "rw"),
        (str(tmp_path / "dev" / "hisi_hdc"), "/dev/hisi_hdc", "rw"),
        (str(tmp_path / "dev" / "devmm_svm"), "/dev/devmm_svm", "rw"),
        (str(tmp_path / "dev" / "davinci0"), "/dev/davinci0", "rw"),
        (str(tmp_path / "dev" / "davinci3"), "/dev/davinci3", "rw"),
    ]
    assert not resp.container_responses[0].envs and not resp.container_responses[0].mounts
    assert state.snapshot().in_use == {0, 3}


def test_ascend_docker_allocate_env_only() -> None:
    svc = DevicePluginServicer(NodeState(node_910b(), chips()), PluginOptions(volcano=False, ascend_docker=True))
    resp = svc.allocate(req(["Ascend910-1", "Ascend910-0"]))
    c = resp.container_responses[0]
    assert dict(c.envs) == {"ASCEND_VISIBLE_DEVICES": "0,1", "ASCEND_RUNTIME_OPTIONS": ""}
    assert not c.devices


@pytest.mark.parametrize("bad", ["Ascend910-9", "GPU-0", "Ascend910-2c-100-1"])
def test_unknown_device_refused_nothing_allocated(bad: str) -> None:
    state = NodeState(node_910b(), chips())
    svc = DevicePluginServicer(state, PluginOptions(volcano=False))
    with pytest.raises(AllocateError, match=f"plugin doesn't have device {bad}"):
        svc.allocate(req(["Ascend910-0"], [bad]))
    assert state.snapshot().in_use == frozenset()


def test_unhealthy_device_refused() -> None:
    cs = chips()
    cs[4] = dataclasses.replace(cs[4], fault_level="SeparateNPU")
    svc = DevicePluginServicer(NodeState(node_910b(), cs), PluginOptions(volcano=False))
    with pytest.raises(AllocateError, match="Ascend910-4: it is Unhealthy"):
        svc.allocate(req(["Ascend910-4"]))


def test_volcano_takes_oldest_matching_pod() -> None:
    pods = FakePods(
        [
            pod("late", "Ascend910-4,Ascend910-5", 200),
            pod("early", "Ascend910-2,Ascend910-3", 100),
            pod("single", "Ascend910-7", 50),
        ]
    )
    state = NodeState(node_910b(), chips())
    svc = DevicePluginServicer(state, PluginOptions(volcano=True, ascend_docker=True), pods=pods)
    resp = svc.allocate(req(["Ascend910-0", "Ascend910-1"]))
    assert resp.container_responses[0].envs["ASCEND_VISIBLE_DEVICES"] == "2,3"
    consumed, ann = pods.consumed[0]
    assert consumed.name == "early"
    assert ann["predicate-time"] == "18446744073709551615"
    assert ann["huawei.com/AscendReal"] == "Ascend910-2,Ascend910-3"
    assert ann["huawei.com/kltDev"] == "Ascend910-0,Ascend910-1"
    assert ann["ascend.kubectl.kubernetes.io/ascend-910-configuration"].startswith(
        '{"pod_name":"early","server_id":"uid-early","host_ip":"172.16.0.1","super_pod_id":-2,"devices":[{"device_id"'
        ':"2","device_ip":"10.0.0.2","super_device_id":"-2"}'
    )
    resp = svc.allocate(req(["Ascend910-0", "Ascend910-1"]))  # the next call takes the next pod
    assert resp.container_responses[0].envs["ASCEND_VISIBLE_DEVICES"] == "4,5"


def test_volcano_no_pod_retries_then_fails() -> None:
    pods = FakePods([pod("x", "Ascend910-1", 1)])
    svc = DevicePluginServicer(
        NodeState(node_910b(), chips()), PluginOptions(volcano=True, pod_retry_interval_s=0.01), pods=pods
    )
    with pytest.raises(AllocateError, match="not get valid pod"):
        svc.allocate(req(["Ascend910-0", "Ascend910-1"]))
    assert pods.calls == 3 and not pods.consumed


def test_volcano_pod_naming_foreign_chip() -> None:
    pods = FakePods([pod("x", "Ascend910-12", 1)])
    svc = DevicePluginServicer(NodeState(node_910b(), chips()), PluginOptions(volcano=True), pods=pods)
    with pytest.raises(AllocateError, match="not on this node"):
        svc.allocate(req(["Ascend910-0"]))


def test_oldest_candidate_skips_consumed_and_finished() -> None:
    done = dataclasses.replace(pod("a", "Ascend910-0", 1), phase="Succeeded")
    consumed = pod("b", "Ascend910-0", 18446744073709551615)
    assert oldest_candidate([done, consumed, pod("c", "Ascend910-1", 5)], 1).name == "c"  # type: ignore[union-attr]
