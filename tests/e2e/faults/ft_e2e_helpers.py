"""Helpers for the fault-tolerance e2e tests: job builders, namespace handling."""

from __future__ import annotations

import copy
from typing import Any

from cluster.namespaces import delete_namespace_and_wait, wait_service_account  # noqa: F401 (re-exported)

ASCEND = "huawei.com/Ascend910"
FAIL_LABEL = "pod-failed.stage.npu-emu.io"


def replica(rtype: str, replicas: int, chips: int, node_selector: dict[str, str]) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "ascend", "image": "npu-emu.invalid/train:latest",
                                 "command": ["/bin/bash", "-c", "train"],
                                 "resources": {"limits": {ASCEND: chips}, "requests": {ASCEND: chips}}}
    if rtype != "Worker":
        container["ports"] = [{"containerPort": 2222, "name": "ascendjob-port", "protocol": "TCP"}]
    return {"replicas": replicas, "restartPolicy": "Never",
            "template": {"spec": {"nodeSelector": dict(node_selector), "containers": [container]}}}


def acjob(name: str, selector: dict[str, str], *, workers: int = 1, chips: int = 4,
          labels: dict[str, str] | None = None) -> dict[str, Any]:
    """A PyTorch AscendJob: one Master and `workers` Workers, `chips` NPUs each."""
    replicas = {"Master": replica("Master", 1, chips, selector), "Worker": replica("Worker", workers, chips, selector)}
    return {
        "apiVersion": "mindxdl.gitee.com/v1", "kind": "AscendJob",
        "metadata": {"name": name, "labels": {"framework": "pytorch", **(labels or {})}},
        "spec": {"schedulerName": "volcano", "replicaSpecs": copy.deepcopy(replicas),
                 "runPolicy": {"schedulingPolicy": {"minAvailable": 1 + workers, "queue": "default"}}},
    }


def vcjob(name: str, selector: dict[str, str], replicas: int, chips: int,
          policies: list[dict[str, str]]) -> dict[str, Any]:
    """A Volcano Job with what its admission webhook would default set by hand (no webhook runs)."""
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": name},
        "spec": {"schedulerName": "volcano", "queue": "default", "minAvailable": replicas, "maxRetry": 5,
                 "policies": policies,
                 "tasks": [{"name": "worker", "replicas": replicas, "minAvailable": replicas,
                            "template": {"spec": {
                                "schedulerName": "volcano", "restartPolicy": "Never", "nodeSelector": selector,
                                "containers": [{"name": "main", "image": "npu-emu.invalid/train:latest",
                                                "resources": {"requests": {ASCEND: str(chips)},
                                                              "limits": {ASCEND: str(chips)}}}]}}}]},
    }


def create_acjob(api_client: Any, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
    from kubernetes.client import CustomObjectsApi

    return dict(CustomObjectsApi(api_client).create_namespaced_custom_object(
        "mindxdl.gitee.com", "v1", namespace, "ascendjobs", body))


def create_vcjob(api_client: Any, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
    from kubernetes.client import CustomObjectsApi

    return dict(CustomObjectsApi(api_client).create_namespaced_custom_object(
        "batch.volcano.sh", "v1alpha1", namespace, "jobs", body))


def job_events(core: Any, namespace: str, name: str, reason: str) -> list[Any]:
    events = core.list_namespaced_event(namespace, field_selector=f"involvedObject.name={name}").items
    return [e for e in events if e.reason == reason]


