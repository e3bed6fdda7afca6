"""What to do about failed pods: the restart path, kept in one place so the fault-tolerance labels
(§7.5) plug in here.

Decided in this order:
  1. no failed pod                        -> nothing;
  2. backoffLimit reached                 -> fail the job;
  3. replica restartPolicy ExitCode and a retryable exit code (128-255, kubeflow's rule)
                                          -> recreate those pods;
  4. every failed pod failed for a device fault (annotation npu-emu.io/device-fault, set by fleet
     mode) and label fault-scheduling: force | grace
                                          -> with pod-rescheduling: "on" recreate only the failed
                                             pods, else restart the whole job;
  5. label pod-rescheduling: "on"         -> recreate only the failed pods;
  6. label fault-retry-times: N, with fewer than N restarts so far
                                          -> restart the whole job (every pod deleted and recreated
                                             with the next `version`);
  7. otherwise                            -> the job fails (status.py reports it).
Each recreate / restart counts as one restart (the pods' `version` label) and sets Restarting; the
job shows Running again once its new pods run.

fault-scheduling also chooses how pods are deleted (`delete_grace_s`): force at once (grace 0); grace
with the pod's own grace period, then forced once 15 minutes passed (`overdue`); off (or no label): no
device-fault rescheduling at all (rules 5-7 still apply).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Any

from . import constants as k
from .spec import JobView

__all__ = ["Action", "Decision", "decide", "delete_grace_s", "device_fault", "failed_pods", "overdue"]


class Action(Enum):
    NONE = "none"
    FAIL = "fail"
    RECREATE_PODS = "recreate-pods"
    RESTART_JOB = "restart-job"


@dataclass(frozen=True)
class Decision:
    action: Action
    pods: tuple[str, ...] = field(default=())  # pods to delete (all of them for RESTART_JOB)
    message: str = ""


def failed_pods(pods: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [p for p in pods if (p.get("status") or {}).get("phase") == "Failed"
            and not (p.get("metadata") or {}).get("deletionTimestamp")]


def _exit_code(pod: Mapping[str, Any]) -> int | None:
    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        if cs.get("name") == k.CONTAINER:
            terminated = (cs.get("state") or {}).get("terminated")
            if terminated is not None:
                return int(terminated.get("exitCode", 0))
    return None


def _rtype(job: JobView, pod: Mapping[str, Any]) -> str:
    rt = ((pod.get("metadata") or {}).get("labels") or {}).get(k.LABEL_REPLICA_TYPE, "")
    return next((r.rtype for r in job.replicas.values() if r.rt == rt), "")


def _retry_times(job: JobView) -> int:
    try:
        return max(0, min(100, int(job.labels.get(k.LABEL_FAULT_RETRY_TIMES, "0"))))
    except ValueError:
        return 0


def delete_grace_s(job: JobView) -> int | None:
    """Grace period for pods deleted by a restart: 0 with fault-scheduling force, else the pod's own."""
    return 0 if job.labels.get(k.LABEL_FAULT_SCHEDULING) == "force" else None


def device_fault(pod: Mapping[str, Any]) -> str:
    """What fleet mode wrote when it failed the pod for a device fault ("" when it did not)."""
    return str(((pod.get("metadata") or {}).get("annotations") or {}).get(k.ANN_DEVICE_FAULT, ""))


def overdue(job: JobView, pods: Iterable[Mapping[str, Any]], now: datetime,
            after_s: float = k.GRACE_FORCE_AFTER_S) -> list[str]:
    """fault-scheduling grace: pods being deleted for longer than `after_s` (to delete with grace 0)."""
    if job.labels.get(k.LABEL_FAULT_SCHEDULING) != "grace":
        return []
    out = []
    for pod in pods:
        meta = pod.get("metadata") or {}
        since = meta.get("deletionTimestamp")
        if not since:
            continue
        started = datetime.fromisoformat(str(since).replace("Z", "+00:00"))
        grace = int(meta.get("deletionGracePeriodSeconds") or 0)
        # deletionTimestamp is when the grace period ends: the deletion began `grace` seconds before it.
        if (now - started).total_seconds() + grace >= after_s:
            out.append(str(meta.get("name")))
    return sorted(out)


def decide(job: JobView, pods: Iterable[Mapping[str, Any]], restarts: int) -> Decision:
    pods = list(pods)
    failed = failed_pods(pods)
    if not failed:
        return Decision(Action.NONE)
    names = tuple(sorted(str(p["metadata"]["name"]) for p in failed))
    limit = job.backoff_limit
    if limit is not None and restarts >= limit:
        return Decision(Action.FAIL, names, f"AscendJob {job.key} has failed because it has reached the "
                                            f"specified backoff limit ({limit})")
    retryable = []
    for pod in failed:
        r = job.replicas.get(_rtype(job, pod))
        code = _exit_code(pod)
        if r is not None and r.restart_policy == "ExitCode" and code is not None and 128 <= code <= 255:
            retryable.append(str(pod["metadata"]["name"]))
    if len(retryable) == len(failed):
        return Decision(Action.RECREATE_PODS, tuple(sorted(retryable)),
                        f"AscendJob {job.key} is restarting because {', '.join(retryable)} exited with a "
                        f"retryable code.")
    faults = [device_fault(p) for p in failed]
    if all(faults) and job.labels.get(k.LABEL_FAULT_SCHEDULING) in k.FAULT_SCHEDULING_ON:
        why = f"device fault {', '.join(sorted(set(faults)))}"
        if job.labels.get(k.LABEL_POD_RESCHEDULING) == "on":
            return Decision(Action.RECREATE_PODS, names,
                            f"AscendJob {job.key} is rescheduling failed pod(s) {', '.join(names)} after a {why}.")
        everything = tuple(sorted(str(p["metadata"]["name"]) for p in pods
                                  if not (p.get("metadata") or {}).get("deletionTimestamp")))
        return Decision(Action.RESTART_JOB, everything,
                        f"AscendJob {job.key} is restarting after a {why} (fault-scheduling "
                        f"{job.labels[k.LABEL_FAULT_SCHEDULING]}).")
    if job.labels.get(k.LABEL_POD_RESCHEDULING) == "on":
        return Decision(Action.RECREATE_PODS, names,
                        f"AscendJob {job.key} is rescheduling failed pod(s) {', '.join(names)}.")
    retry = _retry_times(job)
    if restarts < retry:
        everything = tuple(sorted(str(p["metadata"]["name"]) for p in pods
                                  if not (p.get("metadata") or {}).get("deletionTimestamp")))
        return Decision(Action.RESTART_JOB, everything,
                        f"AscendJob {job.key} is unconditional retry job and remain retry times is "
                        f"<{retry - restarts - 1}>.")
    return Decision(Action.FAIL, names)
