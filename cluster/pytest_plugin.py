"""pytest plugin (entry point `npu_emu`): a real Kubernetes control plane with Volcano and kwok Ascend nodes.

Fixtures
  control_plane          session: a KubeCluster. Reuses the cluster of --npu-emu-kubeconfig (or
                         $NPU_EMU_KUBECONFIG) when given; otherwise starts one (ControlPlane) and stops
                         it at the end unless --npu-emu-keep-cluster. $KUBECONFIG is never used.
  kube_client            session: a kubernetes ApiClient for control_plane.
  ascend_nodes_factory   function: make(profile=..., count=...) -> AscendFleet; nodes are deleted after
                         the test.
  ascend_fleet           function: 8 x Atlas 800T A2 (910B) nodes, as an AscendFleet.
  emulator_client        session: emulator.client.EmulatorClient for --npu-emu-url ($NPU_EMU_URL), or
                         for an emulator started with `npu-emu serve` for the session.
  npu_faults             function: cluster.faults_helper.NpuFaults on emulator_client and kube_client:
                         inject / inject_on_pod / replay(scenario, nodes=...) / wait_recovered(job);
                         clears the faults it injected afterwards (docs/fault-tolerance.md).

This module must import cheaply and never break pytest for projects that do not use it: nothing
heavy at module level, everything inside the fixtures.
"""

from __future__ import annotations

import itertools
import os
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

    from .handle import KubeCluster

FLEET_LABEL = "npu-emu.io/fleet"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("npu-emu", "npu-emu control plane and emulator")
    group.addoption("--npu-emu-kubeconfig", default=None, metavar="PATH",
                    help="reuse the cluster of this kubeconfig instead of starting one "
                         "(env NPU_EMU_KUBECONFIG; $KUBECONFIG is deliberately ignored)")
    group.addoption("--npu-emu-cluster-name", default=None, metavar="NAME",
                    help="name of the cluster to start or reuse (default: npu-emu-pytest)")
    group.addoption("--npu-emu-keep-cluster", action="store_true", default=False,
                    help="leave the started cluster running after the session (reused next time)")
    group.addoption("--npu-emu-bin-dir", default=None, metavar="DIR",
                    help="control-plane binaries (default: $NPU_EMU_BIN_DIR or the build cache)")
    group.addoption("--npu-emu-url", default=None, metavar="URL",
                    help="emulator REST API to use instead of starting one (env NPU_EMU_URL)")


@dataclass
class AscendFleet:
    """Nodes created for one test; `node_selector` pins pods to exactly these nodes."""

    names: list[str]
    profile: str
    fleet_id: str
    chips_per_node: int
    labels: dict[str, str] = field(default_factory=dict)

    @property
    def node_selector(self) -> dict[str, str]:
        return {FLEET_LABEL: self.fleet_id}

    def __len__(self) -> int:
        return len(self.names)


def _option(config: pytest.Config, name: str, env: str | None = None) -> Any:
    value = config.getoption(name)
    if value is None and env:
        value = os.environ.get(env) or None
    return value


@pytest.fixture(scope="session")
def control_plane(request: pytest.FixtureRequest) -> Iterator[KubeCluster]:
    """The cluster under test: reused when pointed at one, else started for the session."""
    from .handle import KubeCluster

    config = request.config
    kubeconfig = _option(config, "--npu-emu-kubeconfig", "NPU_EMU_KUBECONFIG")
    keep = bool(config.getoption("--npu-emu-keep-cluster"))
    # Concurrent sessions must never share (and tear down) one cluster: without an explicit name or
    # --npu-emu-keep-cluster, each session gets its own.
    name = _option(config, "--npu-emu-cluster-name") or ("npu-emu-pytest" if keep else f"pytest-{os.getpid()}")
    if kubeconfig:
        path = Path(kubeconfig).expanduser()
        if not path.exists():
            raise pytest.UsageError(f"--npu-emu-kubeconfig / NPU_EMU_KUBECONFIG: {path} does not exist")
        cluster = KubeCluster(name, path)
        yield cluster
        cluster.close()
        return

    from .binaries import BinariesMissing
    from .control_plane import ControlPlane

    _remove_stale_session_clusters()
    cp = ControlPlane(name, bin_dir=_option(config, "--npu-emu-bin-dir"))
    started = False
    if cp.exists() and keep and cp.status().get("apiserver") == "ok":
        pass  # a cluster kept by an earlier session: reuse it as it is
    elif cp.dir.exists():
        pytest.fail(f"cluster {name!r} already exists ({cp.dir}) and is not reusable (kept clusters are "
                    f"reused only with --npu-emu-keep-cluster while healthy). Remove it with "
                    f"`python -m cluster down --name {name}` or choose --npu-emu-cluster-name.", pytrace=False)
    else:
        try:
            cp.up(detach=keep)
        except BinariesMissing as e:
            pytest.fail(str(e), pytrace=False)
        started = True
    try:
        yield cp
    finally:
        if started and not keep:
            cp.down()
        else:
            cp.close()


