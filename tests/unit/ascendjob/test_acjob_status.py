"""Job conditions from pod phases (success policies), kubeflow condition bookkeeping, and the restart path."""

from __future__ import annotations

import pytest
from acjob_unit_helpers import job, pod, replica

from cluster.ascendjob import JobView
from cluster.ascendjob.recovery import Action, decide
from cluster.ascendjob.status import is_finished, replica_statuses, set_condition, verdict

NOW = "2026-01-01T00:00:00Z"
LATER = "2026-01-01T00:01:00Z"


def pods_with(phases: dict[str, str]) -> list[dict]:
    return [pod(name, name.split("-")[1], 0, None, chips=0, phase=phase) for name, phase in phases.items()]


def counts_for(view: JobView, phases: dict[str, str]) -> dict:
    return replica_statuses(view, pods_with(phases))


def test_replica_statuses() -> None:
    view = JobView(job())
    counts = counts_for(view, {"j-master-0": "Running", "j-worker-0": "Succeeded", "j-worker-1": "Failed"})
    assert counts == {"Master": {"active": 1, "succeeded": 0, "failed": 0},
                      "Worker": {"active": 0, "succeeded": 1, "failed": 1}}
    deleting = pods_with({"j-worker-1": "Failed"})
    deleting[0]["metadata"]["deletionTimestamp"] = NOW
    assert replica_statuses(view, deleting)["Worker"]["failed"] == 0


@pytest.mark.parametrize(("policy", "phases", "expected"), [
    ("", {"j-master-0": "Running", "j-worker-0": "Pending", "j-worker-1": "Pending"}, "Running"),
    ("", {"j-master-0": "Running", "j-worker-0": "Succeeded", "j-worker-1": "Succeeded"}, "Running"),
    ("", {"j-master-0": "Succeeded", "j-worker-0": "Running", "j-worker-1": "Running"}, "Succeeded"),
    ("AllWorkers", {"j-master-0": "Running", "j-worker-0": "Succeeded", "j-worker-1": "Running"}, "Running"),
    ("AllWorkers", {"j-master-0": "Running", "j-worker-0": "Succeeded", "j-worker-1": "Succeeded"}, "Succeeded"),
    ("AllWorkers", {"j-master-0": "Succeeded", "j-worker-0": "Running", "j-worker-1": "Running"}, "Running"),
    ("AllWorkers", {"j-master-0": "Running", "j-worker-0": "Succeeded", "j-worker-1": "Failed"}, "Failed"),
    ("", {"j-master-0": "Pending", "j-worker-0": "Pending", "j-worker-1": "Pending"}, None),
])
def test_verdict(policy, phases, expected) -> None:
    view = JobView(job(successPolicy=policy))
    v = verdict(view, counts_for(view, phases))
    assert (v.condition if v else None) == expected


def test_without_a_master_every_replica_must_succeed() -> None:
    view = JobView(job("mindspore", {"Worker": replica(8, 2)}))
    assert verdict(view, counts_for(view, {"j-worker-0": "Succeeded", "j-worker-1": "Running"})).condition == "Running"
    assert verdict(view, counts_for(view, {"j-worker-0": "Succeeded", "j-worker-1": "Succeeded"})).condition \
        == "Succeeded"


def test_conditions_follow_kubeflow() -> None:
    status: dict = {}
    assert set_condition(status, "Created", "AscendJobCreated", "created", NOW)
    assert set_condition(status, "Running", "JobRunning", "running", NOW)
    assert not set_condition(status, "Running", "JobRunning", "running", LATER)  # unchanged: no write
    assert set_condition(status, "Restarting", "JobRestarting", "restarting", LATER)
    assert [c["type"] for c in status["conditions"]] == ["Created", "Restarting"]  # replaces Running
    assert set_condition(status, "Running", "JobRunning", "running", LATER)
    assert [c["type"] for c in status["conditions"]] == ["Created", "Running"]
    assert not is_finished(status)
    assert set_condition(status, "Succeeded", "JobSucceeded", "done", LATER)
    assert [(c["type"], c["status"]) for c in status["conditions"]] == [
        ("Created", "True"), ("Running", "False"), ("Succeeded", "True")]
    assert is_finished(status)


def failed_pod(name: str, exit_code: int = 1) -> dict:
    p = pod(name, name.split("-")[1], 0, None, chips=0, phase="Failed")
    p["status"]["containerStatuses"] = [{"name": "ascend", "state": {"terminated": {"exitCode": exit_code}}}]
    return p


def test_recovery_decisions() -> None:
    running = pods_with({"j-master-0": "Running", "j-worker-0": "Running"})
    plain = JobView(job())
    assert decide(plain, running, 0).action is Action.NONE
    failed = [running[0], failed_pod("j-worker-0")]
    assert decide(plain, failed, 0).action is Action.FAIL

    retry = JobView(job(labels={"fault-retry-times": "2"}))
    d = decide(retry, failed, 0)
    assert d.action is Action.RESTART_JOB and d.pods == ("j-master-0", "j-worker-0")
    assert "remain retry times is <1>" in d.message
    assert decide(retry, failed, 2).action is Action.FAIL

    resched = JobView(job(labels={"pod-rescheduling": "on"}))
    d = decide(resched, failed, 0)
    assert d.action is Action.RECREATE_PODS and d.pods == ("j-worker-0",)

    exit_code = JobView(job(replicas={"Master": replica(8), "Worker": {**replica(8), "restartPolicy": "ExitCode"}}))
    assert decide(exit_code, [running[0], failed_pod("j-worker-0", 137)], 0).action is Action.RECREATE_PODS
    assert decide(exit_code, [running[0], failed_pod("j-worker-0", 1)], 0).action is Action.FAIL

    limited = JobView(job(labels={"fault-retry-times": "5"}, runPolicy={"backoffLimit": 1}))
    d = decide(limited, failed, 1)
    assert d.action is Action.FAIL and "backoff limit" in d.message
