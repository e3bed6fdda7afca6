from __future__ import annotations

import copy
import sys

import pytest
from rh_unit_support import minimal_spec

from runtime_hook import RuntimeHookError
from runtime_hook.inject import Hook, process_spec
from runtime_hook.testing import EmulatedNode

HOOK = Hook(path="/usr/bin/npu-emu-hook", args=("/usr/bin/npu-emu-hook",), env=("NPU_EMU_DEVFS_ROOT=/x",))


def test_devices_rules_env_and_hook(node: EmulatedNode) -> None:
    spec = minimal_spec(["ASCEND_VISIBLE_DEVICES=0", "ASCEND_VISIBLE_DEVICES=1,3"])
    assert process_spec(spec, node.root, HOOK) == [1, 3]
    devices = spec["linux"]["devices"]
    assert [(d["path"], d["type"], d["major"], d["minor"]) for d in devices] == [
        ("/dev/davinci1", "c", 236, 1), ("/dev/davinci3", "c", 236, 3), ("/dev/davinci_manager", "c", 235, 0),
        ("/dev/devmm_svm", "c", 238, 0), ("/dev/hisi_hdc", "c", 237, 0)]
    assert devices[0]["fileMode"] == 0o660
    rules = spec["linux"]["resources"]["devices"][1:]
    assert [(r["allow"], r["type"], r["major"], r["minor"], r["access"]) for r in rules] == [
        (True, "c", d["major"], d["minor"], "rwm") for d in devices]
    env = spec["process"]["env"]
    assert [e for e in env if e.startswith("ASCEND_")] == ["ASCEND_VISIBLE_DEVICES=1,3",
                                                           "ASCEND_DOCKER_RUNTIME=True"]
    assert "LD_LIBRARY_PATH=/usr/local/Ascend/driver/lib64:/usr/local/Ascend/driver/lib64/common:" \
           "/usr/local/Ascend/driver/lib64/driver" in env
    assert spec["hooks"]["prestart"] == [{"path": HOOK.path, "args": list(HOOK.args), "env": list(HOOK.env)}]


def test_hook_is_not_added_twice(node: EmulatedNode) -> None:
    spec = minimal_spec(["ASCEND_VISIBLE_DEVICES=2"])
    spec["hooks"]["prestart"] = [{"path": "/usr/local/bin/ascend-docker-hook", "args": []}]
    process_spec(spec, node.root, HOOK)
    assert len(spec["hooks"]["prestart"]) == 1
    spec2 = minimal_spec(["ASCEND_VISIBLE_DEVICES=2"])
    python = sys.executable
    spec2["hooks"]["prestart"] = [{"path": python, "args": [python, "-m", "runtime_hook.prestart"]}]
    process_spec(spec2, node.root, HOOK)
    assert len(spec2["hooks"]["prestart"]) == 1


@pytest.mark.parametrize("env", [
    [], ["ASCEND_VISIBLE_DEVICES="], ["ASCEND_VISIBLE_DEVICES=1", "ASCEND_VISIBLE_DEVICES=void"]])
def test_no_npu_only_marks_the_runtime(node: EmulatedNode, env: list[str]) -> None:
    spec = minimal_spec(env)
    assert process_spec(spec, node.root, HOOK) == []
    assert spec["linux"]["devices"] == [] and spec["hooks"] == {}
    assert spec["process"]["env"][-1] == "ASCEND_DOCKER_RUNTIME=True"


@pytest.mark.parametrize(("value", "message"), [
    ("9", "failed to add device to env: failed to add davinci device to spec: "
          "failed to get /dev/davinci9 info : no such file or directory"),
    ("4-5", "failed to get /dev/davinci5 info : no such file or directory"),
    ("x", "failed to check ASCEND_VISIBLE_DEVICES parameter, err: failed to parse device : "
          "invalid single device parameter: x"),
    ("Ascend910-a", "failed to check ASCEND_VISIBLE_DEVICES parameter, err: failed to parse ascend device : "
                    "invalid device format: Ascend910-a"),
])
def test_refusals_leave_the_spec_untouched(node: EmulatedNode, value: str, message: str) -> None:
    spec = minimal_spec([f"ASCEND_VISIBLE_DEVICES={value}"])
    before = copy.deepcopy(spec)
    with pytest.raises(RuntimeHookError) as e:
        process_spec(spec, node.root, HOOK)
    assert message in str(e.value)
    assert spec == before


def test_lost_chip_is_refused_even_if_its_node_is_still_there(node: EmulatedNode) -> None:
    # the emulator reports chip 5 lost; recreate a stale device node to model a race with the devfs sync
    import os
    import stat
    os.mknod(node.root.host("/dev/davinci5"), stat.S_IFCHR | 0o660, os.makedev(236, 5))
    with pytest.raises(RuntimeHookError, match=r"davinci5 info .*present=false"):
        process_spec(minimal_spec(["ASCEND_VISIBLE_DEVICES=5"]), node.root, HOOK)


def test_virtual_uses_vdavinci_host_nodes(node: EmulatedNode) -> None:
    import os
    import stat
    os.mknod(node.root.host("/dev/vdavinci100"), stat.S_IFCHR | 0o660, os.makedev(236, 100))
    spec = minimal_spec(["ASCEND_VISIBLE_DEVICES=100", "ASCEND_RUNTIME_OPTIONS=VIRTUAL"])
    process_spec(spec, node.root, HOOK)
    assert spec["linux"]["devices"][0]["path"] == "/dev/davinci100"
    with pytest.raises(RuntimeHookError, match="failed to get /dev/vdavinci101 info"):
        process_spec(minimal_spec(["ASCEND_VISIBLE_DEVICES=101", "ASCEND_RUNTIME_OPTIONS=VIRTUAL"]),
                     node.root, HOOK)


def test_missing_manager_device_is_refused(node: EmulatedNode) -> None:
    node.root.host("/dev/hisi_hdc").unlink()
    with pytest.raises(RuntimeHookError, match="failed to get /dev/hisi_hdc info"):
        process_spec(minimal_spec(["ASCEND_VISIBLE_DEVICES=1"]), node.root, HOOK)
