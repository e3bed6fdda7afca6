"""PodGroup, Service, pod and environment builders, from job dicts (no cluster)."""

from __future__ import annotations

import pytest
from acjob_unit_helpers import example, job, replica

from cluster.ascendjob import JobView, PodEnvContext, build_env, build_pod, build_podgroup, build_service
from cluster.ascendjob.podgroup import min_resources
from cluster.ascendjob.quantity import format_quantity, parse_quantity
from cluster.ascendjob.service import service_address

CTX = PodEnvContext(master_ip="10.0.0.194", master_port="2222", clusterd_ip="10.0.0.7")


def env_map(env: list[dict]) -> dict[str, str]:
    return {e["name"]: e.get("value", (e.get("valueFrom") or {}).get("fieldRef", {}).get("fieldPath")) for e in env}


def test_podgroup_of_the_reference_example() -> None:
    view = JobView(example())
    pg = build_podgroup(view)
    assert pg["apiVersion"] == "scheduling.volcano.sh/v1beta1" and pg["kind"] == "PodGroup"
    assert pg["metadata"]["name"] == "default-test-pytorch-1234-uid"
    assert pg["metadata"]["namespace"] == "acjob"
    assert pg["metadata"]["labels"] == {"framework": "pytorch", "tor-affinity": "null"}
    owner = pg["metadata"]["ownerReferences"][0]
    assert owner == {"apiVersion": "mindxdl.gitee.com/v1", "kind": "AscendJob", "name": "default-test-pytorch",
                     "uid": "1234-uid", "controller": True, "blockOwnerDeletion": True}
    # minAvailable 2 of 3 replicas: the master and one worker, master first.
    assert pg["spec"] == {"minMember": 2, "minTaskMember": {"master": 1, "worker": 1}, "queue": "default",
                          "minResources": {"huawei.com/Ascend910": "3"}}


def test_podgroup_defaults_and_explicit_policy() -> None:
    view = JobView(job(runPolicy={"schedulingPolicy": {"priorityClass": "high", "minResources": {"cpu": "4"}}}))
    spec = build_podgroup(view)["spec"]
    assert spec["minMember"] == 3 and spec["minTaskMember"] == {"master": 1, "worker": 2}
    assert spec["queue"] == "default" and spec["priorityClassName"] == "high" and spec["minResources"] == {"cpu": "4"}


def test_min_resources_add_requests_up() -> None:
    replicas = {"Master": replica(8, port=True), "Worker": replica(8, 3)}
    for r in replicas.values():
        r["template"]["spec"]["containers"][0]["resources"]["requests"].update({"cpu": "500m", "memory": "1Gi"})
    assert min_resources(JobView(job(replicas=replicas))) == {
        "cpu": "2", "huawei.com/Ascend910": "32", "memory": str(4 * 2**30)}
    assert parse_quantity("1.5") == parse_quantity("1500m") and format_quantity(parse_quantity("250m")) == "250m"
    with pytest.raises(ValueError):
        parse_quantity("lots")


def test_service_is_the_master_roles_with_the_ascendjob_port() -> None:
    view = JobView(example())
    svc = build_service(view)
    assert svc is not None
    assert svc["metadata"]["name"] == "default-test-pytorch-master-0"
    assert svc["spec"]["type"] == "ClusterIP"
    assert svc["spec"]["ports"] == [{"name": "ascendjob-port", "port": 2222}]
    assert svc["spec"]["selector"] == {
        "training.kubeflow.org/operator-name": "ascendjob-controller", "group-name": "mindxdl.gitee.com",
        "training.kubeflow.org/job-name": "default-test-pytorch", "job-name": "default-test-pytorch",
        "training.kubeflow.org/replica-type": "master", "training.kubeflow.org/replica-index": "0"}
    assert service_address({"spec": {"clusterIP": "10.1.2.3", "ports": svc["spec"]["ports"]}}) == ("10.1.2.3", "2222")
    assert build_service(JobView(job("mindspore", {"Worker": replica(8, 2)}))) is None


def test_service_port_defaults_to_2222_when_the_master_declares_none() -> None:
    view = JobView(job(replicas={"Master": replica(8), "Worker": replica(8)}))
    assert build_service(view)["spec"]["ports"] == [{"name": "ascendjob-port", "port": 2222}]


def test_pod_of_the_reference_example() -> None:
    view = JobView(example())
    worker = view.replicas["Worker"]
    pod = build_pod(view, worker, 1, CTX, version=3)
    meta = pod["metadata"]
    assert meta["name"] == "default-test-pytorch-worker-1" and meta["namespace"] == "acjob"
    assert meta["labels"] == {
        "version": "3", "training.kubeflow.org/operator-name": "ascendjob-controller",
        "group-name": "mindxdl.gitee.com", "training.kubeflow.org/job-name": "default-test-pytorch",
        "job-name": "default-test-pytorch", "training.kubeflow.org/replica-type": "worker",
        "training.kubeflow.org/replica-index": "1"}
    assert meta["annotations"] == {"hccl/rankIndex": "2",
                                   "scheduling.k8s.io/group-name": "default-test-pytorch-1234-uid",
                                   "volcano.sh/task-spec": "worker"}
    assert pod["spec"]["schedulerName"] == "volcano" and pod["spec"]["restartPolicy"] == "Never"
    assert pod["spec"]["nodeSelector"] == {"accelerator-type": "module-910b-8", "host-arch": "huawei-arm"}
    env = pod["spec"]["containers"][0]["env"]
    assert env[0]["name"] == "XDL_IP"  # the template's own variables come first
    master = build_pod(view, view.replicas["Master"], 0, CTX)
    assert master["metadata"]["labels"]["training.kubeflow.org/job-role"] == "master"
    assert "training.kubeflow.org/job-role" not in meta["labels"]
    # The job's template is not touched.
    assert "env" not in JobView(example()).replicas["Worker"].template["spec"]["containers"][0] or \
        len(JobView(example()).replicas["Worker"].template["spec"]["containers"][0]["env"]) == 1


