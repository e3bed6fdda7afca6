"""Environment the operator injects into the `ascend` container (§7.3; the real env.go).

Order: common (ASCEND_VISIBLE_DEVICES, MINDX_*, HostNetwork, HCCL_LOGIC_SUPERPOD_ID, REPLICA_TYPE), then
the framework's own set. A MindSpore job of Workers only gets no framework environment (as the real one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import constants as k
from .spec import JobView, ReplicaView

__all__ = ["PodEnvContext", "build_env", "local_rank", "logic_superpod_id"]


@dataclass(frozen=True)
class PodEnvContext:
    """Facts from the cluster the environment needs: the master Service and ClusterD's address."""

    master_ip: str = ""
    master_port: str = str(k.DEFAULT_PORT)
    clusterd_ip: str = k.CLUSTERD_DOMAIN


def _value(name: str, value: object) -> dict[str, Any]:
    return {"name": name, "value": str(value)}


def _field(name: str, path: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


def local_rank(n: int) -> str:
    return ",".join(str(i) for i in range(n))


def logic_superpod_id(rank: int, sp_block: int, chips_per_pod: int) -> int:
    if sp_block <= 0 or chips_per_pod <= 0:
        return 0
    nodes = 1 if sp_block < chips_per_pod else sp_block // chips_per_pod
    return rank // nodes


def _common(job: JobView, r: ReplicaView, rank: int, ctx: PodEnvContext) -> list[dict[str, Any]]:
    env: list[dict[str, Any]] = []
    resource = r.npu_resource
    if resource:
        env.append(_field("ASCEND_VISIBLE_DEVICES", f"metadata.annotations['{resource}']"))
    env += [
        _value("MINDX_TASK_ID", job.uid),
        _value("MINDX_SERVER_IP", ctx.clusterd_ip),
        _value("MINDX_SERVER_DOMAIN", k.CLUSTERD_DOMAIN),
        _value("HostNetwork", "true" if (r.template.get("spec") or {}).get("hostNetwork") else "false"),
    ]
    if resource:
        env.append(_value("HCCL_LOGIC_SUPERPOD_ID", logic_superpod_id(rank, job.sp_block, r.npus)))
    env.append(_value("REPLICA_TYPE", r.rtype))
    return env


def _pytorch(job: JobView, rank: int, ctx: PodEnvContext) -> list[dict[str, Any]]:
    ct = job.npu_per_pod
    return [
        _value("LOCAL_WORLD_SIZE", ct),
        _value("WORLD_SIZE", ct * job.npu_replicas),
        _value("LOCAL_RANK", local_rank(ct)),
        _value("MASTER_ADDR", ctx.master_ip),
        _value("MASTER_PORT", ctx.master_port),
        _value("RANK", rank),
    ]


def _mindspore(job: JobView, r: ReplicaView, rank: int, ctx: PodEnvContext) -> list[dict[str, Any]]:
    ct = job.npu_per_pod
    env = [
        _field("MS_SCHED_HOST", "status.podIP") if r.rtype == k.SCHEDULER else _value("MS_SCHED_HOST", ctx.master_ip),
        _value("MS_LOCAL_WORKER", ct),
        _value("MS_WORKER_NUM", ct * job.npu_replicas),
        _value("MS_NODE_RANK", rank),
        _value("MS_SCHED_PORT", ctx.master_port),
        _value("MS_SERVER_NUM", 0),
        _value("MS_ROLE", "MS_SCHED" if r.rtype == k.SCHEDULER else "MS_WORKER"),
        _value("NPU_POD", "true" if r.npus > 0 else "false"),
    ]
    return env


def _tensorflow(job: JobView, r: ReplicaView, rank: int, ctx: PodEnvContext) -> list[dict[str, Any]]:
    ct = job.npu_per_pod
    return [
        _field("CM_CHIEF_IP", "status.podIP") if r.rtype == k.CHIEF else _value("CM_CHIEF_IP", ctx.master_ip),
        _value("CM_LOCAL_WORKER", ct),
        _value("CM_WORKER_SIZE", ct * job.npu_replicas),
        _value("CM_CHIEF_PORT", ctx.master_port),
        _value("CM_RANK", rank),
        _value("CM_CHIEF_DEVICE", 0),
        _field("CM_WORKER_IP", "status.podIP"),
    ]


def build_env(job: JobView, r: ReplicaView, index: int, ctx: PodEnvContext) -> list[dict[str, Any]]:
    """The variables to append to the `ascend` container's own env."""
    rank = job.rank(r.rtype, index)
    env = _common(job, r, rank, ctx)
    if job.framework == k.PYTORCH:
        env += _pytorch(job, rank, ctx)
    elif job.framework == k.MINDSPORE:
        if not (len(job.replicas) == 1 and r.rtype == k.WORKER):
            env += _mindspore(job, r, rank, ctx)
    elif job.framework == k.TENSORFLOW:
        env += _tensorflow(job, r, rank, ctx)
    return env
