"""Fleet mode's bookkeeping against a recording publisher (no apiserver, no emulator)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from dp_fixtures import chips, node_910a, node_910b

from deviceplugin.fleet import Fleet, _NodeBook
from deviceplugin.state import NodeState
from deviceplugin.sync import NodeSync
from deviceplugin.volcano import PodInfo


class Recorder:
    def __init__(self) -> None:
        self.status: dict[str, int] = {}
        self.cms: dict[str, dict[str, str]] = {}
        self.pods: dict[str, dict[str, str]] = {}
        self.events: list[Any] = []
        self.metadata: dict[str, Any] = {}

    def node_labels(self, node: str) -> dict[str, str]:
        return {}

    def patch_node_metadata(self, node: str, labels: Mapping[str, str], annotations: Mapping[str, str]) -> None:
        self.metadata[node] = (dict(labels), dict(annotations))

    def patch_node_npus(self, node: str, healthy: int) -> None:
        self.status[node] = healthy

    def write_configmap(self, node: str, data: Mapping[str, str]) -> None:
        self.cms[node] = dict(data)

    def annotate_pod(self, namespace: str, name: str, annotations: Mapping[str, str]) -> None:
        self.pods.setdefault(f"{namespace}/{name}", {}).update(annotations)

    def fault_event(self, event: Any) -> None:
        self.events.append(event)


def fleet_with(*nodes: Any) -> tuple[Fleet, Recorder]:
    rec = Recorder()
    fleet = Fleet("http://127.0.0.1:1", rec)  # type: ignore[arg-type]
    for node in nodes:
        fleet.books[node.name] = _NodeBook(NodeState(node, chips()), NodeSync(node.name))
    return fleet, rec


def npod(name: str, node: str, count: int, phase: str = "Pending", **ann: str) -> PodInfo:
    return PodInfo("ns", name, f"uid-{name}", node, phase, dict(ann), npu_request=count)


def free_list(rec: Recorder, node: str) -> str:
    info = json.loads(rec.cms[node]["DeviceInfoCfg"])
    return str(info["DeviceInfo"]["DeviceList"]["huawei.com/Ascend910"])


def test_assigns_ring_correct_distinct_chips_and_frees_them() -> None:
    fleet, rec = fleet_with(node_910a("a"))
    for i in range(4):
        fleet.on_pod("ADDED", npod(f"p{i}", "a", 2))
    fleet.flush("a")
    real = [rec.pods[f"ns/p{i}"]["huawei.com/AscendReal"] for i in range(4)]
    assert real == [
        "Ascend910-0,Ascend910-1",
        "Ascend910-2,Ascend910-3",
        "Ascend910-4,Ascend910-5",
        "Ascend910-6,Ascend910-7",
    ]
    ann = rec.pods["ns/p0"]
    assert ann["huawei.com/Ascend910"] == "Ascend910-0,Ascend910-1"
    assert ann["predicate-time"].isdigit()
    assert json.loads(ann["ascend.kubectl.kubernetes.io/ascend-910-configuration"])["pod_name"] == "p0"
    assert rec.status["a"] == 8  # allocatable counts healthy chips, used or not
    assert free_list(rec, "a") == ""
    fleet.on_pod("MODIFIED", npod("p1", "a", 2, phase="Succeeded"))
    fleet.flush("a")
    assert free_list(rec, "a") == "Ascend910-2,Ascend910-3"


def test_fault_lowers_allocatable_and_updates_configmap() -> None:
    fleet, rec = fleet_with(node_910b("b"))
    fleet.flush("b")
    assert rec.status["b"] == 8
    state = fleet.books["b"].state
    chip3 = state.snapshot().chips[3]
    from deviceplugin.model import Fault

    state.update_chip(
        dataclasses.replace(
            chip3,
            fault_level="RestartBusiness",
            faults=(Fault("f-1", "80E01801", "RestartBusiness", "CardUnhealthy", 0),),
        )
    )
    fleet.flush("b")
    assert rec.status["b"] == 7
    devices = json.loads(rec.cms["b"]["DeviceInfoCfg"])["DeviceInfo"]["DeviceList"]
    assert devices["huawei.com/Ascend910-Unhealthy"] == "Ascend910-3"
    assert "Ascend910-3" not in devices["huawei.com/Ascend910"]
    assert [e.reason for e in rec.events] == ["Occur"]
    state.update_chip(chip3)
    fleet.flush("b")
    assert rec.status["b"] == 8
    assert [e.reason for e in rec.events] == ["Occur", "Recovery"]
    assert "assertion:Recovery, cardID:3, deviceID:0, faultCodes:80E01801" in rec.events[1].message


def test_volcano_named_chips_are_taken_and_unhealthy_ones_skipped() -> None:
    fleet, rec = fleet_with(node_910b("c"))
    fleet.on_pod("ADDED", npod("v", "c", 2, **{"huawei.com/Ascend910": "Ascend910-5,Ascend910-6"}))
    fleet.on_pod("ADDED", npod("w", "c", 1))
    fleet.flush("c")
    assert rec.pods["ns/v"]["huawei.com/AscendReal"] == "Ascend910-5,Ascend910-6"
    assert "huawei.com/Ascend910" not in rec.pods["ns/v"]  # Volcano's own annotation is left alone
    assert rec.pods["ns/w"]["huawei.com/AscendReal"] == "Ascend910-0"


def test_pod_waits_when_no_chips_and_gets_them_later() -> None:
    fleet, rec = fleet_with(node_910b("d"))
    fleet.on_pod("ADDED", npod("big", "d", 8))
    fleet.on_pod("ADDED", npod("late", "d", 1))
    fleet.flush("d")
    assert "ns/late" not in rec.pods
    fleet.on_pod("DELETED", npod("big", "d", 8))
    fleet.flush("d")
    assert rec.pods["ns/late"]["huawei.com/AscendReal"] == "Ascend910-0"


def test_adopts_pods_annotated_by_an_earlier_run() -> None:
    fleet, rec = fleet_with(node_910b("e"))
    fleet.on_pod("ADDED", npod("old", "e", 2, phase="Running", **{"huawei.com/AscendReal": "Ascend910-6,Ascend910-7"}))
    fleet.on_pod("ADDED", npod("new", "e", 6))
    fleet.flush("e")
    assert "ns/old" not in rec.pods
    assert rec.pods["ns/new"]["huawei.com/AscendReal"] == ",".join(f"Ascend910-{i}" for i in range(6))
