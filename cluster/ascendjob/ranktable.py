"""hccl.json, the rank table (§7.4; the real pkg/ranktable): built from the pods' ascend-910-configuration
annotations, which the device plugin (here: fleet mode, from the emulator) writes once a pod holds chips.

- version "1.0" (910A / 910B) or "1.2" (A3 SuperPoD: super_device_id per device and super_pod_list);
- `status` is "initializing" until every replica of the job holds its chips and has a pod IP, then
  "completed";
- each device's rank_id is hccl/rankIndex x devices-per-pod + its position; servers are sorted by the
  rank of their first device; server_id, host_ip and the devices come from the annotation, container_ip
  is the pod IP;
- v1.0 refuses a device whose IP is "-1" (the plugin could not read it); the table stays initializing.

JSON is compact with the Go struct's field order, as json.Marshal writes it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from . import constants as k
from .env import logic_superpod_id
from .spec import JobView, pod_npus

__all__ = ["RankTable", "build_ranktable", "live_pods", "pod_allocated"]


@dataclass(frozen=True)
class RankTable:
    data: dict[str, Any]
    pod_uids: frozenset[str]  # the pods it describes (empty while initializing)
    problem: str = ""  # why it is still initializing

    @property
    def status(self) -> str:
        return str(self.data["status"])

    @property
    def completed(self) -> bool:
        return self.status == k.RANKTABLE_COMPLETED

    def to_json(self) -> str:
        return json.dumps(self.data, separators=(",", ":"))


def live_pods(pods: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Pods that are not being deleted."""
    return [p for p in pods if not (p.get("metadata") or {}).get("deletionTimestamp")]


def pod_allocated(pod: Mapping[str, Any]) -> bool:
    """A pod holds its chips when it carries the configuration annotation (pods without NPUs always do)."""
    if pod_npus(pod) <= 0:
        return True
    return k.ANN_CONFIGURATION in ((pod.get("metadata") or {}).get("annotations") or {})


def _initial(version: str) -> dict[str, Any]:
    data: dict[str, Any] = {"status": k.RANKTABLE_INITIALIZING, "version": version}
    if version == "1.2":
        data["super_pod_list"] = []
    return data


def _server(pod: Mapping[str, Any], version: str) -> dict[str, Any] | None:
    meta = pod.get("metadata") or {}
    annotations = meta.get("annotations") or {}
    raw = annotations.get(k.ANN_CONFIGURATION)
    if raw is None:
        return None
    try:
        instance = json.loads(raw)
    except json.JSONDecodeError as e:
        raise ValueError(f"pod {meta.get('name')}: {k.ANN_CONFIGURATION} is not JSON: {e}") from e
    devices = instance.get("devices") or []
    if version == "1.0":
        bad = [d.get("device_id") for d in devices if d.get("device_ip") == "-1"]
        if bad:
            raise ValueError(f"pod {meta.get('name')}: device(s) {bad} have no IP (-1); cannot build a 1.0 rank table")
    pod_ip = (pod.get("status") or {}).get("podIP") or ""
    if not pod_ip:
        raise ValueError(f"pod {meta.get('name')} has no IP yet")
    try:
        rank_index = int(annotations.get(k.ANN_RANK_INDEX, ""))
    except ValueError:
        raise ValueError(f"pod {meta.get('name')}: {k.ANN_RANK_INDEX} is missing or not a number") from None
    device_list = []
    for i, d in enumerate(devices):
        entry: dict[str, Any] = {"device_id": str(d.get("device_id")), "device_ip": str(d.get("device_ip"))}
        if version == "1.2":
            entry["super_device_id"] = str(d.get("super_device_id"))
        entry["rank_id"] = str(rank_index * len(devices) + i)
        device_list.append(entry)
    server: dict[str, Any] = {"device": device_list, "server_id": str(instance.get("server_id", "")),
                              "host_ip": str(instance.get("host_ip", ""))}
    server["container_ip"] = pod_ip
    return server


def _first_rank(server: dict[str, Any]) -> int:
    return int(server["device"][0]["rank_id"]) if server["device"] else 1 << 62


def build_ranktable(job: JobView, pods: Iterable[Mapping[str, Any]]) -> RankTable:
    """The table for the job's live pods: completed once all `total_replicas` hold their chips."""
    version = job.ranktable_version()
    pods = live_pods(pods)
    allocated = [p for p in pods if pod_allocated(p)]
    if job.total_replicas == 0 or len(allocated) != job.total_replicas:
        return RankTable(_initial(version), frozenset(),
                         f"{len(allocated)}/{job.total_replicas} pods hold their chips")
    servers = []
    try:
        for p in allocated:
            server = _server(p, version)
            if server is not None:
                servers.append(server)
    except ValueError as e:
        return RankTable(_initial(version), frozenset(), str(e))
    servers.sort(key=_first_rank)
    data: dict[str, Any] = {"status": k.RANKTABLE_COMPLETED, "server_list": servers,
                            "server_count": str(len(servers)), "version": version}
    if version == "1.2":
        data["super_pod_list"] = _super_pods(servers, job.sp_block)
    uids = frozenset(str((p.get("metadata") or {}).get("uid", "")) for p in allocated)
    return RankTable(data, uids)


def _super_pods(servers: list[dict[str, Any]], sp_block: int) -> list[dict[str, Any]]:
    """Logical SuperPoDs of sp-block chips in server order (all in "0" without sp-block)."""
    out: list[dict[str, Any]] = []
    chips = len(servers[0]["device"]) if servers else 0
    for i, server in enumerate(servers):
        vid = logic_superpod_id(i, sp_block, chips)
        while len(out) <= vid:
            out.append({"super_pod_id": str(len(out)), "server_list": []})
        out[vid]["server_list"].append({"server_id": server["server_id"]})
    return out
