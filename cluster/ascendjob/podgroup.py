"""The Volcano PodGroup `<job>-<uid>` the operator creates before any pod (§7.2)."""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction
from typing import Any

from . import constants as k
from .quantity import format_quantity, parse_quantity
from .spec import JobView

__all__ = ["build_podgroup", "min_resources", "min_task_member", "owner_reference", "podgroup_phase"]


def owner_reference(job: JobView) -> dict[str, Any]:
    return {"apiVersion": k.API_VERSION, "kind": k.KIND, "name": job.name, "uid": job.uid,
            "controller": True, "blockOwnerDeletion": True}


def _pod_requests(template: dict[str, Any]) -> dict[str, Fraction]:
    total: dict[str, Fraction] = defaultdict(Fraction)
    for c in (template.get("spec") or {}).get("containers") or []:
        res = c.get("resources") or {}
        merged = {**(res.get("limits") or {}), **(res.get("requests") or {})}  # requests default to limits
        for name, value in merged.items():
            total[str(name)] += parse_quantity(value)
    return total


def min_resources(job: JobView) -> dict[str, str]:
    """Requests of the first minMember pods, master role first (kubeflow's CalcPGMinResources)."""
    left = job.min_available
    total: dict[str, Fraction] = defaultdict(Fraction)
    for r in job.ordered():
        if left <= 0:
            break
        count = min(left, r.replicas)
        left -= count
        for name, value in _pod_requests(r.template).items():
            total[name] += value * count
    return {name: format_quantity(value) for name, value in sorted(total.items()) if value}


def min_task_member(job: JobView) -> dict[str, int]:
    """minAvailable shared out per lower-cased replica type, master role first, so the parts add up to
    minMember (a job with minAvailable below its replica count still gangs on minAvailable pods)."""
    left = job.min_available
    out: dict[str, int] = {}
    for r in job.ordered():
        out[r.rt] = min(left, r.replicas)
        left -= out[r.rt]
    return out


def build_podgroup(job: JobView) -> dict[str, Any]:
    policy = job.run_policy.get("schedulingPolicy") or {}
    spec: dict[str, Any] = {
        "minMember": job.min_available,
        "minTaskMember": min_task_member(job),
        "queue": job.queue,
        "minResources": dict(policy.get("minResources") or {}) or min_resources(job),
    }
    if policy.get("priorityClass"):
        spec["priorityClassName"] = policy["priorityClass"]
    return {
        "apiVersion": f"{k.PODGROUP_GROUP}/{k.PODGROUP_VERSION}",
        "kind": "PodGroup",
        "metadata": {
            "name": job.podgroup_name,
            "namespace": job.namespace,
            "labels": dict(job.labels),
            "annotations": dict(job.annotations),
            "ownerReferences": [owner_reference(job)],
        },
        "spec": spec,
    }


def podgroup_phase(podgroup: dict[str, Any] | None) -> str:
    return str(((podgroup or {}).get("status") or {}).get("phase") or "")
