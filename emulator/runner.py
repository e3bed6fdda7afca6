"""`npu-emu serve`: the engine, its observers (devfs, network namespaces) and uvicorn."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import uvicorn

from .api import create_app
from .engine import Engine
from .profiles import ClusterSpec, load_cluster_spec, simple_cluster_spec
from .service import EmulatorOptions, StateMismatch, open_engine

NodeSync = Callable[[dict[str, Any], list[dict[str, Any]]], object]


def devfs_root_for(template: str, node: str, node_count: int) -> Path:
    if "{node}" in template:
        return Path(template.replace("{node}", node))
    return Path(template) / node if node_count > 1 else Path(template)


class ObserverThread:
    """Runs the observers (devfs, netns) off the event loop, on snapshots taken when chips change.

    Snapshots are taken in the engine's thread, so the worker never reads state while it changes; a
    failing observer is logged and never fails the mutation that triggered it (that is already committed).
    """

    def __init__(self, engine: Engine, syncs: list[NodeSync]) -> None:
        self._engine = engine
        self._syncs = syncs
        self._pending: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {}
        self._cond = threading.Condition()
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="npu-emu-observers", daemon=True)

    def start(self) -> None:
        self.enqueue(set(self._engine.inventory.nodes))
        self._engine.on_change.append(lambda keys: self.enqueue({n for n, _ in keys}))
        self._thread.start()

    def enqueue(self, nodes: set[str]) -> None:
        snapshots = {n: (self._engine.inventory.node(n).summary(), self._engine.node_chips(n)) for n in nodes}
        with self._cond:
            self._pending.update(snapshots)
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._stopped:
                    self._cond.wait()
                if self._stopped:
                    return
                batch, self._pending = self._pending, {}
            for name in sorted(batch):
                node, chips = batch[name]
                for sync in self._syncs:
                    try:
                        sync(node, chips)
                    except Exception as exc:  # keep serving; the next change retries
                        print(f"npu-emu: observer failed for node {name}: {exc!r}", file=sys.stderr, flush=True)

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()
        self._thread.join(timeout=10)


def _cluster_from_args(args: argparse.Namespace) -> ClusterSpec | None:
    if args.cluster:
        return load_cluster_spec(args.cluster)
    if args.profile:
        return simple_cluster_spec(args.profile, args.nodes, args.name_pattern, super_pod_size=args.super_pod_size)
    return None


def _observers(args: argparse.Namespace, engine: Engine) -> tuple[list[NodeSync], list[Callable[[], None]]]:
    syncs: list[NodeSync] = []
    cleanups: list[Callable[[], None]] = []
    count = len(engine.inventory.nodes)
    if args.devfs_root:
        from . import devfs

        template = args.devfs_root
        syncs.append(lambda node, chips: devfs.materialise(node, chips,
                                                           devfs_root_for(template, node["name"], count)))
    if args.netns:
        import pyroute2.config

        from . import netns

        # pyroute2 forks helpers and stops them with SIGTERM; a forked child keeps the event loop's signal
        # wake-up fd, so unless it takes SIGTERM with the default action, the service itself would shut down.
        pyroute2.config.disable_mp_signal = True

        syncs.append(netns.sync)

        def remove_namespaces() -> None:
            for info in engine.inventory.nodes.values():
                netns.remove(info.summary())

        cleanups.append(remove_namespaces)
    return syncs, cleanups


class _Server(uvicorn.Server):
    """A uvicorn server that leaves signals to us, so one SIGTERM stops the TCP and unix-socket servers."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def _serve_async(engine: Engine, args: argparse.Namespace) -> None:
    app = create_app(engine, token=args.token)
    configs = [uvicorn.Config(app, host=args.host, port=args.port, log_level=args.log_level, lifespan="on",
                              timeout_graceful_shutdown=2)]
    if args.uds:
        args.uds.unlink(missing_ok=True)
        configs.append(uvicorn.Config(app, uds=str(args.uds), log_level=args.log_level, lifespan="off",
                                     timeout_graceful_shutdown=2))
    servers = [_Server(c) for c in configs]

    def stop_all() -> None:
        for server in servers:
            server.should_exit = True

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop_all)
    await asyncio.gather(*(s.serve() for s in servers))


def serve(args: argparse.Namespace) -> int:
    try:
        cluster = _cluster_from_args(args)
        fresh = args.reset or not args.state.exists()
        if cluster is None and fresh:
            cluster = load_cluster_spec("default")
        engine = open_engine(EmulatorOptions(state_path=args.state, cluster=cluster, speed=args.speed,
                                             durability=args.durability, reset=args.reset))
    except (StateMismatch, ValueError, LookupError, FileNotFoundError) as exc:
        print(f"npu-emu: {exc}", file=sys.stderr)
        return 2
    inv = engine.inventory
    syncs, cleanups = _observers(args, engine)
    observers = ObserverThread(engine, syncs)
    if syncs:
        observers.start()
    first = next(iter(inv.nodes.values()))
    where = f"http://{args.host}:{args.port}" + (f" and unix:{args.uds}" if args.uds else "")
    print(f"npu-emu: cluster {inv.spec.metadata.name!r}: {len(inv.nodes)} node(s), {inv.chip_count} chips "
          f"(first: {first.name}, {first.profile.spec.product}); REST on {where}; state {args.state}"
          f"{'; token required for mutations' if args.token else ''}", file=sys.stderr, flush=True)
    try:
        asyncio.run(_serve_async(engine, args))
    finally:
        if syncs:
            observers.stop()
        for cleanup in cleanups:
            with contextlib.suppress(Exception):
                cleanup()
        engine.store.close()
    return 0
