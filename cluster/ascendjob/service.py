"""The Service `<job>-<master|chief|scheduler>-0` whose ClusterIP is MASTER_ADDR / MS_SCHED_HOST /
CM_CHIEF_IP (§7.2). A job with no master role (a MindSpore job of Workers only) gets none."""

from __future__ import annotations

from typing import Any

from . import constants as k
from .podgroup import owner_reference
from .spec import JobView, ReplicaView

__all__ = ["base_labels", "build_service", "service_address", "service_name"]


def base_labels(job: JobView) -> dict[str, str]:
    """kubeflow common GenLabels: operator, job and group names."""
    name = job.name.replace("/", "-")
    return {
        k.LABEL_OPERATOR_NAME: k.OPERATOR_NAME,
        k.LABEL_GROUP_NAME: k.GROUP,
        k.LABEL_JOB_NAME: name,
        k.LABEL_JOB_NAME_DEPRECATED: name,
    }


def service_name(job: JobView) -> str | None:
    master = job.master
    return f"{job.name}-{master.rt}-0" if master else None


def _labels(job: JobView, master: ReplicaView) -> dict[str, str]:
    return {**base_labels(job), k.LABEL_REPLICA_TYPE: master.rt, k.LABEL_REPLICA_INDEX: "0"}


def build_service(job: JobView) -> dict[str, Any] | None:
    master = job.master
    if master is None:
        return None
    labels = _labels(job, master)
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": service_name(job),
            "namespace": job.namespace,
            "labels": labels,
            "ownerReferences": [owner_reference(job)],
        },
        "spec": {
            "type": "ClusterIP",
            "selector": labels,
            "ports": [{"name": k.PORT_NAME, "port": master.port() or k.DEFAULT_PORT}],
        },
    }


def service_address(service: dict[str, Any] | None) -> tuple[str, str]:
    """(ClusterIP, port of ascendjob-port) of a Service read back from the apiserver, or ("", "")."""
    if not service:
        return "", ""
    spec = service.get("spec") or {}
    for port in spec.get("ports") or []:
        if port.get("name") == k.PORT_NAME:
            return str(spec.get("clusterIP") or ""), str(port.get("port"))
    return "", ""
