"""Volcano mode: which pod an Allocate call is for (shared/reference/ascend-stack.md §1.5.2).

The kubelet's device ids are ignored. The plugin takes the oldest pod (by `predicate-time`) bound to this
node, not yet mounted, whose `huawei.com/Ascend910` annotation names as many chips as were requested, and
uses those chips; then it sets the pod's predicate-time to MaxUint64 so no later call takes it again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from .constants import ANN_PREDICATE_TIME, ANN_VOLCANO_DEVICES, PREDICATE_TIME_CONSUMED, RESOURCE_NAME

__all__ = ["PodInfo", "PodSource", "oldest_candidate", "pod_info", "requests_npus"]


@dataclass(frozen=True)
class PodInfo:
    namespace: str
    name: str
    uid: str
    node: str
    phase: str
    annotations: Mapping[str, str]
    npu_request: int = 0

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def volcano_devices(self) -> list[str]:
        value = self.annotations.get(ANN_VOLCANO_DEVICES, "")
        return [d for d in value.split(",") if d]

    def predicate_time(self) -> int | None:
        raw = self.annotations.get(ANN_PREDICATE_TIME)
        try:
            return int(raw) if raw is not None else None
        except ValueError:
            return None


class PodSource(Protocol):
    """Pods bound to this node (a kube client, or a list in tests)."""

    def pods(self, *, fresh: bool = False) -> list[PodInfo]: ...

    def mark_consumed(self, pod: PodInfo, annotations: Mapping[str, str]) -> None:
        """Set predicate-time to MaxUint64 and write `annotations` on the pod."""


def requests_npus(pod: Any) -> int:
    """huawei.com/Ascend910 summed over a V1Pod's containers (limits, else requests)."""
    total = 0
    for c in pod.spec.containers or []:
        res = c.resources
        value = ((res.limits or {}) if res else {}).get(RESOURCE_NAME) or (
            ((res.requests or {}) if res else {}).get(RESOURCE_NAME)
        )
        if value:
            total += int(value)
    return total


def pod_info(pod: Any) -> PodInfo:
    meta = pod.metadata
    return PodInfo(
        namespace=meta.namespace or "default",
        name=meta.name,
        uid=meta.uid or "",
        node=(pod.spec.node_name or "") if pod.spec else "",
        phase=(pod.status.phase or "Pending") if pod.status else "Pending",
        annotations=dict(meta.annotations or {}),
        npu_request=requests_npus(pod),
    )


def oldest_candidate(pods: Iterable[PodInfo], count: int) -> PodInfo | None:
    """The not-yet-mounted pod with `count` chips in its Volcano annotation and the oldest predicate-time."""
    best: tuple[int, PodInfo] | None = None
    for pod in pods:
        if pod.phase in ("Succeeded", "Failed"):
            continue
        if pod.annotations.get(ANN_PREDICATE_TIME) == PREDICATE_TIME_CONSUMED:
            continue
        devices = pod.volcano_devices()
        if not devices or len(devices) != count:
            continue
        ptime = pod.predicate_time()
        if ptime is None:
            continue
        if best is None or ptime < best[0]:
            best = (ptime, pod)
    return best[1] if best else None
