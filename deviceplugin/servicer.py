"""The DevicePlugin gRPC servicer over a NodeState (no sockets here; server.py serves it)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import grpc

from . import constants as k
from .allocate import container_response
from .allocator import AllocationError, choose
from .annotations import pod_annotations
from .model import Node, device_name, parse_device_name
from .state import NodeState, Snapshot
from .v1beta1 import api_pb2, api_pb2_grpc
from .volcano import PodInfo, PodSource, oldest_candidate

__all__ = ["AllocateError", "Allocation", "DevicePluginServicer", "PluginOptions"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PluginOptions:
    volcano: bool = True
    ascend_docker: bool = False
    devfs_root: Path | None = None
    pod_retries: int = k.VOLCANO_POD_RETRIES
    pod_retry_interval_s: float = k.VOLCANO_POD_RETRY_INTERVAL_S
    watch_poll_s: float = 1.0  # how often an idle ListAndWatch checks that its client is still there


@dataclass(frozen=True)
class Allocation:
    """One container's allocation, handed to the publisher (pod annotations) after a successful Allocate."""

    klt_ids: tuple[str, ...]
    phy_ids: tuple[int, ...]
    pod: PodInfo | None  # the Volcano pod, in Volcano mode


class AllocateError(Exception):
    pass


class DevicePluginServicer(api_pb2_grpc.DevicePluginServicer):
    def __init__(
        self,
        state: NodeState,
        options: PluginOptions | None = None,
        pods: PodSource | None = None,
        on_allocated: Callable[[Node, Sequence[Allocation]], None] | None = None,
    ) -> None:
        self.state = state
        self.options = options or PluginOptions()
        self.pods = pods
        self.on_allocated = on_allocated
        self._alloc_lock = threading.Lock()
        self._stopping = threading.Event()

    def stop_streams(self) -> None:
        """End every ListAndWatch stream (before the server stops)."""
        self._stopping.set()
        self.state.wake_all()

    # ------------------------------------------------------------------------------------------------
    def GetDevicePluginOptions(
        self, request: api_pb2.Empty, context: grpc.ServicerContext
    ) -> api_pb2.DevicePluginOptions:
        # Deviation from the real plugin (which returns {}): npu-emu implements GetPreferredAllocation.
        return api_pb2.DevicePluginOptions(pre_start_required=False, get_preferred_allocation_available=True)

    def ListAndWatch(
        self, request: api_pb2.Empty, context: grpc.ServicerContext
    ) -> Iterator[api_pb2.ListAndWatchResponse]:
        snap = self.state.snapshot()
        sent: list[tuple[str, str]] | None = None
        while not self._stopping.is_set() and context.is_active():
            current = [(device_name(p), h) for p, h in sorted(snap.health.items())]
            if current != sent and snap.node is not None:
                yield list_response(snap)
                sent = current
            snap = self.state.wait_newer(snap.version, self.options.watch_poll_s)

    def GetPreferredAllocation(
        self, request: api_pb2.PreferredAllocationRequest, context: grpc.ServicerContext
    ) -> api_pb2.PreferredAllocationResponse:
        snap = self.state.snapshot()
        resp = api_pb2.PreferredAllocationResponse()
        for req in request.container_requests:
            ids = preferred(snap, list(req.available_deviceIDs), list(req.must_include_deviceIDs), req.allocation_size)
            resp.container_responses.append(api_pb2.ContainerPreferredAllocationResponse(deviceIDs=ids))
        return resp

    def Allocate(self, request: api_pb2.AllocateRequest, context: grpc.ServicerContext) -> api_pb2.AllocateResponse:
        try:
            return self.allocate(request)
        except AllocateError as exc:
            log.warning("Allocate refused: %s", exc)
            context.abort(grpc.StatusCode.UNKNOWN, str(exc))
            raise  # unreachable: abort raises

    def PreStartContainer(
        self, request: api_pb2.PreStartContainerRequest, context: grpc.ServicerContext
    ) -> api_pb2.PreStartContainerResponse:
        return api_pb2.PreStartContainerResponse()

    # ------------------------------------------------------------------------------------------------
    def allocate(self, request: api_pb2.AllocateRequest) -> api_pb2.AllocateResponse:
        """Allocate without gRPC: raises AllocateError naming the problem; nothing is recorded then."""
        with self._alloc_lock:
            snap = self.state.snapshot()
            if snap.node is None:
                raise AllocateError("no device information yet from the emulator")
            plans: list[Allocation] = []
            taken: set[str] = set()
            for req in request.container_requests:
                klt = tuple(req.devices_ids)
                check_ids(snap, klt)
                if self.options.volcano:
                    pod, phys = self._volcano_pick(snap, len(klt), taken)
                    taken.add(pod.key)
                else:
                    pod, phys = None, tuple(sorted(parse_device_name(i) for i in klt))
                plans.append(Allocation(klt, phys, pod))
            resp = api_pb2.AllocateResponse()
            for plan in plans:
                resp.container_responses.append(
                    container_response(
                        plan.phy_ids,
                        ascend_docker=self.options.ascend_docker,
                        devfs_root=self.options.devfs_root,
                    )
                )
            self.state.add_in_use(p for plan in plans for p in plan.phy_ids)
            if self.pods is not None:
                for plan in plans:
                    if plan.pod is not None:
                        self._consume(snap, plan)
        if self.on_allocated is not None and snap.node is not None:
            try:
                self.on_allocated(snap.node, plans)
            except Exception:  # publishing must not fail an allocation already made
                log.exception("publishing the allocation failed")
        return resp

    def _consume(self, snap: Snapshot, plan: Allocation) -> None:
        assert self.pods is not None and plan.pod is not None and snap.node is not None
        chips = [snap.chips[p] for p in plan.phy_ids]
        annotations = pod_annotations(plan.pod.name, plan.pod.uid, snap.node, chips, plan.klt_ids)
        annotations[k.ANN_PREDICATE_TIME] = k.PREDICATE_TIME_CONSUMED
        try:
            self.pods.mark_consumed(plan.pod, annotations)
        except Exception:  # the chips are handed out; the annotation is corrected by the next sync
            log.exception("could not annotate pod %s", plan.pod.key)

    def _volcano_pick(self, snap: Snapshot, count: int, taken: set[str]) -> tuple[PodInfo, tuple[int, ...]]:
        if self.pods is None:
            raise AllocateError(k.ERR_NO_VALID_POD + " (Volcano mode needs a Kubernetes client)")
        pod = None
        for attempt in range(self.options.pod_retries):
            fresh = attempt == self.options.pod_retries - 1  # the last try asks the apiserver, not a cache
            pods = [p for p in self.pods.pods(fresh=fresh) if p.key not in taken]
            pod = oldest_candidate(pods, count)
            if pod is not None:
                break
            if attempt < self.options.pod_retries - 1:
                time.sleep(self.options.pod_retry_interval_s)
        if pod is None:
            raise AllocateError(k.ERR_NO_VALID_POD)
        phys: list[int] = []
        for name in pod.volcano_devices():
            try:
                phy = parse_device_name(name)
            except ValueError:
                raise AllocateError(f"{k.ERR_NO_NPU_RESOURCE}: pod {pod.key} names {name!r}") from None
            if phy not in snap.chips:
                raise AllocateError(f"{k.ERR_NO_NPU_RESOURCE}: pod {pod.key} names {name}, not on this node")
            phys.append(phy)
        return pod, tuple(sorted(phys))


