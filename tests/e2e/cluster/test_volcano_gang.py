"""Volcano gang scheduling of 8-chip pods on emulated 910B nodes."""

from __future__ import annotations

import time
from typing import Any

import pytest
from cluster_e2e_helpers import wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.cluster]

ASCEND = "huawei.com/Ascend910"


def vcjob(name: str, node_selector: dict[str, str], replicas: int, chips: int = 8) -> dict[str, Any]:
    # No Volcano admission webhook runs, so set what it would default: schedulerName, minAvailable,
    # task names and task minAvailable.
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "schedulerName": "volcano",
            "queue": "default",
            "minAvailable": replicas,
            "tasks": [{
                "name": "worker",
                "replicas": replicas,
                "minAvailable": replicas,
                "template": {"spec": {
                    "schedulerName": "volcano",
                    "restartPolicy": "Never",
                    "nodeSelector": node_selector,
                    "containers": [{
                        "name": "main",
                        "image": "npu-emu.invalid/train:latest",
                        "resources": {"requests": {ASCEND: str(chips)}, "limits": {ASCEND: str(chips)}},
                    }],
                }},
            }],
        },
    }


class Api:
    def __init__(self, kube_client: Any, namespace: str) -> None:
        from kubernetes.client import CoreV1Api, CustomObjectsApi

        self.core = CoreV1Api(kube_client)
        self.custom = CustomObjectsApi(kube_client)
        self.ns = namespace

    def create_job(self, body: dict[str, Any]) -> None:
        self.custom.create_namespaced_custom_object("batch.volcano.sh", "v1alpha1", self.ns, "jobs", body)

    def delete_job(self, name: str) -> None:
        self.custom.delete_namespaced_custom_object("batch.volcano.sh", "v1alpha1", self.ns, "jobs", name,
                                                    propagation_policy="Foreground")

    def pods(self, job: str) -> list[Any]:
        return self.core.list_namespaced_pod(self.ns, label_selector=f"volcano.sh/job-name={job}").items

    def podgroup(self, job: str) -> dict[str, Any] | None:
        groups = self.custom.list_namespaced_custom_object("scheduling.volcano.sh", "v1beta1", self.ns,
                                                           "podgroups")["items"]
        for pg in groups:
            owners = pg["metadata"].get("ownerReferences") or []
            if any(o.get("kind") == "Job" and o.get("name") == job for o in owners):
                return pg
        return None


def bound(pods: list[Any]) -> dict[str, str]:
    return {p.metadata.name: p.spec.node_name for p in pods if p.spec.node_name}


def test_gang_binds_whole_nodes_and_second_gang_waits(ascend_nodes_factory, kube_client, namespace):
    api = Api(kube_client, namespace)
    npu910b = ascend_nodes_factory("atlas-800t-a2", 8)
    # 910A capacity elsewhere in the cluster: Volcano's queue has room (so gang B is enqueued), but not
    # where a 910B job may run, as in a mixed fleet.
    ascend_nodes_factory("atlas-800-9000", 8)
    selector = {**npu910b.node_selector, "accelerator-type": "module-910b-8"}
    fleet_nodes = set(npu910b.names)

    # 1. Four 8-chip pods, gang of 4: each pod takes a whole 910B node.
    api.create_job(vcjob("gang-a", selector, replicas=4))
    placed = wait_for("gang-a: 4 pods bound", lambda: (b := bound(api.pods("gang-a"))) and len(b) == 4 and b,
                      timeout_s=90)
    assert len(set(placed.values())) == 4, placed
    assert set(placed.values()) <= fleet_nodes
    wait_for("gang-a pods Running",
             lambda: [p.status.phase for p in api.pods("gang-a")] == ["Running"] * 4, timeout_s=60)

    # 2. A gang of five cannot fit in the four free 910B nodes: none of its pods binds.
    api.create_job(vcjob("gang-b", selector, replicas=5))

    def unschedulable_condition() -> dict[str, Any] | None:
        pg = api.podgroup("gang-b")
        for cond in ((pg or {}).get("status") or {}).get("conditions") or []:
            if cond.get("type") == "Unschedulable" and cond.get("status") == "True":
                return {"phase": pg["status"].get("phase"), **cond}
        return None

    cond = wait_for("gang-b PodGroup condition Unschedulable", unschedulable_condition, timeout_s=60)
    assert cond["phase"] in ("Pending", "Inqueue"), cond
    assert cond["reason"] == "NotEnoughResources", cond
    assert "Insufficient huawei.com/Ascend910" in cond["message"], cond
    time.sleep(3)  # several scheduling cycles (schedule period 200 ms)
    assert bound(api.pods("gang-b")) == {}
    assert all(p.status.phase == "Pending" for p in api.pods("gang-b"))
    # Gang A's pods stay Running: kwok's stock pod-complete would have finished vcjob pods by now.
    assert [p.status.phase for p in api.pods("gang-a")] == ["Running"] * 4

    # 3. Deleting gang A frees its nodes and gang B runs, five pods on five nodes.
    api.delete_job("gang-a")
    placed_b = wait_for("gang-b: 5 pods bound",
                        lambda: (b := bound(api.pods("gang-b"))) and len(b) == 5 and b, timeout_s=120)
    assert len(set(placed_b.values())) == 5
    assert set(placed_b.values()) <= fleet_nodes
    wait_for("gang-b PodGroup Running",
             lambda: ((api.podgroup("gang-b") or {}).get("status") or {}).get("phase") == "Running",
             timeout_s=60)


def test_gang_larger_than_the_cluster_is_not_enqueued(ascend_fleet, control_plane, kube_client, namespace):
    """Volcano does not enqueue a gang the queue cannot hold: its PodGroup stays Pending, no pod is even
    created, and the reason comes as an Unschedulable event on the PodGroup."""
    api = Api(kube_client, namespace)
    total_chips = control_plane.count_nodes("")[2]  # every node of the cluster
    replicas = total_chips // 8 + 1
    api.create_job(vcjob("too-big", ascend_fleet.node_selector, replicas=replicas))

    def quota_event() -> str | None:
        pg = api.podgroup("too-big")
        if not pg:
            return None
        events = api.core.list_namespaced_event(
            namespace, field_selector=f"involvedObject.name={pg['metadata']['name']}").items
        return next((e.message for e in events
                     if e.reason == "Unschedulable" and "huawei.com/Ascend910" in e.message), None)

    message = wait_for("an Unschedulable event naming huawei.com/Ascend910", quota_event, timeout_s=60)
    assert "insufficient" in message
    time.sleep(3)
    assert (api.podgroup("too-big") or {})["status"]["phase"] == "Pending"
    assert api.pods("too-big") == []
