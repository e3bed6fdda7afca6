"""The plugin against the kubelet stand-in over real unix sockets, fed by a fake chip source."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from dp_fixtures import chips, node_910a

from deviceplugin.kubelet import KubeletPlugin
from deviceplugin.servicer import DevicePluginServicer, PluginOptions
from deviceplugin.state import NodeState
from deviceplugin.testing import KubeletStub


@pytest.fixture
def state() -> NodeState:
    return NodeState(node_910a(), chips())


@pytest.fixture
def kubelet(plugin_dir: Path) -> Iterator[KubeletStub]:
    with KubeletStub(plugin_dir) as stub:
        yield stub


@pytest.fixture
def plugin(state: NodeState, plugin_dir: Path, kubelet: KubeletStub) -> Iterator[KubeletPlugin]:
    servicer = DevicePluginServicer(state, PluginOptions(volcano=False, devfs_root=plugin_dir))
    runner = KubeletPlugin(servicer, plugin_dir)
    stop = threading.Event()
    thread = threading.Thread(target=runner.run, args=(stop,), daemon=True)
    thread.start()
    yield runner
    stop.set()
    thread.join(5)
    assert not thread.is_alive(), "the plugin didn't stop"


def test_kubelet_flow(state: NodeState, kubelet: KubeletStub, plugin: KubeletPlugin) -> None:
    reg = kubelet.wait_registered()
    assert (reg.request.version, reg.request.endpoint, reg.request.resource_name) == (
        "v1beta1",
        "Ascend910.sock",
        "huawei.com/Ascend910",
    )
    assert reg.options is not None and reg.options.get_preferred_allocation_available
    assert kubelet.devices() == {f"Ascend910-{p}": "Healthy" for p in range(8)}

    # a fault shows in the stream
    state.update_chip(dataclasses.replace(state.snapshot().chips[5], fault_level="SeparateNPU"))
    devs = kubelet.wait_devices(lambda d: d["Ascend910-5"] == "Unhealthy", timeout=2)
    assert sum(h == "Healthy" for h in devs.values()) == 7

    # HCCS-aware preference: ring 1 has 3 free chips, ring 0 four -> 2 chips come from... ring 0 (4 > 3)
    available = [f"Ascend910-{p}" for p in (0, 1, 2, 3, 4, 6, 7)]
    assert kubelet.preferred(available, 2) == ["Ascend910-0", "Ascend910-1"]
    assert kubelet.preferred(available, 1) == ["Ascend910-4"]  # 3 free beats 4 free

    resp = kubelet.allocate(["Ascend910-0", "Ascend910-1"])
    assert [d.container_path for d in resp.container_responses[0].devices] == [
        "/dev/davinci0",
        "/dev/davinci1",
    ]
    kubelet.pre_start(["Ascend910-0"])

    with pytest.raises(grpc.RpcError) as err:
        kubelet.allocate(["Ascend910-5"])
    assert "plugin doesn't have device Ascend910-5" in (err.value.details() or "")


def test_kubelet_restart_reregisters(state: NodeState, kubelet: KubeletStub, plugin: KubeletPlugin) -> None:
    kubelet.wait_registered(1)
    kubelet.restart()
    reg = kubelet.wait_registered(2)
    assert reg.request.resource_name == "huawei.com/Ascend910"
    # the new stream carries live health
    state.update_chip(dataclasses.replace(state.snapshot().chips[0], fault_level="RestartNPU"))
    devs = kubelet.wait_devices(lambda d: d["Ascend910-0"] == "Unhealthy", timeout=2)
    assert [devs[f"Ascend910-{p}"] for p in range(4)] == ["Unhealthy"] * 4  # the whole reset ring
    assert kubelet.allocate(["Ascend910-4"]).container_responses


def test_stale_source_reports_unhealthy_until_relisted(
    state: NodeState, kubelet: KubeletStub, plugin: KubeletPlugin
) -> None:
    kubelet.wait_registered()
    state.set_stale()
    kubelet.wait_devices(lambda d: set(d.values()) == {"Unhealthy"}, timeout=2)
    snap = state.snapshot()
    assert snap.node is not None
    state.replace(snap.node, snap.chips.values())
    kubelet.wait_devices(lambda d: set(d.values()) == {"Healthy"}, timeout=2)
