"""The workload feels the fault: a pod whose chip takes a fault of level RestartBusiness or worse fails, as
its training process would (docs/fault-tolerance.md).

Fleet mode knows which pod holds which chip. After each flush of a node it asks `victims()` which held
pods now sit on a chip whose level (emulator.levels severity, network faults included) is at least
`threshold`, or on a chip that vanished (card lost), or in the reset group of a chip being hot-reset
(RestartNPU / FreeRestartNPU take the whole group down, deviceplugin/health.py). Each such pod is failed
once, through kwok's `pod-failed` Stage (fixtures/kwok/stages/pod/pod-failed.yaml): label
`pod-failed.stage.npu-emu.io: "true"`, exit code, reason and a termination message naming the chip and the
code; plus npu-emu's annotation `npu-emu.io/device-fault` (read by the stand-in operator's
fault-scheduling) and a Warning Event on the pod in the device plugin's wording (ascend-stack.md §1.9).

Pure decision logic here; `KubePodFailer` does the two writes.
"""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from emulator.levels import UNHEALTHY, is_level, severity

from . import constants as k
from .events import fault_message
from .health import reset_groups
from .model import Chip, Fault, device_name
from .state import Snapshot
from .volcano import PodInfo

__all__ = [
    "ANN_DEVICE_FAULT",
    "DEFAULT_EXIT_CODE",
    "DEFAULT_THRESHOLD",
    "KubePodFailer",
    "PodFailer",
    "Victim",
    "failure_patch",
    "victims",
]

log = logging.getLogger(__name__)

DEFAULT_THRESHOLD = "RestartBusiness"
DEFAULT_EXIT_CODE = 1  # what an uncaught RuntimeError from the NPU runtime gives a Python training process
ANN_DEVICE_FAULT = "npu-emu.io/device-fault"  # "<node>/Ascend910-<phy>/<code>/<level>": set when we failed it
STAGE_LABEL = "pod-failed.stage.npu-emu.io"
STAGE_PREFIX = STAGE_LABEL + "/"
CARD_LOST_CODE = "40F84E00"


@dataclass(frozen=True)
class Victim:
    pod: PodInfo
    chip: Chip  # the faulty chip (for a reset group: the chip being reset)
    fault: Fault

    @property
    def summary(self) -> str:
        return f"{self.pod.key}: {device_name(self.chip.phy_id)} {self.fault.code} ({self.fault.level})"


def _worst_fault(chip: Chip) -> Fault:
    """The chip's most severe active fault; a synthetic one when the level has no fault behind it."""
    if chip.faults:
        return max(chip.faults, key=lambda f: (severity(f.level) if is_level(f.level) else 0, -f.since_ms))
    code = CARD_LOST_CODE if not chip.present else ""
    level = chip.fault_level if chip.present else "RestartNPU"
    return Fault(id="", code=code, level=level, fault_type="CardUnhealthy", since_ms=0)


def _fatal(chip: Chip, floor: int) -> bool:
    if not chip.present:
        return True
    return is_level(chip.fault_level) and severity(chip.fault_level) >= floor


def victims(
    assigned: Mapping[str, tuple[PodInfo, tuple[int, ...]]],
    snap: Snapshot,
    *,
    threshold: str = DEFAULT_THRESHOLD,
    already: set[str] | frozenset[str] = frozenset(),
) -> list[Victim]:
    """Pods (by uid in `assigned`) that must fail now, skipping uids in `already` and pods we failed before."""
    if snap.node is None or snap.stale:
        return []  # unknown health is not a fault: never kill a workload because the emulator is away
    floor = severity(threshold)
    fatal = {p: c for p, c in snap.chips.items() if _fatal(c, floor)}
    resetting = {
        p: c for p, c in snap.chips.items() if c.fault_level in k.RESET_LEVELS and snap.health.get(p) == UNHEALTHY
    }
    culprit: dict[int, Chip] = dict(fatal)
    if resetting:
        for group in reset_groups(snap.node, list(snap.chips)):
            hit = sorted(group & set(resetting))
            if hit:
                for phy in group:
                    culprit.setdefault(phy, resetting[hit[0]])
    out: list[Victim] = []
    for uid, (pod, chips) in sorted(assigned.items(), key=lambda kv: kv[1][0].key):
        if uid in already or ANN_DEVICE_FAULT in pod.annotations:
            continue
        bad = [culprit[c] for c in chips if c in culprit]
        if bad:
            chip = min(bad, key=lambda c: c.phy_id)
            out.append(Victim(pod, chip, _worst_fault(chip)))
    return out


def failure_patch(victim: Victim, node: str, exit_code: int = DEFAULT_EXIT_CODE) -> dict[str, Any]:
    """The merge patch that makes kwok's pod-failed Stage fail the pod."""
    chip, fault = victim.chip, victim.fault
    name = device_name(chip.phy_id)
    message = (
        f"training process exited: device fault on {name} of node {node}, faultCodes:{fault.code or 'none'}, "
        f"faultLevelName:{fault.level}"
    )
    return {
        "metadata": {
            "labels": {STAGE_LABEL: "true"},
            "annotations": {
                STAGE_PREFIX + "exit-code": str(exit_code),
                STAGE_PREFIX + "reason": "Error",
                STAGE_PREFIX + "message": message,
                ANN_DEVICE_FAULT: f"{node}/{name}/{fault.code}/{fault.level}",
            },
        }
    }


def pod_event_message(victim: Victim, node: str) -> str:
    """The real plugin's fault Event wording (§1.9), about the chip the pod held."""
    return fault_message(node, victim.chip, victim.fault, k.REASON_OCCUR)


class PodFailer(Protocol):
    def fail(self, victim: Victim, node: str) -> None:
        """Fail the pod (raise on failure; a 404 means it is gone, which is fine)."""


class KubePodFailer:
    """Writes the failure patch and a Warning Event on the pod (in the pod's namespace)."""

    def __init__(self, core: Any, exit_code: int = DEFAULT_EXIT_CODE) -> None:
        self.core = core
        self.exit_code = exit_code

    def fail(self, victim: Victim, node: str) -> None:
        from kubernetes.client.exceptions import ApiException

        pod = victim.pod
        try:
            self.core.patch_namespaced_pod(
                pod.name,
                pod.namespace,
                failure_patch(victim, node, self.exit_code),
                _content_type="application/merge-patch+json",
            )
        except ApiException as exc:
            if exc.status == 404:
                return
            raise
        log.info("failing pod %s", victim.summary)
        self._event(victim, node)

    def _event(self, victim: Victim, node: str) -> None:
        from kubernetes import client as k8s
        from kubernetes.client.exceptions import ApiException

        pod = victim.pod
        now = dt.datetime.now(dt.UTC)
        body = k8s.CoreV1Event(
            metadata=k8s.V1ObjectMeta(name=f"{pod.name}.{uuid.uuid4().hex[:16]}", namespace=pod.namespace),
            involved_object=k8s.V1ObjectReference(
                kind="Pod", name=pod.name, namespace=pod.namespace, uid=pod.uid, api_version="v1"
            ),
            reason=k.REASON_OCCUR,
            message=pod_event_message(victim, node),
            type="Warning",
            count=1,
            first_timestamp=now,
            last_timestamp=now,
            source=k8s.V1EventSource(component=k.EVENT_COMPONENT, host=node),
            reporting_component=k.EVENT_COMPONENT,
            reporting_instance=node,
        )
        try:
            self.core.create_namespaced_event(pod.namespace, body)
        except ApiException as exc:
            log.warning("could not record the fault event of pod %s: %s", pod.key, exc.reason)
