"""Kubelet mode publishing to a real apiserver, and Volcano-mode Allocate reading real pods."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dp_e2e_helpers import Emulator, Proc, running
from test_dp_fleet_cluster import wait_for

from deviceplugin.testing import KubeletStub

pytestmark = [pytest.mark.e2e, pytest.mark.cluster]

ASCEND = "huawei.com/Ascend910"


@pytest.fixture
def workdir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="dpk-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_volcano_mode_and_publishing(
    ascend_nodes_factory: Any, control_plane: Any, kube_client: Any, workdir: Path
) -> None:
    from kubernetes.client import CoreV1Api

    core = CoreV1Api(kube_client)
    fleet = ascend_nodes_factory("atlas-800t-a2", 1)
    (node,) = fleet.names
    pattern = node.rsplit("-", 1)[0] + "-{index}"
    ns = f"dpk-{uuid.uuid4().hex[:6]}"
    core.create_namespace({"metadata": {"name": ns}})
    emulator = Emulator(
        workdir,
        "--profile",
        "atlas-800t-a2",
        "--nodes",
        "1",
        "--name-pattern",
        pattern,
        "--devfs-root",
        str(workdir / "devfs"),
    )
    try:
        with running(emulator), KubeletStub(workdir / "dp") as kubelet:
            args = [
                sys.executable,
                "-m",
                "deviceplugin",
                "kubelet",
                "--emulator-url",
                emulator.url,
                "--node",
                node,
                "--device-plugin-dir",
                str(workdir / "dp"),
                "--volcano",
                "--kubeconfig",
                str(control_plane.kubeconfig),
                "--ascend-docker-runtime",
            ]
            with running(Proc(args, workdir / "plugin.log")):
                kubelet.wait_registered(timeout=30)
                cm = wait_for("device-info ConfigMap", lambda: _cm(core, node), timeout_s=30)
                info = json.loads(cm.data["DeviceInfoCfg"])
                assert info["DeviceInfo"]["DeviceList"][ASCEND] == ",".join(f"Ascend910-{i}" for i in range(8))
                assert cm.metadata.labels["mx-consumer-cim"] == "true"
                labels = core.read_node(node).metadata.labels
                assert labels["accelerator"] == "huawei-Ascend910"
                assert labels["node.kubernetes.io/npu.chip.name"] == "910B3"
                annotations = core.read_node(node).metadata.annotations
                assert json.loads(annotations["baseDeviceInfos"])["Ascend910-0"]["IP"]

                # two pods Volcano would have annotated; the older one is taken first
                for name, chips, ptime in (
                    ("young", "Ascend910-4,Ascend910-5", 200),
                    ("old", "Ascend910-2,Ascend910-3", 100),
                ):
                    core.create_namespaced_pod(
                        ns,
                        {
                            "metadata": {"name": name, "annotations": {ASCEND: chips, "predicate-time": str(ptime)}},
                            "spec": {
                                "nodeName": node,
                                "tolerations": [{"operator": "Exists"}],
                                "containers": [
                                    {
                                        "name": "c",
                                        "image": "npu-emu.invalid/x:1",
                                        "resources": {"limits": {ASCEND: "2"}},
                                    }
                                ],
                            },
                        },
                    )
                resp = kubelet.allocate(["Ascend910-0", "Ascend910-1"]).container_responses[0]
                assert dict(resp.envs) == {"ASCEND_VISIBLE_DEVICES": "2,3", "ASCEND_RUNTIME_OPTIONS": ""}
                old = core.read_namespaced_pod("old", ns).metadata.annotations
                assert old["predicate-time"] == "18446744073709551615"
                assert old["huawei.com/AscendReal"] == "Ascend910-2,Ascend910-3"
                assert old["huawei.com/kltDev"] == "Ascend910-0,Ascend910-1"
                conf = json.loads(old["ascend.kubectl.kubernetes.io/ascend-910-configuration"])
                assert list(conf) == [
                    "pod_name",
                    "server_id",
                    "host_ip",
                    "super_pod_id",
                    "devices",
                    "rack_id",
                    "server_index",
                    "server_ip",
                ]
                resp = kubelet.allocate(["Ascend910-6", "Ascend910-7"]).container_responses[0]
                assert resp.envs["ASCEND_VISIBLE_DEVICES"] == "4,5"

                # a fault: ConfigMap and an Occur event
                emulator.inject(node, [3])
                wait_for(
                    "Unhealthy in ConfigMap",
                    lambda: (
                        json.loads(_cm(core, node).data["DeviceInfoCfg"])["DeviceInfo"]["DeviceList"][
                            f"{ASCEND}-Unhealthy"
                        ]
                        == "Ascend910-3"
                    ),
                    timeout_s=10,
                )
                events = wait_for(
                    "Occur event",
                    lambda: [
                        e
                        for e in core.list_namespaced_event("kube-system").items
                        if e.reason == "Occur" and e.involved_object.name == f"mindx-dl-deviceinfo-{node}"
                    ],
                    timeout_s=10,
                )
                assert events[0].message.startswith(f"device fault, nodeName:{node}, assertion:Occur, cardID:")
                assert events[0].reporting_component == "device-plugin"
    finally:
        core.delete_namespace(ns, propagation_policy="Background")


def _cm(core: Any, node: str) -> Any:
    try:
        return core.read_namespaced_config_map(f"mindx-dl-deviceinfo-{node}", "kube-system")
    except Exception:
        return None
