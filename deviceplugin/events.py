"""Fault Events in the real plugin's wording (ascend-stack.md §1.9)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from . import constants as k
from .model import Chip, Fault

__all__ = ["FaultEvent", "fault_event", "fault_message"]


@dataclass(frozen=True)
class FaultEvent:
    reason: str  # Occur | Recovery
    type: str  # Warning | Normal
    message: str
    node: str
    phy_id: int
    code: str


def _raised_time(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ms / 1000))


def fault_message(node: str, chip: Chip, fault: Fault, assertion: str) -> str:
    return (
        f"device fault, nodeName:{node}, assertion:{assertion}, cardID:{chip.card_id}, "
        f"deviceID:{chip.chip_index}, faultCodes:{fault.code}, faultLevelName:{fault.level}, "
        f"alarmRaisedTime:{_raised_time(fault.since_ms)}"
    )


def fault_event(node: str, chip: Chip, fault: Fault, *, recovered: bool) -> FaultEvent:
    reason = k.REASON_RECOVERY if recovered else k.REASON_OCCUR
    return FaultEvent(
        reason=reason,
        type="Normal" if recovered else "Warning",
        message=fault_message(node, chip, fault, reason),
        node=node,
        phy_id=chip.phy_id,
        code=fault.code,
    )
