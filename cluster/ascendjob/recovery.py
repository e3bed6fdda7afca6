"""What to do about failed pods: the restart path, kept in one place so the fault-tolerance labels
(§7.5) plug in here.

Decided in this order:
  1. no failed pod                        -> nothing;
  2. backoffLimit reached                 -> fail the job;
  3. replica restartPolicy ExitCode and a retryable exit code (128-255, kubeflow's rule)
                                          -> recreate those pods;
  4. label pod-rescheduling: "on"         -> recreate only the failed pods;
  5. label fault-retry-times: N, with fewer than N restarts so far
                                          -> restart the whole job (every pod deleted and recreated
                                             with the next `version`);
  6. otherwise                            -> the job fails (status.py reports it).
Each recreate / restart counts as one restart (the pods' `version` label) and sets Restarting; the
job shows Running again once its new pods run.

Not here yet (issue 7): fault-scheduling grace / force / off, which choose how the pods are deleted
(graceful then forced after 15 min, at once, or not at all); `delete_grace_s` is the hook for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from . import constants as k
from .spec import JobView

__all__ = ["Action", "Decision", "decide", "delete_grace_s", "failed_pods"]


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
    """Grace period for pods deleted by a restart (None: the pod's own). Issue 7: fault-scheduling."""
    return 0 if job.labels.get(k.LABEL_FAULT_SCHEDULING) == "force" else None


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
