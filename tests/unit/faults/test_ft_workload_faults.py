"""Which pods a device fault kills (deviceplugin/workload_faults.py), and fleet mode acting on it."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from deviceplugin.fleet import Fleet, _NodeBook
from deviceplugin.model import Chip, Fault, Node, Topology
from deviceplugin.state import NodeState
from deviceplugin.sync import NodeSync
from deviceplugin.volcano import PodInfo
from deviceplugin.workload_faults import ANN_DEVICE_FAULT, Victim, failure_patch, pod_event_message, victims

ECC = Fault("f-1", "80E01801", "RestartBusiness", "CardUnhealthy", 1744168468259)
LINK = Fault("f-2", "81078603", "NotHandleFault", "CardNetworkUnhealthy", 1744168468259)
LOST = Fault("f-3", "40F84E00", "RestartNPU", "CardUnhealthy", 1744168468259)
AIC = Fault("f-4", "80C98009", "RestartRequest", "CardUnhealthy", 1744168468259)


def node(kind: str = "full-mesh") -> Node:
    rings = ((0, 1, 2, 3), (4, 5, 6, 7)) if kind == "rings" else (tuple(range(8)),)
    return Node(name="n0", generation="910A" if kind == "rings" else "910B", topology=Topology(kind, rings))


def chips() -> list[Chip]:
    return [Chip(phy_id=p, card_id=p, device_ip=f"10.0.0.{p}") for p in range(8)]


def faulty(chip: Chip, *faults: Fault, level: str | None = None, present: bool = True) -> Chip:
    worst = level or max(
        (f.level for f in faults),
        key=lambda lv: ["NotHandleFault", "RestartRequest", "RestartBusiness", "RestartNPU", "PreSeparateNPU"].index(
            lv
        ),
    )
    return dataclasses.replace(
        chip,
        faults=faults,
        fault_level=worst,
        present=present,
        network_healthy=not any(f.fault_type == "CardNetworkUnhealthy" and f.level != "NotHandleFault" for f in faults),
    )


def pod(name: str, *held: int, **ann: str) -> tuple[str, tuple[PodInfo, tuple[int, ...]]]:
    info = PodInfo("ns", name, f"uid-{name}", "n0", "Running", dict(ann), npu_request=len(held))
    return info.uid, (info, tuple(held))


def state_with(n: Node, *changed: Chip, in_use: tuple[int, ...] = ()) -> NodeState:
    base = {c.phy_id: c for c in chips()}
    base.update({c.phy_id: c for c in changed})
    st = NodeState(n, base.values())
    st.set_in_use(in_use)
    return st


def names(vs: list[Victim]) -> list[str]:
    return [v.pod.name for v in vs]


def test_restart_business_kills_the_pod_holding_the_chip_only() -> None:
    st = state_with(node(), faulty(chips()[3], ECC), in_use=(2, 3, 4))
    assigned = dict([pod("a", 2, 3), pod("b", 4)])
    out = victims(assigned, st.snapshot())
    assert names(out) == ["a"]
    assert out[0].chip.phy_id == 3 and out[0].fault.code == "80E01801"


def test_below_threshold_is_ignored_and_threshold_is_configurable() -> None:
    st = state_with(node(), faulty(chips()[1], AIC), in_use=(1,))
    assigned = dict([pod("a", 1)])
    assert victims(assigned, st.snapshot()) == []  # RestartRequest < RestartBusiness
    assert names(victims(assigned, st.snapshot(), threshold="RestartRequest")) == ["a"]


def test_link_down_kills_only_once_it_is_pre_separate() -> None:
    chip = faulty(chips()[5], LINK)
    st = state_with(node(), chip, in_use=(5,))
    assigned = dict([pod("a", 5)])
    assert victims(assigned, st.snapshot()) == []  # NotHandleFault: the job keeps running
    pre = dataclasses.replace(LINK, level="PreSeparateNPU")
    st.update_chip(faulty(chips()[5], pre))
    out = victims(assigned, st.snapshot())
    assert names(out) == ["a"] and out[0].fault.level == "PreSeparateNPU"


def test_card_lost_takes_the_reset_group() -> None:
    lost = faulty(chips()[0], LOST, present=False)
    # 910A: the ring of 4 is reset together; the other ring's pods live on.
    st = state_with(node("rings"), lost, in_use=(0, 2, 5))
    assigned = dict([pod("a", 0), pod("b", 2), pod("c", 5)])
    out = victims(assigned, st.snapshot())
    assert names(out) == ["a", "b"]
    assert {v.chip.phy_id for v in out} == {0}  # b dies because chip 0 is reset, and is told so
    # 910B: all 8 chips reset together.
    st = state_with(node(), lost, in_use=(0, 7))
    assert names(victims(dict([pod("a", 0), pod("c", 7)]), st.snapshot())) == ["a", "c"]


def test_already_failed_and_stale_state_are_skipped() -> None:
    st = state_with(node(), faulty(chips()[3], ECC), in_use=(3,))
    assigned = dict([pod("a", 3), pod("b", 3, **{ANN_DEVICE_FAULT: "x"})])
    assert victims(assigned, st.snapshot(), already={"uid-a"}) == []
    st.set_stale()  # the emulator is away: unknown health never kills a workload
    assert victims(dict([pod("a", 3)]), st.snapshot()) == []


def test_patch_and_event_name_the_chip_and_the_code() -> None:
    st = state_with(node(), faulty(chips()[3], ECC), in_use=(3,))
    (v,) = victims(dict([pod("a", 3)]), st.snapshot())
    patch = failure_patch(v, "n0", exit_code=7)
    assert patch["metadata"]["labels"] == {"pod-failed.stage.npu-emu.io": "true"}
    ann = patch["metadata"]["annotations"]
    assert ann["pod-failed.stage.npu-emu.io/exit-code"] == "7"
    assert "Ascend910-3" in ann["pod-failed.stage.npu-emu.io/message"]
    assert "80E01801" in ann["pod-failed.stage.npu-emu.io/message"]
    assert ann[ANN_DEVICE_FAULT] == "n0/Ascend910-3/80E01801/RestartBusiness"
    assert pod_event_message(v, "n0") == (
        "device fault, nodeName:n0, assertion:Occur, cardID:3, deviceID:0, faultCodes:80E01801, "
        "faultLevelName:RestartBusiness, alarmRaisedTime:2025-04-09 03:14:28"
    )


class Recorder:
    def __init__(self) -> None:
        self.status: dict[str, int] = {}
        self.pods: dict[str, dict[str, str]] = {}
        self.failed: list[str] = []

    def node_labels(self, node: str) -> dict[str, str]:
        return {}

    def patch_node_metadata(self, node: str, labels: Mapping[str, str], annotations: Mapping[str, str]) -> None:
        pass

    def patch_node_npus(self, node: str, healthy: int) -> None:
        self.status[node] = healthy

    def write_configmap(self, node: str, data: Mapping[str, str]) -> None:
        pass

    def annotate_pod(self, namespace: str, name: str, annotations: Mapping[str, str]) -> None:
        self.pods.setdefault(name, {}).update(annotations)

    def fault_event(self, event: Any) -> None:
        pass

    def fail(self, victim: Victim, node: str) -> None:
        self.failed.append(f"{victim.pod.name}@{node}:{victim.fault.code}")


def fleet_910b() -> tuple[Fleet, Recorder, NodeState]:
    rec = Recorder()
    fleet = Fleet("http://127.0.0.1:1", rec, pod_failer=rec)  # type: ignore[arg-type]
    st = NodeState(node(), chips())
    fleet.books["n0"] = _NodeBook(st, NodeSync("n0", count_network_unhealthy=False))
    return fleet, rec, st


def npod(name: str, count: int, phase: str = "Running", **ann: str) -> PodInfo:
    return PodInfo("ns", name, f"uid-{name}", "n0", phase, dict(ann), npu_request=count)


def test_fleet_fails_the_holder_once_and_the_replacement_avoids_the_chip() -> None:
    fleet, rec, st = fleet_910b()
    fleet.on_pod("ADDED", npod("a", 2))
    fleet.flush("n0")
    assert rec.pods["a"]["huawei.com/AscendReal"] == "Ascend910-0,Ascend910-1"
    st.update_chip(faulty(st.snapshot().chips[1], ECC))
    fleet.flush("n0")
    fleet.flush("n0")
    assert rec.failed == ["a@n0:80E01801"]
    assert rec.status["n0"] == 7
    fleet.on_pod("MODIFIED", npod("a", 2, phase="Failed"))  # kwok's Stage turned it Failed
    fleet.on_pod("ADDED", npod("a2", 2))
    fleet.flush("n0")
    assert rec.pods["a2"]["huawei.com/AscendReal"] == "Ascend910-0,Ascend910-2"


def test_volcano_named_unhealthy_chip_is_never_assigned() -> None:
    fleet, rec, st = fleet_910b()
    st.update_chip(faulty(st.snapshot().chips[5], ECC))
    fleet.on_pod("ADDED", npod("v", 1, phase="Pending", **{"huawei.com/Ascend910": "Ascend910-5"}))
    fleet.flush("n0")
    assert rec.pods["v"]["huawei.com/AscendReal"] == "Ascend910-0"


def test_pre_separate_chip_released_by_its_pod_is_not_reassigned() -> None:
    fleet, rec, st = fleet_910b()
    fleet.on_pod("ADDED", npod("a", 8))
    fleet.flush("n0")
    pre = dataclasses.replace(LINK, level="PreSeparateNPU")
    st.update_chip(faulty(st.snapshot().chips[4], pre))
    fleet.flush("n0")
    assert rec.failed == ["a@n0:81078603"]
    assert rec.status["n0"] == 7  # NetworkUnhealthy: Healthy for the kubelet, but never given out
    fleet.on_pod("MODIFIED", npod("a", 8, phase="Failed"))
    fleet.on_pod("ADDED", npod("b", 8, phase="Pending"))
    fleet.on_pod("ADDED", npod("c", 7, phase="Pending"))
    fleet.flush("n0")
    assert "b" not in rec.pods  # 8 chips asked, 7 healthy: it waits
    assert rec.pods["c"]["huawei.com/AscendReal"] == ",".join(f"Ascend910-{p}" for p in (0, 1, 2, 3, 5, 6, 7))
