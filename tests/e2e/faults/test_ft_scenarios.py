"""The scenario library from a test suite: `npu_faults.replay(name, nodes=...)` and `wait_recovered`, the
way a user's suite would write it (fixture `npu_faults`, cluster/faults_helper.py)."""

from __future__ import annotations

from typing import Any

import pytest
from ft_e2e_helpers import acjob, create_acjob

from cluster.faults_helper import NpuFaults, wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.cluster, pytest.mark.slow]


def test_single_ecc_scenario_job_recovers(ft_stack: Any, ft_namespace: str, npu_faults: NpuFaults) -> None:
    ns, name = ft_namespace, "sc"
    create_acjob(ft_stack.api_client, ns, acjob(name, ft_stack.selector, chips=8,
                                                labels={"fault-retry-times": "2"}))
    before = npu_faults.wait_recovered(ns, name, replicas=2, timeout_s=120)
    node = before.chips[f"{name}-worker-0"][0]  # 8 chips a pod: chip 3 of that node is the worker's
    result = npu_faults.replay("single-ecc", nodes={"npu-node-0": node})
    (fault,) = result["faults"]
    assert fault["targets"] == [{"node": node, "phy_id": 3}]
    after = npu_faults.wait_recovered(ns, name, replicas=2, replaced=before.pods.values(), avoid=fault)
    assert all(n != node for n, _ in after.chips.values())  # 8-chip pods: the node has 7 healthy chips
    npu_faults.emulator.set_clock(advance_s=61)  # the scenario's fault lasts 60 emulated seconds
    assert npu_faults.emulator.fault(fault["id"])["state"] == "expired"
    wait_until(f"allocatable 8 on {node}", lambda: npu_faults.allocatable(node) == 8, timeout_s=30)
    wait_until("the Recovery event", lambda: npu_faults.node_events(node, "Recovery"), timeout_s=30)


def test_ring_wide_restart_request_does_not_kill_the_job(ft_stack: Any, ft_namespace: str,
                                                         npu_faults: NpuFaults) -> None:
    """AIC bus faults are RestartRequest, below RestartBusiness: the chips leave the scheduler's pool but
    the running job is not failed."""
    ns, name = ft_namespace, "ring"
    create_acjob(ft_stack.api_client, ns, acjob(name, ft_stack.selector, chips=8,
                                                labels={"fault-retry-times": "2"}))
    before = npu_faults.wait_recovered(ns, name, replicas=2, timeout_s=120)
    node = before.chips[f"{name}-master-0"][0]
    with npu_faults.record_pods(ns) as recorder:
        result = npu_faults.replay("ring-wide-fault", nodes={"npu-node-0": node})
        assert len(result["faults"][0]["targets"]) == 8  # 910B: one ring, the full mesh
        wait_until(f"allocatable 0 on {node}", lambda: npu_faults.allocatable(node) == 0, timeout_s=30)
        info = npu_faults.device_info(node)
        assert {f["fault_code"] for f in info["DeviceList"]["huawei.com/Ascend910-Fault"]} == {"80C98009"}
        import time

        time.sleep(3)
        assert all(recorder.failed(uid) is None for uid in before.pods.values())
    assert {p.metadata.uid for p in npu_faults.job_pods(ns, name)} == set(before.pods.values())
