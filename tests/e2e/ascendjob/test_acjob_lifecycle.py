"""Status over a job's life: successPolicy AllWorkers and "", a failed pod, and a restart
(fault-retry-times) with a rewritten rank table. Pods finish through the kwok Stages of
fixtures/kwok/stages/pod/ (pod-complete / pod-failed, opted in by label)."""

from __future__ import annotations

from typing import Any

import pytest
from acjob_e2e_helpers import Api, acjob, replica, running, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.cluster]

COMPLETE = {"pod-complete.stage.npu-emu.io": "true"}
COMPLETE_SOON = {"pod-complete.stage.npu-emu.io/delay": "2s"}


def test_all_workers_success_policy(acjob_stack: Any, acjob_namespace: str) -> None:
    api = Api(acjob_stack.api_client, acjob_namespace)
    pool = acjob_stack.pool_selector("b")
    body = acjob("aw", "pytorch", {"Master": replica("Master", 1, 1, pool),
                                   "Worker": replica("Worker", 2, 2, pool, labels=COMPLETE,
                                                     annotations=COMPLETE_SOON)},
                 success_policy="AllWorkers")
    uid = api.create_job(body)["metadata"]["uid"]
    wait_for("Running", lambda: api.condition_true("aw", "Running"), timeout_s=120)
    done = wait_for("Succeeded", lambda: api.condition_true("aw", "Succeeded"), timeout_s=120)
    assert done["reason"] == "JobSucceeded"
    status = api.job("aw")["status"]
    assert status["completionTime"]
    conditions = {c["type"]: c["status"] for c in status["conditions"]}
    assert conditions == {"Created": "True", "Running": "False", "Succeeded": "True"}
    phases = {p.metadata.name: p.status.phase for p in api.pods("aw")}
    assert phases == {"aw-master-0": "Running", "aw-worker-0": "Succeeded", "aw-worker-1": "Succeeded"}
    wait_for("PodGroup deleted when the job finished", lambda: api.podgroup(f"aw-{uid}") is None)


def test_default_success_policy_needs_the_master(acjob_stack: Any, acjob_namespace: str) -> None:
    api = Api(acjob_stack.api_client, acjob_namespace)
    pool = acjob_stack.pool_selector("b")
    # Workers finish, the master keeps running: not succeeded under the default policy.
    body = acjob("df", "pytorch", {"Master": replica("Master", 1, 1, pool),
                                   "Worker": replica("Worker", 1, 1, pool, labels=COMPLETE)})
    api.create_job(body)
    wait_for("worker Succeeded", lambda: [p for p in api.pods("df") if p.status.phase == "Succeeded"], timeout_s=120)
    wait_for("replica status counted", lambda: (api.job("df").get("status") or {}).get("replicaStatuses", {})
             .get("Worker", {}).get("succeeded") == 1)
    assert not api.condition_true("df", "Succeeded")
    assert api.condition_true("df", "Running")
    # The master finishes too: succeeded.
    api.core.patch_namespaced_pod("df-master-0", acjob_namespace, {"metadata": {"labels": COMPLETE}})
    wait_for("Succeeded", lambda: api.condition_true("df", "Succeeded"), timeout_s=60)


def test_failed_pod_fails_the_job(acjob_stack: Any, acjob_namespace: str) -> None:
    api = Api(acjob_stack.api_client, acjob_namespace)
    pool = acjob_stack.pool_selector("b")
    api.create_job(acjob("fl", "pytorch", {"Master": replica("Master", 1, 1, pool),
                                           "Worker": replica("Worker", 1, 1, pool)}))
    wait_for("Running", lambda: running(api.pods("fl"), 2), timeout_s=120)
    api.core.patch_namespaced_pod("fl-worker-0", acjob_namespace,
                                  {"metadata": {"labels": {"pod-failed.stage.npu-emu.io": "true"}}})
    failed = wait_for("Failed", lambda: api.condition_true("fl", "Failed"), timeout_s=60)
    assert failed["reason"] == "JobFailed" and "Worker" in failed["message"]
    assert api.job("fl")["status"]["replicaStatuses"]["Worker"]["failed"] == 1


def job_events(api: Api, job: str, reason: str) -> list[Any]:
    events = api.core.list_namespaced_event(api.ns, field_selector=f"involvedObject.name={job}").items
    return [e for e in events if e.reason == reason and e.involved_object.kind == "AscendJob"]


