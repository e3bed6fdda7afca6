"""One reconcile of one AscendJob: read the job, its PodGroup, Service and pods; make them what the
job says; write its status. Idempotent: every call starts from what the apiserver has.

  1. finished job -> clean up (PodGroup; pods by cleanPodPolicy) and stop;
  2. invalid job -> Failed (InvalidJob);
  3. PodGroup <job>-<uid>: create; until Volcano moves it past Pending, no pod exists (Created only);
  4. master Service: create, read its ClusterIP (MASTER_ADDR);
  5. failed pods -> recovery.decide (recreate pods / restart the job / fail);
  6. create the missing pods <job>-<rtype>-<index> of the current version, delete surplus ones;
  7. rank table: rewrite when it changes (initializing -> completed; back to initializing on restart);
  8. status: replica counts, condition from the pods and successPolicy, times.
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from kubernetes.client.exceptions import ApiException

from . import constants as k
from .env import PodEnvContext
from .kube import Kube
from .podgroup import build_podgroup, podgroup_phase
from .pods import build_pod, pod_name
from .ranktable import RankTable, build_ranktable, live_pods
from .recovery import Action, decide, delete_grace_s, overdue
from .service import build_service, service_address
from .sink import RankTableSink
from .spec import InvalidJob, JobView
from .status import has_condition, is_finished, now_rfc3339, replica_statuses, set_condition, verdict

__all__ = ["JobMemory", "Reconciler", "Retry"]

log = logging.getLogger(__name__)


class Retry(Exception):
    """Reconcile again after `delay_s` (something the job waits for is not there yet)."""

    def __init__(self, message: str, delay_s: float = 1.0) -> None:
        super().__init__(message)
        self.delay_s = delay_s


@dataclass
class JobMemory:
    """What the controller keeps per job between reconciles (all of it can be rebuilt from the cluster)."""

    version: int = -1  # restarts so far; -1: not yet read back from the pods' `version` labels
    table: RankTable | None = None  # the rank table last written
    deleted: set[str] = field(default_factory=set)  # uids of pods a restart deleted (until they are gone)
    restart_reason: str = ""  # pods of the current version were deleted by someone else
    events: set[str] = field(default_factory=set)


class Reconciler:
    def __init__(self, kube: Kube, sink: RankTableSink, *, create_workers: int = 16) -> None:
        self.kube = kube
        self.sink = sink
        self.memory: dict[str, JobMemory] = {}  # by job uid
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=create_workers, thread_name_prefix="acjob-create")
        self._clusterd: tuple[float, str] = (0.0, k.CLUSTERD_DOMAIN)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def _memory(self, uid: str) -> JobMemory:
        with self._lock:
            return self.memory.setdefault(uid, JobMemory())

    def pod_deleted(self, job_uid: str, pod: str, version: int) -> None:
        """A pod of the job is gone. As the real operator (onPodDeleteFunc): when it was of the current
        version, the version goes up, so its replacement counts as a restart (e.g. Volcano deleting the
        pods of a job on a faulty chip). Deletions the restart path made itself carry an older version."""
        with self._lock:
            mem = self.memory.get(job_uid)
            if mem is not None and mem.version >= 0 and version == mem.version:
                mem.version += 1
                mem.restart_reason = f"pod {pod} (version {version}) was deleted"

    def forget(self, uid: str) -> None:
        with self._lock:
            self.memory.pop(uid, None)

    # ------------------------------------------------------------------------------------------------
    def reconcile(self, namespace: str, name: str) -> None:
        raw = self.kube.get(self.kube.job_path(namespace, name))
        if raw is None:
            return  # deleted: garbage collection removes what it owned
        job = JobView(raw)
        mem = self._memory(job.uid)
        status = copy.deepcopy(job.status)
        old = copy.deepcopy(status)
        status.setdefault("conditions", [])
        status.setdefault("replicaStatuses", {})
        if not has_condition(status, k.CREATED):
            set_condition(status, k.CREATED, k.REASON_CREATED, f"AscendJob {job.key} is created.")
        try:
            self._reconcile(job, raw, status, mem)
        finally:
            self._write_status(job, raw, old, status)

    def _reconcile(self, job: JobView, raw: dict[str, Any], status: dict[str, Any], mem: JobMemory) -> None:
        if is_finished(status):
            self._clean_up(job, self.kube.job_pods(job.namespace, job.name))
            return
        try:
            job.validate()
        except InvalidJob as e:
            self._finish(job, status, k.FAILED, k.REASON_INVALID, str(e))
            return

        pg = self.kube.get(self.kube.podgroup_path(job.namespace, job.podgroup_name))
        if pg is None:
            pg = self.kube.create(self.kube.podgroup_path(job.namespace), build_podgroup(job)) or {}
        if podgroup_phase(pg) in ("", "Pending"):
            return  # Volcano has not enqueued the gang: no pods yet (the PodGroup watch wakes us)

        ctx = self._env_context(job)
        pods = self.kube.job_pods(job.namespace, job.name)
        if mem.version < 0:
            with self._lock:
                mem.version = max((_version(p) for p in pods), default=0)

        # Pods a restart already deleted are not the job's any more, even before they are gone.
        all_pods = pods
        mem.deleted &= {str(p["metadata"].get("uid")) for p in all_pods}
        for stuck in overdue(job, all_pods, datetime.now(UTC)):  # fault-scheduling grace: 15 min, then force
            self.kube.delete(self.kube.core_path(job.namespace, "pods", stuck), grace_s=0)
        pods = [p for p in all_pods if str(p["metadata"].get("uid")) not in mem.deleted]

        decision = decide(job, pods, mem.version)
        if decision.action in (Action.RECREATE_PODS, Action.RESTART_JOB):
            with self._lock:  # before the deletes: their watch events must see the new version
                mem.version += 1
            grace = delete_grace_s(job)
            for pod in pods:
                if pod["metadata"]["name"] in decision.pods:
                    self.kube.delete(self.kube.core_path(job.namespace, "pods", pod["metadata"]["name"]),
                                     grace_s=grace)
                    mem.deleted.add(str(pod["metadata"].get("uid")))
            if set_condition(status, k.RESTARTING, k.REASON_RESTARTING, decision.message):
                self.kube.event(raw, "Warning", k.REASON_RESTARTING, decision.message)
            self._sync_ranktable(job, [p for p in pods if p["metadata"]["name"] not in decision.pods], mem)
            return
        if decision.action is Action.FAIL and decision.message:
            self._finish(job, status, k.FAILED, k.REASON_BACKOFF, decision.message)
            return

        limit = job.backoff_limit
        if limit is not None and mem.version > limit:
            self._finish(job, status, k.FAILED, k.REASON_BACKOFF, f"AscendJob {job.key} has failed because it "
                                                                  f"has reached the specified backoff limit ({limit})")
            return
        if mem.restart_reason:
            message = f"AscendJob {job.key} is restarting because {mem.restart_reason}."
            mem.restart_reason = ""
            if set_condition(status, k.RESTARTING, k.REASON_RESTARTING, message):
                self.kube.event(raw, "Warning", k.REASON_RESTARTING, message)
        self._sync_pods(job, all_pods, ctx, mem.version)
        self._sync_ranktable(job, pods, mem)

        counts = replica_statuses(job, pods)
        status["replicaStatuses"] = counts
        if not status.get("startTime"):
            status["startTime"] = now_rfc3339()
        v = verdict(job, counts)
        if v is None:
            return
        if v.condition in (k.SUCCEEDED, k.FAILED):
            self._finish(job, status, v.condition, v.reason, v.message)
        elif has_condition(status, k.RESTARTING) and sum(c["active"] + c["succeeded"] for c in counts.values()) \
                < job.total_replicas:
            return  # Restarting until every replacement runs (kubeflow would say Running at the first one)
        elif set_condition(status, v.condition, v.reason, v.message):
            self.kube.event(raw, "Normal", v.reason, v.message)

    # ------------------------------------------------------------------------------------------------
    def _env_context(self, job: JobView) -> PodEnvContext:
        ip, port = "", str(k.DEFAULT_PORT)
        body = build_service(job)
        if body is not None:
            path = self.kube.core_path(job.namespace, "services", body["metadata"]["name"])
            svc = self.kube.get(path) or self.kube.create(self.kube.core_path(job.namespace, "services"), body)
            ip, port = service_address(svc or self.kube.get(path))
            if not ip:
                raise Retry(f"service {body['metadata']['name']} has no ClusterIP yet")
        return PodEnvContext(master_ip=ip, master_port=port, clusterd_ip=self._clusterd_ip())

    def _clusterd_ip(self) -> str:
        checked, value = self._clusterd
        if time.monotonic() - checked > 30:
            value = self.kube.clusterip(k.CLUSTERD_NAMESPACE, k.CLUSTERD_SERVICE) or k.CLUSTERD_DOMAIN
            self._clusterd = (time.monotonic(), value)
        return value

    def _sync_pods(self, job: JobView, pods: list[dict[str, Any]], ctx: PodEnvContext, version: int) -> None:
        existing = {p["metadata"]["name"] for p in pods}
        wanted = {pod_name(job, r, i) for r in job.ordered() for i in range(r.replicas)}
        bodies = [build_pod(job, r, i, ctx, version) for r in job.ordered() for i in range(r.replicas)
                  if pod_name(job, r, i) not in existing]
        for name in sorted(existing - wanted):
            self.kube.delete(self.kube.core_path(job.namespace, "pods", name))
        if not bodies:
            return
        path = self.kube.core_path(job.namespace, "pods")
        futures = [self._pool.submit(self.kube.create, path, b) for b in bodies]
        errors = [e for e in (f.exception() for f in futures) if e is not None]
        created = sum(1 for f in futures if f.exception() is None and f.result() is not None)
        if created:
            log.info("%s: created %d pod(s) (version %d)", job.key, created, version)
        if errors:
            if all(_namespace_terminating(e) for e in errors):
                return  # the namespace is going, and the job with it
            raise RuntimeError(f"creating {len(errors)} pod(s) of {job.key} failed: {_short(errors[0])}")

    def _sync_ranktable(self, job: JobView, pods: list[dict[str, Any]], mem: JobMemory) -> None:
        live = live_pods(pods)
        last = mem.table
        if last is not None and last.completed:
            uids = {str(p["metadata"].get("uid")) for p in live}
            if last.pod_uids <= uids:
                return  # a completed table stays until one of its pods goes (a restart)
        table = build_ranktable(job, live)
        if last is not None and last.to_json() == table.to_json():
            return
        self.sink.write(job, table)
        mem.table = table
        log.info("%s: rank table %s%s", job.key, table.status, f" ({table.problem})" if table.problem else "")

    def _finish(self, job: JobView, status: dict[str, Any], condition: str, reason: str, message: str) -> None:
        if set_condition(status, condition, reason, message):
            self.kube.event(dict(job.raw), "Normal" if condition == k.SUCCEEDED else "Warning", reason, message)
        if not status.get("completionTime"):
            status["completionTime"] = now_rfc3339()
        if condition == k.SUCCEEDED:
            for counts in (status.get("replicaStatuses") or {}).values():
                counts["succeeded"] = counts.get("succeeded", 0) + counts.get("active", 0)
                counts["active"] = 0
        self._clean_up(job, self.kube.job_pods(job.namespace, job.name))

    def _clean_up(self, job: JobView, pods: list[dict[str, Any]]) -> None:
        """A finished job: its PodGroup goes; its pods too as cleanPodPolicy says (default None: kept)."""
        self.kube.delete(self.kube.podgroup_path(job.namespace, job.podgroup_name))
        policy = job.clean_pod_policy
        for pod in live_pods(pods):
            phase = (pod.get("status") or {}).get("phase")
            if policy == "All" or (policy == "Running" and phase in ("Running", "Pending")):
                self.kube.delete(self.kube.core_path(job.namespace, "pods", pod["metadata"]["name"]))

    def _write_status(self, job: JobView, raw: dict[str, Any], old: dict[str, Any], new: dict[str, Any]) -> None:
        if old == new:
            return
        new["lastReconcileTime"] = now_rfc3339()
        try:
            self.kube.patch_job_status(job.namespace, job.name, new)
        except ApiException as e:
            if e.status != 404:
                raise


def _version(pod: dict[str, Any]) -> int:
    try:
        return int(((pod.get("metadata") or {}).get("labels") or {}).get(k.LABEL_VERSION, "0"))
    except ValueError:
        return 0


def _namespace_terminating(e: BaseException) -> bool:
    return isinstance(e, ApiException) and e.status == 403 and "NamespaceTerminating" in str(e.body or "")


def _short(e: BaseException) -> str:
    if isinstance(e, ApiException):
        return f"{e.status} {e.reason}: {str(e.body or '')[:300]}"
    return str(e)
