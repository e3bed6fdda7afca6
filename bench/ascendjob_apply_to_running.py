"""AscendJob apply -> all pods Running with a completed rank table, against the same pods as a plain
Volcano Job, on one emulated 910B fleet.

One cluster (kwokctl binary runtime + Volcano) with N Atlas 800T A2 nodes (N = the largest size), the
emulator serving the same N nodes, fleet mode (chips, pod annotations) and the stand-in Ascend
Operator (`python -m cluster.ascendjob`) as subprocesses. For each size n:

  acjob   an AscendJob of 1 Master + (n-1) Workers, 8 chips each; timed from the create call until
          every pod is Running and ConfigMap rings-config-<job> holds a completed hccl.json;
  vcjob   a Volcano Job of n pods x 8 chips (gang of n); timed from the create call until every pod
          is Running and holds its chips (the device plugin's ascend-910-configuration annotation,
          the same condition the rank table waits for).

Each job is deleted, and its pods gone, before the next one.

    python bench/ascendjob_apply_to_running.py --sizes 8 128 1024 [--repeat 2] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ASCEND = "huawei.com/Ascend910"
CONFIGURATION = "ascend.kubectl.kubernetes.io/ascend-910-configuration"
NS = "bench"


def container(chips: int, port: bool) -> dict[str, Any]:
    c: dict[str, Any] = {"name": "ascend", "image": "npu-emu.invalid/train:1",
                         "resources": {"limits": {ASCEND: str(chips)}, "requests": {ASCEND: str(chips)}}}
    if port:
        c["ports"] = [{"name": "ascendjob-port", "containerPort": 2222}]
    return c


def acjob(name: str, n: int) -> dict[str, Any]:
    def spec(count: int, port: bool) -> dict[str, Any]:
        return {"replicas": count, "restartPolicy": "Never",
                "template": {"spec": {"nodeSelector": {"accelerator-type": "module-910b-8"},
                                      "containers": [container(8, port)]}}}

    replicas = {"Master": spec(1, True)}
    if n > 1:
        replicas["Worker"] = spec(n - 1, False)
    return {"apiVersion": "mindxdl.gitee.com/v1", "kind": "AscendJob",
            "metadata": {"name": name, "labels": {"framework": "pytorch"}},
            "spec": {"schedulerName": "volcano", "replicaSpecs": replicas,
                     "runPolicy": {"schedulingPolicy": {"minAvailable": n, "queue": "default"}}}}


def vcjob(name: str, n: int) -> dict[str, Any]:
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": name},
            "spec": {"schedulerName": "volcano", "queue": "default", "minAvailable": n,
                     "tasks": [{"name": "worker", "replicas": n, "minAvailable": n,
                                "template": {"spec": {"schedulerName": "volcano", "restartPolicy": "Never",
                                                      "nodeSelector": {"accelerator-type": "module-910b-8"},
                                                      "containers": [container(8, False)]}}}]}}


def pods_ready(core: Any, selector: str, n: int) -> bool:
    resp = core.list_namespaced_pod(NS, label_selector=selector, _preload_content=False)
    items = json.loads(resp.data)["items"]
    return len(items) == n and all(
        p["status"].get("phase") == "Running" and CONFIGURATION in (p["metadata"].get("annotations") or {})
        for p in items)


def ranktable_completed(core: Any, job: str) -> bool:
    try:
        resp = core.read_namespaced_config_map(f"rings-config-{job}", NS, _preload_content=False)
    except Exception:
        return False
    data = json.loads(resp.data).get("data") or {}
    return '"status":"completed"' in data.get("hccl.json", "")


def wait(what: str, probe: Any, timeout_s: float, interval_s: float) -> float:
    start = time.monotonic()
    while not probe():
        if time.monotonic() - start > timeout_s:
            raise TimeoutError(f"{what} after {timeout_s:.0f}s")
        time.sleep(interval_s)
    return time.monotonic() - start


def no_pods(core: Any) -> bool:
    resp = core.list_namespaced_pod(NS, _preload_content=False)
    return not json.loads(resp.data)["items"]


def run(sizes: list[int], repeat: int, bin_dir: str | None, keep: bool) -> dict[str, Any]:
    from kubernetes.client import CoreV1Api, CustomObjectsApi

    from cluster.ascendjob.component import build_ascendjob_controller
    from cluster.components import Component
    from cluster.control_plane import ControlPlane, free_port
    from cluster.inventory import fleet_inventory
    from cluster.process import ManagedProcess
    from emulator.testing import EmulatorProcess

    nodes = max(sizes)
    work = Path(tempfile.mkdtemp(prefix="acjob-bench-"))
    pattern = "bench-{index}"
    results: dict[str, Any] = {"nodes": nodes, "runs": []}
    cp = ControlPlane("acjob-bench", state_root=work / "state", bin_dir=bin_dir)
    t0 = time.monotonic()
    cp.up()
    try:
        cp.add_nodes(fleet_inventory(profile="atlas-800t-a2", count=nodes, name_pattern=pattern), timeout_s=900)
        results["cluster_up_s"] = round(time.monotonic() - t0, 1)
        emulator = EmulatorProcess(work / "emulator.db", startup_timeout=300,
                                   args=["--profile", "atlas-800t-a2", "--nodes", str(nodes),
                                         "--name-pattern", pattern])
        emulator.start()
        fleet = Component(name="fleet", binary=Path(sys.executable),
                          args=("-m", "deviceplugin", "fleet", f"--emulator-url={emulator.url}",
                                f"--kubeconfig={cp.kubeconfig}", "--log-level=warning"))
        controller = build_ascendjob_controller(kubeconfig=cp.kubeconfig, healthz_port=free_port(),
                                                log_level="warning")
        try:
            with ManagedProcess(fleet, work, ready_timeout_s=120), \
                    ManagedProcess(controller, work, ready_timeout_s=120):
                api = cp.api_client()
                core, custom = CoreV1Api(api), CustomObjectsApi(api)
                core.create_namespace({"metadata": {"name": NS}})
                wait("default service account", lambda: core.list_namespaced_service_account(
                    NS, field_selector="metadata.name=default").items, 60, 0.1)
                # Fleet mode has published every node's chips.
                wait("allocatable", lambda: cp.count_nodes()[2] >= nodes * 8, 300, 1.0)
                for n in sizes:
                    interval = 0.1 if n <= 128 else 0.5
                    for i in range(repeat):
                        row: dict[str, Any] = {"pods": n, "try": i}
                        name = f"ac-{n}-{i}"
                        start = time.monotonic()
                        custom.create_namespaced_custom_object("mindxdl.gitee.com", "v1", NS, "ascendjobs",
                                                               acjob(name, n))
                        wait(f"{name} Running", lambda name=name, n=n: pods_ready(
                            core, f"training.kubeflow.org/job-name={name}", n) and ranktable_completed(core, name),
                             900, interval)
                        row["acjob_s"] = round(time.monotonic() - start, 2)
                        custom.delete_namespaced_custom_object("mindxdl.gitee.com", "v1", NS, "ascendjobs", name,
                                                               propagation_policy="Background")
                        wait("pods gone", lambda: no_pods(core), 900, 0.5)
                        name = f"vc-{n}-{i}"
                        start = time.monotonic()
                        custom.create_namespaced_custom_object("batch.volcano.sh", "v1alpha1", NS, "jobs",
                                                               vcjob(name, n))
                        wait(f"{name} Running", lambda name=name, n=n: pods_ready(
                            core, f"volcano.sh/job-name={name}", n), 900, interval)
                        row["vcjob_s"] = round(time.monotonic() - start, 2)
                        custom.delete_namespaced_custom_object("batch.volcano.sh", "v1alpha1", NS, "jobs", name,
                                                               propagation_policy="Background")
                        wait("pods gone", lambda: no_pods(core), 900, 0.5)
                        row["ratio"] = round(row["acjob_s"] / row["vcjob_s"], 2)
                        print(json.dumps(row), flush=True)
                        results["runs"].append(row)
        finally:
            emulator.client.close()
            emulator.stop()
    finally:
        if not keep:
            cp.down()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[8, 128], help="pods per job (default 8 128)")
    parser.add_argument("--repeat", type=int, default=1, help="jobs of each kind per size (default 1)")
    parser.add_argument("--bin-dir", default=None, help="control-plane binaries (default: the build cache)")
    parser.add_argument("--keep", action="store_true", help="leave the cluster running")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args()
    results = run(sorted(args.sizes), args.repeat, args.bin_dir, args.keep)
    results.update({"date": datetime.now(UTC).isoformat(timespec="seconds"), "machine": platform.machine(),
                    "cpus": os.cpu_count(), "python": platform.python_version(),
                    "loadavg": [round(x, 1) for x in os.getloadavg()]})
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
