"""Containers started by real runc through the wrapper see exactly their chips, and nothing else."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from rh_runc_support import BundleFactory, host_mounts_under

from runtime_hook.testing import EmulatedNode

pytestmark = [pytest.mark.e2e, pytest.mark.runc]

LIST_DEVICES = "for d in /dev/davinci*; do stat -c '%n %F %t:%T' $d; done; ls /dev | grep -E 'hdc|svm'"


def host_npu_smi(node: EmulatedNode, visible: str) -> str:
    """What the emulator's own npu-smi prints on the host for these chips: the container must match it."""
    state = node.root.host("/usr/local/Ascend/driver/npu-emu/node.json")
    env = {**os.environ, "NPU_EMU_STATE_FILE": str(state), "ASCEND_VISIBLE_DEVICES": visible}
    return subprocess.run([sys.executable, "-m", "emulator.npu_smi.cli", "info"], env=env, text=True,
                          capture_output=True, check=True).stdout


def test_visible_1_3_sees_exactly_davinci1_and_davinci3(bundle_factory: BundleFactory,
                                                         emulated_node: EmulatedNode) -> None:
    c = bundle_factory(f"{LIST_DEVICES}; echo ---; npu-smi info", {"ASCEND_VISIBLE_DEVICES": "1,3"})
    res = c.run()
    assert res.returncode == 0, res.stderr
    devices, _, smi = res.stdout.partition("---\n")
    assert devices.splitlines() == [
        "/dev/davinci1 character special file ec:1",
        "/dev/davinci3 character special file ec:3",
        "/dev/davinci_manager character special file eb:0",
        "devmm_svm",
        "hisi_hdc",
    ]
    assert smi == host_npu_smi(emulated_node, "1,3")
    rows = [line.split()[1] for line in smi.splitlines() if "910B3" in line]
    assert rows == ["1", "3"]


def test_create_start_like_containerd_with_device_names(bundle_factory: BundleFactory,
                                                        emulated_node: EmulatedNode) -> None:
    c = bundle_factory(f"{LIST_DEVICES}; echo ---; npu-smi info",
                       ["ASCEND_VISIBLE_DEVICES=0", "ASCEND_VISIBLE_DEVICES=Ascend910-2,Ascend910-6"])
    created, out = c.create_start()
    assert created.returncode == 0, created.stderr
    devices, _, smi = out.partition("---\n")
    assert [line.split()[0] for line in devices.splitlines()[:2]] == ["/dev/davinci2", "/dev/davinci6"]
    assert smi == host_npu_smi(emulated_node, "2,6")


def test_devices_keep_host_numbers_and_cgroup_allows_them(bundle_factory: BundleFactory) -> None:
    c = bundle_factory("cat /sys/fs/cgroup/devices/devices.list 2>/dev/null || echo no-v1-devices",
                       {"ASCEND_VISIBLE_DEVICES": "0-2,4"})
    res = c.run()
    assert res.returncode == 0, res.stderr
    if "no-v1-devices" not in res.stdout:
        for rule in ("c 236:0 rwm", "c 236:1 rwm", "c 236:2 rwm", "c 236:4 rwm", "c 235:0 rwm",
                     "c 237:0 rwm", "c 238:0 rwm"):
            assert rule in res.stdout.splitlines()
        assert "c 236:3 rwm" not in res.stdout


def test_driver_files_are_mounted_read_only(bundle_factory: BundleFactory) -> None:
    script = (
        "cat /usr/local/Ascend/driver/include/dsmi_common_interface.h >/dev/null && echo readable;"
        "touch /usr/local/Ascend/driver/lib64/new 2>/dev/null && echo lib64-writable || echo lib64-ro;"
        "echo x 2>/dev/null > /usr/local/bin/npu-smi && echo npu-smi-writable || echo npu-smi-ro;"
        "touch /usr/local/dcmi/new 2>/dev/null && echo dcmi-writable || echo dcmi-ro;"
        "touch /usr/local/Ascend/driver/npu-emu/x 2>/dev/null && echo state-writable || echo state-ro;"
        "grep -E ' /usr/local/(Ascend|dcmi|bin)' /proc/mounts"
    )
    c = bundle_factory(script, {"ASCEND_VISIBLE_DEVICES": "5"})
    res = c.run()
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[:5] == ["readable", "lib64-ro", "npu-smi-ro", "dcmi-ro", "state-ro"]
    mounts = {line.split()[1]: line.split()[3].split(",") for line in lines[5:]}
    for target in ("/usr/local/Ascend/driver/lib64", "/usr/local/Ascend/driver/include", "/usr/local/dcmi",
                   "/usr/local/bin/npu-smi", "/usr/local/Ascend/driver/tools",
                   "/usr/local/Ascend/driver/npu-emu"):
        assert "ro" in mounts[target], (target, mounts)
    assert "/var/queue_schedule" not in mounts  # missing on the node: skipped silently
    assert host_mounts_under(c.bundle) == []


def test_env_is_set_for_the_container(bundle_factory: BundleFactory) -> None:
    c = bundle_factory("env | sort | grep -E '^(ASCEND|LD_LIBRARY)'",
                       ["ASCEND_VISIBLE_DEVICES=7", "LD_LIBRARY_PATH=/opt/lib"])
    res = c.run()
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == [
        "ASCEND_DOCKER_RUNTIME=True",
        "ASCEND_VISIBLE_DEVICES=7",
        "LD_LIBRARY_PATH=/opt/lib:/usr/local/Ascend/driver/lib64:/usr/local/Ascend/driver/lib64/common:"
        "/usr/local/Ascend/driver/lib64/driver",
    ]


def test_nodrv_gives_devices_without_driver_mounts(bundle_factory: BundleFactory) -> None:
    c = bundle_factory("ls /dev | grep davinci; grep -c /usr/local/Ascend /proc/mounts || true",
                       {"ASCEND_VISIBLE_DEVICES": "2", "ASCEND_RUNTIME_OPTIONS": "NODRV"})
    res = c.run()
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["davinci2", "davinci_manager", "0"]


def test_void_means_no_npu(bundle_factory: BundleFactory) -> None:
    c = bundle_factory("ls /dev | grep -c davinci || true; env | grep ASCEND_DOCKER",
                       {"ASCEND_VISIBLE_DEVICES": "void"})
    res = c.run()
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["0", "ASCEND_DOCKER_RUNTIME=True"]


def test_other_subcommands_pass_through(bundle_factory: BundleFactory, runc_bin: str) -> None:
    c = bundle_factory("true")
    res = c.wrapper("list", capture_output=True)
    direct = subprocess.run([runc_bin, "--root", str(c.state_root), "list"], capture_output=True, text=True)
    assert (res.returncode, res.stdout) == (direct.returncode, direct.stdout)
    version = c.wrapper("--version", capture_output=True)
    assert version.stdout.startswith("runc version")
