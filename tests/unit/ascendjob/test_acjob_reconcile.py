"""One reconcile against an in-memory apiserver: no pods before the PodGroup is Inqueue, then the
Service, the pods with the Service's ClusterIP, the rank table, and the status."""

from __future__ import annotations

import copy
import json
from typing import Any

from acjob_unit_helpers import device, job, replica

from cluster.ascendjob.kube import Kube
from cluster.ascendjob.reconcile import Reconciler
from cluster.ascendjob.sink import RankTableSink

CONFIGURATION = "ascend.kubectl.kubernetes.io/ascend-910-configuration"


class FakeKube:
    """The part of Kube the reconciler uses, over a dict of path -> object."""

    job_path = staticmethod(Kube.job_path)
    podgroup_path = staticmethod(Kube.podgroup_path)
    core_path = staticmethod(Kube.core_path)

    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {}
        self.events: list[str] = []
        self.status_patches: list[dict[str, Any]] = []

    def get(self, path: str) -> dict[str, Any] | None:
        obj = self.objects.get(path)
        return copy.deepcopy(obj) if obj is not None else None

    def create(self, path: str, body: dict[str, Any]) -> dict[str, Any] | None:
        full = f"{path}/{body['metadata']['name']}"
        if full in self.objects:
            return None
        body = copy.deepcopy(body)
        body["metadata"].setdefault("uid", f"uid-{body['metadata']['name']}")
        if body.get("kind") == "Service":
            body["spec"]["clusterIP"] = "10.96.0.10"
        self.objects[full] = body
        return copy.deepcopy(body)

    def delete(self, path: str, **_: Any) -> bool:
        return self.objects.pop(path, None) is not None

    def call(self, method: str, path: str, *, body: Any = None, **_: Any) -> Any:
        assert method == "PUT"
        self.objects[path] = copy.deepcopy(body)
        return body

    def job_pods(self, ns: str, name: str) -> list[dict[str, Any]]:
        prefix = f"/api/v1/namespaces/{ns}/pods/"
        return [copy.deepcopy(o) for p, o in sorted(self.objects.items()) if p.startswith(prefix)
                and o["metadata"]["labels"].get("training.kubeflow.org/job-name") == name]

    def patch_job_status(self, ns: str, name: str, status: dict[str, Any]) -> None:
        self.objects[self.job_path(ns, name)]["status"] = copy.deepcopy(status)
        self.status_patches.append(copy.deepcopy(status))

    def clusterip(self, ns: str, name: str) -> str:
        return ""

    def event(self, job: dict[str, Any], etype: str, reason: str, message: str) -> None:
        self.events.append(reason)


def setup() -> tuple[FakeKube, Reconciler, str]:
    kube = FakeKube()
    raw = job(replicas={"Master": replica(2, port=True), "Worker": replica(2, 1)})
    kube.objects[Kube.job_path("ns", "j")] = raw
    reconciler = Reconciler(kube, RankTableSink(kube))  # type: ignore[arg-type]
    return kube, reconciler, Kube.podgroup_path("ns", "j-u-1")


def test_pods_wait_for_the_podgroup_to_be_inqueue() -> None:
    kube, reconciler, pg_path = setup()
    try:
        reconciler.reconcile("ns", "j")
        pg = kube.objects[pg_path]
        assert pg["spec"]["minMember"] == 2 and pg["spec"]["minTaskMember"] == {"master": 1, "worker": 1}
        assert kube.job_pods("ns", "j") == []
        status = kube.objects[Kube.job_path("ns", "j")]["status"]
        assert [c["type"] for c in status["conditions"]] == ["Created"]

        kube.objects[pg_path]["status"] = {"phase": "Pending"}
        reconciler.reconcile("ns", "j")
        assert kube.job_pods("ns", "j") == []

        kube.objects[pg_path]["status"] = {"phase": "Inqueue"}
        reconciler.reconcile("ns", "j")
        pods = kube.job_pods("ns", "j")
        assert [p["metadata"]["name"] for p in pods] == ["j-master-0", "j-worker-0"]
        env = {e["name"]: e.get("value") for e in pods[1]["spec"]["containers"][0]["env"]}
        assert env["MASTER_ADDR"] == "10.96.0.10" and env["RANK"] == "1"
        table = json.loads(kube.objects[Kube.core_path("ns", "configmaps", "rings-config-j")]["data"]["hccl.json"])
        assert table == {"status": "initializing", "version": "1.0"}
    finally:
        reconciler.close()


