"""Node labels, node annotations and pod annotations the real plugin writes (ascend-stack.md §1.6-1.8)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from . import constants as k
from .gojson import marshal
from .model import Chip, Node, device_name

__all__ = ["ascend_configuration", "node_annotations", "node_labels", "pod_annotations", "real_card_type"]

_REAL_CARD_TYPE = {"910A": "Ascend910", "910B": "Ascend910B", "A3": "Ascend910A3"}


def real_card_type(node: Node) -> str:
    return _REAL_CARD_TYPE.get(node.generation, "Ascend910")


def node_labels(node: Node, chips: Mapping[int, Chip], existing: Mapping[str, str] | None = None) -> dict[str, str]:
    """Labels to set; `servertype` only when the node has none yet (as getNewNodeLabel)."""
    existing = existing or {}
    first = chips[min(chips)] if chips else None
    labels = {
        k.LABEL_CHIP_NAME: node.chip_name,
        k.LABEL_DRIVER_VERSION: node.driver_version,
        k.LABEL_ACCELERATOR: "huawei-Ascend910",
    }
    if first is not None:
        if k.LABEL_SERVER_TYPE not in existing:
            labels[k.LABEL_SERVER_TYPE] = f"{real_card_type(node)}-{first.ai_core_count}"
        labels[k.LABEL_CHIP_MEMORY] = f"{round(first.hbm_total_mb / 1024)}G"
    if node.generation == "A3":
        labels[k.LABEL_SUPERPOD_ID] = str(node.super_pod_id)
    return labels


def node_annotations(node: Node, chips: Mapping[int, Chip]) -> dict[str, str]:
    base = {device_name(p): {"IP": c.device_ip, "SuperDeviceID": c.super_device_id or 0} for p, c in chips.items()}
    return {
        k.ANN_BASE_DEVICE_INFOS: marshal({name: base[name] for name in sorted(base)}),
        k.ANN_SUPERPOD_ID: str(node.super_pod_id),
        k.ANN_SERVER_INDEX: str(node.server_index),
        k.ANN_SERVER_TYPE: "A3" if node.generation == "A3" else "",
    }


def ascend_configuration(pod_name: str, pod_uid: str, node: Node, chips: Iterable[Chip]) -> str:
    """common.Instance JSON, in the real field order (§1.8)."""
    devices = [
        {
            "device_id": str(c.phy_id),
            "device_ip": c.device_ip or "-1",
            "super_device_id": str(c.super_device_id) if c.super_device_id is not None else "-2",
        }
        for c in sorted(chips, key=lambda c: c.phy_id)
    ]
    return marshal(
        {
            "pod_name": pod_name,
            "server_id": pod_uid,
            "host_ip": node.host_ip,
            "super_pod_id": node.super_pod_id,
            "devices": devices,
            "rack_id": -2,
            "server_index": str(node.server_index),
            "server_ip": node.host_ip,
        }
    )


def pod_annotations(
    pod_name: str, pod_uid: str, node: Node, chips: Iterable[Chip], klt_ids: Iterable[str] = ()
) -> dict[str, str]:
    """huawei.com/AscendReal, huawei.com/kltDev (when kubelet ids are known) and ascend-910-configuration."""
    chips = sorted(chips, key=lambda c: c.phy_id)
    out = {
        k.ANN_REAL: ",".join(device_name(c.phy_id) for c in chips),
        k.ANN_CONFIGURATION: ascend_configuration(pod_name, pod_uid, node, chips),
    }
    klt = sorted(klt_ids)
    if klt:
        out[k.ANN_KLT_DEV] = ",".join(klt)
    return out
