"""Wall time per `npu-smi info` call (subprocess), p50/p99 over N runs.

Variants: the installed console script against a state file, the same against a REST endpoint (a stdlib
HTTP server in this process serving the node JSON), the in-driver-tree launcher run with `python3 -I -S`
(how it runs inside a container), and the bare interpreter start-up for comparison.

    python bench/npu_smi_latency.py [--runs 200]
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "unit" / "emulator"))
from npu_nodes import node_910b

from emulator import devfs
from emulator.npu_smi import cli, source


def measure(cmd: list[str], env: dict[str, str], runs: int) -> dict[str, float]:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, check=True)
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return {"p50": statistics.median(times), "p99": times[min(len(times) - 1, int(len(times) * 0.99))],
            "min": times[0]}


def serve(doc: dict[str, Any]) -> tuple[http.server.ThreadingHTTPServer, str]:
    body = json.dumps(doc).encode()
    index = json.dumps([{"name": doc["name"]}]).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            data = index if self.path == "/v1/nodes" else body
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.server_address[1]}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200)
    args = ap.parse_args()
    node, chips = node_910b()
    base = {k: v for k, v in os.environ.items() if not k.startswith(("NPU_EMU", "ASCEND_"))}
    npu_smi = shutil.which("npu-smi") or sys.exit("npu-smi console script not on PATH: pip install -e .")
    with tempfile.TemporaryDirectory() as d:
        state = Path(d) / "state.json"
        state.write_text(json.dumps({"node": node, "chips": chips}))
        root = Path(d) / "root"
        devfs.materialise(node, chips, root, interpreter=sys.executable)
        launcher = root / devfs.LAUNCHER
        launcher.write_text(launcher.read_text().replace("'/usr/local/Ascend/driver/tools'",
                                                         repr(str(root / devfs.TOOLS))))
        srv, url = serve(dict(node, chips=chips))
        file_env = dict(base, NPU_EMU_STATE_FILE=str(state))
        rows = {
            "npu-smi info (console script, state file)": measure([npu_smi, "info"], file_env, args.runs),
            "npu-smi info (console script, REST http)": measure(
                [npu_smi, "info"], dict(base, NPU_EMU_URL=url, NPU_EMU_NODE=node["name"]), args.runs),
            "npu-smi info (driver-tree launcher, python3 -I -S)": measure(
                [sys.executable, "-I", "-S", str(launcher), "info"], file_env, args.runs),
            "baseline: python3 -c pass": measure([sys.executable, "-c", "pass"], base, args.runs),
            "baseline: python3 -I -S -c pass": measure(
                [sys.executable, "-I", "-S", "-c", "pass"], base, args.runs),
        }
        in_process = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            cli.run(["info"], source.load_state({"NPU_EMU_STATE_FILE": str(state)}))
            in_process.append((time.perf_counter() - t0) * 1000)
        in_process.sort()
        rows["in process: load state file + render table (no interpreter start)"] = {
            "p50": statistics.median(in_process), "p99": in_process[int(len(in_process) * 0.99) - 1],
            "min": in_process[0]}
        srv.shutdown()
    print(f"machine: {platform.node()} {platform.machine()} {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.2f}, Python {platform.python_version()}, runs {args.runs}")
    print("| variant | p50 ms | p99 ms | min ms |")
    print("|--|--|--|--|")
    for name, r in rows.items():
        print(f"| {name} | {r['p50']:.1f} | {r['p99']:.1f} | {r['min']:.1f} |")


if __name__ == "__main__":
    main()
