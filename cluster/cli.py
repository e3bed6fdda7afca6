"""`npu-emu cluster up | down | status | list`: a real control plane on 127.0.0.1, without Docker."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

__all__ = ["build_parser", "main"]

EPILOG = """\
examples:
  npu-emu cluster up --nodes 8                        # 8 x Atlas 800T A2 (910B) nodes
  npu-emu cluster up --name big --profile atlas-800t-a2 --nodes 1000
  npu-emu cluster up --name mixed --cluster-spec mixed-small
  export KUBECONFIG=$(npu-emu cluster status --kubeconfig)
  npu-emu cluster status
  npu-emu cluster down --name big

binaries: built by ci/build-control-plane.sh into ~/.cache/npu-emu/bin/<versions>/
(override with --bin-dir or NPU_EMU_BIN_DIR). State: ~/.local/state/npu-emu/clusters/<name>/
(override with NPU_EMU_STATE_DIR).
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="npu-emu cluster", description=__doc__, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, metavar="{up,down,status,list}")

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--name", default="npu-emu", help="cluster name (default: %(default)s)")
        p.add_argument("--state-dir", type=Path, default=None,
                       help="root of cluster directories (default: $NPU_EMU_STATE_DIR or "
                            "~/.local/state/npu-emu)")

    up = sub.add_parser("up", help="start a cluster and create its Ascend nodes",
                        description="Start etcd, kube-apiserver, kube-controller-manager and kwok (through "
                                    "kwokctl), install the Volcano CRDs, start vc-scheduler and "
                                    "vc-controller-manager, and create kwok nodes from an emulator "
                                    "profile or cluster spec. Everything binds to 127.0.0.1.")
    common(up)
    fleet = up.add_mutually_exclusive_group()
    fleet.add_argument("--cluster-spec", metavar="NAME|PATH",
                       help="emulator cluster spec (fixtures/clusters/<NAME>.yaml or a path)")
    fleet.add_argument("--profile", default=None,
                       help="product profile for --nodes nodes (default: atlas-800t-a2)")
    up.add_argument("--nodes", type=int, default=8, help="number of nodes with --profile (default: 8)")
    up.add_argument("--name-pattern", default="npu-node-{index}",
                    help="node names for --profile (default: %(default)s)")
    up.add_argument("--super-pod-size", type=int, default=0,
                    help="nodes per SuperPoD for A3 profiles (default: 0 = none)")
    up.add_argument("--bin-dir", default=None, help="directory with the control-plane binaries")
    up.add_argument("--workers", type=int, default=16, help="parallel API calls for node creation")
    up.add_argument("--timeout", type=float, default=300.0, help="seconds to wait per phase")
    up.add_argument("--no-progress", action="store_true", help="no progress bars")
    up.add_argument("--no-emulator", action="store_true",
                    help="do not start the emulator and fleet mode (nodes keep their static capacity)")

    down = sub.add_parser("down", help="stop every process of a cluster and remove its directory")
    common(down)
    down.add_argument("--all", action="store_true", help="remove every npu-emu cluster")

    status = sub.add_parser("status", help="show processes, nodes and paths of a cluster")
    common(status)
    out = status.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="machine-readable output")
    out.add_argument("--kubeconfig", action="store_true", help="print only the kubeconfig path")

    lst = sub.add_parser("list", help="list cluster names")
    lst.add_argument("--state-dir", type=Path, default=None, help=argparse.SUPPRESS)
    return parser


def _console(quiet: bool = False):  # -> rich.console.Console
    from rich.console import Console

    return Console(stderr=True, quiet=quiet)


