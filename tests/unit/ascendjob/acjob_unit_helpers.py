"""Job and pod dicts for the AscendJob unit tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "ascendjob"
CONFIGURATION = "ascend.kubectl.kubernetes.io/ascend-910-configuration"


def example(name: str = "acjob-pytorch-example.yaml", uid: str = "1234-uid") -> dict[str, Any]:
    job = dict(yaml.safe_load((FIXTURES / name).read_text()))
    job["metadata"]["uid"] = uid
    return job


def replica(chips: int, replicas: int = 1, port: bool = False, **spec: Any) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "ascend", "image": "x"}
    if chips:
        container["resources"] = {"limits": {"huawei.com/Ascend910": chips},
                                  "requests": {"huawei.com/Ascend910": chips}}
    if port:
        container["ports"] = [{"name": "ascendjob-port", "containerPort": 2222}]
    return {"replicas": replicas, "restartPolicy": "Never",
            "template": {"spec": {"containers": [container], **spec}}}


def job(framework: str = "pytorch", replicas: dict[str, Any] | None = None, *, labels: dict[str, str] | None = None,
        annotations: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "mindxdl.gitee.com/v1", "kind": "AscendJob",
            "metadata": {"name": "j", "namespace": "ns", "uid": "u-1",
                         "labels": {"framework": framework, **(labels or {})}, "annotations": dict(annotations or {})},
            "spec": {"replicaSpecs": replicas if replicas is not None else
                     {"Master": replica(8), "Worker": replica(8, 2)}, **spec}}


def device(phy: int, ip: str, sdid: int | None = None) -> dict[str, str]:
    return {"device_id": str(phy), "device_ip": ip, "super_device_id": str(sdid) if sdid is not None else "-2"}


def pod(name: str, rtype: str, rank: int, devices: list[dict[str, str]] | None, *, uid: str = "", ip: str = "10.0.0.9",
        host_ip: str = "172.16.0.1", phase: str = "Running", chips: int | None = None) -> dict[str, Any]:
    annotations: dict[str, str] = {"hccl/rankIndex": str(rank)}
    if devices is not None:
        annotations[CONFIGURATION] = json.dumps(
            {"pod_name": name, "server_id": uid or f"uid-{name}", "host_ip": host_ip, "super_pod_id": -2,
             "devices": devices, "rack_id": -2, "server_index": "-2", "server_ip": host_ip},
            separators=(",", ":"))
    count = len(devices or []) if chips is None else chips
    resources = {"requests": {"huawei.com/Ascend910": str(count)}} if count else {}
    return {"metadata": {"name": name, "uid": uid or f"uid-{name}", "annotations": annotations,
                         "labels": {"training.kubeflow.org/replica-type": rtype}},
            "spec": {"containers": [{"name": "ascend", "resources": resources}]},
            "status": {"phase": phase, "podIP": ip}}
