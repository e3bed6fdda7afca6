from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from runtime_hook import RuntimeHookError
from runtime_hook.runtime import edit_bundle, find_runc, hook_for, split_own_flags
from runtime_hook.testing import EmulatedNode


def test_own_flags_are_removed() -> None:
    args, env = split_own_flags(["--npu-emu-devfs-root=/d", "--npu-emu-runc", "/r", "--root", "/x", "create"],
                                {"A": "1"})
    assert args == ["--root", "/x", "create"]
    assert env == {"A": "1", "NPU_EMU_DEVFS_ROOT": "/d", "NPU_EMU_RUNC": "/r"}
    with pytest.raises(RuntimeHookError, match="needs an argument"):
        split_own_flags(["--npu-emu-runc"], {})


def test_find_runc() -> None:
    assert find_runc({"NPU_EMU_RUNC": "/opt/runc"}) == "/opt/runc"
    with pytest.raises(RuntimeHookError, match="failed to find the path of runc"):
        find_runc({"PATH": "/nonexistent"})


def test_hook_defaults_to_the_module_with_its_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", ["/nonexistent/runtime"])  # no npu-emu-hook console script beside us
    hook = hook_for({"PATH": "/nonexistent", "NPU_EMU_RUNTIME_LOG_DIR": "/logs"}, "/devfs")
    assert hook.path == sys.executable
    assert hook.args == (sys.executable, "-S", "-m", "runtime_hook.prestart")
    assert "NPU_EMU_DEVFS_ROOT=/devfs" in hook.env and "NPU_EMU_RUNTIME_LOG_DIR=/logs" in hook.env
    explicit = hook_for({"NPU_EMU_HOOK": "/usr/bin/npu-emu-hook"}, "/")
    assert (explicit.path, explicit.args) == ("/usr/bin/npu-emu-hook", ("/usr/bin/npu-emu-hook",))


def test_edit_bundle_writes_only_on_success(node: EmulatedNode, bundle: Callable[[list[str]], Path]) -> None:
    env = {"NPU_EMU_DEVFS_ROOT": str(node.root.root)}
    b = bundle(["ASCEND_VISIBLE_DEVICES=0-1"])
    assert edit_bundle(str(b), env) == [0, 1]
    spec = json.loads((b / "config.json").read_text())
    assert [d["path"] for d in spec["linux"]["devices"]][:2] == ["/dev/davinci0", "/dev/davinci1"]
    b = bundle(["ASCEND_VISIBLE_DEVICES=5"])  # chip 5 is card-lost
    before = (b / "config.json").read_text()
    with pytest.raises(RuntimeHookError, match=r"^failed to modify spec file .*/config.json: .*davinci5"):
        edit_bundle(str(b), env)
    assert (b / "config.json").read_text() == before


def test_main_passes_other_subcommands_through_untouched() -> None:
    env = {**os.environ, "NPU_EMU_RUNC": "/bin/echo"}
    res = subprocess.run([sys.executable, "-m", "runtime_hook.runtime", "--log-format", "json", "state", "x"],
                         env=env, capture_output=True, text=True, check=True)
    assert res.stdout == "--log-format json state x\n"


def test_main_refuses_with_the_message(node: EmulatedNode, bundle: Callable[[list[str]], Path]) -> None:
    b = bundle(["ASCEND_VISIBLE_DEVICES=9"])
    env = {**os.environ, "NPU_EMU_RUNC": "/bin/echo", "NPU_EMU_DEVFS_ROOT": str(node.root.root)}
    res = subprocess.run([sys.executable, "-m", "runtime_hook.runtime", "create", "-b", str(b), "id"],
                         env=env, capture_output=True, text=True)
    assert (res.returncode, res.stdout) == (1, "")
    assert "failed to get /dev/davinci9 info : no such file or directory" in res.stderr
