"""`python -m deviceplugin` (and `npu-emu deviceplugin`): flags in, the right mode out. Thin on purpose."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from . import constants as k

DEFAULT_URL = os.environ.get("NPU_EMU_URL", "http://127.0.0.1:8910")

DESCRIPTION = """\
Kubelet device plugin for emulated Ascend NPUs (resource huawei.com/Ascend910), backed by the npu-emu
emulator's REST API and event stream.

  kubelet  serve one node's chips to a real kubelet over the device-plugin API v1beta1 (unix socket
           <device-plugin-dir>/Ascend910.sock, registered at <device-plugin-dir>/kubelet.sock)
  fleet    stand in for kubelet + plugin on many kubelet-less (kwok) nodes from one process: node
           capacity/allocatable, chips for pods bound to those nodes, pod annotations, ConfigMaps

See docs/device-plugin.md."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m deviceplugin",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="mode", required=True, metavar="{kubelet,fleet}")

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--emulator-url",
            default=DEFAULT_URL,
            help="emulator base URL, http://host:port or unix:///path (env NPU_EMU_URL; default %(default)s)",
        )
        p.add_argument(
            "--token",
            default=os.environ.get("NPU_EMU_TOKEN"),
            help="bearer token for the emulator (env NPU_EMU_TOKEN)",
        )
        p.add_argument(
            "--kubeconfig",
            default=None,
            help="kubeconfig for publishing to Kubernetes (default: $KUBECONFIG, ~/.kube/config, in-cluster)",
        )
        p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])

    kp = sub.add_parser(
        "kubelet",
        help="serve one node's chips to a kubelet",
        description="Serve one emulated node's chips to a kubelet (device-plugin API v1beta1).",
    )
    common(kp)
    kp.add_argument(
        "--node",
        default=os.environ.get("NPU_EMU_NODE"),
        help="emulated node to serve (env NPU_EMU_NODE; default: the emulator's first node)",
    )
    kp.add_argument(
        "--kube-node",
        default=os.environ.get("NODE_NAME"),
        help="Kubernetes node name, if it differs from --node (env NODE_NAME, as the real DaemonSet)",
    )
    kp.add_argument(
        "--device-plugin-dir",
        type=Path,
        default=Path("/var/lib/kubelet/device-plugins"),
        help="kubelet's device-plugin directory holding kubelet.sock (default %(default)s)",
    )
    mode = kp.add_mutually_exclusive_group()
    mode.add_argument(
        "--volcano",
        dest="volcano",
        action="store_true",
        help="Volcano mode (real -volcanoType=true): take the chips named by the pod annotation "
        "huawei.com/Ascend910; needs Kubernetes access",
    )
    mode.add_argument(
        "--plain",
        dest="volcano",
        action="store_false",
        help="plain mode (default): allocate exactly the kubelet's device ids",
    )
    kp.set_defaults(volcano=False)
    kp.add_argument(
        "--ascend-docker-runtime",
        action="store_true",
        default=os.environ.get(k.ENV_ASCEND_DOCKER_RUNTIME) == "True",
        help="answer Allocate with ASCEND_VISIBLE_DEVICES/ASCEND_RUNTIME_OPTIONS only, as under the "
        "Ascend Docker Runtime (default: on when env ASCEND_DOCKER_RUNTIME=True)",
    )
    kp.add_argument(
        "--devfs-root",
        type=Path,
        default=None,
        help="the emulator's devfs root for this node, as given to `npu-emu serve --devfs-root` ('{node}' is "
        "replaced by the node name): DeviceSpec host paths are <root>/dev/..., container paths /dev/... "
        "(default: the real /dev)",
    )
    kp.add_argument("--no-kube", action="store_true", help="do not publish to Kubernetes even if a kubeconfig exists")

    fp = sub.add_parser(
        "fleet",
        help="serve many kubelet-less (kwok) nodes from one process",
        description="Keep many kubelet-less nodes' NPU capacity, pod chip assignments, pod "
        "annotations and device-info ConfigMaps current.",
    )
    common(fp)
    fp.add_argument(
        "--node",
        action="append",
        default=None,
        help="serve only this emulated node (repeatable; default: every node of the emulator)",
    )
    fp.add_argument("--concurrency", type=int, default=16, help="parallel apiserver writes (default %(default)s)")
    fp.add_argument(
        "--coalesce-ms",
        type=float,
        default=20.0,
        help="gather changes this long before writing a node's objects (default %(default)s)",
    )
    fp.add_argument(
        "--fail-pods-at",
        default="RestartBusiness",
        help="fail a pod (kwok pod-failed Stage, Event on the pod) when a chip it holds reaches this fault level "
        "or worse; 'off' never fails pods (default %(default)s; see docs/fault-tolerance.md)",
    )
    fp.add_argument(
        "--fail-exit-code", type=int, default=1, help="exit code of pods failed by a device fault (default %(default)s)"
    )
    return parser


