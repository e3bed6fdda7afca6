"""The plugin's entry point (`python -m deviceplugin kubelet`) between the real emulator service and the
kubelet stand-in: registration, live health, Allocate, and both restarts."""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from dp_e2e_helpers import Emulator, Proc, running

from deviceplugin.testing import KubeletStub

NODE = "npu-node-0"
ALL_HEALTHY = {f"Ascend910-{p}": "Healthy" for p in range(8)}


@pytest.fixture
def workdir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="dpe-", dir="/tmp"))  # short: unix socket paths <= 107 bytes
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def emulator(workdir: Path) -> Iterator[Emulator]:
    emu = Emulator(workdir, "--devfs-root", str(workdir / "devfs"))
    with running(emu):
        yield emu


@pytest.fixture
def kubelet(workdir: Path) -> Iterator[KubeletStub]:
    with KubeletStub(workdir / "device-plugins") as stub:
        yield stub


@pytest.fixture
def plugin(workdir: Path, emulator: Emulator, kubelet: KubeletStub) -> Iterator[Proc]:
    args = [
        sys.executable,
        "-m",
        "deviceplugin",
        "kubelet",
        "--emulator-url",
        emulator.url,
        "--node",
        NODE,
        "--device-plugin-dir",
        str(kubelet.plugin_dir),
        "--plain",
        "--no-kube",
        "--devfs-root",
        str(workdir / "devfs"),
        "--log-level",
        "debug",
    ]
    with running(Proc(args, workdir / "plugin.log")) as proc:
        yield proc


def test_register_health_allocate(emulator: Emulator, kubelet: KubeletStub, plugin: Proc, workdir: Path) -> None:
    reg = kubelet.wait_registered(timeout=30)
    assert reg.request.resource_name == "huawei.com/Ascend910" and reg.request.endpoint == "Ascend910.sock"
    assert kubelet.devices() == ALL_HEALTHY

    fault = emulator.inject(NODE, [3])
    kubelet.wait_devices(lambda d: d["Ascend910-3"] == "Unhealthy", timeout=2)
    assert kubelet.preferred([f"Ascend910-{p}" for p in range(8) if p != 3], 4) == [
        "Ascend910-0",
        "Ascend910-1",
        "Ascend910-2",
        "Ascend910-4",
    ]
    resp = kubelet.allocate(["Ascend910-0", "Ascend910-1"]).container_responses[0]
    dev = workdir / "devfs" / "dev"
    assert [(d.host_path, d.container_path) for d in resp.devices] == [
        (str(dev / "davinci_manager"), "/dev/davinci_manager"),
        (str(dev / "hisi_hdc"), "/dev/hisi_hdc"),
        (str(dev / "devmm_svm"), "/dev/devmm_svm"),
        (str(dev / "davinci0"), "/dev/davinci0"),
        (str(dev / "davinci1"), "/dev/davinci1"),
    ]
    with pytest.raises(Exception, match="plugin doesn't have device Ascend910-3"):
        kubelet.allocate(["Ascend910-3"])
    emulator.clear(fault)
    kubelet.wait_devices(lambda d: d == ALL_HEALTHY, timeout=2)


def test_kubelet_restart(emulator: Emulator, kubelet: KubeletStub, plugin: Proc) -> None:
    kubelet.wait_registered(timeout=30)
    kubelet.restart()
    kubelet.wait_registered(2, timeout=10)
    emulator.inject(NODE, [5])
    kubelet.wait_devices(lambda d: d["Ascend910-5"] == "Unhealthy", timeout=2)
    assert plugin.alive()


def test_emulator_restart(emulator: Emulator, kubelet: KubeletStub, plugin: Proc) -> None:
    kubelet.wait_registered(timeout=30)
    emulator.inject(NODE, [2])
    kubelet.wait_devices(lambda d: d["Ascend910-2"] == "Unhealthy", timeout=2)

    # same state file: the fault survives, the plugin re-registers and resumes the stream
    emulator.stop()
    kubelet.wait_devices(lambda d: set(d.values()) == {"Unhealthy"}, timeout=5)  # no stale Healthy either
    emulator.start()
    kubelet.wait_registered(2, timeout=15)
    kubelet.wait_devices(lambda d: d == {**ALL_HEALTHY, "Ascend910-2": "Unhealthy"}, timeout=5)
    emulator.inject(NODE, [6])  # events after the restart still arrive
    kubelet.wait_devices(lambda d: d["Ascend910-6"] == "Unhealthy", timeout=2)

    # a fresh state: the old faults are gone, and so is their health
    emulator.stop()
    emulator.start("--reset")
    kubelet.wait_registered(3, timeout=15)
    kubelet.wait_devices(lambda d: d == ALL_HEALTHY, timeout=5)
    emulator.inject(NODE, [1])  # the new log starts at seq 1: still followed
    kubelet.wait_devices(lambda d: d["Ascend910-1"] == "Unhealthy", timeout=2)
