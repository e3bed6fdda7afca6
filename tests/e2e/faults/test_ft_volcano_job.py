"""A Volcano Job with the policy PodFailed -> RestartJob recovers from a device fault the same way: fleet
mode fails the pod on the faulty chip, Volcano's own job controller restarts the job, and the new pods
get healthy chips."""

from __future__ import annotations

from typing import Any

import pytest
from ft_e2e_helpers import create_vcjob, vcjob

from cluster.faults_helper import NpuFaults, pod_chips, wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.cluster, pytest.mark.slow]


def test_vcjob_restart_job_policy_recovers_on_healthy_chips(ft_stack: Any, ft_namespace: str,
                                                            ft: NpuFaults) -> None:
    ns, name = ft_namespace, "vc"
    create_vcjob(ft_stack.api_client, ns, vcjob(name, ft_stack.selector, replicas=2, chips=4,
                                                policies=[{"event": "PodFailed", "action": "RestartJob"}]))
    before = ft.wait_recovered(ns, name, kind="Job", replicas=2, timeout_s=120)
    victim = ft.job_pods(ns, name, kind="Job")[0]
    node, phys = pod_chips(victim)  # type: ignore[misc]
    with ft.record_pods(ns) as recorder:
        fault = ft.inject_on_pod(victim, "hbm-multi-bit-ecc")
        failed = recorder.wait_failed(victim.metadata.uid)
    assert failed.status.container_statuses[0].state.terminated.exit_code == 1
    # Volcano restarts the whole job: every pod is replaced (same names, new uids), none on the chip.
    after = ft.wait_recovered(ns, name, kind="Job", replicas=2, replaced=before.pods.values(), avoid=fault,
                              timeout_s=180)
    assert set(after.pods) == set(before.pods)
    job = ft.job(ns, name, kind="Job")
    assert job["status"].get("retryCount", 0) >= 1
    assert all(not (n == node and phys[0] in held) for n, held in after.chips.values())
    ft.clear(fault)
    wait_until(f"allocatable 8 on {node}", lambda: ft.allocatable(node) == 8, timeout_s=30)