def test_fault_retry_times_restarts_the_job_with_a_new_rank_table(acjob_stack: Any, acjob_namespace: str) -> None:
    api = Api(acjob_stack.api_client, acjob_namespace)
    pool = acjob_stack.pool_selector("b")
    api.create_job(acjob("rs", "pytorch", {"Master": replica("Master", 1, 2, pool),
                                           "Worker": replica("Worker", 1, 2, pool)},
                         labels={"fault-retry-times": "1"}))
    wait_for("Running", lambda: running(api.pods("rs"), 2), timeout_s=120)
    first = wait_for("rank table", lambda: api.completed_ranktable("rs"), timeout_s=60)
    old_uids = {p.metadata.uid for p in api.pods("rs")}
    api.core.patch_namespaced_pod("rs-worker-0", acjob_namespace,
                                  {"metadata": {"labels": {"pod-failed.stage.npu-emu.io": "true"}}})
    # The Restarting condition may last well under a second on kwok (new pods start at once): its
    # Event stays.
    restarting = wait_for("a JobRestarting event", lambda: job_events(api, "rs", "JobRestarting"), timeout_s=60)
    assert "remain retry times is <0>" in restarting[0].message

    def new_pods_running() -> list[Any] | None:
        pods = running(api.pods("rs"), 2)
        return pods if pods and not {p.metadata.uid for p in pods} & old_uids else None

    pods = wait_for("new pods Running", new_pods_running, timeout_s=120)
    assert {p.metadata.labels["version"] for p in pods} == {"1"}
    second = wait_for("new rank table", lambda: (t := api.completed_ranktable("rs")) and t != first and t,
                      timeout_s=60)
    assert {s["server_id"] for s in second["server_list"]} == {p.metadata.uid for p in pods}
    wait_for("Running again", lambda: api.condition_true("rs", "Running"), timeout_s=60)
    assert "Restarting" not in api.conditions("rs")  # Running replaced it
    assert not api.condition_true("rs", "Failed")


def test_pod_rescheduling_recreates_only_the_failed_pod(acjob_stack: Any, acjob_namespace: str) -> None:
    api = Api(acjob_stack.api_client, acjob_namespace)
    pool = acjob_stack.pool_selector("b")
    api.create_job(acjob("pr", "pytorch", {"Master": replica("Master", 1, 2, pool),
                                           "Worker": replica("Worker", 2, 2, pool)},
                         labels={"pod-rescheduling": "on"}))
    before = {p.metadata.name: p.metadata.uid for p in wait_for("Running", lambda: running(api.pods("pr"), 3),
                                                                 timeout_s=120)}
    wait_for("rank table", lambda: api.completed_ranktable("pr"), timeout_s=60)
    api.core.patch_namespaced_pod("pr-worker-1", acjob_namespace,
                                  {"metadata": {"labels": {"pod-failed.stage.npu-emu.io": "true"}}})

    def replaced() -> list[Any] | None:
        pods = running(api.pods("pr"), 3)
        return pods if pods and {p.metadata.name: p.metadata.uid for p in pods}["pr-worker-1"] != before[
            "pr-worker-1"] else None

    pods = {p.metadata.name: p for p in wait_for("pr-worker-1 replaced and Running", replaced, timeout_s=120)}
    assert pods["pr-master-0"].metadata.uid == before["pr-master-0"]
    assert pods["pr-worker-0"].metadata.uid == before["pr-worker-0"]
    assert pods["pr-worker-1"].metadata.labels["version"] == "1"
    assert pods["pr-master-0"].metadata.labels["version"] == "0"
    assert job_events(api, "pr", "JobRestarting")
    table = wait_for("rank table with the new pod", lambda: (t := api.completed_ranktable("pr")) and pods[
        "pr-worker-1"].metadata.uid in {s["server_id"] for s in t["server_list"]} and t, timeout_s=60)
    assert table["server_count"] == "3"
    wait_for("Running again", lambda: api.condition_true("pr", "Running"), timeout_s=60)



def test_a_deleted_pod_is_replaced_as_a_restart(acjob_stack: Any, acjob_namespace: str) -> None:
    """What Volcano does to a job on a faulty chip (fault-scheduling): it deletes the pods; the operator
    brings them back with the next version and a new rank table."""
    api = Api(acjob_stack.api_client, acjob_namespace)
    pool = acjob_stack.pool_selector("b")
    api.create_job(acjob("dl", "pytorch", {"Master": replica("Master", 1, 4, pool),
                                           "Worker": replica("Worker", 1, 4, pool)}))
    before = {p.metadata.name: p.metadata.uid for p in wait_for("Running", lambda: running(api.pods("dl"), 2),
                                                                 timeout_s=120)}
    wait_for("rank table", lambda: api.completed_ranktable("dl"), timeout_s=60)
    api.core.delete_namespaced_pod("dl-worker-0", acjob_namespace)

    def replaced() -> list[Any] | None:
        pods = running(api.pods("dl"), 2)
        return pods if pods and pods[1].metadata.uid != before["dl-worker-0"] else None

    pods = wait_for("dl-worker-0 replaced and Running", replaced, timeout_s=120)
    assert pods[0].metadata.uid == before["dl-master-0"]
    assert [p.metadata.labels["version"] for p in pods] == ["0", "1"]
    events = wait_for("a JobRestarting event", lambda: job_events(api, "dl", "JobRestarting"), timeout_s=60)
    assert "dl-worker-0 (version 0) was deleted" in events[0].message
    wait_for("rank table with the new pod", lambda: (t := api.completed_ranktable("dl"))
             and pods[1].metadata.uid in {s["server_id"] for s in t["server_list"]}, timeout_s=60)
    wait_for("Running again", lambda: api.condition_true("dl", "Running"), timeout_s=60)
