"""The stand-in operator's fault-scheduling labels end to end (ascend-stack.md §7.5): force restarts the
whole job after a device fault, grace + pod-rescheduling recreates only the failed pod, off lets the job
fail, and fault-scheduling never reschedules a failure that was not a device fault."""

from __future__ import annotations

from typing import Any

import pytest
from ft_e2e_helpers import FAIL_LABEL, acjob, create_acjob, job_events

from cluster.faults_helper import NpuFaults, wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.cluster, pytest.mark.slow]


def condition(ft: NpuFaults, ns: str, name: str, ctype: str) -> dict[str, Any] | None:
    conds = {c["type"]: c for c in (ft.job(ns, name).get("status") or {}).get("conditions") or []}
    c = conds.get(ctype)
    return c if c and c["status"] == "True" else None


def worker(ft: NpuFaults, ns: str, name: str) -> Any:
    return next(p for p in ft.job_pods(ns, name) if p.metadata.name == f"{name}-worker-0")


def test_force_restarts_the_whole_job(ft_stack: Any, ft_namespace: str, ft: NpuFaults) -> None:
    ns, name = ft_namespace, "force"
    create_acjob(ft_stack.api_client, ns, acjob(name, ft_stack.selector, workers=2, chips=4,
                                                labels={"fault-scheduling": "force"}))
    before = ft.wait_recovered(ns, name, replicas=3, timeout_s=120)
    fault = ft.inject_on_pod(worker(ft, ns, name), "hbm-multi-bit-ecc")
    events = wait_until("JobRestarting", lambda: job_events(ft.core, ns, name, "JobRestarting"), timeout_s=60)
    assert "device fault" in events[0].message and "fault-scheduling force" in events[0].message
    after = ft.wait_recovered(ns, name, replicas=3, replaced=before.pods.values(), avoid=fault, timeout_s=180)
    assert {p.metadata.labels["version"] for p in ft.job_pods(ns, name)} == {"1"}
    assert set(after.pods) == set(before.pods)
    assert not condition(ft, ns, name, "Restarting") and condition(ft, ns, name, "Running")


def test_grace_with_pod_rescheduling_recreates_only_the_failed_pod(ft_stack: Any, ft_namespace: str,
                                                                   ft: NpuFaults) -> None:
    ns, name = ft_namespace, "grace"
    create_acjob(ft_stack.api_client, ns, acjob(name, ft_stack.selector, workers=2, chips=4,
                                                labels={"fault-scheduling": "grace", "pod-rescheduling": "on"}))
    before = ft.wait_recovered(ns, name, replicas=3, timeout_s=120)
    victim = worker(ft, ns, name)
    fault = ft.inject_on_pod(victim, "over-temperature")
    after = ft.wait_recovered(ns, name, replicas=3, replaced=[victim.metadata.uid], avoid=fault, timeout_s=180)
    assert after.pods[f"{name}-master-0"] == before.pods[f"{name}-master-0"]
    assert after.pods[f"{name}-worker-1"] == before.pods[f"{name}-worker-1"]
    versions = {p.metadata.name: p.metadata.labels["version"] for p in ft.job_pods(ns, name)}
    assert versions == {f"{name}-master-0": "0", f"{name}-worker-0": "1", f"{name}-worker-1": "0"}
    events = job_events(ft.core, ns, name, "JobRestarting")
    assert events and "rescheduling failed pod(s)" in events[0].message


def test_off_lets_the_job_fail(ft_stack: Any, ft_namespace: str, ft: NpuFaults) -> None:
    ns, name = ft_namespace, "off"
    create_acjob(ft_stack.api_client, ns, acjob(name, ft_stack.selector, chips=4,
                                                labels={"fault-scheduling": "off"}))
    ft.wait_recovered(ns, name, replicas=2, timeout_s=120)
    ft.inject_on_pod(worker(ft, ns, name), "hbm-multi-bit-ecc")
    failed = wait_until("job Failed", lambda: condition(ft, ns, name, "Failed"), timeout_s=60)
    assert "Worker" in failed["message"]
    assert not job_events(ft.core, ns, name, "JobRestarting")


def test_force_does_not_reschedule_a_failure_that_was_no_device_fault(ft_stack: Any, ft_namespace: str,
                                                                      ft: NpuFaults) -> None:
    ns, name = ft_namespace, "nodev"
    create_acjob(ft_stack.api_client, ns, acjob(name, ft_stack.selector, chips=4,
                                                labels={"fault-scheduling": "force"}))
    ft.wait_recovered(ns, name, replicas=2, timeout_s=120)
    ft.core.patch_namespaced_pod(f"{name}-worker-0", ns, {"metadata": {"labels": {FAIL_LABEL: "true"}}})
    wait_until("job Failed", lambda: condition(ft, ns, name, "Failed"), timeout_s=60)
    assert not job_events(ft.core, ns, name, "JobRestarting")
