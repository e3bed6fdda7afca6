"""The stand-in Ascend Operator: watches AscendJobs, their pods and PodGroups, and reconciles each job
(reconcile.py) on a pool of workers, one reconcile per job at a time.

    with AscendJobController(api_client, ranktable_root=Path("/tmp/rt")) as ctl:
        ...                      # runs in background threads until the block ends
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

from . import constants as k
from .kube import JOBS, POD_SELECTOR, PODGROUPS, Kube
from .leader import LeaderElector
from .reconcile import Reconciler, Retry
from .sink import RankTableSink
from .workqueue import WorkQueue

__all__ = ["AscendJobController"]

log = logging.getLogger(__name__)


def _job_key_of_owned(obj: dict[str, Any]) -> str | None:
    meta = obj.get("metadata") or {}
    for ref in meta.get("ownerReferences") or []:
        if ref.get("kind") == k.KIND and str(ref.get("apiVersion", "")).startswith(k.GROUP + "/"):
            return f"{meta.get('namespace')}/{ref.get('name')}"
    return None


def _job_key(obj: dict[str, Any]) -> str | None:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace')}/{meta.get('name')}"


class AscendJobController:
    def __init__(self, api_client: ApiClient, *, ranktable_root: Path | None = None, workers: int = 4,
                 create_configmap: bool = True, resync_s: float = 30.0, watch_timeout_s: int = 30,
                 leader_elect: bool = True, lease_namespace: str = "kube-system") -> None:
        self.kube = Kube(api_client)
        self.reconciler = Reconciler(self.kube, RankTableSink(self.kube, ranktable_root,
                                                              create_configmap=create_configmap))
        self.queue = WorkQueue()
        self.workers = workers
        self.resync_s = resync_s
        self.watch_timeout_s = watch_timeout_s
        self.stop_event = threading.Event()
        self.ready = threading.Event()
        self.reconciles = 0
        self.errors: list[str] = []
        self._jobs: dict[str, str] = {}  # key -> uid of every job seen
        self._synced: set[str] = set()
        self._threads: list[threading.Thread] = []
        self.elector = LeaderElector(self.kube, namespace=lease_namespace) if leader_elect else None
        if self.elector is not None:
            self.elector.on_start_leading.append(self._enqueue_all)

    # lifecycle --------------------------------------------------------------------------------------
    def start(self) -> AscendJobController:
        watches: list[tuple[str, str, str | None, Callable[[dict[str, Any]], str | None]]] = [
            ("jobs", f"{JOBS}/{k.PLURAL}", None, _job_key),
            ("pods", "/api/v1/pods", POD_SELECTOR, _job_key_of_owned),
            ("podgroups", f"{PODGROUPS}/{k.PODGROUP_PLURAL}", None, _job_key_of_owned),
        ]
        for name, path, selector, key_of in watches:
            self._spawn(f"acjob-watch-{name}", self._watch_loop, name, path, selector, key_of)
        if self.elector is not None:
            self._spawn("acjob-leader", self.elector.run, self.stop_event)
        for i in range(self.workers):
            self._spawn(f"acjob-worker-{i}", self._work_loop)
        self._spawn("acjob-resync", self._resync_loop)
        return self

    def _spawn(self, name: str, target: Callable[..., None], *args: Any) -> None:
        t = threading.Thread(target=target, args=args, name=name, daemon=True)
        t.start()
        self._threads.append(t)

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop working: workers finish their reconcile, the lease is given up. Watch threads are
        daemons blocked on a stream; they end with their watch or the process."""
        import time

        self.stop_event.set()
        self.queue.close()
        deadline = time.monotonic() + timeout_s
        workers = [t for t in self._threads if not t.name.startswith("acjob-watch-")]
        for t in workers:
            t.join(max(0.0, deadline - time.monotonic()))
        if self.elector is not None:
            try:
                self.elector.release()
            except Exception as e:
                log.debug("releasing the lease: %s", e)
        self.reconciler.close()
        alive = [t.name for t in workers if t.is_alive()]
        if alive:
            raise RuntimeError(f"the AscendJob controller did not stop: {alive} still running")

    @property
    def leading(self) -> bool:
        return self.elector is None or self.elector.leading.is_set()

    def _enqueue_all(self) -> None:
        for key in list(self._jobs):
            self.queue.add(key)

    def run_forever(self) -> None:
        self.start()
        try:
            self.stop_event.wait()
        finally:
            self.stop()

    def __enter__(self) -> AscendJobController:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    # watching ---------------------------------------------------------------------------------------
    def _watch_loop(self, name: str, path: str, selector: str | None,
                    key_of: Callable[[dict[str, Any]], str | None]) -> None:
        version = ""
        while not self.stop_event.is_set():
            try:
                if not version:
                    items, version = self.kube.list(path, selector)
                    for obj in items:
                        self._seen(name, obj, key_of)
                    self._synced.add(name)
                    if len(self._synced) == 3:
                        self.ready.set()
                for event in self.kube.watch(path, version, selector=selector, timeout_s=self.watch_timeout_s):
                    obj = event.get("object") or {}
                    if event.get("type") == "ERROR":
                        version = "" if obj.get("code") == 410 else version
                        break
                    version = str((obj.get("metadata") or {}).get("resourceVersion") or version)
                    if event.get("type") != "BOOKMARK":
                        self._seen(name, obj, key_of, deleted=event.get("type") == "DELETED")
                    if self.stop_event.is_set():
                        return
            except ApiException as e:
                if e.status == 410:
                    version = ""
                    continue
                log.warning("watch %s: %s %s", name, e.status, e.reason)
                self.stop_event.wait(1.0)
            except Exception as e:  # connection drops: re-list
                if self.stop_event.is_set():
                    return
                log.warning("watch %s: %s", name, e)
                version = ""
                self.stop_event.wait(0.5)

    def _seen(self, kind: str, obj: dict[str, Any], key_of: Callable[[dict[str, Any]], str | None],
              deleted: bool = False) -> None:
        key = key_of(obj)
        if not key:
            return
        if kind == "jobs":
            if deleted:
                uid = self._jobs.pop(key, None)
                if uid:
                    self.reconciler.forget(uid)
                namespace, name = key.split("/", 1)
                self.reconciler.sink.forget(namespace, name)
                return
            self._jobs[key] = str((obj.get("metadata") or {}).get("uid"))
        elif kind == "pods" and deleted:
            meta = obj.get("metadata") or {}
            owner: dict[str, Any] = next(
                (r for r in meta.get("ownerReferences") or [] if r.get("kind") == k.KIND), {})
            try:
                version = int((meta.get("labels") or {}).get(k.LABEL_VERSION, ""))
            except ValueError:
                version = -1
            if owner.get("uid") and version >= 0:
                self.reconciler.pod_deleted(str(owner["uid"]), str(meta.get("name")), version)
        self.queue.add(key)

    def _resync_loop(self) -> None:
        while not self.stop_event.wait(self.resync_s):
            self._enqueue_all()

    # working ----------------------------------------------------------------------------------------
    def _work_loop(self) -> None:
        while not self.stop_event.is_set():
            key = self.queue.get(timeout_s=0.5)
            if key is None:
                continue
            if not self.leading:  # another controller holds the lease; every job is queued when we win it
                self.queue.done(key)
                continue
            try:
                namespace, name = key.split("/", 1)
                self.reconciler.reconcile(namespace, name)
                self.reconciles += 1
            except Retry as e:
                log.debug("%s: %s", key, e)
                self.queue.add(key, e.delay_s)
            except ApiException as e:
                if e.status == 403 and "NamespaceTerminating" in str(e.body or ""):
                    log.debug("%s: namespace terminating", key)  # the job goes with it
                else:
                    log.warning("reconciling %s failed: %s %s", key, e.status, e.reason)
                    self.errors.append(f"{key}: {e.status} {e.reason}")
                    del self.errors[:-50]
                    self.queue.add(key, 1.0)
            except Exception as e:
                log.warning("reconciling %s failed: %s", key, e, exc_info=log.isEnabledFor(logging.DEBUG))
                self.errors.append(f"{key}: {e}")
                del self.errors[:-50]
                self.queue.add(key, 1.0)
            finally:
                self.queue.done(key)
