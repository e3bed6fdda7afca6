"""Device-plugin latency against the real emulator service and the kubelet stand-in.

- inject -> ListAndWatch: POST /v1/faults (or DELETE) until the kubelet stand-in has received the device
  list showing the change (wall clock, includes the REST call); p50/p99 over --rounds inject+clear pairs.
- Allocate: one kubelet Allocate RPC over the unix socket (plain mode, DeviceSpecs), p50/p99.

The plugin runs as its entry point (`python -m deviceplugin kubelet`) in a subprocess.

    python bench/deviceplugin_latency.py [--rounds 200] [--allocs 1000] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "e2e" / "deviceplugin"))
from dp_e2e_helpers import Emulator, Proc, running

from deviceplugin.testing import KubeletStub

NODE = "npu-node-0"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def summary(name: str, ms: list[float]) -> dict[str, float | int | str]:
    return {
        "metric": name,
        "n": len(ms),
        "p50_ms": round(statistics.median(ms), 2),
        "p99_ms": round(pct(ms, 0.99), 2),
        "max_ms": round(max(ms), 2),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=200, help="inject+clear pairs (default %(default)s)")
    ap.add_argument("--allocs", type=int, default=1000, help="Allocate calls (default %(default)s)")
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument(
        "--durability",
        choices=["full", "normal"],
        default="full",
        help="the emulator's SQLite durability (default %(default)s)",
    )
    ns = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="dpb-", dir="/tmp"))
    emulator = Emulator(work, "--devfs-root", str(work / "devfs"), "--durability", ns.durability)
    results = []
    with running(emulator), KubeletStub(work / "dp") as kubelet:
        args = [
            sys.executable,
            "-m",
            "deviceplugin",
            "kubelet",
            "--emulator-url",
            emulator.url,
            "--node",
            NODE,
            "--device-plugin-dir",
            str(work / "dp"),
            "--plain",
            "--no-kube",
            "--devfs-root",
            str(work / "devfs"),
            "--log-level",
            "warning",
        ]
        with running(Proc(args, work / "plugin.log")), httpx.Client(base_url=emulator.url) as http:
            kubelet.wait_registered(timeout=30)
            lat: list[float] = []
            after_rest: list[float] = []
            for i in range(ns.rounds):
                chip = i % 8
                name = f"Ascend910-{chip}"
                t0 = time.perf_counter()
                r = http.post(
                    "/v1/faults", json={"selector": {"node": NODE, "chips": [chip]}, "code": "80E18402"}
                )  # SeparateNPU, no escalation window
                r.raise_for_status()
                t1 = time.perf_counter()
                kubelet.wait_devices(lambda d, n=name: d.get(n) == "Unhealthy", timeout=5)
                lat.append((time.perf_counter() - t0) * 1000)
                after_rest.append((time.perf_counter() - t1) * 1000)
                t0 = time.perf_counter()
                http.delete(f"/v1/faults/{r.json()['id']}").raise_for_status()
                t1 = time.perf_counter()
                kubelet.wait_devices(lambda d, n=name: d.get(n) == "Healthy", timeout=5)
                lat.append((time.perf_counter() - t0) * 1000)
                after_rest.append((time.perf_counter() - t1) * 1000)
            results.append(summary("inject/clear -> ListAndWatch update", lat))
            results.append(summary("  of which after the REST reply", after_rest))
            alloc: list[float] = []
            for i in range(ns.allocs):
                ids = [f"Ascend910-{(i + j) % 8}" for j in range(1 + i % 4)]
                t0 = time.perf_counter()
                kubelet.allocate(ids)
                alloc.append((time.perf_counter() - t0) * 1000)
            results.append(summary("Allocate (plain, DeviceSpecs)", alloc))
    for row in results:
        print(
            f"{row['metric']:<40} n={row['n']:<5} p50={row['p50_ms']:>7} ms  p99={row['p99_ms']:>7} ms  "
            f"max={row['max_ms']:>7} ms"
        )
    if ns.json:
        ns.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
