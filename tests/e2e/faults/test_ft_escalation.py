"""Escalation over emulated time: two multi-bit ECC faults on one chip within 24 emulated hours separate
it (ManuallySeparateNPU). The separation outlives the faults: the chip is listed under the ConfigMap's
ManuallySeparateNPU key and never given to a pod, until an operator clears it over REST."""

from __future__ import annotations

from typing import Any

import pytest
from ft_e2e_helpers import create_vcjob, vcjob

from cluster.faults_helper import NpuFaults, pod_chips, wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.cluster, pytest.mark.slow]


def test_two_ecc_in_24h_separate_the_chip_until_an_operator_clears_it(ft_stack: Any, ft_namespace: str,
                                                                       ft: NpuFaults) -> None:
    node = ft_stack.nodes[-1]
    # The library's scenario (two ECCs 6 h apart on chip 1 of npu-node-0), replayed on our node.
    replay = ft.replay("ecc-escalation", nodes={"npu-node-0": node})
    assert [f["state"] for f in replay["faults"]] == ["active", "scheduled"]
    assert ft.chip(node, 1)["fault_level"] == "RestartBusiness"
    ft.emulator.set_clock(advance_s=6 * 3600 + 5)  # the second one starts, 6 emulated hours later
    chip = ft.chip(node, 1)
    assert chip["manually_separated"] is True and chip["fault_level"] == "ManuallySeparateNPU"
    ft.emulator.set_clock(advance_s=120)  # both faults are over; the separation stays
    chip = ft.chip(node, 1)
    assert chip["fault_codes"] == [] and chip["fault_level"] == "ManuallySeparateNPU"

    info = wait_until("ManuallySeparateNPU in the ConfigMap", lambda: (i := ft.device_info(node))
                      and i["ManuallySeparateNPU"] and i, timeout_s=30)
    assert info["ManuallySeparateNPU"] == "Ascend910-1"
    assert info["DeviceList"]["huawei.com/Ascend910-Unhealthy"] == "Ascend910-1"
    wait_until(f"allocatable 7 on {node}", lambda: ft.allocatable(node) == 7, timeout_s=30)

    # Seven one-chip pods on the node: every chip but the separated one.
    pin = {"kubernetes.io/hostname": node, **ft_stack.selector}
    create_vcjob(ft_stack.api_client, ft_namespace, vcjob("fill", pin, replicas=7, chips=1, policies=[]))
    pods = wait_until("seven pods Running with chips", lambda: (
        ps := ft.job_pods(ft_namespace, "fill", kind="Job")) and len(ps) == 7 and all(
        p.status.phase == "Running" and pod_chips(p) for p in ps) and ps, timeout_s=120)
    held = sorted(c for p in pods for c in pod_chips(p)[1])  # type: ignore[index]
    assert held == [0, 2, 3, 4, 5, 6, 7]

    # The operator clears the separation: the chip is back.
    ft.emulator.clear_separation(node, 1)
    assert ft.chip(node, 1)["fault_level"] == "NormalNPU"
    wait_until(f"allocatable 8 on {node}", lambda: ft.allocatable(node) == 8, timeout_s=30)
    info = wait_until("ManuallySeparateNPU cleared", lambda: (i := ft.device_info(node))
                      and not i["ManuallySeparateNPU"] and i, timeout_s=30)
    assert info["DeviceList"]["huawei.com/Ascend910-Unhealthy"] == ""
