"""Job status: replica counts from the pods, the condition they imply (successPolicy included), and
kubeflow's condition bookkeeping (UpdateJobConditions / filterOutCondition).

successPolicy:
  ""          the master role (Master / Chief / Scheduler) succeeded; a job without one succeeds when
              every replica has;
  AllWorkers  every Worker succeeded (the master role may still be running).
A failed replica fails the job unless recovery.py restarts it first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from . import constants as k
from .spec import JobView

__all__ = ["Verdict", "is_finished", "now_rfc3339", "replica_statuses", "set_condition", "verdict"]


def now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def replica_statuses(job: JobView, pods: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """{rtype: {active, succeeded, failed}} over the job's pods (pods being deleted are not failures)."""
    by_rt = {r.rt: r.rtype for r in job.replicas.values()}
    out = {r.rtype: {"active": 0, "succeeded": 0, "failed": 0} for r in job.ordered()}
    for pod in pods:
        meta = pod.get("metadata") or {}
        rtype = by_rt.get((meta.get("labels") or {}).get(k.LABEL_REPLICA_TYPE, ""))
        if rtype is None:
            continue
        phase = (pod.get("status") or {}).get("phase")
        if phase == "Running":
            out[rtype]["active"] += 1
        elif phase == "Succeeded":
            out[rtype]["succeeded"] += 1
        elif phase == "Failed" and not meta.get("deletionTimestamp"):
            out[rtype]["failed"] += 1
    return out


@dataclass(frozen=True)
class Verdict:
    condition: str  # Running, Succeeded or Failed
    reason: str
    message: str


def _succeeded(job: JobView, counts: Mapping[str, Mapping[str, int]]) -> bool:
    if job.success_policy == "AllWorkers":
        worker = job.replicas.get(k.WORKER)
        if worker is None:
            return False
        return counts[k.WORKER]["succeeded"] >= worker.replicas
    master = job.master
    if master is not None:
        return counts[master.rtype]["succeeded"] >= master.replicas > 0
    return all(counts[r.rtype]["succeeded"] >= r.replicas for r in job.replicas.values())


def verdict(job: JobView, counts: Mapping[str, Mapping[str, int]]) -> Verdict | None:
    """What the pods say about the job, or None when nothing has started yet."""
    failed = {rt: c["failed"] for rt, c in counts.items() if c["failed"]}
    if failed:
        return Verdict(k.FAILED, k.REASON_FAILED,
                       f"AscendJob {job.key} has failed because {failed} replica(s) failed.")
    if _succeeded(job, counts):
        return Verdict(k.SUCCEEDED, k.REASON_SUCCEEDED, f"AscendJob {job.key} successfully completed.")
    if any(c["active"] for c in counts.values()):
        return Verdict(k.RUNNING, k.REASON_RUNNING, f"AscendJob {job.key} is running.")
    return None


def is_finished(status: Mapping[str, Any]) -> bool:
    return any(c.get("type") in (k.SUCCEEDED, k.FAILED) and c.get("status") == "True"
               for c in status.get("conditions") or [])


def has_condition(status: Mapping[str, Any], ctype: str) -> bool:
    return any(c.get("type") == ctype and c.get("status") == "True" for c in status.get("conditions") or [])


def set_condition(status: dict[str, Any], ctype: str, reason: str, message: str, now: str | None = None) -> bool:
    """Add or refresh a True condition as kubeflow does; return whether anything changed.

    Running and Restarting replace each other; Succeeded / Failed turn Running to False.
    """
    now = now or now_rfc3339()
    conditions: list[dict[str, Any]] = list(status.get("conditions") or [])
    current = next((c for c in conditions if c.get("type") == ctype), None)
    if current and current.get("status") == "True" and current.get("reason") == reason \
            and current.get("message") == message:
        return False
    kept = []
    for c in conditions:
        c = dict(c)
        ctype_old = c.get("type")
        if ctype_old == ctype or {ctype, ctype_old} == {k.RUNNING, k.RESTARTING}:
            continue
        if ctype in (k.SUCCEEDED, k.FAILED) and ctype_old == k.RUNNING:
            if c.get("status") != "False":
                c["status"] = "False"
                c["lastTransitionTime"] = now
            c["lastUpdateTime"] = now
        kept.append(c)
    transition = current.get("lastTransitionTime") if current and current.get("status") == "True" else now
    kept.append({"type": ctype, "status": "True", "reason": reason, "message": message,
                 "lastUpdateTime": now, "lastTransitionTime": transition or now})
    status["conditions"] = kept
    return True
