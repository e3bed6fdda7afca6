"""`python -m cluster.ascendjob`: run the stand-in Ascend Operator against a cluster."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from pathlib import Path

DESCRIPTION = """\
Stand-in Ascend Operator for AscendJob (mindxdl.gitee.com/v1, short name acjob).

For each AscendJob it creates the Volcano PodGroup <job>-<uid>; once Volcano has moved it to Inqueue,
the master Service <job>-<master|chief|scheduler>-0 and the pods <job>-<rtype>-<index> with the real
operator's labels, annotations and environment (pytorch, mindspore, tensorflow). When every pod holds
its chips (the device plugin's ascend-910-configuration annotation; fleet mode writes it on kwok nodes)
it writes the rank table hccl.json to ConfigMap rings-config-<job> and, with --ranktable-root, to
<root>/<namespace>.<job>/hccl.json for jobs with a volume named `ranktable`. It keeps the job's status
(Created, Running, Restarting, Succeeded, Failed) and restarts jobs labelled fault-retry-times or
pod-rescheduling=on when pods fail.

The AscendJob CRD is fixtures/crds/mindxdl.gitee.com_ascendjobs.yaml (`npu-emu cluster up` installs it).
See docs/ascendjob.md."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m cluster.ascendjob", description=DESCRIPTION,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kubeconfig", help="kubeconfig of the cluster (default: $KUBECONFIG, ~/.kube/config, "
                                        "in-cluster)")
    p.add_argument("--ranktable-root", type=Path, metavar="DIR",
                   help="also write <DIR>/<namespace>.<job>/hccl.json (and version) for jobs with a volume "
                        "named ranktable; the real operator uses /user/mindx-dl/ranktable (default: off)")
    p.add_argument("--no-create-configmap", action="store_true",
                   help="write the rank table only into a rings-config-<job> ConfigMap the user created "
                        "(as the real operator); by default the controller creates it")
    p.add_argument("--workers", type=int, default=4, help="jobs reconciled in parallel (default %(default)s)")
    p.add_argument("--resync-s", type=float, default=30.0,
                   help="reconcile every job at least this often, in seconds (default %(default)s)")
    p.add_argument("--no-leader-elect", action="store_true",
                   help="work without holding the Lease kube-system/ascendjob-controller (by default only the "
                        "holder reconciles, so two controllers on one cluster never both act)")
    p.add_argument("--lease-namespace", default="kube-system", help="namespace of the Lease (default %(default)s)")
    p.add_argument("--healthz-port", type=int, metavar="PORT",
                   help="serve GET /healthz on 127.0.0.1:PORT (200 once every watch has synced)")
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    import faulthandler

    faulthandler.register(signal.SIGUSR1, all_threads=True)  # `kill -USR1 <pid>`: every thread's stack to stderr
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.log_level == "debug":  # one line per request is noise even then
        logging.getLogger("urllib3").setLevel(logging.INFO)
    from kubernetes import config

    from .controller import AscendJobController

    try:
        if args.kubeconfig:
            client = config.new_client_from_config(config_file=args.kubeconfig)
        else:
            try:
                client = config.new_client_from_config()
            except config.ConfigException:
                config.load_incluster_config()
                from kubernetes.client import ApiClient

                client = ApiClient()
    except Exception as e:
        print(f"cannot load a kubeconfig: {e}", file=sys.stderr)
        return 2
    client.rest_client.pool_manager.connection_pool_kw["maxsize"] = 32
    controller = AscendJobController(client, ranktable_root=args.ranktable_root, workers=args.workers,
                                     create_configmap=not args.no_create_configmap, resync_s=args.resync_s,
                                     leader_elect=not args.no_leader_elect, lease_namespace=args.lease_namespace)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    controller.start()
    server = None
    if args.healthz_port:
        from .healthz import serve_healthz

        server = serve_healthz(args.healthz_port, controller.ready)
    logging.getLogger("cluster.ascendjob").info("AscendJob controller running")
    try:
        stop.wait()
    finally:
        if server is not None:
            server.shutdown()
        controller.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
