"""A parameter-plane link down on a chip's NIC: NotHandleFault at once (the job keeps running; the NIC is
really down in the node's namespace when the emulator runs with --netns), PreSeparateNPU after its 20 s
window (NetworkUnhealthy in the ConfigMap; the pod fails, the job restarts on other chips), and after
the link returns, recovery 60 s later (emulated seconds; the test moves the emulated clock)."""

from __future__ import annotations

import subprocess
import time
from typing import Any

import pytest
from ft_e2e_helpers import acjob, create_acjob, job_events

from cluster.faults_helper import NpuFaults, pod_chips, wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.cluster, pytest.mark.slow]

CODE = "81078603"


def nic_state(node: str, phy: int) -> str:
    out = subprocess.run(["ip", "-n", f"npu-emu-{node}", "-o", "link", "show", f"eth{phy}"],
                         capture_output=True, text=True, check=True).stdout
    return "UP" if ",UP" in out.split(">")[0] or "<UP" in out else "DOWN"


def test_link_down_escalates_fails_the_pod_and_recovers(ft_stack: Any, ft_namespace: str, ft: NpuFaults) -> None:
    ns, name = ft_namespace, "link"
    create_acjob(ft_stack.api_client, ns, acjob(name, ft_stack.selector, chips=4,
                                                labels={"fault-retry-times": "3"}))
    before = ft.wait_recovered(ns, name, replicas=2, timeout_s=120)
    victim = next(p for p in ft.job_pods(ns, name) if p.metadata.name == f"{name}-worker-0")
    node, phys = pod_chips(victim)  # type: ignore[misc]
    phy = phys[0]
    if ft_stack.netns:
        assert nic_state(node, phy) == "UP"

    with ft.record_pods(ns) as recorder:
        fault = ft.inject_on_pod(victim, "link-down")
        chip = ft.chip(node, phy)
        assert (chip["fault_level"], chip["link_up"], chip["network_healthy"]) == ("NotHandleFault", False, True)
        if ft_stack.netns:
            wait_until(f"eth{phy} down in npu-emu-{node}", lambda: nic_state(node, phy) == "DOWN", timeout_s=10)
        info = wait_until("the link fault in the ConfigMap", lambda: (i := ft.device_info(node)) and any(
            f["fault_code"] == CODE for f in i["DeviceList"]["huawei.com/Ascend910-Fault"]) and i, timeout_s=30)
        entry = next(f for f in info["DeviceList"]["huawei.com/Ascend910-Fault"] if f["fault_code"] == CODE)
        assert (entry["fault_type"], entry["fault_level"]) == ("CardNetworkUnhealthy", "NotHandleFault")
        time.sleep(2)  # NotHandleFault: nothing happens to the job
        assert recorder.failed(victim.metadata.uid) is None
        assert ft.allocatable(node) == 8

        ft.emulator.set_clock(advance_s=25)  # past the 20 s FaultDuration window
        assert ft.chip(node, phy)["fault_level"] == "PreSeparateNPU"
        info = wait_until("NetworkUnhealthy in the ConfigMap", lambda: (i := ft.device_info(node)) and i[
            "DeviceList"]["huawei.com/Ascend910-NetworkUnhealthy"] and i, timeout_s=30)
        assert info["DeviceList"]["huawei.com/Ascend910-NetworkUnhealthy"] == f"Ascend910-{phy}"
        failed = recorder.wait_failed(victim.metadata.uid)
    term = failed.status.container_statuses[0].state.terminated
    assert term.exit_code == 1 and CODE in term.message and f"Ascend910-{phy}" in term.message
    wait_until("JobRestarting", lambda: job_events(ft.core, ns, name, "JobRestarting"), timeout_s=60)
    after = ft.wait_recovered(ns, name, replicas=2, replaced=before.pods.values(), avoid=fault, timeout_s=180)
    assert all(not (n == node and phy in held) for n, held in after.chips.values())
    # The NetworkUnhealthy chip is not given out: fleet mode leaves it out of allocatable.
    wait_until(f"allocatable 7 on {node}", lambda: ft.allocatable(node) == 7, timeout_s=30)

    ft.clear(fault)
    if ft_stack.netns:
        wait_until(f"eth{phy} up again", lambda: nic_state(node, phy) == "UP", timeout_s=10)
    recovering = ft.chip(node, phy)
    assert recovering["link_up"] is True and recovering["fault_level"] == "PreSeparateNPU"  # RecoverTimeout 60 s
    assert [f["state"] for f in recovering["faults"]] == ["recovering"]
    ft.emulator.set_clock(advance_s=61)
    assert ft.chip(node, phy)["fault_level"] == "NormalNPU"
    wait_until(f"allocatable 8 on {node}", lambda: ft.allocatable(node) == 8, timeout_s=30)
    info = wait_until("a clean ConfigMap", lambda: (i := ft.device_info(node)) and not i["DeviceList"][
        "huawei.com/Ascend910-Fault"] and i, timeout_s=30)
    assert info["DeviceList"]["huawei.com/Ascend910-NetworkUnhealthy"] == ""
    wait_until("the Recovery event", lambda: [e for e in ft.node_events(node, "Recovery")
                                              if f"faultCodes:{CODE}" in e.message], timeout_s=30)
