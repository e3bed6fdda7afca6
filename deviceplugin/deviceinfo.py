"""The mindx-dl-deviceinfo-<node> ConfigMap (shared/reference/ascend-stack.md §2), byte for byte.

DeviceInfoCfg = NodeDeviceInfoCache{DeviceInfo{DeviceList map, UpdateTime}, SuperPodID, ServerIndex,
CheckCode}; CheckCode is the hex SHA-256 of json.Marshal(DeviceInfo).
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from . import constants as k
from .gojson import marshal
from .health import card_level, is_network_healthy
from .model import Chip, Node, device_name

__all__ = [
    "check_code",
    "configmap_data",
    "configmap_name",
    "device_info_cfg",
    "device_list",
    "fault_list",
]


def configmap_name(node: str) -> str:
    return k.CM_NAME_PREFIX + node


def _names(phy_ids: Iterable[int]) -> str:
    return ",".join(device_name(p) for p in sorted(phy_ids))


def fault_list(chips: Iterable[Chip]) -> list[dict[str, Any]]:
    """The huawei.com/Ascend910-Fault entries (FaultInfo field order), one per faulty chip and fault type."""
    out: list[dict[str, Any]] = []
    for chip in sorted(chips, key=lambda c: c.phy_id):
        by_type: dict[str, list[Any]] = {}
        for f in chip.faults:
            by_type.setdefault(f.fault_type, []).append(f)
        for fault_type in sorted(by_type, key=_fault_type_order):
            faults = by_type[fault_type]
            level = card_level(chip) if fault_type == "CardUnhealthy" else _most_severe(f.level for f in faults)
            codes = list(dict.fromkeys(f.code for f in faults))
            times = {f.code: {"fault_time": f.since_ms, "fault_level": f.level} for f in faults}
            out.append(
                {
                    "fault_type": fault_type,
                    "npu_name": device_name(chip.phy_id),
                    "large_model_fault_level": level,
                    "fault_level": level,
                    "fault_handling": level,
                    "fault_code": ",".join(codes),
                    "fault_time_and_level_map": {c: times[c] for c in sorted(times)},
                }
            )
    return out


def _fault_type_order(t: str) -> int:
    return {"CardNetworkUnhealthy": 0, "CardUnhealthy": 1}.get(t, 2)


def _most_severe(levels: Iterable[str]) -> str:
    from emulator.levels import most_severe

    return most_severe(levels)


def device_list(
    chips: Mapping[int, Chip],
    health: Mapping[int, str],
    used: Collection[int],
    recovering: Collection[int] = (),
) -> dict[str, str]:
    """DeviceList: free+healthy chips, Fault JSON, NetworkUnhealthy, Recovering, Unhealthy (keys sorted)."""
    unhealthy = [p for p, h in health.items() if h != "Healthy"]
    free = [p for p in chips if p not in used and p not in unhealthy and p not in recovering]
    faulty = [c for c in chips.values() if c.faults]
    entries = {
        k.RESOURCE_NAME: _names(free),
        k.DL_FAULT: marshal(fault_list(faulty)),
        k.DL_NETWORK_UNHEALTHY: _names(p for p, c in chips.items() if not is_network_healthy(c)),
        k.DL_RECOVERING: _names(recovering),
        k.DL_UNHEALTHY: _names(unhealthy),
    }
    return {key: entries[key] for key in sorted(entries)}


def check_code(device_info: Mapping[str, Any]) -> str:
    return hashlib.sha256(marshal(device_info).encode()).hexdigest()


def device_info_cfg(node: Node, devices: Mapping[str, str], update_time_s: int) -> str:
    """The DeviceInfoCfg value (Go struct field order, sorted map keys, CheckCode over DeviceInfo)."""
    info = {"DeviceList": {key: devices[key] for key in sorted(devices)}, "UpdateTime": update_time_s}
    cache = {
        "DeviceInfo": info,
        "SuperPodID": node.super_pod_id,
        "ServerIndex": node.server_index,
        "CheckCode": check_code(info),
    }
    return marshal(cache)


def configmap_data(
    node: Node, devices: Mapping[str, str], update_time_s: int, separated: Iterable[int]
) -> dict[str, str]:
    return {
        k.CM_KEY_DEVICE_INFO: device_info_cfg(node, devices, update_time_s),
        k.CM_KEY_MANUALLY_SEPARATE: _names(separated),
        k.CM_KEY_UPGRADE_FAULT_REASON: "",
        k.CM_KEY_DESCRIPTION: k.CM_DESCRIPTION,
    }
