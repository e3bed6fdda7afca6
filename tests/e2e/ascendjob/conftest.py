"""The AscendJob e2e stack: the control plane (npu_emu plugin's `control_plane`), an emulator serving a
small mixed fleet, the same nodes as kwok Nodes, fleet mode (chips and pod annotations from the
emulator) and the stand-in Ascend Operator, each a real process, stopped in `finally`.

Fleet (node names are prefixed per session, so a kept cluster can be reused):
  4 x Atlas 800T A2 (910B, 8 chips, full mesh)      pool "b"
  2 x Atlas 800 9000 (910A, 8 chips, rings 0-3/4-7)  pool "a"
  2 x Atlas 900 A3 SuperPoD (16 chips), one SuperPoD  pool "c"
Every node carries the label npu-emu.io/acjob-pool=<tag>-<pool>; tests pin their pods with it (the
reference example pins itself to 910B nodes with its own node selector).

The controller is started here unless the control plane runs one and exposes where it writes rank
tables (`control_plane.ascendjob_ranktable_root`).
"""

from __future__ import annotations

import contextlib
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from acjob_e2e_helpers import delete_namespace_and_wait, wait_service_account

POOL_LABEL = "npu-emu.io/acjob-pool"
GROUPS = (("b", "atlas-800t-a2", 4, 0), ("a", "atlas-800-9000", 2, 0), ("c", "atlas-900-a3-superpod", 2, 2))


@dataclass
class AcjobStack:
    tag: str
    kubeconfig: Path
    api_client: Any
    emulator: Any  # emulator.testing.EmulatorProcess
    ranktable_root: Path
    nodes: dict[str, list[str]]  # pool -> node names
    logs: Path

    def pool_selector(self, pool: str) -> dict[str, str]:
        return {POOL_LABEL: f"{self.tag}-{pool}"}


def _cluster_spec(path: Path, tag: str) -> None:
    lines = ["apiVersion: npu-emu.io/v1alpha1", "kind: ClusterSpec", "metadata:", f"  name: acjob-{tag}",
             "spec:", "  nodes_per_tor: 4", "  node_groups:"]
    for pool, profile, count, sp in GROUPS:
        lines.append(f"    - {{profile: {profile}, count: {count}, name_pattern: \"acj{tag}-{pool}-{{index}}\""
                     + (f", super_pod_size: {sp}" if sp else "") + "}")
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="session")
def acjob_stack(control_plane: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AcjobStack]:
    from cluster.ascendjob.component import build_ascendjob_controller
    from cluster.components import Component
    from cluster.control_plane import free_port
    from cluster.inventory import fleet_inventory
    from cluster.process import ManagedProcess
    from emulator.testing import EmulatorProcess

    tag = uuid.uuid4().hex[:5]
    work = tmp_path_factory.mktemp("acjob-stack")
    spec = work / "cluster.yaml"
    _cluster_spec(spec, tag)
    inventory = fleet_inventory(cluster_spec=spec)
    nodes: dict[str, list[str]] = {}
    for node in inventory.nodes.values():
        nodes.setdefault(node.name.split("-")[1], []).append(node.name)

    with contextlib.ExitStack() as stack:
        emulator = EmulatorProcess(work / "emulator.db", args=["--cluster", str(spec)], startup_timeout=120)
        emulator.start()
        stack.callback(emulator.stop)
        stack.callback(emulator.client.close)
        for pool, names in nodes.items():
            subset = [n for n in inventory.nodes.values() if n.name in names]
            control_plane.add_nodes(subset, extra_labels={POOL_LABEL: f"{tag}-{pool}"}, timeout_s=180)
        stack.callback(lambda: control_plane.delete_nodes([n for ns in nodes.values() for n in ns]))
        fleet = Component(name="fleet", binary=Path(sys.executable),
                          args=("-m", "deviceplugin", "fleet", f"--emulator-url={emulator.url}",
                                f"--kubeconfig={control_plane.kubeconfig}", "--log-level=warning",
                                *(f"--node={n}" for ns in nodes.values() for n in ns)))
        stack.enter_context(ManagedProcess(fleet, work, ready_timeout_s=60))
        # A control plane that runs the controller itself says where it writes rank-table files; a
        # second controller would do every write twice.
        harness_root = getattr(control_plane, "ascendjob_ranktable_root", None)
        if harness_root is not None:
            ranktable_root = Path(harness_root)
        else:
            ranktable_root = work / "ranktable"
            controller = build_ascendjob_controller(kubeconfig=control_plane.kubeconfig, healthz_port=free_port(),
                                                    ranktable_root=ranktable_root)
            stack.enter_context(ManagedProcess(controller, work, ready_timeout_s=120))
        yield AcjobStack(tag=tag, kubeconfig=control_plane.kubeconfig, api_client=control_plane.api_client(),
                         emulator=emulator, ranktable_root=ranktable_root, nodes=nodes, logs=work)


@pytest.fixture
def acjob_namespace(acjob_stack: AcjobStack) -> Iterator[str]:
    """A fresh namespace; at the end it is deleted and the test waits until its pods are gone (so the
    chips are free again for the next test)."""
    from kubernetes.client import CoreV1Api

    core = CoreV1Api(acjob_stack.api_client)
    name = f"acj-{uuid.uuid4().hex[:6]}"
    core.create_namespace({"metadata": {"name": name}})
    wait_service_account(core, name)
    yield name
    delete_namespace_and_wait(core, name)
