from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from runtime_hook import RuntimeHookError
from runtime_hook.mounts import mount_point
from runtime_hook.prestart import run
from runtime_hook.testing import EmulatedNode


def state(bundle: Path, pid: int = 1) -> bytes:
    return json.dumps({"ociVersion": "1.0.2", "id": "c", "status": "creating", "pid": pid,
                       "bundle": str(bundle)}).encode()


Bundle = Callable[[list[str]], Path]


def test_nothing_to_do_without_visible_devices(node: EmulatedNode, bundle: Bundle) -> None:
    env = {"NPU_EMU_DEVFS_ROOT": str(node.root.root)}
    assert run(state(bundle([])), env) == []
    assert run(state(bundle(["ASCEND_VISIBLE_DEVICES="])), env) == []


def test_nodrv_validates_but_mounts_nothing(node: EmulatedNode, bundle: Bundle) -> None:
    env = {"NPU_EMU_DEVFS_ROOT": str(node.root.root)}
    b = bundle(["ASCEND_VISIBLE_DEVICES=1", "ASCEND_RUNTIME_OPTIONS=NODRV"])
    assert run(state(b, pid=999_999_999), env) == []


@pytest.mark.parametrize(("extra", "message"), [
    (["ASCEND_RUNTIME_OPTIONS=FOO"],
     "failed to parse runtime options: invalid runtime option of invalid input value"),
    (["ASCEND_ALLOW_LINK=1"], "failed to parse soft link mode: invalid soft link option"),
    (["ASCEND_RUNTIME_MOUNTS=nope"],
     "failed to read configuration from config directory: failed to process config nope"),
])
def test_bad_values(node: EmulatedNode, bundle: Bundle, extra: list[str], message: str) -> None:
    env = {"NPU_EMU_DEVFS_ROOT": str(node.root.root)}
    with pytest.raises(RuntimeHookError) as e:
        run(state(bundle(["ASCEND_VISIBLE_DEVICES=1", *extra])), env)
    assert str(e.value).startswith(message)


def test_bad_state_and_missing_bundle(tmp_path: Path) -> None:
    with pytest.raises(RuntimeHookError, match="failed to parse the container's state"):
        run(b"not json", {})
    with pytest.raises(RuntimeHookError, match="failed to get container config: cannot open oci spec"):
        run(state(tmp_path / "absent"), {})


def test_unknown_pid_fails_cleanly(node: EmulatedNode, bundle: Bundle) -> None:
    env = {"NPU_EMU_DEVFS_ROOT": str(node.root.root)}
    with pytest.raises(RuntimeHookError, match=r"failed to get container mnt ns path: pid\(999999999\)"):
        run(state(bundle(["ASCEND_VISIBLE_DEVICES=1"]), pid=999_999_999), env)


def test_mount_points_stay_inside_the_rootfs(tmp_path: Path) -> None:
    rootfs = tmp_path / "rootfs"
    (rootfs / "usr").mkdir(parents=True)
    assert mount_point(rootfs, "/usr/local/bin/npu-smi", is_dir=False).is_file()
    assert mount_point(rootfs, "/usr/local/dcmi", is_dir=True).is_dir()
    (rootfs / "escape").symlink_to(tmp_path)
    with pytest.raises(RuntimeHookError, match="leaves the container rootfs"):
        mount_point(rootfs, "/escape/x", is_dir=True)


def test_main_reports_errors_on_stderr() -> None:
    res = subprocess.run([sys.executable, "-m", "runtime_hook.prestart"], input="{}", text=True,
                         capture_output=True, env={**os.environ, "NPU_EMU_RUNTIME_LOG_DIR": ""})
    assert res.returncode == 1
    assert res.stderr.strip() == "npu-emu-hook: failed to parse the container's state"
