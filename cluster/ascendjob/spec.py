"""A read-only view of an AscendJob dict with the operator's defaults applied, and its validation.

Defaults as the real operator sets them: replicas 1, restartPolicy Never, cleanPodPolicy None,
successPolicy "", the `ascendjob-port` container port 2222 on non-Worker replicas, replica type keys
in camel case (`worker` -> `Worker`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import constants as k

__all__ = ["InvalidJob", "JobView", "ReplicaView", "container_npus", "pod_npus"]


class InvalidJob(ValueError):
    """The job cannot be run as written; the message says why (it becomes the Failed condition)."""


def container_npus(container: Mapping[str, Any]) -> tuple[str, int]:
    """(resource name, count) of the first huawei.com/* resource the container requests, else ("", 0)."""
    resources = container.get("resources") or {}
    for section in ("requests", "limits"):
        for name, value in (resources.get(section) or {}).items():
            if str(name).startswith(k.NPU_RESOURCE_PREFIX):
                try:
                    return str(name), int(str(value))
                except ValueError:
                    return str(name), 0
    return "", 0


def pod_npus(pod: Mapping[str, Any]) -> int:
    """NPUs the pod's `ascend` container (or, without one, all containers) requests."""
    containers = (pod.get("spec") or {}).get("containers") or []
    named = [c for c in containers if c.get("name") == k.CONTAINER]
    return sum(container_npus(c)[1] for c in (named or containers))


@dataclass(frozen=True)
class ReplicaView:
    rtype: str  # camel case: Master, Scheduler, Chief, Worker
    replicas: int
    restart_policy: str
    template: dict[str, Any]

    @property
    def rt(self) -> str:
        """The lower-case replica type used in names and labels."""
        return self.rtype.lower()

    @property
    def is_master(self) -> bool:
        return self.rtype in k.MASTER_TYPES

    def container(self) -> dict[str, Any] | None:
        for c in (self.template.get("spec") or {}).get("containers") or []:
            if c.get("name") == k.CONTAINER:
                return dict(c)
        return None

    @property
    def npus(self) -> int:
        c = self.container()
        return container_npus(c)[1] if c else 0

    @property
    def npu_resource(self) -> str:
        c = self.container()
        return container_npus(c)[0] if c else ""

    def port(self) -> int | None:
        c = self.container() or {}
        for p in c.get("ports") or []:
            if p.get("name") == k.PORT_NAME:
                return int(p.get("containerPort") or k.DEFAULT_PORT)
        return None


class JobView:
    """What the controller needs to know about one AscendJob."""

    def __init__(self, job: Mapping[str, Any]) -> None:
        self.raw = job
        meta = job.get("metadata") or {}
        self.name: str = meta.get("name", "")
        self.namespace: str = meta.get("namespace") or "default"
        self.uid: str = meta.get("uid", "")
        self.labels: dict[str, str] = dict(meta.get("labels") or {})
        self.annotations: dict[str, str] = dict(meta.get("annotations") or {})
        spec = job.get("spec") or {}
        self.scheduler_name: str = spec.get("schedulerName") or ""
        self.success_policy: str = spec.get("successPolicy") or ""
        self.run_policy: dict[str, Any] = dict(spec.get("runPolicy") or {})
        self.status: dict[str, Any] = dict(job.get("status") or {})
        self.replicas: dict[str, ReplicaView] = {}
        for key, rspec in (spec.get("replicaSpecs") or {}).items():
            rtype = next((t for t in k.REPLICA_TYPES if t.lower() == str(key).lower()), str(key))
            rspec = rspec or {}
            template = copy.deepcopy(rspec.get("template") or {})
            if rtype != k.WORKER:
                _default_port(template)
            replicas = rspec.get("replicas")
            self.replicas[rtype] = ReplicaView(
                rtype=rtype,
                replicas=1 if replicas is None else int(replicas),
                restart_policy=rspec.get("restartPolicy") or "Never",
                template=template,
            )

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def framework(self) -> str:
        return self.labels.get(k.FRAMEWORK_LABEL, "")

    @property
    def podgroup_name(self) -> str:
        return f"{self.name}-{self.uid}"

    def ordered(self) -> list[ReplicaView]:
        """Replica specs, master role first (the order ranks are given in)."""
        order = {t: i for i, t in enumerate(k.REPLICA_TYPES)}
        return sorted(self.replicas.values(), key=lambda r: (order.get(r.rtype, len(order)), r.rtype))

    @property
    def master(self) -> ReplicaView | None:
        return next((r for r in self.ordered() if r.is_master), None)

    @property
    def total_replicas(self) -> int:
        return sum(r.replicas for r in self.replicas.values())

    @property
    def non_worker_mounts_chips(self) -> bool:
        """A Master / Chief / Scheduler that asks for NPUs takes rank 0, and Workers shift up by one."""
        return any(r.npus > 0 for r in self.replicas.values() if r.rtype != k.WORKER)

    @property
    def npu_per_pod(self) -> int:
        """ctReq: NPUs per pod of the Worker spec (or of the master role when only it asks for NPUs)."""
        worker = self.replicas.get(k.WORKER)
        if worker is not None and worker.npus > 0:
            return worker.npus
        return max((r.npus for r in self.replicas.values()), default=0)

    @property
    def npu_replicas(self) -> int:
        """Pods that count towards WORLD_SIZE: Workers, plus the master role when it mounts chips."""
        mounts = self.non_worker_mounts_chips
        return sum(r.replicas for r in self.replicas.values() if r.rtype == k.WORKER or mounts)

    def rank(self, rtype: str, index: int) -> int:
        if rtype == k.WORKER and self.non_worker_mounts_chips:
            return index + 1
        return index

    @property
    def min_available(self) -> int:
        policy = self.run_policy.get("schedulingPolicy") or {}
        value = policy.get("minAvailable")
        return self.total_replicas if value is None else int(value)

    @property
    def queue(self) -> str:
        return (self.run_policy.get("schedulingPolicy") or {}).get("queue") or k.DEFAULT_QUEUE

    @property
    def backoff_limit(self) -> int | None:
        value = self.run_policy.get("backoffLimit")
        return None if value is None else int(value)

    @property
    def clean_pod_policy(self) -> str:
        return self.run_policy.get("cleanPodPolicy") or "None"

    def has_ranktable_volume(self) -> bool:
        return any(
            v.get("name") == k.RANKTABLE_VOLUME
            for r in self.replicas.values()
            for v in (r.template.get("spec") or {}).get("volumes") or []
        )

    def ranktable_version(self) -> str:
        """1.2 for A3 SuperPoD jobs (sp-block, an -sp schedule policy, an A3 super-pod node selector), else 1.0."""
        if self.annotations.get(k.ANN_SCHEDULE_POLICY) in k.A3_SCHEDULE_POLICIES or k.ANN_SP_BLOCK in self.annotations:
            return "1.2"
        for r in self.replicas.values():
            selector = (r.template.get("spec") or {}).get("nodeSelector") or {}
            if selector.get("accelerator-type") in k.A3_ACCELERATOR_TYPES:
                return "1.2"
        return "1.0"

    @property
    def sp_block(self) -> int:
        try:
            return int(self.annotations.get(k.ANN_SP_BLOCK, "0"))
        except ValueError:
            return 0

    def validate(self) -> None:
        """Raise InvalidJob with the real operator's rules (the ones that matter here)."""
        if self.framework not in k.FRAMEWORKS:
            raise InvalidJob(
                f"framework label is {self.framework or 'not set'}; set label framework to one of "
                f"<{','.join(k.FRAMEWORKS)}>")
        if not self.replicas:
            raise InvalidJob("spec.replicaSpecs is empty")
        for rtype, r in self.replicas.items():
            if rtype not in k.REPLICA_TYPES:
                raise InvalidJob(f"replicaType is {rtype} but must be one of {list(k.REPLICA_TYPES)}")
            if r.container() is None:
                raise InvalidJob(f"replicaSpecs.{rtype}: no container named {k.CONTAINER}")
            if r.replicas < 0:
                raise InvalidJob(f"replicaSpecs.{rtype}.replicas must not be negative")
        masters = [r for r in self.replicas.values() if r.is_master]
        if len(masters) > 1:
            raise InvalidJob(f"more than one leader replica type: {[r.rtype for r in masters]}")
        leader = {k.PYTORCH: k.MASTER, k.MINDSPORE: k.SCHEDULER, k.TENSORFLOW: k.CHIEF}[self.framework]
        if masters and masters[0].rtype != leader:
            raise InvalidJob(f"a {self.framework} job's leader replica type is {leader}, not {masters[0].rtype}")
        if masters and masters[0].replicas != 1:
            raise InvalidJob(f"replicaSpecs.{masters[0].rtype}.replicas must be 1")
        if self.npu_per_pod <= 0:
            raise InvalidJob(f"job {self.key} does not request NPUs (container {k.CONTAINER}, huawei.com/*)")
        if self.success_policy not in ("", "AllWorkers"):
            raise InvalidJob('job success policy is invalid, it must be one of <"", AllWorkers>')
        if self.min_available > self.total_replicas:
            raise InvalidJob(
                f"runPolicy.schedulingPolicy.minAvailable {self.min_available} is larger than the "
                f"{self.total_replicas} replicas")


def _default_port(template: dict[str, Any]) -> None:
    containers = (template.setdefault("spec", {})).get("containers") or []
    if not containers:
        return
    target = next((c for c in containers if c.get("name") == k.CONTAINER), containers[0])
    ports = target.setdefault("ports", [])
    if not any(p.get("name") == k.PORT_NAME for p in ports):
        ports.append({"name": k.PORT_NAME, "containerPort": k.DEFAULT_PORT})
