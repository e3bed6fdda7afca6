"""Chip and node faults end to end: inject over REST, see the device plugin (fleet mode) react — health,
node allocatable, the device-info ConfigMap, fault Events —, the pod on the chip fail as its training
process would, the AscendJob restart on other chips; clear the fault and see everything recover."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from ft_e2e_helpers import acjob, create_acjob, job_events

from cluster.faults_helper import NpuFaults, pod_chips, wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.cluster, pytest.mark.slow]


@dataclass(frozen=True)
class Case:
    kind: str
    code: str
    level: str
    whole_node: bool  # the fault lands on every chip of the node
    allocatable: int  # the node's allocatable while it lasts (8 chips; 910B resets all 8 together)


CASES = [
    Case("hbm-multi-bit-ecc", "80E01801", "RestartBusiness", False, 7),
    Case("over-temperature", "8FFE0001", "RestartBusiness", False, 7),
    Case("card-lost", "40F84E00", "RestartNPU", False, 0),
    Case("node-fault", "00000011", "SeparateNPU", True, 0),
]


def running_job(ft: NpuFaults, ns: str, name: str, replicas: int) -> Any:
    return ft.wait_recovered(ns, name, replicas=replicas, timeout_s=120)


@pytest.mark.parametrize("case", CASES, ids=[c.kind for c in CASES])
def test_fault_fails_the_pod_and_the_job_recovers_elsewhere(ft_stack: Any, ft_namespace: str, ft: NpuFaults,
                                                            case: Case) -> None:
    ns, name = ft_namespace, f"j-{case.kind[:8]}"
    create_acjob(ft_stack.api_client, ns, acjob(name, ft_stack.selector, chips=4,
                                                labels={"fault-scheduling": "force"}))
    before = running_job(ft, ns, name, 2)
    victim = next(p for p in ft.job_pods(ns, name) if p.metadata.name == f"{name}-worker-0")
    node, phys = pod_chips(victim)  # type: ignore[misc]
    phy = phys[0]

    with ft.record_pods(ns) as recorder:
        fault = ft.inject(case.kind, node=node) if case.whole_node else ft.inject_on_pod(victim, case.kind)
        assert {(t["node"], t["phy_id"]) for t in fault["targets"]} >= {(node, phy)}

        # The emulator: the chip's level (and what it shows).
        chip = ft.chip(node, phy)
        assert chip["fault_level"] == case.level and case.code in chip["fault_codes"]
        if case.kind == "card-lost":
            assert chip["present"] is False
        if case.kind == "over-temperature":
            assert chip["temperature_c"] >= 105

        # Fleet mode: allocatable, the device-info ConfigMap, the plugin's Occur Event.
        wait_until(f"allocatable {case.allocatable} on {node}", lambda: ft.allocatable(node) == case.allocatable,
                   timeout_s=30)
        info = wait_until("the fault in the device-info ConfigMap", lambda: (
            i := ft.device_info(node)) and any(f["fault_code"] == case.code for f in i["DeviceList"][
                "huawei.com/Ascend910-Fault"]) and i, timeout_s=30)
        unhealthy = info["DeviceList"]["huawei.com/Ascend910-Unhealthy"].split(",")
        assert f"Ascend910-{phy}" in unhealthy
        assert f"Ascend910-{phy}" not in info["DeviceList"]["huawei.com/Ascend910"].split(",")
        entry = next(f for f in info["DeviceList"]["huawei.com/Ascend910-Fault"] if f["npu_name"] == f"Ascend910-{phy}")
        assert entry["fault_level"] == case.level
        assert entry["fault_type"] == ("NodeUnhealthy" if case.whole_node else "CardUnhealthy")
        occur = wait_until("the plugin's Occur event", lambda: [
            e for e in ft.node_events(node, "Occur") if f"faultCodes:{case.code}" in e.message], timeout_s=30)
        assert occur[0].type == "Warning" and f"nodeName:{node}, assertion:Occur" in occur[0].message

        # The workload: the pod fails with a non-zero exit code and an Event naming the chip and the code.
        # When the fault hits both pods (a lost card resets the whole 910B node; a node fault), whichever fails
        # first restarts the job, which may delete the other before it gets to Failed.
        if case.allocatable == 0:
            failed = recorder.wait_any_failed(before.pods.values())
        else:
            failed = recorder.wait_failed(victim.metadata.uid)
    term = failed.status.container_statuses[0].state.terminated
    assert term.exit_code == 1 and case.code in term.message and f"of node {node}" in term.message
    if failed.metadata.uid == victim.metadata.uid and not case.whole_node:
        assert f"Ascend910-{phy}" in term.message
    pod_event = wait_until("the Occur event on the pod", lambda: [
        e for e in ft.pod_events(ns, failed.metadata.name) if e.reason == "Occur"], timeout_s=30)
    assert f"faultCodes:{case.code}" in pod_event[0].message and pod_event[0].involved_object.kind == "Pod"
    assert "device fault, nodeName:" in pod_event[0].message

    # The operator restarts the job; the new pods run on healthy chips and the rank table is rewritten.
    restarting = wait_until("JobRestarting", lambda: job_events(ft.core, ns, name, "JobRestarting"), timeout_s=60)
    assert "device fault" in restarting[0].message and case.code in restarting[0].message
    after = ft.wait_recovered(ns, name, replicas=2, replaced=before.pods.values(), avoid=fault, timeout_s=180)
    for held_node, held in after.chips.values():
        assert not (held_node == node and phy in held)
        if case.allocatable == 0:
            assert held_node != node  # the whole node is out

    # Clearing restores health, allocatable, the ConfigMap, with a Recovery Event.
    ft.clear(fault)
    wait_until(f"allocatable 8 on {node}", lambda: ft.allocatable(node) == 8, timeout_s=30)
    info = wait_until("a clean ConfigMap", lambda: (i := ft.device_info(node)) and not i["DeviceList"][
        "huawei.com/Ascend910-Fault"] and i, timeout_s=30)
    assert info["DeviceList"]["huawei.com/Ascend910-Unhealthy"] == ""
    wait_until("the Recovery event", lambda: [e for e in ft.node_events(node, "Recovery")
                                              if f"faultCodes:{case.code}" in e.message], timeout_s=30)
    assert ft.chip(node, phy)["fault_level"] == "NormalNPU"