def _up(args: argparse.Namespace) -> int:
    from .control_plane import ControlPlane
    from .inventory import fleet_inventory

    console = _console()
    if args.cluster_spec:
        inventory = fleet_inventory(cluster_spec=args.cluster_spec)
    else:
        inventory = fleet_inventory(profile=args.profile or "atlas-800t-a2", count=args.nodes,
                                    name_pattern=args.name_pattern, super_pod_size=args.super_pod_size)
    cp = ControlPlane(args.name, state_root=args.state_dir, bin_dir=args.bin_dir)
    t0 = time.monotonic()
    cp.up(detach=True, timeout_s=args.timeout, step=lambda msg: console.print(f"[bold]>[/] {msg}"))
    console.print(f"[bold]>[/] control plane ready in {time.monotonic() - t0:.1f}s; "
                  f"creating {len(inventory.nodes)} nodes")
    try:
        result = cp.add_nodes(inventory, progress=not args.no_progress, workers=args.workers,
                              timeout_s=args.timeout)
    except BaseException:
        console.print(f"[red]node creation failed; the cluster is still up: "
                      f"`npu-emu cluster down --name {args.name}` removes it[/]")
        raise
    console.print(f"[bold]>[/] {result.created} nodes created ({result.existing} existed) in "
                  f"{result.seconds:.1f}s; all Ready.")
    if not args.no_emulator:
        from .emulation import emulator_args, start_emulation

        console.print("[bold]>[/] starting the emulator for these nodes and the device plugin's fleet mode")
        url = start_emulation(cp, emulator_args(
            cluster_spec=args.cluster_spec, profile=args.profile or "atlas-800t-a2", nodes=args.nodes,
            name_pattern=args.name_pattern, super_pod_size=args.super_pod_size))
        console.print(f"[bold]>[/] emulator REST API on {url} (export NPU_EMU_URL={url})")
    console.print(f"[bold]>[/] total {time.monotonic() - t0:.1f}s")
    console.print(f"export KUBECONFIG={cp.kubeconfig}")
    print(cp.kubeconfig)
    return 0


def _down(args: argparse.Namespace) -> int:
    from .control_plane import ControlPlane, cluster_names, default_state_root

    console = _console()
    root = args.state_dir or default_state_root()
    names = cluster_names(root) if args.all else [args.name]
    if args.all:
        # Also directories left by an `up` that died before writing cluster.json.
        clusters_dir = root / "clusters"
        if clusters_dir.exists():
            names = sorted({*names, *(p.name for p in clusters_dir.iterdir() if p.is_dir())})
    for name in names:
        stopped = ControlPlane(name, state_root=args.state_dir).down()
        console.print(f"cluster {name!r} removed; stopped: {', '.join(stopped) or 'nothing was running'}")
    if args.all and not names:
        console.print("no clusters")
    return 0


def _status(args: argparse.Namespace) -> int:
    from .control_plane import ControlPlane

    cp = ControlPlane(args.name, state_root=args.state_dir)
    if args.kubeconfig:
        cp.record()  # raises ClusterNotFound
        print(cp.kubeconfig)
        return 0
    status = cp.status()
    if args.json:
        print(json.dumps(status, indent=2))
        return 0
    from rich.table import Table

    table = Table(title=f"cluster {status['name']}", show_header=False)
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    table.add_row("kubeconfig", status["kubeconfig"])
    table.add_row("directory", status["dir"])
    table.add_row("binaries", status["bin_dir"])
    table.add_row("apiserver", status["apiserver"])
    nodes = status.get("nodes")
    if nodes:
        table.add_row("nodes", f"{nodes['ready']}/{nodes['total']} Ready, "
                               f"{nodes['ascend910_allocatable']} x huawei.com/Ascend910 allocatable")
    for proc, state in status["processes"].items():
        table.add_row(proc, state)
    _console().print(table)
    healthy = status["apiserver"] == "ok" and all(
        not s.startswith(("stopped", "not")) for s in status["processes"].values())
    return 0 if healthy else 1


def _list(args: argparse.Namespace) -> int:
    from .control_plane import cluster_names

    for name in cluster_names(args.state_dir):
        print(name)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from .binaries import BinariesMissing
    from .control_plane import ClusterExists, ClusterNotFound

    try:
        return {"up": _up, "down": _down, "status": _status, "list": _list}[args.command](args)
    except (BinariesMissing, ClusterExists, ClusterNotFound, ValueError, TimeoutError) as e:
        print(f"npu-emu cluster {args.command}: error: {e}", file=sys.stderr)
        return 2 if isinstance(e, ValueError) else 1
    except KeyboardInterrupt:
        print(f"npu-emu cluster {args.command}: interrupted", file=sys.stderr)
        return 130
    except RuntimeError as e:
        print(f"npu-emu cluster {args.command}: error: {e}", file=sys.stderr)
        return 1
