"""MindCluster fault levels and the health rules derived from them (stdlib only).

Order and rules: shared/reference/ascend-stack.md §3.1-3.2 (getMostSeriousFaultType, isHealthy).
"""

from __future__ import annotations

from collections.abc import Iterable

# Most severe first, as getMostSeriousFaultType ranks them.
LEVELS_MOST_SEVERE_FIRST: tuple[str, ...] = (
    "ManuallySeparateNPU",
    "SeparateNPU",
    "PreSeparateNPU",
    "RestartNPU",
    "FreeRestartNPU",
    "RestartBusiness",
    "RestartRequest",
    "SubHealthFault",
    "NotHandleFault",
    "NormalNPU",
)
NORMAL = "NormalNPU"
_RANK = {name: len(LEVELS_MOST_SEVERE_FIRST) - i for i, name in enumerate(LEVELS_MOST_SEVERE_FIRST)}

HEALTHY = "Healthy"
UNHEALTHY = "Unhealthy"

_HEALTHY_LEVELS = frozenset({"NormalNPU", "NotHandleFault", "SubHealthFault"})
_NETWORK_HEALTHY_LEVELS = frozenset({"NormalNPU", "NotHandleFault"})


def is_level(name: str) -> bool:
    return name in _RANK


def severity(level: str) -> int:
    """A number that grows with severity; NormalNPU is the smallest."""
    try:
        return _RANK[level]
    except KeyError:
        raise ValueError(f"unknown fault level {level!r}; known: {', '.join(LEVELS_MOST_SEVERE_FIRST)}") from None


def most_severe(levels: Iterable[str]) -> str:
    return max(levels, key=severity, default=NORMAL)


def kubelet_health(level: str, *, in_use: bool = False, grace_tolerance: bool = False) -> str:
    """Health the device plugin reports to kubelet for a chip at `level`.

    PreSeparateNPU stays Healthy while the chip is in use; FreeRestartNPU stays Healthy while in use with
    grace tolerance on. Every other level above SubHealthFault is Unhealthy.
    """
    severity(level)
    if level in _HEALTHY_LEVELS:
        return HEALTHY
    if level == "PreSeparateNPU" and in_use:
        return HEALTHY
    if level == "FreeRestartNPU" and in_use and grace_tolerance:
        return HEALTHY
    return UNHEALTHY


def network_health(level: str) -> str:
    """Network health of a chip whose network faults are at `level`: Unhealthy unless Normal or NotHandle."""
    severity(level)
    return HEALTHY if level in _NETWORK_HEALTHY_LEVELS else UNHEALTHY
