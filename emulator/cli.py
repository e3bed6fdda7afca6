"""`npu-emu`: the emulator service and its tools.

Thin on purpose: each subcommand parses flags and calls the module that owns the work.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

DEFAULT_STATE = Path(os.environ.get("NPU_EMU_STATE", Path.home() / ".local/state/npu-emu/state.db"))
DEFAULT_URL = os.environ.get("NPU_EMU_URL", "http://127.0.0.1:8910")


def _add_serve(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("serve", help="run the emulator service (REST API, event stream, /metrics)",
                       description="Run the emulator. With no flags: one Atlas 800T A2 node (8 x 910B3) named "
                                   "npu-node-0, REST on http://127.0.0.1:8910, state in " + str(DEFAULT_STATE) +
                                   ". A restart with the same --state resumes exactly where it stopped.")
    p.add_argument("--state", type=Path, default=DEFAULT_STATE, help="SQLite state file (default: %(default)s)")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--cluster", help="cluster spec: a name under fixtures/clusters/ or a YAML path")
    group.add_argument("--profile", help="profile for a one-group cluster (with --nodes); e.g. atlas-800-9000")
    p.add_argument("--nodes", type=int, default=1, help="node count with --profile (default: %(default)s)")
    p.add_argument("--name-pattern", default="npu-node-{index}", help="node names with --profile")
    p.add_argument("--super-pod-size", type=int, default=0, help="nodes per SuperPoD with --profile (A3)")
    p.add_argument("--host", default="127.0.0.1", help="bind address (default: %(default)s)")
    p.add_argument("--port", type=int, default=8910, help="port (default: %(default)s)")
    p.add_argument("--uds", type=Path, help="also serve on this unix socket")
    p.add_argument("--token", default=os.environ.get("NPU_EMU_TOKEN"),
                   help="require 'Authorization: Bearer TOKEN' on mutations (env NPU_EMU_TOKEN)")
    p.add_argument("--speed", type=float, help="emulated clock speed factor, e.g. 3600")
    p.add_argument("--devfs-root", help="materialise each node's /dev and driver tree here; '{node}' in the "
                                        "path is replaced by the node name (added automatically for >1 node)")
    p.add_argument("--netns", action="store_true", help="give each node a network namespace with one NIC per chip")
    p.add_argument("--durability", choices=["full", "normal"], default="normal",
                   help="SQLite synchronous mode (WAL): normal (default) keeps every acknowledged change across a "
                        "crash or kill -9 of the service; full also across power loss, at an fsync per change")
    p.add_argument("--reset", action="store_true", help="discard the state file and start over")
    p.add_argument("--log-level", default="warning", choices=["debug", "info", "warning", "error"])


def _add_client_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    def client_parser(name: str, help_: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_)
        p.add_argument("--url", default=DEFAULT_URL, help="emulator URL (env NPU_EMU_URL; default: %(default)s)")
        p.add_argument("--token", default=os.environ.get("NPU_EMU_TOKEN"), help="bearer token (env NPU_EMU_TOKEN)")
        return p

    client_parser("status", help_="show the running emulator's nodes and active faults")

    inject = client_parser("inject", help_="inject a fault")
    what = inject.add_mutually_exclusive_group(required=True)
    what.add_argument("--kind", help="fault kind from the catalogue, e.g. hbm-multi-bit-ecc")
    what.add_argument("--code", help="fault code, e.g. 80E01801")
    inject.add_argument("--level", help="level for a code missing from the catalogue")
    inject.add_argument("--node", help="target node")
    inject.add_argument("--chip", type=int, action="append", help="target chip (repeatable); default all")
    inject.add_argument("--ring", type=int, help="HCCS ring (or A3 SIO pair) of --node")
    inject.add_argument("--tor", type=int, help="every chip under this ToR")
    inject.add_argument("--super-pod", type=int, help="every chip of this SuperPoD")
    inject.add_argument("--cluster", action="store_true", help="every chip")
    inject.add_argument("--random", type=int, help="N random chips of the scope")
    inject.add_argument("--seed", type=int, help="seed for --random")
    inject.add_argument("--after", type=float, default=0, help="start after this many emulated seconds")
    inject.add_argument("--duration", type=float, help="emulated seconds; default until cleared")

    faults = client_parser("faults", help_="list faults")
    faults.add_argument("--state", help="only faults in this state (scheduled, active, cleared, expired)")

    clear = client_parser("clear", help_="clear a fault by id")
    clear.add_argument("fault_id")

    replay = client_parser("replay", help_="replay a scenario (library name or YAML file)")
    replay.add_argument("scenario")

    clock = client_parser("clock", help_="show or set the emulated clock")
    clock.add_argument("--speed", type=float)
    clock.add_argument("--advance", type=float, help="jump forward this many emulated seconds")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="npu-emu", description="Emulated Huawei Ascend NPUs for Kubernetes tests.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_serve(sub)
    _add_client_commands(sub)
    sub.add_parser("profiles", help="list the product profiles")
    sub.add_parser("cluster", help="control plane: up | down | status (see `npu-emu cluster --help`)",
                   add_help=False)
    sub.add_parser("deviceplugin", help="kubelet device plugin / fleet mode (see `npu-emu deviceplugin --help`)",
                   add_help=False)
    return parser


def _selector(args: argparse.Namespace) -> dict[str, Any]:
    sel: dict[str, Any] = {}
    for key, value in (("node", args.node), ("chips", args.chip), ("ring", args.ring), ("tor", args.tor),
                       ("super_pod", args.super_pod), ("random", args.random), ("seed", args.seed)):
        if value is not None:
            sel[key] = value
    if args.cluster:
        sel["cluster"] = True
    return sel


def _run_client(args: argparse.Namespace) -> int:
    from .client import EmulatorClient, EmulatorError

    try:
        with EmulatorClient(args.url, token=args.token) as client:
            if args.command == "status":
                out: Any = {"health": client.health(), "active_faults": client.faults(state="active")}
            elif args.command == "inject":
                out = client.inject(_selector(args), kind=args.kind, code=args.code, level=args.level,
                                    start_after_s=args.after, duration_s=args.duration)
            elif args.command == "faults":
                out = client.faults(state=args.state)
            elif args.command == "clear":
                out = client.clear(args.fault_id)
            elif args.command == "replay":
                out = client.replay(args.scenario)
            else:
                out = (client.set_clock(speed=args.speed, advance_s=args.advance)
                       if args.speed or args.advance else client.clock())
    except EmulatorError as exc:
        print(f"npu-emu: {exc.detail} (HTTP {exc.status})", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"npu-emu: cannot reach the emulator at {args.url}: {exc}", file=sys.stderr)
        return 1
    json.dump(out, sys.stdout, indent=2)
    print()
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "cluster":
        from cluster.cli import main as cluster_main

        return cluster_main(argv[1:])
    if argv and argv[0] == "deviceplugin":
        from deviceplugin.cli import main as plugin_main

        return int(plugin_main(argv[1:]) or 0)
    args = build_parser().parse_args(argv)
    if args.command == "serve":
        from .runner import serve

        return serve(args)
    if args.command == "profiles":
        from .profiles import load_profile, profile_names

        for name in profile_names():
            spec = load_profile(name).spec
            print(f"{name:24} {spec.product:24} {spec.chip_count:>2} x {spec.chip_name}")
        return 0
    return _run_client(args)


if __name__ == "__main__":
    sys.exit(main())
