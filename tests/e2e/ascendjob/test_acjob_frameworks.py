"""MindSpore (Scheduler + Workers) on 910B and a TensorFlow job on an A3 SuperPoD (rank table 1.2)."""

from __future__ import annotations

from typing import Any

import pytest
from acjob_e2e_helpers import Api, acjob, chips_of, env_of, replica, running, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.cluster]


def test_mindspore_scheduler_and_workers(acjob_stack: Any, acjob_namespace: str) -> None:
    api = Api(acjob_stack.api_client, acjob_namespace)
    pool = acjob_stack.pool_selector("b")
    body = acjob("ms", "mindspore", {"Scheduler": replica("Scheduler", 1, 0, pool),
                                     "Worker": replica("Worker", 2, 8, pool)})
    uid = api.create_job(body)["metadata"]["uid"]
    pods = wait_for("3 pods Running", lambda: running(api.pods("ms"), 3), timeout_s=120)
    assert [p.metadata.name for p in pods] == ["ms-scheduler-0", "ms-worker-0", "ms-worker-1"]
    table = wait_for("completed rank table", lambda: api.completed_ranktable("ms"), timeout_s=60)
    svc = api.core.read_namespaced_service("ms-scheduler-0", acjob_namespace)
    pg = api.podgroup(f"ms-{uid}")
    assert pg is not None and pg["spec"]["minTaskMember"] == {"scheduler": 1, "worker": 2}

    pods = [api.core.read_namespaced_pod(p.metadata.name, acjob_namespace) for p in pods]
    sched, workers = pods[0], pods[1:]
    env = env_of(sched)
    assert env["MS_ROLE"] == "MS_SCHED" and env["MS_SCHED_HOST"] == "status.podIP"
    assert env["NPU_POD"] == "false" and "ASCEND_VISIBLE_DEVICES" not in env
    assert sched.metadata.labels["training.kubeflow.org/job-role"] == "master"
    for index, pod in enumerate(workers):
        env = env_of(pod)
        assert env["MS_ROLE"] == "MS_WORKER"
        assert env["MS_SCHED_HOST"] == svc.spec.cluster_ip and env["MS_SCHED_PORT"] == "2222"
        assert env["MS_NODE_RANK"] == str(index) and env["MS_SERVER_NUM"] == "0"
        assert env["MS_LOCAL_WORKER"] == "8" and env["MS_WORKER_NUM"] == "16" and env["NPU_POD"] == "true"
        assert env["REPLICA_TYPE"] == "Worker"
        assert len(chips_of(pod)[1]) == 8
    # Two 8-chip workers take two whole nodes; the scheduler holds no chips and is not in the table.
    assert chips_of(workers[0])[0] != chips_of(workers[1])[0]
    assert table["server_count"] == "2"
    assert [d["rank_id"] for s in table["server_list"] for d in s["device"]] == [str(i) for i in range(16)]
    wait_for("Running", lambda: api.condition_true("ms", "Running"))


def test_tensorflow_on_a3_superpod_writes_a_1_2_rank_table(acjob_stack: Any, acjob_namespace: str) -> None:
    api = Api(acjob_stack.api_client, acjob_namespace)
    selector = {**acjob_stack.pool_selector("c"), "accelerator-type": "module-a3-16-super-pod"}
    body = acjob("tf", "tensorflow", {"Chief": replica("Chief", 1, 16, selector),
                                      "Worker": replica("Worker", 1, 16, selector)})
    api.create_job(body)
    wait_for("2 pods Running", lambda: running(api.pods("tf"), 2), timeout_s=120)
    table = wait_for("completed rank table", lambda: api.completed_ranktable("tf"), timeout_s=60)
    assert table["version"] == "1.2"
    assert list(table) == ["status", "server_list", "server_count", "version", "super_pod_list"]
    emulator = acjob_stack.emulator.client
    pods = {p.metadata.uid: p for p in api.pods("tf")}
    for server in table["server_list"]:
        node, chips = chips_of(pods[server["server_id"]])
        assert len(chips) == 16
        for d in server["device"]:
            chip = emulator.chip(node, int(d["device_id"]))
            assert d["device_ip"] == chip["device_ip"]
            assert d["super_device_id"] == str(chip["super_device_id"])
            assert list(d) == ["device_id", "device_ip", "super_device_id", "rank_id"]
    assert table["super_pod_list"] == [{"super_pod_id": "0", "server_list": [
        {"server_id": s["server_id"]} for s in table["server_list"]]}]
    chief = next(p for p in api.pods("tf") if p.metadata.name == "tf-chief-0")
    env = env_of(chief)
    assert env["CM_CHIEF_IP"] == "status.podIP" and env["CM_WORKER_IP"] == "status.podIP"
    assert env["CM_RANK"] == "0" and env["CM_WORKER_SIZE"] == "32" and env["CM_LOCAL_WORKER"] == "16"
    worker_env = env_of(next(p for p in api.pods("tf") if p.metadata.name == "tf-worker-0"))
    svc = api.core.read_namespaced_service("tf-chief-0", acjob_namespace)
    assert worker_env["CM_CHIEF_IP"] == svc.spec.cluster_ip and worker_env["CM_RANK"] == "1"
