"""Pods `<job>-<rtype>-<index>` built from a replica's template (§7.2, the real pod.go).

Labels: kubeflow's (operator, job, group, replica type and index, job-role=master on the master role)
plus `version` (restarts so far). Annotations: the template's, plus scheduling.k8s.io/group-name (the
PodGroup), volcano.sh/task-spec (the lower-case replica type, which Volcano's minTaskMember counts) and
hccl/rankIndex (the pod's rank, which orders the rank table).
"""

from __future__ import annotations

import copy
from typing import Any

from . import constants as k
from .env import PodEnvContext, build_env
from .podgroup import owner_reference
from .service import base_labels
from .spec import JobView, ReplicaView

__all__ = ["build_pod", "pod_name", "restart_policy"]


def pod_name(job: JobView, r: ReplicaView, index: int) -> str:
    return f"{job.name}-{r.rt}-{index}"


def restart_policy(r: ReplicaView) -> str:
    """The pod's restartPolicy: ExitCode is the operator's business, so its pods never restart in place."""
    return "Never" if r.restart_policy == "ExitCode" else r.restart_policy


def build_pod(job: JobView, r: ReplicaView, index: int, ctx: PodEnvContext, version: int = 0) -> dict[str, Any]:
    template = copy.deepcopy(r.template)
    meta = template.get("metadata") or {}
    spec = template.get("spec") or {}
    labels = dict(meta.get("labels") or {})
    if r.is_master:
        labels[k.LABEL_JOB_ROLE] = "master"
    labels[k.LABEL_VERSION] = str(version)
    labels.update(base_labels(job))
    labels[k.LABEL_REPLICA_TYPE] = r.rt
    labels[k.LABEL_REPLICA_INDEX] = str(index)
    annotations = dict(meta.get("annotations") or {})
    annotations[k.ANN_RANK_INDEX] = str(job.rank(r.rtype, index))
    annotations[k.ANN_GROUP_NAME] = job.podgroup_name
    annotations[k.ANN_TASK_SPEC] = r.rt

    env = build_env(job, r, index, ctx)
    for c in spec.get("containers") or []:
        if c.get("name") == k.CONTAINER:
            c["env"] = [*(c.get("env") or []), *env]
    spec["restartPolicy"] = restart_policy(r)
    if not spec.get("schedulerName"):
        spec["schedulerName"] = job.scheduler_name or k.GANG_SCHEDULER
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": pod_name(job, r, index),
            "namespace": job.namespace,
            "labels": labels,
            "annotations": annotations,
            "ownerReferences": [owner_reference(job)],
        },
        "spec": spec,
    }