def test_pytorch_env() -> None:
    view = JobView(example())
    env = build_env(view, view.replicas["Worker"], 0, CTX)
    assert [e["name"] for e in env] == [
        "ASCEND_VISIBLE_DEVICES", "MINDX_TASK_ID", "MINDX_SERVER_IP", "MINDX_SERVER_DOMAIN", "HostNetwork",
        "HCCL_LOGIC_SUPERPOD_ID", "REPLICA_TYPE", "LOCAL_WORLD_SIZE", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR",
        "MASTER_PORT", "RANK"]
    assert env[0] == {"name": "ASCEND_VISIBLE_DEVICES",
                      "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['huawei.com/Ascend910']"}}}
    values = env_map(env)
    assert values["MINDX_TASK_ID"] == "1234-uid" and values["MINDX_SERVER_IP"] == "10.0.0.7"
    assert values["MINDX_SERVER_DOMAIN"] == "clusterd-grpc-svc.mindx-dl.svc.cluster.local"
    assert values["HostNetwork"] == "false" and values["REPLICA_TYPE"] == "Worker"
    # Workers ask for 2, and the master mounts a chip too: 3 NPU pods, workers ranked after it.
    assert (values["LOCAL_WORLD_SIZE"], values["WORLD_SIZE"], values["LOCAL_RANK"]) == ("2", "6", "0,1")
    assert (values["MASTER_ADDR"], values["MASTER_PORT"], values["RANK"]) == ("10.0.0.194", "2222", "1")
    assert env_map(build_env(view, view.replicas["Master"], 0, CTX))["RANK"] == "0"


def test_mindspore_env() -> None:
    view = JobView(job("mindspore", {"Scheduler": replica(0, port=True), "Worker": replica(8, 2)}))
    sched = env_map(build_env(view, view.replicas["Scheduler"], 0, CTX))
    assert "ASCEND_VISIBLE_DEVICES" not in sched and "HCCL_LOGIC_SUPERPOD_ID" not in sched
    assert sched["MS_SCHED_HOST"] == "status.podIP" and sched["MS_ROLE"] == "MS_SCHED"
    assert sched["NPU_POD"] == "false" and sched["MS_NODE_RANK"] == "0"
    worker = env_map(build_env(view, view.replicas["Worker"], 1, CTX))
    assert worker["MS_SCHED_HOST"] == "10.0.0.194" and worker["MS_SCHED_PORT"] == "2222"
    assert worker["MS_ROLE"] == "MS_WORKER" and worker["MS_NODE_RANK"] == "1" and worker["MS_SERVER_NUM"] == "0"
    assert worker["MS_LOCAL_WORKER"] == "8" and worker["MS_WORKER_NUM"] == "16" and worker["NPU_POD"] == "true"
    # Workers only: no framework environment (the real operator's rule), the common set still.
    alone = JobView(job("mindspore", {"Worker": replica(8, 2)}))
    names = [e["name"] for e in build_env(alone, alone.replicas["Worker"], 0, CTX)]
    assert "MS_ROLE" not in names and "MINDX_TASK_ID" in names


def test_tensorflow_env() -> None:
    view = JobView(job("tensorflow", {"Chief": replica(8, port=True), "Worker": replica(8, 3)}))
    chief = env_map(build_env(view, view.replicas["Chief"], 0, CTX))
    assert chief["CM_CHIEF_IP"] == "status.podIP" and chief["CM_WORKER_IP"] == "status.podIP"
    assert chief["CM_RANK"] == "0" and chief["CM_CHIEF_DEVICE"] == "0" and chief["CM_CHIEF_PORT"] == "2222"
    worker = env_map(build_env(view, view.replicas["Worker"], 2, CTX))
    assert worker["CM_CHIEF_IP"] == "10.0.0.194" and worker["CM_RANK"] == "3"
    assert worker["CM_LOCAL_WORKER"] == "8" and worker["CM_WORKER_SIZE"] == "32"


def test_logic_superpod_id_follows_sp_block() -> None:
    view = JobView(job(replicas={"Master": replica(16), "Worker": replica(16, 3)}, annotations={"sp-block": "32"}))
    ids = [env_map(build_env(view, view.replicas["Worker"], i, CTX))["HCCL_LOGIC_SUPERPOD_ID"] for i in range(3)]
    assert ids == ["0", "1", "1"]  # ranks 1, 2, 3 with two 16-chip pods per 32-chip logical SuperPoD
