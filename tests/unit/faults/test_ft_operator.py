"""The stand-in operator's fault-scheduling (cluster/ascendjob/recovery.py): which failures it reschedules,
how, and when a graceful deletion is forced."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from cluster.ascendjob.recovery import Action, decide, delete_grace_s, device_fault, overdue
from cluster.ascendjob.spec import JobView

FAULT = "n0/Ascend910-3/80E01801/RestartBusiness"


def job(run_policy: dict[str, Any] | None = None, **labels: str) -> JobView:
    def rep(n: int) -> dict[str, Any]:
        c = {"name": "ascend", "image": "x", "resources": {"limits": {"huawei.com/Ascend910": 8}}}
        return {"replicas": n, "restartPolicy": "Never", "template": {"spec": {"containers": [c]}}}

    return JobView({"apiVersion": "mindxdl.gitee.com/v1", "kind": "AscendJob",
                    "metadata": {"name": "j", "namespace": "ns", "uid": "u", "labels": {"framework": "pytorch",
                                                                                       **labels}},
                    "spec": {"replicaSpecs": {"Master": rep(1), "Worker": rep(2)}, "runPolicy": run_policy or {}}})


def pod(name: str, rtype: str, phase: str = "Running", fault: str = "", **meta: Any) -> dict[str, Any]:
    annotations = {"npu-emu.io/device-fault": fault} if fault else {}
    return {"metadata": {"name": name, "uid": f"uid-{name}", "annotations": annotations,
                         "labels": {"training.kubeflow.org/replica-type": rtype}, **meta},
            "status": {"phase": phase, "containerStatuses": [
                {"name": "ascend", "state": {"terminated": {"exitCode": 1}} if phase == "Failed" else {}}]}}


def pods(failed_fault: str = "") -> list[dict[str, Any]]:
    return [pod("j-master-0", "master"), pod("j-worker-0", "worker", "Failed", failed_fault),
            pod("j-worker-1", "worker")]


def test_force_restarts_the_whole_job_after_a_device_fault() -> None:
    d = decide(job(**{"fault-scheduling": "force"}), pods(FAULT), 0)
    assert d.action is Action.RESTART_JOB
    assert d.pods == ("j-master-0", "j-worker-0", "j-worker-1")
    assert FAULT in d.message and "fault-scheduling force" in d.message
    assert delete_grace_s(job(**{"fault-scheduling": "force"})) == 0


def test_grace_with_pod_rescheduling_recreates_only_the_failed_pod() -> None:
    j = job(**{"fault-scheduling": "grace", "pod-rescheduling": "on"})
    d = decide(j, pods(FAULT), 0)
    assert (d.action, d.pods) == (Action.RECREATE_PODS, ("j-worker-0",))
    assert delete_grace_s(j) is None  # the pod's own grace period


def test_off_or_a_non_device_failure_is_not_rescheduled() -> None:
    assert decide(job(**{"fault-scheduling": "off"}), pods(FAULT), 0).action is Action.FAIL
    assert decide(job(), pods(FAULT), 0).action is Action.FAIL
    # the process failed on its own (no device fault): fault-scheduling does not apply
    assert decide(job(**{"fault-scheduling": "force"}), pods(), 0).action is Action.FAIL
    # ... but fault-retry-times does (any service-plane failure)
    d = decide(job(**{"fault-scheduling": "force", "fault-retry-times": "1"}), pods(), 0)
    assert d.action is Action.RESTART_JOB and "remain retry times is <0>" in d.message


def test_backoff_limit_bounds_fault_rescheduling() -> None:
    j = job({"backoffLimit": 2}, **{"fault-scheduling": "force"})
    assert decide(j, pods(FAULT), 1).action is Action.RESTART_JOB
    assert decide(j, pods(FAULT), 2).action is Action.FAIL


def test_device_fault_annotation() -> None:
    assert device_fault(pod("p", "worker", "Failed", FAULT)) == FAULT
    assert device_fault(pod("p", "worker", "Failed")) == ""


def test_grace_forces_deletion_after_15_minutes() -> None:
    now = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)

    def deleting(name: str, ends_in_s: int, grace: int = 30) -> dict[str, Any]:
        ts = (now + timedelta(seconds=ends_in_s)).strftime("%Y-%m-%dT%H:%M:%SZ")
        return pod(name, "worker", deletionTimestamp=ts, deletionGracePeriodSeconds=grace)

    stuck = [deleting("old", -(15 * 60 - 30)), deleting("new", 20), pod("alive", "worker")]
    assert overdue(job(**{"fault-scheduling": "grace"}), stuck, now) == ["old"]
    assert overdue(job(**{"fault-scheduling": "force"}), stuck, now) == []
