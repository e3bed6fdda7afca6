"""Emulator at production scale: RSS, restart time, injection throughput and inject -> event latency.

    python bench/emulator_scale.py --nodes 16384 --injections 2000

Starts `npu-emu serve` as a separate process over a cluster of --nodes Atlas 800T A2 nodes (8 chips each),
then measures, printing one JSON document at the end:
- start-up time of a new state file, and RSS (VmRSS of the service) after start-up and after the work;
- sequential injection throughput (one client, keep-alive; each call committed before it returns);
- inject -> event latency p50/p99, the event read from the SSE stream by a second connection, at a paced
  request rate (--rate; the achieved rate is reported, since one service process may not reach it);
- restart time after kill -9, with every acknowledged fault present afterwards.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from emulator.testing import EmulatorProcess


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def service_pid(emu: EmulatorProcess) -> int:
    assert emu._proc is not None
    return emu._proc.pid


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def timed_start(emu: EmulatorProcess) -> float:
    t0 = time.perf_counter()
    emu.start()
    return time.perf_counter() - t0


def inject_sequential(emu: EmulatorProcess, nodes: int, count: int, rng: random.Random) -> float:
    t0 = time.perf_counter()
    for _ in range(count):
        emu.client.inject({"node": f"npu-node-{rng.randrange(nodes)}", "chips": [rng.randrange(8)]},
                          kind="aic-bus", duration_s=3600)
    return count / (time.perf_counter() - t0)


def inject_batched(emu: EmulatorProcess, nodes: int, count: int, rng: random.Random) -> float:
    """One scenario replay carrying `count` injections (a single transaction)."""
    steps = [{"fault": {"selector": {"node": f"npu-node-{rng.randrange(nodes)}", "chips": [rng.randrange(8)]},
                        "kind": "aiv-bus", "duration_s": 3600}} for _ in range(count)]
    scenario = {"apiVersion": "npu-emu.io/v1alpha1", "kind": "Scenario", "metadata": {"name": "bench"},
                "spec": {"steps": steps}}
    t0 = time.perf_counter()
    emu.client.replay(scenario)
    return count / (time.perf_counter() - t0)


def latency_at_rate(emu: EmulatorProcess, nodes: int, count: int, rate: float,
                    rng: random.Random) -> dict[str, Any]:
    sent: dict[str, float] = {}
    seen: dict[str, float] = {}
    start_seq = emu.client.health()["last_seq"]
    done = threading.Event()

    def follow() -> None:
        for event in emu.client.events(since=start_seq, timeout=60):
            if event["type"] == "fault.injected":
                seen[event["data"]["id"]] = time.perf_counter()
                if len(seen) >= count:
                    done.set()
                    return

    reader = threading.Thread(target=follow, daemon=True)
    reader.start()
    interval = 1.0 / rate
    t0 = time.perf_counter()
    order: list[float] = []
    for i in range(count):
        due = t0 + i * interval
        while (now := time.perf_counter()) < due:
            time.sleep(min(due - now, 0.0005))
        before = time.perf_counter()
        fault = emu.client.inject({"node": f"npu-node-{rng.randrange(nodes)}", "chips": [rng.randrange(8)]},
                                  kind="hbm-single-bit-ecc")
        sent[fault["id"]] = before
        order.append(before)
    elapsed = time.perf_counter() - t0
    done.wait(60)
    lat_ms = [(seen[f] - sent[f]) * 1000 for f in sent if f in seen]
    return {"requested_rate": rate, "achieved_rate": round(count / elapsed, 1), "events": len(lat_ms),
            "lost": count - len(lat_ms), "p50_ms": round(pct(lat_ms, 0.5), 2), "p99_ms": round(pct(lat_ms, 0.99), 2),
            "mean_ms": round(statistics.fmean(lat_ms), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=16384)
    parser.add_argument("--injections", type=int, default=2000)
    parser.add_argument("--rate", type=float, default=1000.0)
    parser.add_argument("--durability", choices=["full", "normal"], default="normal")
    args = parser.parse_args()
    rng = random.Random(7)
    result: dict[str, Any] = {"machine": f"{platform.node()} {platform.machine()} {platform.python_version()}",
                              "date": time.strftime("%Y-%m-%d"), "nodes": args.nodes, "chips": args.nodes * 8,
                              "durability": args.durability}
    with tempfile.TemporaryDirectory() as tmp:
        emu = EmulatorProcess(Path(tmp) / "state.db", startup_timeout=300,
                              args=["--profile", "atlas-800t-a2", "--nodes", str(args.nodes),
                                    "--durability", args.durability])
        print(f"starting the service over {args.nodes} nodes ...", flush=True)
        result["first_start_s"] = round(timed_start(emu), 2)
        result["rss_after_start_mib"] = round(rss_mib(service_pid(emu)), 1)
        print(f"sequential injections x{args.injections} ...", flush=True)
        result["inject_throughput_per_s"] = round(inject_sequential(emu, args.nodes, args.injections, rng), 1)
        print(f"inject -> event latency at {args.rate}/s ...", flush=True)
        result["latency"] = latency_at_rate(emu, args.nodes, args.injections, args.rate, rng)
        result["batched_inject_per_s"] = round(inject_batched(emu, args.nodes, args.injections, rng), 1)
        result["rss_after_work_mib"] = round(rss_mib(service_pid(emu)), 1)
        acknowledged = len(emu.client.faults())
        print("kill -9 and restart ...", flush=True)
        emu.kill9()
        result["restart_after_kill9_s"] = round(timed_start(emu), 2)
        result["faults_after_restart"] = len(emu.client.faults())
        result["faults_acknowledged"] = acknowledged
        assert result["faults_after_restart"] == acknowledged, "acknowledged faults were lost"
        result["rss_after_restart_mib"] = round(rss_mib(service_pid(emu)), 1)
        emu.client.close()
        emu.stop()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