def test_running_pods_with_chips_complete_the_rank_table_and_the_status() -> None:
    kube, reconciler, pg_path = setup()
    try:
        reconciler.reconcile("ns", "j")
        kube.objects[pg_path]["status"] = {"phase": "Inqueue"}
        reconciler.reconcile("ns", "j")
        for i, name in enumerate(["j-master-0", "j-worker-0"]):
            pod = kube.objects[Kube.core_path("ns", "pods", name)]
            pod["status"] = {"phase": "Running", "podIP": f"10.0.0.{i + 1}"}
            pod["metadata"]["annotations"][CONFIGURATION] = json.dumps(
                {"pod_name": name, "server_id": pod["metadata"]["uid"], "host_ip": "172.16.0.1", "super_pod_id": -2,
                 "devices": [device(2 * i, f"10.64.0.{2 * i}"), device(2 * i + 1, f"10.65.0.{2 * i}")],
                 "rack_id": -2, "server_index": "-2", "server_ip": "172.16.0.1"})
        reconciler.reconcile("ns", "j")
        cm = kube.objects[Kube.core_path("ns", "configmaps", "rings-config-j")]
        table = json.loads(cm["data"]["hccl.json"])
        assert table["status"] == "completed" and table["server_count"] == "2"
        assert [d["rank_id"] for s in table["server_list"] for d in s["device"]] == ["0", "1", "2", "3"]
        assert cm["data"]["version"] != "0"
        status = kube.objects[Kube.job_path("ns", "j")]["status"]
        assert [c["type"] for c in status["conditions"]] == ["Created", "Running"]
        assert status["replicaStatuses"]["Worker"] == {"active": 1, "succeeded": 0, "failed": 0}
        patches = len(kube.status_patches)
        reconciler.reconcile("ns", "j")  # nothing changed: no write
        assert len(kube.status_patches) == patches

        kube.objects[Kube.core_path("ns", "pods", "j-master-0")]["status"]["phase"] = "Succeeded"
        reconciler.reconcile("ns", "j")
        status = kube.objects[Kube.job_path("ns", "j")]["status"]
        assert {c["type"]: c["status"] for c in status["conditions"]} == {
            "Created": "True", "Running": "False", "Succeeded": "True"}
        assert pg_path not in kube.objects  # a finished job's PodGroup goes
        assert "JobSucceeded" in kube.events
    finally:
        reconciler.close()


def test_invalid_job_fails_without_creating_anything() -> None:
    kube = FakeKube()
    kube.objects[Kube.job_path("ns", "j")] = job(labels={"framework": "jax"})
    reconciler = Reconciler(kube, RankTableSink(kube))  # type: ignore[arg-type]
    try:
        reconciler.reconcile("ns", "j")
    finally:
        reconciler.close()
    failed = next(c for c in kube.objects[Kube.job_path("ns", "j")]["status"]["conditions"] if c["type"] == "Failed")
    assert failed["reason"] == "InvalidJob" and "framework label is jax" in failed["message"]
    assert set(kube.objects) == {Kube.job_path("ns", "j")}


