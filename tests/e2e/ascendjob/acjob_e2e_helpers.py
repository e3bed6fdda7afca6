"""Helpers for the AscendJob e2e tests: API access, job builders, polling."""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable
from typing import Any, TypeVar

from cluster.namespaces import delete_namespace_and_wait, wait_service_account  # noqa: F401 (re-exported)

T = TypeVar("T")

GROUP, VERSION, PLURAL = "mindxdl.gitee.com", "v1", "ascendjobs"
CONFIGURATION = "ascend.kubectl.kubernetes.io/ascend-910-configuration"


def wait_for(what: str, probe: Callable[[], T | None], timeout_s: float = 90.0, interval_s: float = 0.25) -> T:
    deadline = time.monotonic() + timeout_s
    last: Any = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(interval_s)
    raise AssertionError(f"timed out after {timeout_s:.0f}s waiting for {what}; last value: {last!r}")


class Api:
    def __init__(self, api_client: Any, namespace: str) -> None:
        from kubernetes.client import CoreV1Api, CustomObjectsApi

        self.core = CoreV1Api(api_client)
        self.custom = CustomObjectsApi(api_client)
        self.ns = namespace

    def create_job(self, body: dict[str, Any]) -> dict[str, Any]:
        return dict(self.custom.create_namespaced_custom_object(GROUP, VERSION, self.ns, PLURAL, body))

    def job(self, name: str) -> dict[str, Any]:
        return dict(self.custom.get_namespaced_custom_object(GROUP, VERSION, self.ns, PLURAL, name))

    def delete_job(self, name: str) -> None:
        self.custom.delete_namespaced_custom_object(GROUP, VERSION, self.ns, PLURAL, name,
                                                    propagation_policy="Background")

    def conditions(self, name: str) -> dict[str, dict[str, Any]]:
        return {c["type"]: c for c in (self.job(name).get("status") or {}).get("conditions") or []}

    def condition_true(self, name: str, ctype: str) -> dict[str, Any] | None:
        c = self.conditions(name).get(ctype)
        return c if c and c.get("status") == "True" else None

    def podgroup(self, name: str) -> dict[str, Any] | None:
        from kubernetes.client.exceptions import ApiException

        try:
            return dict(self.custom.get_namespaced_custom_object("scheduling.volcano.sh", "v1beta1", self.ns,
                                                                 "podgroups", name))
        except ApiException as e:
            if e.status == 404:
                return None
            raise

    def pods(self, job: str) -> list[Any]:
        return sorted(self.core.list_namespaced_pod(self.ns, label_selector=f"training.kubeflow.org/job-name={job}")
                      .items, key=lambda p: p.metadata.name)

    def configmap(self, name: str) -> Any | None:
        from kubernetes.client.exceptions import ApiException

        try:
            return self.core.read_namespaced_config_map(name, self.ns)
        except ApiException as e:
            if e.status == 404:
                return None
            raise

    def ranktable(self, job: str) -> dict[str, Any] | None:
        cm = self.configmap(f"rings-config-{job}")
        if cm is None or not (cm.data or {}).get("hccl.json"):
            return None
        return dict(json.loads(cm.data["hccl.json"]))

    def completed_ranktable(self, job: str) -> dict[str, Any] | None:
        table = self.ranktable(job)
        return table if table and table["status"] == "completed" else None


def running(pods: list[Any], count: int) -> list[Any] | None:
    return pods if len(pods) == count and all(p.status.phase == "Running" for p in pods) else None


def chips_of(pod: Any) -> tuple[str, list[int]]:
    """(node, phy ids) from the device plugin's configuration annotation."""
    conf = json.loads(pod.metadata.annotations[CONFIGURATION])
    return pod.spec.node_name, [int(d["device_id"]) for d in conf["devices"]]


def env_of(pod: Any) -> dict[str, Any]:
    container = next(c for c in pod.spec.containers if c.name == "ascend")
    return {e.name: (e.value if e.value_from is None else e.value_from.field_ref.field_path)
            for e in container.env or []}


def replica(rtype: str, replicas: int, chips: int, node_selector: dict[str, str], *,
            labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    resources = {"limits": {"huawei.com/Ascend910": chips}, "requests": {"huawei.com/Ascend910": chips}} \
        if chips else {}
    container: dict[str, Any] = {"name": "ascend", "image": "npu-emu.invalid/train:latest",
                                 "command": ["/bin/bash", "-c", "train"], "resources": resources}
    if rtype != "Worker":
        container["ports"] = [{"containerPort": 2222, "name": "ascendjob-port", "protocol": "TCP"}]
    template: dict[str, Any] = {"spec": {"nodeSelector": dict(node_selector), "containers": [container]}}
    if labels or annotations:
        template["metadata"] = {"labels": dict(labels or {}), "annotations": dict(annotations or {})}
    return {"replicas": replicas, "restartPolicy": "Never", "template": template}


def acjob(name: str, framework: str, replicas: dict[str, dict[str, Any]], *, min_available: int | None = None,
          success_policy: str | None = None, labels: dict[str, str] | None = None) -> dict[str, Any]:
    total = sum(int(r["replicas"]) for r in replicas.values())
    body: dict[str, Any] = {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "AscendJob",
        "metadata": {"name": name, "labels": {"framework": framework, **(labels or {})}},
        "spec": {"schedulerName": "volcano", "replicaSpecs": copy.deepcopy(replicas),
                 "runPolicy": {"schedulingPolicy": {"minAvailable": min_available or total, "queue": "default"}}},
    }
    if success_policy is not None:
        body["spec"]["successPolicy"] = success_policy
    return body


