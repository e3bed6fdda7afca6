"""Kubelet mode's Kubernetes side for its one node: labels and annotations, the device-info ConfigMap,
fault Events, and (Volcano mode) which chips the node's pods hold, from their AscendReal annotations."""

from __future__ import annotations

import logging
import threading
import time

from kubernetes.client.exceptions import ApiException

from . import constants as k
from .annotations import node_annotations, node_labels
from .model import parse_device_name
from .publish import KubePublisher
from .state import NodeState
from .sync import NodeSync
from .volcano import pod_info

__all__ = ["NodePublisher", "chips_held"]

log = logging.getLogger(__name__)


def chips_held(publisher: KubePublisher, node: str) -> set[int]:
    """Chips named by huawei.com/AscendReal on the node's pods that have not finished."""
    held: set[int] = set()
    for raw in publisher.core.list_pod_for_all_namespaces(field_selector=f"spec.nodeName={node}").items:
        pod = pod_info(raw)
        if pod.phase in ("Succeeded", "Failed"):
            continue
        for name in filter(None, pod.annotations.get(k.ANN_REAL, "").split(",")):
            try:
                held.add(parse_device_name(name))
            except ValueError:
                continue
    return held


class NodePublisher:
    def __init__(
        self,
        publisher: KubePublisher,
        state: NodeState,
        kube_node: str,
        *,
        track_pods: bool,
        pod_scan_s: float = 5.0,
    ) -> None:
        self.publisher = publisher
        self.state = state
        self.kube_node = kube_node
        self.track_pods = track_pods
        self.pod_scan_s = pod_scan_s
        self.sync = NodeSync(kube_node)

    def run(self, stop: threading.Event) -> None:
        version = -1
        labelled_for = None
        next_scan = 0.0
        while not stop.is_set():
            snap = self.state.wait_newer(version, 0.5)
            try:
                if self.track_pods and time.monotonic() >= next_scan:
                    self.state.set_in_use(chips_held(self.publisher, self.kube_node))
                    next_scan = time.monotonic() + self.pod_scan_s
                    snap = self.state.snapshot()
                if snap.node is not None and labelled_for is not snap.node and snap.chips:
                    existing = self.publisher.node_labels(self.kube_node)
                    self.publisher.patch_node_metadata(
                        self.kube_node,
                        node_labels(snap.node, snap.chips, existing),
                        node_annotations(snap.node, snap.chips),
                    )
                    labelled_for = snap.node
                plan = self.sync.plan(snap, snap.in_use)
                if plan.configmap is not None:
                    self.publisher.write_configmap(self.kube_node, plan.configmap)
                for event in plan.events:
                    self.publisher.fault_event(event)
                self.sync.written(plan)
                version = snap.version
            except (ApiException, OSError) as exc:
                log.warning("publishing node %s failed (will retry): %s", self.kube_node, exc)
                stop.wait(1.0)