def _kube_available(kubeconfig: str | None) -> bool:
    return bool(
        kubeconfig
        or os.environ.get("KUBECONFIG")
        or os.path.exists(os.path.expanduser("~/.kube/config"))
        or os.environ.get("KUBERNETES_SERVICE_HOST")
    )


def _first_node(url: str, token: str | None) -> str:
    from .feed import http_client

    with http_client(url, token) as client:
        r = client.get("/v1/nodes")
        r.raise_for_status()
        nodes = r.json()
    if not nodes:
        raise SystemExit("the emulator has no nodes")
    return str(nodes[0]["name"])


def run_kubelet(args: argparse.Namespace, stop: threading.Event) -> int:
    from .feed import EmulatorFeed
    from .kubelet import KubeletPlugin
    from .servicer import DevicePluginServicer, PluginOptions
    from .state import NodeState

    node = args.node or _first_node(args.emulator_url, args.token)
    kube_node = args.kube_node or node
    use_kube = not args.no_kube and _kube_available(args.kubeconfig)
    if args.volcano and not use_kube:
        print("--volcano needs Kubernetes access (--kubeconfig, $KUBECONFIG or in-cluster)", file=sys.stderr)
        return 2
    state = NodeState()
    publisher = pods = None
    if use_kube:
        from .publish import KubePodSource, KubePublisher, load_api_client

        publisher = KubePublisher(load_api_client(args.kubeconfig))
        pods = KubePodSource(publisher, kube_node) if args.volcano else None
    devfs = Path(str(args.devfs_root).replace("{node}", node)) if args.devfs_root else None
    options = PluginOptions(volcano=args.volcano, ascend_docker=args.ascend_docker_runtime, devfs_root=devfs)
    servicer = DevicePluginServicer(state, options, pods=pods)
    plugin = KubeletPlugin(servicer, args.device_plugin_dir)
    feed = EmulatorFeed(args.emulator_url, {node: state}, token=args.token, on_reconnect=plugin.request_reregister)
    workers: list[Callable[[threading.Event], None]] = [feed.run, plugin.run]
    if publisher is not None:
        from .node_publisher import NodePublisher

        workers.append(NodePublisher(publisher, state, kube_node, track_pods=args.volcano).run)
    return _run_all(workers, stop, on_stop=feed.stop)


def run_fleet(args: argparse.Namespace, stop: threading.Event) -> int:
    from emulator.levels import is_level

    from .fleet import Fleet, FleetOptions
    from .publish import KubePublisher, load_api_client

    if args.fail_pods_at != "off" and not is_level(args.fail_pods_at):
        print(f"--fail-pods-at: unknown fault level {args.fail_pods_at!r}", file=sys.stderr)
        return 2
    publisher = KubePublisher(load_api_client(args.kubeconfig, pool_size=max(args.concurrency * 2, 8)))
    fleet = Fleet(
        args.emulator_url,
        publisher,
        nodes=args.node,
        token=args.token,
        options=FleetOptions(
            concurrency=args.concurrency,
            coalesce_s=args.coalesce_ms / 1000,
            fail_pods_at=None if args.fail_pods_at == "off" else args.fail_pods_at,
            fail_exit_code=args.fail_exit_code,
        ),
    )
    return _run_all([fleet.run], stop, on_stop=fleet.stop)


def _run_all(
    workers: list[Callable[[threading.Event], None]],
    stop: threading.Event,
    on_stop: Callable[[], None] | None = None,
) -> int:
    failures: list[BaseException] = []

    def guard(fn: Callable[[threading.Event], None]) -> None:
        try:
            fn(stop)
        except BaseException as exc:
            failures.append(exc)
            logging.getLogger("deviceplugin").exception("worker failed")
            stop.set()

    threads = [threading.Thread(target=guard, args=(w,), daemon=True) for w in workers]
    for t in threads:
        t.start()
    stop.wait()
    if on_stop is not None:
        on_stop()
    for t in threads:
        t.join(10)
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    if args.mode == "kubelet":
        return run_kubelet(args, stop)
    return run_fleet(args, stop)