def list_response(snap: Snapshot) -> api_pb2.ListAndWatchResponse:
    resp = api_pb2.ListAndWatchResponse()
    for phy, health in sorted(snap.health.items()):
        dev = resp.devices.add(ID=device_name(phy), health=health)
        numa = snap.chips[phy].numa_node
        if numa is not None:
            dev.topology.nodes.add(ID=numa)
    return resp


def check_ids(snap: Snapshot, ids: Sequence[str]) -> None:
    for dev in ids:
        try:
            phy = parse_device_name(dev)
        except ValueError:
            raise AllocateError(k.ERR_UNKNOWN_DEVICE % dev) from None
        if phy not in snap.health:
            raise AllocateError(k.ERR_UNKNOWN_DEVICE % dev)
        if snap.health[phy] != k.HEALTHY:
            raise AllocateError(f"{k.ERR_UNKNOWN_DEVICE % dev}: it is {snap.health[phy]}")


def preferred(snap: Snapshot, available: list[str], must: list[str], size: int) -> list[str]:
    """The allocator's choice; when its rules allow none, must-include then the lowest ids (only a hint)."""
    avail = {parse_device_name(i) for i in available if _is_phys(i)}
    must_phy = [parse_device_name(i) for i in must if _is_phys(i)]
    if snap.node is not None:
        try:
            chosen = choose(snap.node.topology, list(snap.chips), avail, size, must_phy)
            return [device_name(p) for p in chosen]
        except AllocationError as exc:
            log.info("no topology-preferred choice (%s); falling back to the lowest ids", exc)
    rest = sorted(avail - set(must_phy))
    return [device_name(p) for p in sorted(must_phy) + rest[: max(size - len(must_phy), 0)]]


def _is_phys(name: str) -> bool:
    try:
        parse_device_name(name)
        return True
    except ValueError:
        return False
