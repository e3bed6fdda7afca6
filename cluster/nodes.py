"""Kubernetes Node manifests for emulated Ascend servers, built from the emulator's inventory.

Labels and annotations are the ones the Ascend device plugin and administrators put on real nodes
(shared/reference/ascend-stack.md §1.6, §1.7); the values come from the product profile and the
inventory's addressing, never from here. Pure functions: no API calls.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, Protocol

from .binaries import KWOK_VERSION

__all__ = [
    "ASCEND_RESOURCE",
    "KWOK_NODE_ANNOTATION",
    "PROFILE_LABEL",
    "NodeSource",
    "build_node",
]

ASCEND_RESOURCE = "huawei.com/Ascend910"
KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node"
PROFILE_LABEL = "npu-emu.io/profile"
TOR_LABEL = "npu-emu.io/tor-id"
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
_ARCH = {"huawei-arm": "arm64", "huawei-x86": "amd64"}
_KWOK = f"kwok-{KWOK_VERSION}"  # what kwok's node-initialize would write


# What the builder reads from emulator.inventory.NodeInfo (structural, so tests can pass plain objects).
class _Versions(Protocol):
    driver: str


class _Spec(Protocol):
    generation: str
    chip_name: str
    chip_count: int
    hbm_total_mb: int
    host_arch: str
    versions: _Versions
    node_labels: dict[str, str]
    node_capacity: dict[str, str]


class _Profile(Protocol):
    name: str
    spec: _Spec


class _Chip(Protocol):
    phy_id: int
    device_ip: str
    super_device_id: int | None


class NodeSource(Protocol):
    name: str
    profile: _Profile
    tor_id: int
    super_pod_id: int
    server_index: int
    host_ip: str
    chips: tuple[_Chip, ...]


def _hbm_label(hbm_total_mb: int) -> str:
    return f"{round(hbm_total_mb / 1024)}G"


def base_device_infos(node: NodeSource) -> str:
    """The `baseDeviceInfos` annotation: device name -> {"IP", "SuperDeviceID"} (§1.7)."""
    infos = {
        f"Ascend910-{chip.phy_id}": {"IP": chip.device_ip, "SuperDeviceID": chip.super_device_id or 0}
        for chip in node.chips
    }
    return json.dumps(infos, separators=(",", ":"))


def node_labels(node: NodeSource, cluster: str) -> dict[str, str]:
    spec = node.profile.spec
    labels = {
        "kubernetes.io/hostname": node.name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": _ARCH.get(spec.host_arch, "arm64"),
        "type": "kwok",
        # Written by the device plugin (§1.6).
        "node.kubernetes.io/npu.chip.name": spec.chip_name,
        "huawei.com/driver.version": spec.versions.driver,
        "accelerator": "huawei-Ascend910",
        "mind-cluster/npu-chip-memory": _hbm_label(spec.hbm_total_mb),
        # Set by the administrator (§1.6, Table 4 of the MindCluster k8s API page).
        "host-arch": spec.host_arch,
        # npu-emu's own bookkeeping.
        PROFILE_LABEL: node.profile.name,
        TOR_LABEL: str(node.tor_id),
        MANAGED_BY_LABEL: "npu-emu",
        "npu-emu.io/cluster": cluster,
    }
    if spec.generation == "A3" and node.super_pod_id >= 0:
        labels["huawei.com/topotree.superpodid"] = str(node.super_pod_id)
    # The profile's own labels (accelerator-type, servertype) win: they are per product.
    labels.update(spec.node_labels)
    return labels


def node_annotations(node: NodeSource) -> dict[str, str]:
    spec = node.profile.spec
    return {
        KWOK_NODE_ANNOTATION: "fake",
        "baseDeviceInfos": base_device_infos(node),
        "superPodID": str(node.super_pod_id),
        "serverIndex": str(node.server_index),
        "serverType": "A3" if spec.generation == "A3" else "",
    }


def node_resources(node: NodeSource) -> dict[str, str]:
    spec = node.profile.spec
    resources = {"cpu": "192", "memory": "1536Gi", "pods": "110"}
    resources.update(spec.node_capacity)
    resources[ASCEND_RESOURCE] = str(spec.chip_count)
    return resources


# The conditions a healthy kubelet reports (kwok's NodeConditions).
_CONDITIONS = (
    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
    ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ("NetworkUnavailable", "False", "RouteCreated", "RouteController created a route"),
)


def ready_conditions(now: datetime | None = None) -> list[dict[str, str]]:
    stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return [{"type": t, "status": st, "reason": r, "message": m, "lastHeartbeatTime": stamp,
             "lastTransitionTime": stamp} for t, st, r, m in _CONDITIONS]


def build_node(node: NodeSource, cluster: str, *, ready: bool = False,
               now: datetime | None = None) -> dict[str, Any]:
    """The Node object to create; kwok's node-initialize Stage makes it Ready.

    ready=True (experimental, not used by the harness) creates it Ready instead: the apiserver keeps
    a Node's status on create, which spares kwok's Stage work at thousands of nodes. But Ready then no
    longer means kwok has picked the node up, and pods bound before it has get no pod IP.
    """
    spec = node.profile.spec
    resources = node_resources(node)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": node.name,
            "labels": node_labels(node, cluster),
            "annotations": node_annotations(node),
        },
        "spec": {},
        "status": {
            "capacity": dict(resources),
            "allocatable": dict(resources),
            "addresses": [
                {"type": "InternalIP", "address": node.host_ip},
                {"type": "Hostname", "address": node.name},
            ],
            "nodeInfo": {
                "architecture": _ARCH.get(spec.host_arch, "arm64"),
                "operatingSystem": "linux",
                "osImage": f"npu-emu {node.profile.name}",
                "kernelVersion": _KWOK, "kubeletVersion": _KWOK, "kubeProxyVersion": _KWOK,
                "containerRuntimeVersion": _KWOK, "machineID": "", "systemUUID": "", "bootID": "",
            },
            **({"conditions": ready_conditions(now), "phase": "Running"} if ready else {}),
        },
    }
