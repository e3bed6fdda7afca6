"""Fleet mode: one process standing in for kubelet + device plugin on many kubelet-less (kwok) nodes.

- follows the emulator's event stream for every node (one SSE connection, one NodeState per node);
- watches pods cluster-wide; a pod bound to one of our nodes and requesting huawei.com/Ascend910 gets chips:
  the ones Volcano named in its huawei.com/Ascend910 annotation, else the allocator's choice among the
  node's free healthy chips; the pod gets the real plugin's annotations; chips come back when it ends;
- per node keeps status capacity/allocatable (healthy chips), the device-info ConfigMap, labels and
  annotations, and fault Events current.

Writes are coalesced per node (a node is flushed at most once per `coalesce_s` however many events hit
it), at most one flush per node runs at a time, and at most `concurrency` run at once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from kubernetes import watch
from kubernetes.client.exceptions import ApiException

from . import constants as k
from .allocator import AllocationError, choose
from .annotations import node_annotations, node_labels, pod_annotations
from .feed import EmulatorFeed, http_client
from .model import device_name, parse_device_name
from .publish import KubePublisher
from .state import NodeState, Snapshot
from .sync import NodeSync, schedulable
from .volcano import PodInfo, pod_info
from .workload_faults import DEFAULT_EXIT_CODE, DEFAULT_THRESHOLD, KubePodFailer, PodFailer, victims

__all__ = ["Fleet", "FleetOptions"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FleetOptions:
    concurrency: int = 16
    coalesce_s: float = 0.02
    resync_s: float = 60.0  # rewrite every node's objects this often, whatever the diff says
    watch_timeout_s: int = 5  # server-side pod watch timeout; bounds how long stop() waits
    fail_pods_at: str | None = DEFAULT_THRESHOLD  # a held chip at this level or worse fails the pod; None: never
    fail_exit_code: int = DEFAULT_EXIT_CODE


@dataclass
class _NodeBook:
    state: NodeState
    sync: NodeSync
    assigned: dict[str, tuple[PodInfo, tuple[int, ...]]] = field(default_factory=dict)  # pod uid -> chips
    pending: dict[str, PodInfo] = field(default_factory=dict)  # pod uid -> pod waiting for chips
    failed: set[str] = field(default_factory=set)  # pod uids failed for a device fault (workload_faults)
    labelled: bool = False
    force: bool = False  # rewrite everything on the next flush (periodic resync)

    def used(self) -> set[int]:
        return {c for _, chips in self.assigned.values() for c in chips}


class Fleet:
    def __init__(
        self,
        emulator_url: str,
        publisher: KubePublisher,
        *,
        nodes: Iterable[str] | None = None,
        token: str | None = None,
        options: FleetOptions | None = None,
        pod_failer: PodFailer | None = None,
    ) -> None:
        self.emulator_url = emulator_url
        self.publisher = publisher
        self.only = set(nodes) if nodes else None
        self.token = token
        self.options = options or FleetOptions()
        if pod_failer is None and hasattr(publisher, "core"):
            pod_failer = KubePodFailer(publisher.core, self.options.fail_exit_code)
        self.pod_failer = pod_failer
        self.pods_failed = 0
        self.books: dict[str, _NodeBook] = {}
        self.ready = threading.Event()
        self.flushes = 0
        self._lock = threading.Condition()
        self._dirty: set[str] = set()  # changed nodes, written first
        self._background: set[str] = set()  # periodic full rewrites
        self._in_flight_bg: set[str] = set()
        self._in_flight: set[str] = set()
        self._feed: EmulatorFeed | None = None
        self._node_labels: dict[str, dict[str, str]] = {}
        self._watch: watch.Watch | None = None

    # running ---------------------------------------------------------------------------------------
    def run(self, stop: threading.Event) -> None:
        names = self._emulated_nodes()
        self.books = {n: _NodeBook(NodeState(), NodeSync(n, count_network_unhealthy=False)) for n in names}
        self._node_labels = self._existing_labels()
        self._feed = EmulatorFeed(
            self.emulator_url,
            {n: b.state for n, b in self.books.items()},
            token=self.token,
            on_event=self._on_emulator_event,
            on_relist=self.mark_all_dirty,
        )
        threads = [
            threading.Thread(target=self._feed.run, args=(stop,), daemon=True, name="fleet-feed"),
            threading.Thread(target=self._watch_pods, args=(stop,), daemon=True, name="fleet-pods"),
        ]
        for t in threads:
            t.start()
        try:
            self._flush_loop(stop)
        finally:
            self.stop()
            for t in threads:
                t.join(self.options.watch_timeout_s + 5)

    def stop(self) -> None:
        if self._feed is not None:
            self._feed.stop()
        if self._watch is not None:
            self._watch.stop()
        with self._lock:
            self._lock.notify_all()

    def _existing_labels(self) -> dict[str, dict[str, str]]:
        """Every node's labels in one list call (flushes need them to leave `servertype` alone)."""
        try:
            nodes = self.publisher.core.list_node().items
        except ApiException as exc:
            log.warning("listing nodes failed (%s); reading them one by one", exc.reason)
            return {}
        return {n.metadata.name: dict(n.metadata.labels or {}) for n in nodes if n.metadata and n.metadata.name}

    def _emulated_nodes(self) -> list[str]:
        with http_client(self.emulator_url, self.token) as client:
            r = client.get("/v1/nodes")
            r.raise_for_status()
            names = [str(n["name"]) for n in r.json()]
        if self.only is not None:
            missing = self.only - set(names)
            if missing:
                raise ValueError(f"the emulator has no node(s) {', '.join(sorted(missing))}")
            names = [n for n in names if n in self.only]
        return names

    # change tracking -------------------------------------------------------------------------------
    def mark_dirty(self, node: str) -> None:
        with self._lock:
            self._dirty.add(node)
            self._lock.notify_all()

    def mark_all_dirty(self) -> None:
        with self._lock:
            self._dirty.update(self.books)
            self._lock.notify_all()

    def _on_emulator_event(self, event: dict[str, Any]) -> None:
        node = event.get("node")
        if node in self.books:
            self.mark_dirty(str(node))

    # pods ------------------------------------------------------------------------------------------
    def _watch_pods(self, stop: threading.Event) -> None:
        core = self.publisher.core
        version: str | None = None
        while not stop.is_set():
            try:
                if version is None:
                    listing = core.list_pod_for_all_namespaces()
                    self._resync_pods([pod_info(p) for p in listing.items])
                    version = listing.metadata.resource_version if listing.metadata else None
                    self.ready.set()
                self._watch = watch.Watch()
                for ev in self._watch.stream(
                    core.list_pod_for_all_namespaces,
                    resource_version=version,
                    timeout_seconds=self.options.watch_timeout_s,
                    allow_watch_bookmarks=True,
                ):
                    obj = ev["object"]
                    if ev["type"] == "BOOKMARK":
                        version = obj.metadata.resource_version if hasattr(obj, "metadata") else version
                        continue
                    if ev["type"] == "ERROR":
                        version = None
                        break
                    self.on_pod(ev["type"], pod_info(obj))
                    version = obj.metadata.resource_version
                    if stop.is_set():
                        break
            except ApiException as exc:
                if exc.status == 410:
                    version = None
                else:
                    log.warning("pod watch failed: %s", exc.reason)
                    stop.wait(1.0)
            except Exception as exc:  # connection drops: re-list from scratch
                log.warning("pod watch failed: %s", exc)
                version = None
                stop.wait(0.5)

    def _resync_pods(self, pods: list[PodInfo]) -> None:
        live = {p.uid for p in pods}
        with self._lock:
            for name, book in self.books.items():
                gone = [uid for uid in list(book.assigned) + list(book.pending) if uid not in live]
                for uid in gone:
                    book.assigned.pop(uid, None)
                    book.pending.pop(uid, None)
                if gone:
                    self._dirty.add(name)
        for pod in pods:
            self.on_pod("ADDED", pod)

    def on_pod(self, kind: str, pod: PodInfo) -> None:
        """Apply one pod change (watch event type ADDED/MODIFIED/DELETED)."""
        with self._lock:
            for name, other in self.books.items():  # a pod that ended or left: free its chips
                if pod.uid in other.assigned or pod.uid in other.pending:
                    ended = kind == "DELETED" or pod.phase in ("Succeeded", "Failed") or pod.node != name
                    if ended:
                        other.assigned.pop(pod.uid, None)
                        other.pending.pop(pod.uid, None)
                        self._dirty.add(name)
                        self._lock.notify_all()
            book = self.books.get(pod.node)
            if book is None or kind == "DELETED" or pod.phase in ("Succeeded", "Failed") or pod.npu_request <= 0:
                return
            if pod.uid in book.assigned:
                return
            held = _held(pod)
            if held and len(held) == pod.npu_request:  # already annotated (e.g. by an earlier fleet run)
                book.assigned[pod.uid] = (pod, held)
                book.pending.pop(pod.uid, None)
            else:
                book.pending[pod.uid] = pod
            self._dirty.add(pod.node)
            self._lock.notify_all()

    # flushing --------------------------------------------------------------------------------------
    def _flush_loop(self, stop: threading.Event) -> None:
        """Hand dirty nodes to at most `concurrency` workers: changed nodes first, periodic resyncs after.

        Only free worker slots are filled, so a node dirtied by a fault never queues behind a resync of
        the whole fleet.
        """
        conc = self.options.concurrency
        next_resync = time.monotonic() + self.options.resync_s
        with ThreadPoolExecutor(max_workers=conc, thread_name_prefix="fleet-write") as pool:
            while not stop.is_set():
                with self._lock:
                    self._lock.wait_for(lambda: stop.is_set() or self._has_work(conc), timeout=1.0)
                if stop.is_set():
                    break
                if time.monotonic() >= next_resync:
                    with self._lock:
                        self._background.update(self.books)
                    next_resync = time.monotonic() + self.options.resync_s
                with self._lock:
                    urgent = bool(self._dirty - self._in_flight)
                if urgent:
                    stop.wait(self.options.coalesce_s)  # let a burst of changes land on the same write
                with self._lock:
                    slots = conc - len(self._in_flight)
                    first = sorted(self._dirty - self._in_flight)[: max(slots, 0)]
                    self._dirty.difference_update(first)
                    slots -= len(first)
                    busy_bg = len(self._in_flight_bg)
                    bg_slots = min(slots, max(1, conc // 4) - busy_bg)  # resyncs never crowd the apiserver
                    rest = sorted(self._background - self._in_flight - set(first))[: max(bg_slots, 0)]
                    self._background.difference_update(rest)
                    for name in rest:
                        self.books[name].force = True
                    batch = first + rest
                    self._in_flight.update(batch)
                    self._in_flight_bg.update(rest)
                for name in batch:
                    pool.submit(self._flush_guarded, name)

    def _has_work(self, conc: int) -> bool:
        if len(self._in_flight) >= conc:
            return False
        if self._dirty - self._in_flight:
            return True
        return len(self._in_flight_bg) < max(1, conc // 4) and bool(self._background - self._in_flight)

    def _flush_guarded(self, name: str) -> None:
        ok = False
        try:
            self.flush(name)
            ok = True
        except ApiException as exc:
            log.warning("writing node %s failed (%s); will retry", name, exc.reason)
        except Exception:
            log.exception("flushing node %s failed", name)
        finally:
            if not ok:
                time.sleep(0.5)
            with self._lock:
                self._in_flight.discard(name)
                self._in_flight_bg.discard(name)
                if not ok:
                    self._dirty.add(name)
                self._lock.notify_all()

    def flush(self, name: str) -> None:
        """Bring one node's Kubernetes objects up to date (assigning chips to its waiting pods first)."""
        book = self.books[name]
        if book.force:
            book.force = False
            book.sync.written_devices = None
            book.sync.written_healthy = None
        with self._lock:
            pending = sorted(book.pending.values(), key=_age)
            used = book.used()
        # Health as of the chips held now: a PreSeparateNPU chip is Healthy only while a pod holds it, so
        # a chip its pod just released must not look free and healthy to the next pod.
        book.state.set_in_use(used)
        snap = book.state.snapshot()
        if snap.node is None:
            return
        for pod in pending:
            chips = self._choose(snap, pod, used)
            if chips is None:
                continue
            annotations = pod_annotations(pod.name, pod.uid, snap.node, [snap.chips[c] for c in chips])
            if k.ANN_VOLCANO_DEVICES not in pod.annotations:
                annotations[k.ANN_VOLCANO_DEVICES] = ",".join(device_name(c) for c in chips)
            if k.ANN_PREDICATE_TIME not in pod.annotations:
                annotations[k.ANN_PREDICATE_TIME] = str(time.time_ns())
            try:
                self.publisher.annotate_pod(pod.namespace, pod.name, annotations)
            except ApiException as exc:
                if exc.status == 404:  # the pod is gone
                    with self._lock:
                        book.pending.pop(pod.uid, None)
                    continue
                raise
            with self._lock:
                if book.pending.pop(pod.uid, None) is not None:
                    book.assigned[pod.uid] = (pod, chips)
            used |= set(chips)
        with self._lock:
            used = book.used()
        book.state.set_in_use(used)
        snap = book.state.snapshot()
        if snap.node is None:
            return
        if not book.labelled and snap.chips:
            existing = self._node_labels.get(name)
            if existing is None:
                existing = self.publisher.node_labels(name)
            self.publisher.patch_node_metadata(
                name, node_labels(snap.node, snap.chips, existing), node_annotations(snap.node, snap.chips)
            )
            book.labelled = True
        plan = book.sync.plan(snap, used)
        if plan.healthy is not None:
            self.publisher.patch_node_npus(name, plan.healthy)
        if plan.configmap is not None:
            self.publisher.write_configmap(name, plan.configmap)
        for event in plan.events:
            self.publisher.fault_event(event)
        book.sync.written(plan)
        self._fail_workloads(name, book, snap)  # after allocatable went down: replacements avoid the chip
        self.flushes += 1

    def _fail_workloads(self, name: str, book: _NodeBook, snap: Snapshot) -> None:
        """Fail the pods whose chips took a fault of `fail_pods_at` or worse (deviceplugin/workload_faults.py)."""
        if self.pod_failer is None or self.options.fail_pods_at is None:
            return
        with self._lock:
            assigned = dict(book.assigned)
            book.failed &= set(assigned)
            already = set(book.failed)
        for victim in victims(assigned, snap, threshold=self.options.fail_pods_at, already=already):
            self.pod_failer.fail(victim, name)
            with self._lock:
                book.failed.add(victim.pod.uid)
            self.pods_failed += 1

    def _choose(self, snap: Snapshot, pod: PodInfo, used: set[int]) -> tuple[int, ...] | None:
        assert snap.node is not None
        named = pod.volcano_devices()
        if named:
            try:
                chips = tuple(sorted(parse_device_name(d) for d in named))
            except ValueError:
                chips = ()
            healthy = set(schedulable(snap))
            if chips and all(c in healthy for c in chips) and not set(chips) & used:
                return chips
            log.warning(
                "pod %s: Volcano's chips %s are not free and healthy on %s; choosing others",
                pod.key,
                named,
                snap.node.name,
            )
        free = [p for p in schedulable(snap) if p not in used]
        try:
            return tuple(choose(snap.node.topology, list(snap.chips), free, pod.npu_request))
        except AllocationError as exc:
            log.info("pod %s waits for chips on %s: %s", pod.key, snap.node.name, exc)
            return None


def _held(pod: PodInfo) -> tuple[int, ...]:
    raw = pod.annotations.get(k.ANN_REAL, "")
    try:
        return tuple(sorted(parse_device_name(d) for d in raw.split(",") if d))
    except ValueError:
        return ()


def _age(pod: PodInfo) -> tuple[int, str]:
    return (pod.predicate_time() or 0, pod.key)