def _remove_stale_session_clusters() -> None:
    """Clusters `pytest-<pid>` whose pytest process is gone (killed sessions) are removed."""
    import contextlib

    from .control_plane import ControlPlane, default_state_root
    from .process import process_alive

    root = default_state_root() / "clusters"
    if not root.is_dir():
        return
    for d in root.iterdir():
        pid = d.name.removeprefix("pytest-")
        if d.name.startswith("pytest-") and pid.isdigit() and not process_alive(int(pid)):
            with contextlib.suppress(Exception):
                ControlPlane(d.name).down()


@pytest.fixture(scope="session")
def kube_client(control_plane: KubeCluster) -> ApiClient:
    return control_plane.api_client()


_fleet_counter = itertools.count()


@pytest.fixture
def ascend_nodes_factory(control_plane: KubeCluster,
                         request: pytest.FixtureRequest) -> Iterator[Callable[..., AscendFleet]]:
    """make(profile="atlas-800t-a2", count=8, cluster_spec=None, super_pod_size=0) -> AscendFleet."""
    from .inventory import fleet_inventory

    created: list[str] = []

    def make(profile: str = "atlas-800t-a2", count: int = 8, *, cluster_spec: str | Path | None = None,
             super_pod_size: int = 0, timeout_s: float = 300.0) -> AscendFleet:
        fleet_id = f"f{next(_fleet_counter)}-{uuid.uuid4().hex[:6]}"
        if cluster_spec is not None:
            inventory = fleet_inventory(cluster_spec=cluster_spec)
            # Cluster specs fix node names: prefix them so fleets never collide.
            nodes = [_renamed(n, f"{fleet_id}-{n.name}") for n in inventory.nodes.values()]
        else:
            inventory = fleet_inventory(profile=profile, count=count, name_pattern=f"{fleet_id}-{{index}}",
                                        super_pod_size=super_pod_size)
            nodes = list(inventory.nodes.values())
        labels = {FLEET_LABEL: fleet_id}
        control_plane.add_nodes(nodes, extra_labels=labels, timeout_s=timeout_s)
        created.extend(n.name for n in nodes)
        first = nodes[0].profile
        return AscendFleet(names=[n.name for n in nodes], profile=first.name, fleet_id=fleet_id,
                           chips_per_node=first.spec.chip_count, labels=labels)

    yield make
    if created:
        control_plane.delete_nodes(created)


def _renamed(node: Any, name: str) -> Any:
    import dataclasses

    return dataclasses.replace(node, name=name)


@pytest.fixture
def ascend_fleet(ascend_nodes_factory: Callable[..., AscendFleet]) -> AscendFleet:
    """Eight Atlas 800T A2 nodes (8 x 910B each), Ready, deleted after the test."""
    return ascend_nodes_factory("atlas-800t-a2", 8)


@pytest.fixture(scope="session")
def emulator_client(request: pytest.FixtureRequest,
                    tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """emulator.client.EmulatorClient for --npu-emu-url / $NPU_EMU_URL, else for a `npu-emu serve`
    started for the session (default cluster spec, state in a temp dir, 127.0.0.1, free port)."""
    try:
        from emulator.client import EmulatorClient
    except ImportError as e:  # pragma: no cover - the emulator ships in the same distribution
        pytest.fail(f"emulator.client is not importable: {e}", pytrace=False)

    url = _option(request.config, "--npu-emu-url", "NPU_EMU_URL")
    if url:
        with EmulatorClient(url, token=os.environ.get("NPU_EMU_TOKEN")) as client:
            yield client
        return

    from .components import Component, HttpProbe
    from .control_plane import free_port
    from .process import ManagedProcess

    port = free_port()
    state = tmp_path_factory.mktemp("npu-emu-emulator")
    component = Component(
        name="npu-emu-serve", binary=Path(sys.executable),
        args=("-c", "import sys; from emulator.cli import main; sys.exit(main(sys.argv[1:]))", "serve",
              "--host=127.0.0.1", f"--port={port}", f"--state={state / 'state.db'}", "--reset"),
        ports={"http": port}, ready_probe=HttpProbe(f"http://127.0.0.1:{port}/healthz"),
    )
    with ManagedProcess(component, state, ready_timeout_s=60), \
            EmulatorClient(f"http://127.0.0.1:{port}") as client:
        yield client


# Fault injection and recovery assertions (docs/fault-tolerance.md); stdlib-only at import time.
from .faults_helper import npu_faults  # noqa: E402, F401
