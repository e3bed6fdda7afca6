"""npu-emu's kwok Stages on a real kwok-controller: ready, opt-in complete, fail with an exit code, delete."""

from __future__ import annotations

import time
from typing import Any

import pytest
from cluster_e2e_helpers import wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.cluster]


@pytest.fixture
def node(ascend_nodes_factory) -> str:
    return ascend_nodes_factory("atlas-800t-a2", 1).names[0]


@pytest.fixture
def core(kube_client) -> Any:
    from kubernetes.client import CoreV1Api

    return CoreV1Api(kube_client)


def make_pod(core: Any, ns: str, name: str, node: str, labels: dict[str, str] | None = None,
             annotations: dict[str, str] | None = None) -> None:
    core.create_namespaced_pod(ns, {
        "metadata": {"name": name, "labels": labels or {}, "annotations": annotations or {}},
        "spec": {"nodeName": node, "restartPolicy": "Never",
                 "containers": [{"name": "main", "image": "npu-emu.invalid/x:1"},
                                {"name": "side", "image": "npu-emu.invalid/y:1"}]},
    })


def phase(core: Any, ns: str, name: str) -> str:
    return str(core.read_namespaced_pod(name, ns).status.phase)


def test_pod_runs_and_stays_running(core, namespace, node):
    make_pod(core, namespace, "plain", node)
    wait_for("pod Running", lambda: phase(core, namespace, "plain") == "Running", timeout_s=30)
    pod = core.read_namespaced_pod("plain", namespace)
    assert all(s.ready and s.state.running for s in pod.status.container_statuses)
    assert pod.status.pod_ip
    time.sleep(3)
    assert phase(core, namespace, "plain") == "Running"


def test_pod_complete_is_opt_in_with_delay(core, namespace, node):
    make_pod(core, namespace, "done", node, labels={"pod-complete.stage.npu-emu.io": "true"},
             annotations={"pod-complete.stage.npu-emu.io/delay": "2s"})
    wait_for("pod Running", lambda: phase(core, namespace, "done") in ("Running", "Succeeded"), timeout_s=30)
    started = time.monotonic()
    wait_for("pod Succeeded", lambda: phase(core, namespace, "done") == "Succeeded", timeout_s=30)
    assert time.monotonic() - started > 0.5  # the delay applied (Running first, then Succeeded)
    pod = core.read_namespaced_pod("done", namespace)
    assert [s.state.terminated.exit_code for s in pod.status.container_statuses] == [0, 0]


def test_pod_failed_with_exit_code(core, namespace, node):
    make_pod(core, namespace, "victim", node)
    wait_for("pod Running", lambda: phase(core, namespace, "victim") == "Running", timeout_s=30)
    core.patch_namespaced_pod("victim", namespace, {"metadata": {
        "labels": {"pod-failed.stage.npu-emu.io": "true"},
        "annotations": {"pod-failed.stage.npu-emu.io/exit-code": "137",
                        "pod-failed.stage.npu-emu.io/reason": "OOMKilled",
                        "pod-failed.stage.npu-emu.io/container-name": "main"}}})
    wait_for("pod Failed", lambda: phase(core, namespace, "victim") == "Failed", timeout_s=30)
    statuses = {s.name: s for s in core.read_namespaced_pod("victim", namespace).status.container_statuses}
    assert statuses["main"].state.terminated.exit_code == 137
    assert statuses["main"].state.terminated.reason == "OOMKilled"
    assert statuses["side"].state.running is not None


def test_pod_delete_needs_no_kubelet(core, namespace, node):
    make_pod(core, namespace, "gone", node)
    wait_for("pod Running", lambda: phase(core, namespace, "gone") == "Running", timeout_s=30)
    core.delete_namespaced_pod("gone", namespace)

    def absent() -> bool:
        from kubernetes.client.exceptions import ApiException

        try:
            core.read_namespaced_pod("gone", namespace)
        except ApiException as e:
            return e.status == 404
        return False

    wait_for("pod deleted", absent, timeout_s=30)