def test_fault_retry_times_restarts_every_pod_once() -> None:
    kube = FakeKube()
    kube.objects[Kube.job_path("ns", "j")] = job(replicas={"Master": replica(2, port=True), "Worker": replica(2, 1)},
                                                 labels={"fault-retry-times": "1"})
    reconciler = Reconciler(kube, RankTableSink(kube))  # type: ignore[arg-type]
    pg_path = Kube.podgroup_path("ns", "j-u-1")
    try:
        reconciler.reconcile("ns", "j")
        kube.objects[pg_path]["status"] = {"phase": "Running"}
        reconciler.reconcile("ns", "j")
        for name in ("j-master-0", "j-worker-0"):
            kube.objects[Kube.core_path("ns", "pods", name)]["status"] = {"phase": "Running", "podIP": "10.0.0.1"}
        reconciler.reconcile("ns", "j")
        worker_path = Kube.core_path("ns", "pods", "j-worker-0")
        kube.objects[worker_path]["status"]["phase"] = "Failed"
        stale = copy.deepcopy(kube.objects[worker_path])

        reconciler.reconcile("ns", "j")  # the restart: both pods deleted
        assert kube.job_pods("ns", "j") == []
        status = kube.objects[Kube.job_path("ns", "j")]["status"]
        assert [c["type"] for c in status["conditions"]] == ["Created", "Restarting"]
        assert kube.events[-1] == "JobRestarting"

        kube.objects[worker_path] = stale  # a deleted pod still listed: neither a second failure nor ours
        reconciler.reconcile("ns", "j")
        assert not any(c["type"] == "Failed" for c in kube.objects[Kube.job_path("ns", "j")]["status"]["conditions"])
        assert [p["metadata"]["name"] for p in kube.job_pods("ns", "j")] == ["j-master-0", "j-worker-0"]
        assert kube.job_pods("ns", "j")[1]["metadata"]["uid"] == stale["metadata"]["uid"]  # not replaced yet

        del kube.objects[worker_path]  # gone: its replacement comes
        reconciler.reconcile("ns", "j")
        pods = kube.job_pods("ns", "j")
        assert {p["metadata"]["labels"]["version"] for p in pods} == {"1"}
        for pod in pods:
            pod_path = Kube.core_path("ns", "pods", pod["metadata"]["name"])
            kube.objects[pod_path]["status"] = {"phase": "Running", "podIP": "10.0.0.2"}
        reconciler.reconcile("ns", "j")
        conditions = kube.objects[Kube.job_path("ns", "j")]["status"]["conditions"]
        assert [c["type"] for c in conditions] == ["Created", "Running"]

        # A second failure: no retries left, the job fails.
        kube.objects[Kube.core_path("ns", "pods", "j-worker-0")]["status"]["phase"] = "Failed"
        reconciler.reconcile("ns", "j")
        conditions = kube.objects[Kube.job_path("ns", "j")]["status"]["conditions"]
        assert [(c["type"], c["status"]) for c in conditions][-1] == ("Failed", "True")
    finally:
        reconciler.close()


def test_a_pod_deleted_by_someone_else_comes_back_as_a_restart() -> None:
    kube, reconciler, pg_path = setup()
    try:
        reconciler.reconcile("ns", "j")
        kube.objects[pg_path]["status"] = {"phase": "Running"}
        reconciler.reconcile("ns", "j")
        for name in ("j-master-0", "j-worker-0"):
            kube.objects[Kube.core_path("ns", "pods", name)]["status"] = {"phase": "Running", "podIP": "10.0.0.1"}
        reconciler.reconcile("ns", "j")
        job_uid = kube.objects[Kube.job_path("ns", "j")]["metadata"]["uid"]

        # Volcano (say) deletes a pod of the current version: the version goes up once.
        del kube.objects[Kube.core_path("ns", "pods", "j-worker-0")]
        reconciler.pod_deleted(job_uid, "j-worker-0", 0)
        reconciler.pod_deleted(job_uid, "j-worker-0", 0)  # the same event twice: no second bump
        reconciler.reconcile("ns", "j")
        worker = kube.objects[Kube.core_path("ns", "pods", "j-worker-0")]
        assert worker["metadata"]["labels"]["version"] == "1"
        assert kube.objects[Kube.core_path("ns", "pods", "j-master-0")]["metadata"]["labels"]["version"] == "0"
        restarting = next(c for c in kube.objects[Kube.job_path("ns", "j")]["status"]["conditions"]
                          if c["type"] == "Restarting")
        assert "pod j-worker-0 (version 0) was deleted" in restarting["message"]
        # An old-version pod going does not count again.
        reconciler.pod_deleted(job_uid, "j-master-0", 0)
        assert reconciler.memory[job_uid].version == 1
    finally:
        reconciler.close()


def test_backoff_limit_counts_deletions() -> None:
    kube = FakeKube()
    kube.objects[Kube.job_path("ns", "j")] = job(replicas={"Master": replica(2, port=True)},
                                                 runPolicy={"backoffLimit": 0})
    reconciler = Reconciler(kube, RankTableSink(kube))  # type: ignore[arg-type]
    try:
        reconciler.reconcile("ns", "j")
        kube.objects[Kube.podgroup_path("ns", "j-u-1")]["status"] = {"phase": "Inqueue"}
        reconciler.reconcile("ns", "j")
        del kube.objects[Kube.core_path("ns", "pods", "j-master-0")]
        reconciler.pod_deleted("u-1", "j-master-0", 0)
        reconciler.reconcile("ns", "j")
        conditions = kube.objects[Kube.job_path("ns", "j")]["status"]["conditions"]
        failed = next(c for c in conditions if c["type"] == "Failed")
        assert failed["reason"] == "BackoffLimitExceeded"
        assert kube.job_pods("ns", "j") == []
    finally:
        reconciler.close()
