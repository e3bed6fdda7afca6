"""Writing to Kubernetes with the kubernetes client: node metadata and status, the device-info ConfigMap,
pod annotations and fault Events. Pure builders live in annotations.py, deviceinfo.py and events.py."""

from __future__ import annotations

import datetime as dt
import logging
import os
import uuid
from collections.abc import Mapping

from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.client.exceptions import ApiException

from . import constants as k
from .deviceinfo import configmap_name
from .events import FaultEvent
from .volcano import PodInfo, pod_info

__all__ = ["KubePodSource", "KubePublisher", "load_api_client"]

log = logging.getLogger(__name__)
MERGE_PATCH = "application/merge-patch+json"


def load_api_client(
    kubeconfig: str | None = None, *, pool_size: int = 32, qps_timeout_s: float = 10.0
) -> k8s.ApiClient:
    """An ApiClient from --kubeconfig, $KUBECONFIG, ~/.kube/config or the in-cluster service account."""
    configuration = k8s.Configuration()
    path = kubeconfig or os.environ.get("KUBECONFIG")
    if path or os.path.exists(os.path.expanduser("~/.kube/config")):
        k8s_config.load_kube_config(config_file=path, client_configuration=configuration)
    else:
        k8s_config.load_incluster_config(client_configuration=configuration)
    configuration.connection_pool_maxsize = pool_size
    return k8s.ApiClient(configuration)


class KubePublisher:
    """Idempotent writes; every method raises ApiException on failure except where noted."""

    def __init__(self, api_client: k8s.ApiClient) -> None:
        self.core = k8s.CoreV1Api(api_client)
        self._known_cms: set[str] = set()

    def patch_node_metadata(self, node: str, labels: Mapping[str, str], annotations: Mapping[str, str]) -> None:
        body = {"metadata": {"labels": dict(labels), "annotations": dict(annotations)}}
        self.core.patch_node(node, body, _content_type=MERGE_PATCH)

    def node_labels(self, node: str) -> dict[str, str]:
        meta = self.core.read_node(node).metadata
        return dict((meta.labels if meta else None) or {})

    def patch_node_npus(self, node: str, healthy: int) -> None:
        """capacity and allocatable huawei.com/Ascend910 on the node's status (kubelet-less nodes)."""
        value = str(healthy)
        body = {"status": {"capacity": {k.RESOURCE_NAME: value}, "allocatable": {k.RESOURCE_NAME: value}}}
        self.core.patch_node_status(node, body, _content_type=MERGE_PATCH)

    def write_configmap(self, node: str, data: Mapping[str, str]) -> None:
        """Create or replace; the first write for a node tries create first (one request when it is new)."""
        name = configmap_name(node)
        body = k8s.V1ConfigMap(
            metadata=k8s.V1ObjectMeta(name=name, namespace=k.CM_NAMESPACE, labels=dict(k.CM_LABEL)),
            data=dict(data),
        )
        if name not in self._known_cms:
            try:
                self.core.create_namespaced_config_map(k.CM_NAMESPACE, body)
                self._known_cms.add(name)
                return
            except ApiException as exc:
                if exc.status != 409:
                    raise
        try:
            self.core.replace_namespaced_config_map(name, k.CM_NAMESPACE, body)
        except ApiException as exc:
            if exc.status != 404:
                raise
            self.core.create_namespaced_config_map(k.CM_NAMESPACE, body)
        self._known_cms.add(name)

    def annotate_pod(self, namespace: str, name: str, annotations: Mapping[str, str]) -> None:
        self.core.patch_namespaced_pod(
            name, namespace, {"metadata": {"annotations": dict(annotations)}}, _content_type=MERGE_PATCH
        )

    def fault_event(self, event: FaultEvent) -> None:
        """Record a fault Event in kube-system (best effort, as in the real plugin).

        The apiserver wants the involved object in the Event's namespace: the plugin's own pod when it runs
        as one ($POD_NAME, $POD_NAMESPACE=kube-system), else the node's device-info ConfigMap.
        """
        pod = os.environ.get("POD_NAME")
        if pod and os.environ.get("POD_NAMESPACE", k.EVENT_NAMESPACE) == k.EVENT_NAMESPACE:
            ref = k8s.V1ObjectReference(kind="Pod", name=pod, namespace=k.EVENT_NAMESPACE, api_version="v1")
        else:
            ref = k8s.V1ObjectReference(
                kind="ConfigMap", name=configmap_name(event.node), namespace=k.EVENT_NAMESPACE, api_version="v1"
            )
        now = dt.datetime.now(dt.UTC)
        body = k8s.CoreV1Event(
            metadata=k8s.V1ObjectMeta(name=f"{ref.name}.{uuid.uuid4().hex[:16]}", namespace=k.EVENT_NAMESPACE),
            involved_object=ref,
            reason=event.reason,
            message=event.message,
            type=event.type,
            count=1,
            first_timestamp=now,
            last_timestamp=now,
            source=k8s.V1EventSource(component=k.EVENT_COMPONENT, host=event.node),
            reporting_component=k.EVENT_COMPONENT,
            reporting_instance=event.node,
        )
        try:
            self.core.create_namespaced_event(k.EVENT_NAMESPACE, body)
        except ApiException as exc:
            log.warning("could not record event %s: %s %s", event.reason, exc.reason, exc.body)


class KubePodSource:
    """Volcano mode's PodSource: the pods bound to one node, straight from the apiserver."""

    def __init__(self, publisher: KubePublisher, node: str) -> None:
        self.publisher = publisher
        self.node = node

    def pods(self, *, fresh: bool = False) -> list[PodInfo]:
        pods = self.publisher.core.list_pod_for_all_namespaces(field_selector=f"spec.nodeName={self.node}")
        return [pod_info(p) for p in pods.items]

    def mark_consumed(self, pod: PodInfo, annotations: Mapping[str, str]) -> None:
        self.publisher.annotate_pod(pod.namespace, pod.name, annotations)
