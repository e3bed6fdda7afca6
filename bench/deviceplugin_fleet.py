"""Fleet mode at scale: inject -> ConfigMap and allocatable visible in the apiserver.

Starts a control plane (cluster.control_plane.ControlPlane), creates N Atlas 800T A2 kwok nodes, an
emulator with the same N nodes, and `python -m deviceplugin fleet`; waits until every node's device-info
ConfigMap exists (initial sync time), then injects a fault on a random chip of a random node and times
until both the node's allocatable huawei.com/Ascend910 dropped and its ConfigMap lists the chip
Unhealthy (polled every 10 ms), then clears it and times the way back. Goal: p99 <= 1 s at 1,000 nodes.

    python bench/deviceplugin_fleet.py --nodes 1000 --samples 50 [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "e2e" / "deviceplugin"))
from dp_e2e_helpers import Emulator, Proc, running

ASCEND = "huawei.com/Ascend910"


def visible(core: Any, node: str, chip: int, unhealthy: bool) -> bool:
    alloc = (core.read_node(node).status.allocatable or {}).get(ASCEND)
    if (alloc == "7") != unhealthy:
        return False
    cm = core.read_namespaced_config_map(f"mindx-dl-deviceinfo-{node}", "kube-system")
    listed = json.loads(cm.data["DeviceInfoCfg"])["DeviceInfo"]["DeviceList"][f"{ASCEND}-Unhealthy"]
    return (f"Ascend910-{chip}" in listed.split(",")) == unhealthy


def wait(core: Any, node: str, chip: int, unhealthy: bool, timeout_s: float = 30.0) -> float:
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout_s:
        if visible(core, node, chip, unhealthy):
            return (time.perf_counter() - t0) * 1000
        time.sleep(0.01)
    raise TimeoutError(f"{node} chip {chip} never showed unhealthy={unhealthy}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--samples", type=int, default=50)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--bin-dir", default=None)
    ap.add_argument("--json", type=Path)
    ns = ap.parse_args()

    from kubernetes.client import CoreV1Api

    from cluster.control_plane import ControlPlane
    from cluster.inventory import fleet_inventory

    work = Path(tempfile.mkdtemp(prefix="dpfb-", dir="/tmp"))
    result: dict[str, Any] = {"nodes": ns.nodes}
    cp = ControlPlane("bench-fleet", state_root=work, bin_dir=ns.bin_dir)
    with cp.up(timeout_s=1200):
        inventory = fleet_inventory(profile="atlas-800t-a2", count=ns.nodes, name_pattern="n-{index}")
        cp.add_nodes(inventory, workers=16, progress=False, timeout_s=1200)
        names = list(inventory.nodes)
        emulator = Emulator(
            work,
            "--profile",
            "atlas-800t-a2",
            "--nodes",
            str(ns.nodes),
            "--name-pattern",
            "n-{index}",
            "--durability",
            "normal",
        )
        with running(emulator):
            args = [
                sys.executable,
                "-m",
                "deviceplugin",
                "fleet",
                "--emulator-url",
                emulator.url,
                "--kubeconfig",
                str(cp.kubeconfig),
                "--concurrency",
                str(ns.concurrency),
                "--log-level",
                "warning",
            ]
            t0 = time.monotonic()
            with running(Proc(args, work / "fleet.log")):
                core = CoreV1Api(cp.api_client())
                while True:
                    cms = core.list_namespaced_config_map("kube-system", label_selector="mx-consumer-cim=true")
                    if len(cms.items) >= ns.nodes:
                        break
                    time.sleep(0.5)
                result["initial_sync_s"] = round(time.monotonic() - t0, 1)
                rng = random.Random(1)
                occur: list[float] = []
                recover: list[float] = []
                for _ in range(ns.samples):
                    node, chip = rng.choice(names), rng.randrange(8)
                    t1 = time.perf_counter()
                    fault = emulator.inject(node, [chip], code="80E18402")
                    wait(core, node, chip, True)
                    occur.append((time.perf_counter() - t1) * 1000)
                    t1 = time.perf_counter()
                    emulator.clear(fault)
                    wait(core, node, chip, False)
                    recover.append((time.perf_counter() - t1) * 1000)
    for name, ms in (("inject -> allocatable+ConfigMap", occur), ("clear -> allocatable+ConfigMap", recover)):
        ordered = sorted(ms)
        result[name] = {
            "n": len(ms),
            "p50_ms": round(statistics.median(ms), 1),
            "p99_ms": round(ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))], 1),
            "max_ms": round(max(ms), 1),
        }
    print(json.dumps(result, indent=2))
    if ns.json:
        ns.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
