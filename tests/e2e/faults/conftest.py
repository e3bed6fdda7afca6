"""The fault-tolerance e2e stack: the control plane (npu_emu plugin's `control_plane`), an emulator serving
six Atlas 800T A2 nodes (with real network namespaces when run as root), the same nodes as kwok Nodes,
fleet mode (chips, allocatable, device-info ConfigMaps, fault Events, failing pods on faulty chips) and
the stand-in Ascend Operator, each a real process, stopped in `finally`. Tests pin their pods with
`ft_stack.selector`."""

from __future__ import annotations

import contextlib
import os
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

POOL_LABEL = "npu-emu.io/ft-pool"
NODES = 6


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: takes more than a few seconds")


@dataclass
class FtStack:
    tag: str
    kubeconfig: Path
    api_client: Any
    emulator: Any  # emulator.testing.EmulatorProcess
    nodes: list[str]
    netns: bool
    logs: Path

    @property
    def selector(self) -> dict[str, str]:
        return {POOL_LABEL: self.tag}


def _netns_possible() -> bool:
    if os.geteuid() != 0 or os.environ.get("NPU_EMU_FT_NETNS", "1") == "0":
        return False
    try:
        import pyroute2  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(scope="session")
def ft_stack(control_plane: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FtStack]:
    from cluster.ascendjob.component import build_ascendjob_controller
    from cluster.components import Component
    from cluster.control_plane import free_port
    from cluster.inventory import fleet_inventory
    from cluster.process import ManagedProcess
    from emulator.testing import EmulatorProcess

    tag = uuid.uuid4().hex[:5]
    pattern = f"ft{tag}-{{index}}"
    work = tmp_path_factory.mktemp("ft-stack")
    inventory = fleet_inventory(profile="atlas-800t-a2", count=NODES, name_pattern=pattern)
    names = list(inventory.nodes)
    netns = _netns_possible()
    args = ["--profile", "atlas-800t-a2", "--nodes", str(NODES), "--name-pattern", pattern]
    with contextlib.ExitStack() as stack:
        emulator = EmulatorProcess(work / "emulator.db", args=args + (["--netns"] if netns else []),
                                   startup_timeout=120)
        try:
            emulator.start()
        except (RuntimeError, TimeoutError):
            if not netns:
                raise
            netns = False  # namespaces refused here: run without them (the link-down test says so)
            emulator = EmulatorProcess(work / "emulator-nonetns.db", args=args, startup_timeout=120)
            emulator.start()
        stack.callback(emulator.stop)
        stack.callback(emulator.client.close)
        control_plane.add_nodes(list(inventory.nodes.values()), extra_labels={POOL_LABEL: tag}, timeout_s=180)
        stack.callback(lambda: control_plane.delete_nodes(names))
        fleet = Component(name="fleet", binary=Path(sys.executable),
                          args=("-m", "deviceplugin", "fleet", f"--emulator-url={emulator.url}",
                                f"--kubeconfig={control_plane.kubeconfig}", "--log-level=info",
                                *(f"--node={n}" for n in names)))
        stack.enter_context(ManagedProcess(fleet, work, ready_timeout_s=60))
        controller = build_ascendjob_controller(kubeconfig=control_plane.kubeconfig, healthz_port=free_port())
        stack.enter_context(ManagedProcess(controller, work, ready_timeout_s=120))
        yield FtStack(tag=tag, kubeconfig=control_plane.kubeconfig, api_client=control_plane.api_client(),
                      emulator=emulator, nodes=names, netns=netns, logs=work)


@pytest.fixture
def ft_namespace(ft_stack: FtStack) -> Iterator[str]:
    """A fresh namespace, deleted at the end (waiting until its pods are gone, so chips are free)."""
    from ft_e2e_helpers import delete_namespace_and_wait, wait_service_account
    from kubernetes.client import CoreV1Api

    core = CoreV1Api(ft_stack.api_client)
    name = f"ft-{uuid.uuid4().hex[:6]}"
    core.create_namespace({"metadata": {"name": name}})
    wait_service_account(core, name)
    yield name
    delete_namespace_and_wait(core, name)


@pytest.fixture
def ft(ft_stack: FtStack, ft_namespace: str) -> Iterator[Any]:
    """NpuFaults (cluster/faults_helper.py) on this stack; every fault it injected is cleared at the end,
    separations are lifted and the clock is set back to speed 1."""
    from cluster.faults_helper import NpuFaults

    helper = NpuFaults(ft_stack.emulator.client, ft_stack.api_client)
    yield helper
    helper.clear_all()
    client = ft_stack.emulator.client
    client.set_clock(speed=1)
    for node in ft_stack.nodes:
        for chip in client.chips(node):
            if chip["manually_separated"]:
                client.clear_separation(node, chip["phy_id"])


@pytest.fixture(scope="session")
def emulator_client(ft_stack: FtStack) -> Any:
    """The plugin's `emulator_client`, pointed at this stack's emulator (so `npu_faults` uses it)."""
    return ft_stack.emulator.client


@pytest.fixture(scope="session")
def kube_client(ft_stack: FtStack) -> Any:
    return ft_stack.api_client

