"""The reference PyTorch AscendJob (shared/reference/acjob-pytorch-example.yaml), applied unchanged, on
emulated 910B nodes: Volcano gang-schedules it, fleet mode gives each pod its chips, the stand-in
operator writes a rank table that matches the emulator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from acjob_e2e_helpers import Api, chips_of, delete_namespace_and_wait, env_of, running, wait_for, wait_service_account

pytestmark = [pytest.mark.e2e, pytest.mark.cluster]

EXAMPLE_CANDIDATES = (
    Path(__file__).resolve().parents[3].parent / "shared" / "reference" / "acjob-pytorch-example.yaml",
    Path(__file__).resolve().parents[3] / "fixtures" / "ascendjob" / "acjob-pytorch-example.yaml",
)


def _example() -> dict[str, Any]:
    for path in EXAMPLE_CANDIDATES:
        if path.exists():
            return dict(yaml.safe_load(path.read_text()))
    raise AssertionError(f"reference example not found in {[str(p) for p in EXAMPLE_CANDIDATES]}")


@pytest.fixture
def acjob_ns(acjob_stack: Any) -> Any:
    from kubernetes.client import CoreV1Api
    from kubernetes.client.exceptions import ApiException

    core = CoreV1Api(acjob_stack.api_client)
    delete_namespace_and_wait(core, "acjob")  # left over from an earlier run on a kept cluster
    for _ in range(120):
        try:
            core.create_namespace({"metadata": {"name": "acjob"}})
            break
        except ApiException as e:  # still terminating
            if e.status != 409:
                raise
            import time

            time.sleep(0.5)
    wait_service_account(core, "acjob")
    yield "acjob"
    delete_namespace_and_wait(core, "acjob")


def test_reference_example_runs_with_a_completed_rank_table(acjob_stack: Any, acjob_ns: str) -> None:
    body = _example()
    api = Api(acjob_stack.api_client, acjob_ns)
    created = api.create_job(body)
    name, uid = created["metadata"]["name"], created["metadata"]["uid"]

    # PodGroup <job>-<uid>, with the job's labels, minMember and minTaskMember.
    pg = wait_for("PodGroup", lambda: api.podgroup(f"{name}-{uid}"))
    assert pg["spec"]["minMember"] == 2
    assert pg["spec"]["queue"] == "default"
    assert pg["spec"]["minTaskMember"] == {"master": 1, "worker": 1}
    assert pg["spec"]["minResources"]["huawei.com/Ascend910"] == "3"  # master 1 + first worker 2
    assert pg["metadata"]["labels"]["framework"] == "pytorch"
    assert pg["metadata"]["ownerReferences"][0]["uid"] == uid

    pods = wait_for("3 pods Running", lambda: running(api.pods(name), 3), timeout_s=120)
    # Complete once every pod holds its chips (fleet mode's annotation) and has an IP.
    table = wait_for("completed rank table", lambda: api.completed_ranktable(name), timeout_s=60)
    assert [p.metadata.name for p in pods] == [f"{name}-master-0", f"{name}-worker-0", f"{name}-worker-1"]
    svc = api.core.read_namespaced_service(f"{name}-master-0", acjob_ns)
    assert svc.spec.cluster_ip and svc.spec.ports[0].name == "ascendjob-port" and svc.spec.ports[0].port == 2222

    # Distinct chips on 910B nodes, as many as each pod asked for.
    b_nodes = set(acjob_stack.nodes["b"])
    used: list[tuple[str, int]] = []
    for pod in pods:
        pod = api.core.read_namespaced_pod(pod.metadata.name, acjob_ns)
        node, chips = chips_of(pod)
        assert node in b_nodes
        want = 1 if "master" in pod.metadata.name else 2
        assert len(chips) == want, (pod.metadata.name, chips)
        used += [(node, c) for c in chips]
        labels, ann = pod.metadata.labels, pod.metadata.annotations
        assert labels["training.kubeflow.org/operator-name"] == "ascendjob-controller"
        assert labels["training.kubeflow.org/job-name"] == name and labels["job-name"] == name
        assert labels["group-name"] == "mindxdl.gitee.com" and labels["version"] == "0"
        assert ann["scheduling.k8s.io/group-name"] == f"{name}-{uid}"
        assert pod.spec.scheduler_name == "volcano"
        env = env_of(pod)
        assert env["ASCEND_VISIBLE_DEVICES"] == "metadata.annotations['huawei.com/Ascend910']"
        assert env["MASTER_ADDR"] == svc.spec.cluster_ip and env["MASTER_PORT"] == "2222"
        assert env["WORLD_SIZE"] == "6" and env["LOCAL_WORLD_SIZE"] == "2" and env["LOCAL_RANK"] == "0,1"
        assert env["MINDX_TASK_ID"] == uid and env["XDL_IP"] == "status.hostIP"  # the template's own env kept
        rank = {"master-0": "0", "worker-0": "1", "worker-1": "2"}[pod.metadata.name.split(f"{name}-")[1]]
        assert env["RANK"] == rank and ann["hccl/rankIndex"] == rank
        if "master" in pod.metadata.name:
            assert labels["training.kubeflow.org/job-role"] == "master"
    assert len(used) == len(set(used)) == 5

    # The rank table: completed, in the ConfigMap and in the ranktable volume's file, matching the emulator.
    assert table["version"] == "1.0" and table["server_count"] == "3"
    path = acjob_stack.ranktable_root / f"{acjob_ns}.{name}" / "hccl.json"
    assert json.loads(path.read_text()) == table
    emulator = acjob_stack.emulator.client
    ranks = []
    for server in table["server_list"]:
        pod = next(p for p in api.pods(name) if p.metadata.uid == server["server_id"])
        node, chips = chips_of(pod)
        assert server["host_ip"] == emulator.node(node)["host_ip"]
        assert server["container_ip"] == pod.status.pod_ip
        assert [int(d["device_id"]) for d in server["device"]] == chips
        for d in server["device"]:
            assert d["device_ip"] == emulator.chip(node, int(d["device_id"]))["device_ip"]
            ranks.append(int(d["rank_id"]))
    assert ranks == sorted(ranks) and ranks == [0, 2, 3, 4, 5]  # rankIndex x chips-per-pod + position

    cond = wait_for("Running condition", lambda: api.condition_true(name, "Running"))
    assert cond["reason"] == "JobRunning"
    status = api.job(name)["status"]
    assert status["replicaStatuses"] == {"Master": {"active": 1, "succeeded": 0, "failed": 0},
                                         "Worker": {"active": 2, "succeeded": 0, "failed": 0}}
    assert api.condition_true(name, "Created")

    # Deleting the job removes everything it owned (garbage collection).
    api.delete_job(name)
    wait_for("pods, PodGroup, Service and ConfigMap gone", lambda: not api.pods(name)
             and api.podgroup(f"{name}-{uid}") is None and api.configmap(f"rings-config-{name}") is None
             and not api.core.list_namespaced_service(acjob_ns).items, timeout_s=120)
