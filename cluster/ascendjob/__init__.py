"""The stand-in Ascend Operator: AscendJob (mindxdl.gitee.com/v1) -> Volcano PodGroup, master Service,
pods with the operator's labels, annotations and environment, the rank table, and the job's status.

Builders (pure functions over job dicts) are importable on their own; the controller needs a cluster.
See docs/ascendjob.md.
"""

from __future__ import annotations

from .env import PodEnvContext, build_env
from .podgroup import build_podgroup
from .pods import build_pod
from .ranktable import RankTable, build_ranktable
from .service import build_service
from .spec import InvalidJob, JobView

__all__ = [
    "InvalidJob",
    "JobView",
    "PodEnvContext",
    "RankTable",
    "build_env",
    "build_pod",
    "build_podgroup",
    "build_ranktable",
    "build_service",
]
