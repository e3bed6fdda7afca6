"""Fault tolerance end to end: fault injection -> the job Running again, and a fault storm over a fleet.

One cluster (kwokctl binary runtime + Volcano) with N Atlas 800T A2 nodes, the emulator serving the same
nodes, fleet mode (chips, allocatable, ConfigMaps, Events, failing the pods of faulty chips) and the
stand-in Ascend Operator, all as subprocesses.

  recovery  one AscendJob of 1 Master + (P-1) Workers, 8 chips each (labels fault-scheduling: force,
            fault-retry-times: 100). Each run injects a multi-bit ECC fault (REST) on a random chip held
            by a random pod and times until the job runs again: every pod replaced and Running on
            healthy chips, condition Running, and a completed rank table naming the new pods. The
            fault is then cleared and the node's allocatable awaited before the next run.
  storm     J AscendJobs of Q pods x 8 chips, then F faults (multi-bit ECC / over-temperature,
            alternating) on F distinct random chips of the whole fleet (seeded), replayed as one
            scenario spread over --storm-s emulated seconds. Checked: every fault reaches its node's
            device-info ConfigMap and the plugin's Occur Event (no fault lost), every node's allocatable
            drops by its faulted chips, every job with a pod on a faulted chip recovers on healthy chips,
            and no other job restarts.

    python bench/fault_recovery.py recovery --pods 16 --runs 20 [--json out.json]
    python bench/fault_recovery.py storm --nodes 1000 --jobs 100 --pods 4 --faults 100 [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ASCEND = "huawei.com/Ascend910"
CONFIGURATION = "ascend.kubectl.kubernetes.io/ascend-910-configuration"
NS = "ftbench"
PATTERN = "ftb-{index}"
KINDS = (("hbm-multi-bit-ecc", "80E01801"), ("over-temperature", "8FFE0001"))


def acjob(name: str, pods: int) -> dict[str, Any]:
    def spec(count: int, port: bool) -> dict[str, Any]:
        c: dict[str, Any] = {"name": "ascend", "image": "npu-emu.invalid/train:1",
                             "resources": {"limits": {ASCEND: "8"}, "requests": {ASCEND: "8"}}}
        if port:
            c["ports"] = [{"name": "ascendjob-port", "containerPort": 2222}]
        return {"replicas": count, "restartPolicy": "Never", "template": {"spec": {"containers": [c]}}}

    replicas = {"Master": spec(1, True)}
    if pods > 1:
        replicas["Worker"] = spec(pods - 1, False)
    return {"apiVersion": "mindxdl.gitee.com/v1", "kind": "AscendJob",
            "metadata": {"name": name, "labels": {"framework": "pytorch", "fault-scheduling": "force",
                                                   "fault-retry-times": "100"}},
            "spec": {"schedulerName": "volcano", "replicaSpecs": replicas,
                     "runPolicy": {"schedulingPolicy": {"minAvailable": pods, "queue": "default"}}}}


def wait(what: str, probe: Callable[[], Any], timeout_s: float, interval_s: float = 0.2) -> float:
    start = time.monotonic()
    while not probe():
        if time.monotonic() - start > timeout_s:
            raise TimeoutError(f"{what}: not after {timeout_s:.0f}s")
        time.sleep(interval_s)
    return time.monotonic() - start


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return round(s[min(len(s) - 1, max(0, round(p / 100 * len(s) + 0.5) - 1))], 2)


@dataclass
class Stack:
    core: Any
    custom: Any
    emulator: Any  # EmulatorClient
    faults: Any  # NpuFaults
    nodes: int


@contextmanager
def stack(nodes: int, bin_dir: str | None, keep: bool) -> Iterator[Stack]:
    from kubernetes.client import CoreV1Api, CustomObjectsApi

    from cluster.ascendjob.component import build_ascendjob_controller
    from cluster.components import Component
    from cluster.control_plane import ControlPlane, free_port
    from cluster.faults_helper import NpuFaults
    from cluster.inventory import fleet_inventory
    from cluster.process import ManagedProcess
    from emulator.testing import EmulatorProcess

    work = Path(tempfile.mkdtemp(prefix="ft-bench-"))
    cp = ControlPlane("ft-bench", state_root=work / "state", bin_dir=bin_dir)
    cp.up()
    try:
        cp.add_nodes(fleet_inventory(profile="atlas-800t-a2", count=nodes, name_pattern=PATTERN), timeout_s=1200)
        emulator = EmulatorProcess(work / "emulator.db", startup_timeout=300,
                                   args=["--profile", "atlas-800t-a2", "--nodes", str(nodes),
                                         "--name-pattern", PATTERN])
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
                core: Any = CoreV1Api(api)
                custom: Any = CustomObjectsApi(api)
                core.create_namespace({"metadata": {"name": NS}})
                wait("default service account", lambda: core.list_namespaced_service_account(
                    NS, field_selector="metadata.name=default").items, 60, 0.1)
                wait("allocatable published", lambda: cp.count_nodes()[2] >= nodes * 8, 600, 1.0)
                yield Stack(core, custom, emulator.client, NpuFaults(emulator.client, api), nodes)
        finally:
            print(f"logs in {work}", file=sys.stderr)
            emulator.client.close()
            emulator.stop()
    finally:
        if not keep:
            cp.down()


def create_job(s: Stack, name: str, pods: int) -> None:
    s.custom.create_namespaced_custom_object("mindxdl.gitee.com", "v1", NS, "ascendjobs", acjob(name, pods))


def job_pods_raw(s: Stack, selector: str) -> list[dict[str, Any]]:
    resp = s.core.list_namespaced_pod(NS, label_selector=selector, _preload_content=False)
    return list(json.loads(resp.data)["items"])


def held(pod: dict[str, Any]) -> tuple[str, list[int]] | None:
    raw = (pod["metadata"].get("annotations") or {}).get(CONFIGURATION)
    if not raw:
        return None
    return pod["spec"].get("nodeName", ""), [int(d["device_id"]) for d in json.loads(raw)["devices"]]


def breakdown(recorder: Any, victim: str, new: list[str], start: float) -> dict[str, float | None]:
    """Seconds after the injection: the victim pod Failed, the last new pod created, Running, holding chips."""
    def last(pred: Callable[[Any], bool]) -> float | None:
        times = [recorder.first_time(uid, pred) for uid in new]
        return None if None in times else round(max(t for t in times if t is not None) - start, 2)

    failed = recorder.first_time(victim, lambda p: p.status.phase == "Failed")
    return {"failed_s": None if failed is None else round(failed - start, 2),
            "created_s": last(lambda p: True),
            "running_s": last(lambda p: p.status.phase == "Running"),
            "chips_s": last(lambda p: CONFIGURATION in (p.metadata.annotations or {}))}


def _allocatable_is(s: Stack, node: str, value: int) -> Callable[[], bool]:
    return lambda: bool(s.faults.allocatable(node) == value)


# recovery ------------------------------------------------------------------------------------------------
def run_recovery(pods: int, runs: int, spare: int, bin_dir: str | None, keep: bool, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    results: dict[str, Any] = {"mode": "recovery", "pods": pods, "nodes": pods + spare, "runs": []}
    with stack(pods + spare, bin_dir, keep) as s:
        create_job(s, "rec", pods)
        current = s.faults.wait_recovered(NS, "rec", replicas=pods, timeout_s=600)
        results["apply_to_running_s"] = round(current.seconds, 2)
        for i in range(runs):
            pod = rng.choice(sorted(current.chips))
            node, chips = current.chips[pod]
            phy = rng.choice(chips)
            with s.faults.record_pods(NS) as recorder:
                start = time.monotonic()
                fault = s.faults.inject("hbm-multi-bit-ecc", node=node, chips=[phy])
                after = s.faults.wait_recovered(NS, "rec", replicas=pods, replaced=current.pods.values(),
                                                avoid=fault, timeout_s=600)
                took = time.monotonic() - start
            row = {"run": i, "pod": pod, "node": node, "chip": phy, "recovery_s": round(took, 2),
                   **breakdown(recorder, current.pods[pod], list(after.pods.values()), start)}
            print(json.dumps(row), flush=True)
            results["runs"].append(row)
            s.faults.clear(fault)
            if s.emulator.chip(node, phy)["manually_separated"]:  # a second ECC on this chip within 24 h
                s.emulator.clear_separation(node, phy)  # the operator's action
                results["separations_cleared"] = results.get("separations_cleared", 0) + 1
            wait("allocatable back", _allocatable_is(s, node, 8), 120)
            current = after
    times = [r["recovery_s"] for r in results["runs"]]
    results.update(p50_s=pct(times, 50), p99_s=pct(times, 99), min_s=min(times), max_s=max(times),
                   mean_s=round(statistics.mean(times), 2))
    for key in ("failed_s", "created_s", "running_s", "chips_s"):
        values = [r[key] for r in results["runs"] if r.get(key) is not None]
        if values:
            results[f"{key[:-2]}_p50_s"] = pct(values, 50)
    return results


# storm ---------------------------------------------------------------------------------------------------
def run_storm(nodes: int, jobs: int, pods: int, faults: int, storm_s: float, bin_dir: str | None, keep: bool,
              seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    results: dict[str, Any] = {"mode": "storm", "nodes": nodes, "jobs": jobs, "pods_per_job": pods,
                               "faults": faults, "storm_s": storm_s}
    with stack(nodes, bin_dir, keep) as s:
        t0 = time.monotonic()
        for j in range(jobs):
            create_job(s, f"st-{j}", pods)
        wait("every job Running with a completed rank table", lambda: all_running(s, jobs, pods), 1800, 2.0)
        results["jobs_running_s"] = round(time.monotonic() - t0, 1)
        before = {f"st-{j}": {p["metadata"]["name"]: p for p in job_pods_raw(
            s, f"training.kubeflow.org/job-name=st-{j}")} for j in range(jobs)}
        owner = {}  # (node, phy) -> job
        for job, ps in before.items():
            for p in ps.values():
                h = held(p)
                assert h is not None
                for phy in h[1]:
                    owner[(h[0], phy)] = job
        names = [PATTERN.format(index=i) for i in range(nodes)]
        targets = rng.sample([(n, c) for n in names for c in range(8)], faults)
        steps = [{"at_s": round(i * storm_s / faults, 3),  # the same as `at` below
                  "fault": {"selector": {"node": n, "chips": [c]}, "kind": KINDS[i % 2][0]}}
                 for i, (n, c) in enumerate(targets)]
        scenario = {"apiVersion": "npu-emu.io/v1alpha1", "kind": "Scenario", "metadata": {"name": "bench-storm"},
                    "spec": {"description": f"{faults} faults over {storm_s} s", "steps": steps}}
        affected = sorted({owner[t] for t in targets if t in owner})
        results["affected_jobs"] = len(affected)
        results["faults_on_idle_chips"] = sum(1 for t in targets if t not in owner)
        start = time.monotonic()
        replay = s.faults.replay(scenario)
        assert len(replay["faults"]) == faults
        pool = ThreadPoolExecutor(max_workers=max(1, len(affected)), thread_name_prefix="recover")
        recovering = {job: pool.submit(s.faults.wait_recovered, NS, job, replicas=pods, replaced=[
            p["metadata"]["uid"] for p in before[job].values()], avoid=replay["faults"], timeout_s=900,
            interval_s=0.5) for job in affected}
        at = {t: round(i * storm_s / faults, 3) for i, t in enumerate(targets)}  # speed 1: wall = emulated
        seen, polls = watch_faults(s, targets, start, timeout_s=300 + storm_s)
        results["poll_rounds"], results["poll_round_s"] = polls, round((time.monotonic() - start) / max(polls, 1), 2)
        lat = [seen[t] - at[t] for t in seen]  # from the fault's own start
        results["faults_seen"] = len(seen)
        results["faults_lost"] = faults - len(seen)
        results["visible_p50_s"], results["visible_p99_s"], results["visible_max_s"] = \
            pct(lat, 50), pct(lat, 99), round(max(lat), 2)
        per_node: dict[str, int] = {}
        for n, _ in targets:
            per_node[n] = per_node.get(n, 0) + 1
        wait("allocatable of every faulted node", lambda: all(
            s.faults.allocatable(n) == 8 - k for n, k in per_node.items()), 120, 1.0)
        rec: dict[str, float] = {}
        for job, future in recovering.items():
            done = future.result()  # each job polled on its own thread (0.5 s), from the replay on
            first = min(at[t] for t in targets if owner.get(t) == job)
            rec[job] = done.seconds - first  # from the job's first fault (the wait began at the replay)
        pool.shutdown()
        results["recovered_jobs"] = len(rec)
        if rec:
            results["recovered_p50_s"], results["recovered_p99_s"], results["recovered_max_s"] = \
                pct(list(rec.values()), 50), pct(list(rec.values()), 99), round(max(rec.values()), 2)
        untouched = [j for j in before if j not in affected]
        restarted = [j for j in untouched if {p["metadata"]["uid"] for p in job_pods_raw(
            s, f"training.kubeflow.org/job-name={j}")} != {p["metadata"]["uid"] for p in before[j].values()}]
        results["unaffected_jobs_restarted"] = len(restarted)
    return results


def all_running(s: Stack, jobs: int, pods: int) -> bool:
    items = job_pods_raw(s, "training.kubeflow.org/operator-name=ascendjob-controller")
    if len(items) != jobs * pods or any(p["status"].get("phase") != "Running" or held(p) is None for p in items):
        return False
    resp = s.core.list_namespaced_config_map(NS, _preload_content=False)
    tables = [c for c in json.loads(resp.data)["items"] if c["metadata"]["name"].startswith("rings-config-")]
    return len(tables) == jobs and all('"status":"completed"' in (c.get("data") or {}).get("hccl.json", "")
                                       for c in tables)


def watch_faults(s: Stack, targets: list[tuple[str, int]], start: float,
                 timeout_s: float) -> tuple[dict[tuple[str, int], float], int]:
    """(node, phy) -> seconds from the replay until the fault is in the node's ConfigMap and has an Occur
    Event from the plugin; and the number of polling rounds (each lists every device-info ConfigMap and
    the Occur Events, so a round takes a while at 1,000 nodes: latencies are upper bounds by one round)."""
    want = set(targets)
    seen: dict[tuple[str, int], float] = {}
    in_cm: set[tuple[str, int]] = set()
    deadline = time.monotonic() + timeout_s
    polls = 0
    while want - seen.keys() and time.monotonic() < deadline:
        polls += 1
        resp = s.core.list_namespaced_config_map("kube-system", label_selector="mx-consumer-cim=true",
                                                 _preload_content=False)
        for cm in json.loads(resp.data)["items"]:
            node = cm["metadata"]["name"].removeprefix("mindx-dl-deviceinfo-")
            devices = json.loads(cm["data"]["DeviceInfoCfg"])["DeviceInfo"]["DeviceList"]
            for f in json.loads(devices.get(f"{ASCEND}-Fault") or "[]"):
                key = (node, int(f["npu_name"].removeprefix("Ascend910-")))
                if key in want:
                    in_cm.add(key)
        resp = s.core.list_namespaced_event("kube-system", field_selector="reason=Occur", _preload_content=False)
        occurred = set()
        for ev in json.loads(resp.data)["items"]:
            msg = ev.get("message", "")
            host = (ev.get("source") or {}).get("host", "")
            card = msg.split("cardID:")[1].split(",")[0] if "cardID:" in msg else ""
            if card.isdigit():
                occurred.add((host, int(card)))
        now = time.monotonic() - start
        for key in (in_cm & occurred) - seen.keys():
            seen[key] = now
        time.sleep(0.2)
    return seen, polls


def _terminate(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="mode", required=True)
    rp = sub.add_parser("recovery", help="injection -> job Running again, P pods, R runs")
    rp.add_argument("--pods", type=int, default=16)
    rp.add_argument("--runs", type=int, default=20)
    rp.add_argument("--spare", type=int, default=4, help="nodes beyond the job's (default %(default)s)")
    sp = sub.add_parser("storm", help="F faults over N nodes running J jobs")
    sp.add_argument("--nodes", type=int, default=1000)
    sp.add_argument("--jobs", type=int, default=100)
    sp.add_argument("--pods", type=int, default=4)
    sp.add_argument("--faults", type=int, default=100)
    sp.add_argument("--storm-s", type=float, default=10.0, help="emulated seconds the storm is spread over")
    for p in (rp, sp):
        p.add_argument("--seed", type=int, default=7)
        p.add_argument("--bin-dir", default=None)
        p.add_argument("--keep", action="store_true", help="leave the cluster running")
        p.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, _terminate)  # stop the cluster and processes in `finally`, not orphan them
    load_before = [round(x, 1) for x in os.getloadavg()]
    if args.mode == "recovery":
        results = run_recovery(args.pods, args.runs, args.spare, args.bin_dir, args.keep, args.seed)
    else:
        results = run_storm(args.nodes, args.jobs, args.pods, args.faults, args.storm_s, args.bin_dir, args.keep,
                            args.seed)
    results.update({"date": datetime.now(UTC).isoformat(timespec="seconds"), "machine": platform.machine(),
                    "cpus": os.cpu_count(), "python": platform.python_version(), "loadavg_before": load_before,
                    "loadavg_after": [round(x, 1) for x in os.getloadavg()]})
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
