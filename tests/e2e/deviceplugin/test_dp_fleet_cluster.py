"""Fleet mode on the real control plane (etcd, kube-apiserver, kwok, Volcano): allocatable and the
device-info ConfigMap follow injected faults; pods Volcano gang-schedules get distinct, ring-correct chips."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from dp_e2e_helpers import Emulator, Proc, running

pytestmark = [pytest.mark.e2e, pytest.mark.cluster]

ASCEND = "huawei.com/Ascend910"


def wait_for(what: str, probe: Callable[[], Any], timeout_s: float = 30.0, interval_s: float = 0.05) -> Any:
    deadline = time.monotonic() + timeout_s
    last: Any = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(interval_s)
    raise AssertionError(f"timed out after {timeout_s:.0f}s waiting for {what}; last value: {last!r}")


class FleetEnv:
    def __init__(self, fleet: Any, emulator: Emulator, kube_client: Any) -> None:
        from kubernetes.client import CoreV1Api, CustomObjectsApi

        self.fleet = fleet
        self.emulator = emulator
        self.core = CoreV1Api(kube_client)
        self.custom = CustomObjectsApi(kube_client)

    def allocatable(self, node: str) -> int:
        return int((self.core.read_node(node).status.allocatable or {}).get(ASCEND, "-1"))

    def device_list(self, node: str) -> dict[str, str]:
        try:
            cm = self.core.read_namespaced_config_map(f"mindx-dl-deviceinfo-{node}", "kube-system")
        except Exception:
            return {}
        return dict(json.loads(cm.data["DeviceInfoCfg"])["DeviceInfo"]["DeviceList"])


@pytest.fixture
def workdir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="dpf-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def namespace(kube_client: Any) -> Iterator[str]:
    from kubernetes.client import CoreV1Api

    core = CoreV1Api(kube_client)
    name = f"dp-{uuid.uuid4().hex[:8]}"
    core.create_namespace({"metadata": {"name": name}})
    yield name
    core.delete_namespace(name, propagation_policy="Background")


def fleet_env(
    factory: Callable[..., Any], control_plane: Any, kube_client: Any, workdir: Path, profile: str, count: int
) -> Iterator[FleetEnv]:
    fleet = factory(profile, count)
    pattern = fleet.names[0].rsplit("-", 1)[0] + "-{index}"
    emulator = Emulator(workdir, "--profile", profile, "--nodes", str(count), "--name-pattern", pattern)
    with running(emulator):
        args = [
            sys.executable,
            "-m",
            "deviceplugin",
            "fleet",
            "--emulator-url",
            emulator.url,
            "--kubeconfig",
            str(control_plane.kubeconfig),
            "--log-level",
            "info",
        ]
        for name in fleet.names:
            args += ["--node", name]
        with running(Proc(args, workdir / "fleet.log")):
            env = FleetEnv(fleet, emulator, kube_client)
            for name in fleet.names:
                wait_for(f"{name}: ConfigMap", lambda n=name: env.device_list(n), timeout_s=60)
            yield env


@pytest.fixture
def env_910b(ascend_nodes_factory: Any, control_plane: Any, kube_client: Any, workdir: Path) -> Iterator[FleetEnv]:
    yield from fleet_env(ascend_nodes_factory, control_plane, kube_client, workdir, "atlas-800t-a2", 2)


@pytest.fixture
def env_910a(ascend_nodes_factory: Any, control_plane: Any, kube_client: Any, workdir: Path) -> Iterator[FleetEnv]:
    yield from fleet_env(ascend_nodes_factory, control_plane, kube_client, workdir, "atlas-800-9000", 1)


def test_fault_lowers_allocatable_and_updates_configmap(env_910b: FleetEnv) -> None:
    env = env_910b
    node, other = env.fleet.names
    assert wait_for("allocatable 8", lambda: env.allocatable(node) == 8)
    t0 = time.monotonic()
    fault = env.emulator.inject(node, [3])
    wait_for("allocatable 7", lambda: env.allocatable(node) == 7, timeout_s=5)
    devices = wait_for(
        "Unhealthy list", lambda: (d := env.device_list(node)) and d.get(f"{ASCEND}-Unhealthy") == "Ascend910-3" and d
    )
    took = time.monotonic() - t0
    assert "Ascend910-3" not in devices[ASCEND].split(",")
    assert json.loads(devices[f"{ASCEND}-Fault"])[0]["fault_code"] == "80E01801"
    assert took < 1.0, f"fault took {took:.2f}s to show"
    assert env.allocatable(other) == 8
    env.emulator.clear(fault)
    wait_for("allocatable 8 again", lambda: env.allocatable(node) == 8, timeout_s=5)
    wait_for("Unhealthy list empty", lambda: env.device_list(node).get(f"{ASCEND}-Unhealthy") == "")


def vcjob(name: str, node_selector: dict[str, str], replicas: int, chips: int) -> dict[str, Any]:
    template = {
        "schedulerName": "volcano",
        "restartPolicy": "Never",
        "nodeSelector": node_selector,
        "containers": [
            {
                "name": "main",
                "image": "npu-emu.invalid/train:latest",
                "resources": {"requests": {ASCEND: str(chips)}, "limits": {ASCEND: str(chips)}},
            }
        ],
    }
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "schedulerName": "volcano",
            "queue": "default",
            "minAvailable": replicas,
            "tasks": [
                {"name": "worker", "replicas": replicas, "minAvailable": replicas, "template": {"spec": template}}
            ],
        },
    }


def test_gang_gets_distinct_ring_correct_chips(env_910a: FleetEnv, namespace: str) -> None:
    env = env_910a
    (node,) = env.fleet.names
    env.custom.create_namespaced_custom_object(
        "batch.volcano.sh", "v1alpha1", namespace, "jobs", vcjob("ring", env.fleet.node_selector, 4, 2)
    )

    def assigned() -> dict[str, str] | None:
        pods = env.core.list_namespaced_pod(namespace, label_selector="volcano.sh/job-name=ring").items
        real = {p.metadata.name: (p.metadata.annotations or {}).get("huawei.com/AscendReal") for p in pods}
        return real if len(real) == 4 and all(real.values()) else None

    real = wait_for("4 pods with chips", assigned, timeout_s=120)
    chips = [sorted(int(c.rsplit("-", 1)[1]) for c in v.split(",")) for v in real.values()]
    flat = [c for pair in chips for c in pair]
    assert sorted(flat) == list(range(8)), real  # distinct, the whole node
    for pair in chips:
        assert len(pair) == 2 and (set(pair) <= {0, 1, 2, 3} or set(pair) <= {4, 5, 6, 7}), real
    assert wait_for("free list empty", lambda: env.device_list(node).get(ASCEND) == "")
