"""Bring-up benchmark of the npu-emu control plane with large kwok Ascend fleets.

For each size N: start a cluster (kwokctl binary runtime + Volcano), create N Atlas 800T A2 (910B)
nodes and wait until all are Ready, then submit one Volcano gang of N pods x 8 x huawei.com/Ascend910
(one whole node each) and time until every pod is bound and Running. Reports kube-apiserver, etcd,
kwok-controller and vc-scheduler RSS after each phase.

    python bench/cluster_bringup.py --sizes 1000 4000 [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ASCEND = "huawei.com/Ascend910"


def rss_mib(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


def component_rss(cp: Any) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for name in ("kube-apiserver", "etcd", "kwok-controller", "kube-controller-manager"):
        pid_file = cp.kwok_cluster_dir / "pids" / f"{name}.pid"
        try:
            out[name] = rss_mib(int(pid_file.read_text().strip()))
        except (OSError, ValueError):
            out[name] = None
    for name in ("vc-scheduler", "vc-controller-manager"):
        pid_file = cp.dir / "pids" / f"{name}.json"
        try:
            out[name] = rss_mib(int(json.loads(pid_file.read_text())["pid"]))
        except (OSError, ValueError, KeyError):
            out[name] = None
    return out


def gang_job(name: str, replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": name},
        "spec": {"schedulerName": "volcano", "queue": "default", "minAvailable": replicas,
                 "tasks": [{"name": "worker", "replicas": replicas, "minAvailable": replicas,
                            "template": {"spec": {
                                "schedulerName": "volcano", "restartPolicy": "Never",
                                "containers": [{"name": "main", "image": "npu-emu.invalid/train:1",
                                                "resources": {"limits": {ASCEND: "8"},
                                                              "requests": {ASCEND: "8"}}}]}}}]},
    }


def pod_counts(core: Any, ns: str) -> tuple[int, int, int]:
    """(pods, bound pods, Running pods) of the namespace, read as raw JSON page by page."""
    total = bound = running = 0
    cont = None
    while True:
        resp = core.list_namespaced_pod(ns, limit=2000, _continue=cont, _preload_content=False)
        body = json.loads(resp.data)
        for pod in body["items"]:
            total += 1
            bound += bool(pod["spec"].get("nodeName"))
            running += pod.get("status", {}).get("phase") == "Running"
        cont = body["metadata"].get("continue")
        if not cont:
            return total, bound, running


def run_size(size: int, state_root: Path, bin_dir: str | None, workers: int,
             timeout_s: float, gang: bool = True, born_ready: bool = False) -> dict[str, Any]:
    from kubernetes.client import CoreV1Api, CustomObjectsApi

    from cluster.control_plane import ControlPlane
    from cluster.inventory import fleet_inventory

    result: dict[str, Any] = {"nodes": size, "born_ready": born_ready}
    cp = ControlPlane(f"bench-{size}", state_root=state_root, bin_dir=bin_dir)
    t0 = time.monotonic()
    cp.up(timeout_s=timeout_s)
    try:
        result["control_plane_s"] = round(time.monotonic() - t0, 1)
        inventory = fleet_inventory(profile="atlas-800t-a2", count=size, name_pattern="n-{index}")
        t1 = time.monotonic()
        try:
            fleet = cp.add_nodes(inventory, workers=workers, progress=True, timeout_s=timeout_s,
                                 born_ready=born_ready)
        except TimeoutError as e:
            result["nodes_ready_timeout"] = str(e)
            result["rss_mib_after_nodes"] = component_rss(cp)
            return result
        result["nodes_created_s"] = round(fleet.seconds, 1)
        result["nodes_ready_s"] = round(time.monotonic() - t1, 1)
        result["bringup_total_s"] = round(time.monotonic() - t0, 1)
        result["rss_mib_after_nodes"] = component_rss(cp)
        print(json.dumps(result), flush=True)

        if not gang:
            return result
        client = cp.api_client()
        core: Any = CoreV1Api(client)
        custom = CustomObjectsApi(client)
        ns = "bench"
        core.create_namespace({"metadata": {"name": ns}})
        t2 = time.monotonic()
        custom.create_namespaced_custom_object("batch.volcano.sh", "v1alpha1", ns, "jobs",
                                               gang_job("gang", size))
        created_at = bound_at = None
        deadline = t2 + timeout_s
        while time.monotonic() < deadline:
            total, bound, running = pod_counts(core, ns)
            now = time.monotonic() - t2
            if created_at is None and total == size:
                created_at = now
            if bound_at is None and bound == size:
                bound_at = now
            if running == size:
                result["gang_pods_created_s"] = round(created_at or now, 1)
                result["gang_bound_s"] = round(bound_at or now, 1)
                result["gang_running_s"] = round(now, 1)
                break
            time.sleep(1.0)
        else:
            result["gang_timeout"] = {"pods": total, "bound": bound, "running": running, "after_s": timeout_s}
        result["rss_mib_after_gang"] = component_rss(cp)
        for name, rss in result["rss_mib_after_gang"].items():
            if rss is None:  # the component is gone: keep why
                log = cp.kwok_cluster_dir / "logs" / f"{name}.log"
                if not log.exists():
                    log = cp.log_dir / f"{name}.log"
                tail = log.read_text(errors="replace").splitlines()[-15:] if log.exists() else []
                result.setdefault("died", {})[name] = tail
    finally:
        t3 = time.monotonic()
        cp.down()
        result["down_s"] = round(time.monotonic() - t3, 1)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 4000])
    parser.add_argument("--bin-dir", default=None)
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--timeout", type=float, default=1200.0)
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    parser.add_argument("--born-ready", action="store_true",
                        help="create nodes Ready instead of letting kwok's node-initialize do it")
    parser.add_argument("--no-gang-above", type=int, default=None, metavar="N",
                        help="only bring up (no gang) for sizes above N")
    args = parser.parse_args()
    import os

    results: dict[str, Any] = {"machine": f"{platform.node()} {os.cpu_count()} CPUs, "
                          f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') // 2**30} GiB",
               "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "runs": []}
    with tempfile.TemporaryDirectory(prefix="npu-emu-bench-") as tmp:
        for size in args.sizes:
            gang = args.no_gang_above is None or size <= args.no_gang_above
            run = run_size(size, Path(tmp), args.bin_dir, args.workers, args.timeout, gang,
                           args.born_ready)
            results["runs"].append(run)
            print(json.dumps(run), flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
