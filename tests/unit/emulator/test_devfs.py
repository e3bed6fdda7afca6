from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from npu_nodes import node_910b

from emulator import devfs


def test_materialise_creates_devices_and_tree(tmp_path: Path) -> None:
    node, chips = node_910b()
    res = devfs.materialise(node, chips, tmp_path)
    assert res.davinci == tuple(range(8))
    for name in [f"davinci{i}" for i in range(8)] + ["davinci_manager", "devmm_svm", "hisi_hdc"]:
        assert (tmp_path / "dev" / name).exists(), name
    marker = json.loads((tmp_path / "dev" / devfs.MARKER).read_text())
    assert marker["char_devices"] is res.char_devices
    info = (tmp_path / "usr/local/Ascend/driver/version.info").read_text().splitlines()
    assert info[0] == "Version=24.1.rc2" and info[1].startswith("ascendhal_version=")
    assert (tmp_path / "etc/ascend-docker-runtime.d/base.list").read_text() == devfs.BASE_LIST_TEXT
    for path in devfs.BASE_LIST_TEXT.split()[:4]:
        assert (tmp_path / path.lstrip("/")).exists(), path
    state = json.loads((tmp_path / devfs.STATE_FILE).read_text())
    assert state["node"]["name"] == node["name"] and len(state["chips"]) == 8


def test_char_devices_when_mknod_is_permitted(tmp_path: Path) -> None:
    node, chips = node_910b()
    res = devfs.materialise(node, chips, tmp_path)
    if not res.char_devices:
        pytest.skip("no CAP_MKNOD here: devices are plain files (checked by the marker test)")
    st = (tmp_path / "dev/davinci3").lstat()
    assert stat.S_ISCHR(st.st_mode)
    assert (os.major(st.st_rdev), os.minor(st.st_rdev)) == (236, 3)
    hdc = (tmp_path / "dev/hisi_hdc").lstat()
    assert (os.major(hdc.st_rdev), os.minor(hdc.st_rdev)) == (237, 0)
    assert stat.S_IMODE(st.st_mode) == 0o660


def test_card_lost_and_recovered(tmp_path: Path) -> None:
    node, chips = node_910b()
    devfs.materialise(node, chips, tmp_path)
    chips[2]["present"] = False
    res = devfs.materialise(node, chips, tmp_path)
    assert not (tmp_path / "dev/davinci2").exists()
    assert res.removed == (str(tmp_path / "dev/davinci2"),)
    assert json.loads((tmp_path / devfs.STATE_FILE).read_text())["chips"][2]["present"] is False
    chips[2]["present"] = True
    res = devfs.materialise(node, chips, tmp_path)
    assert (tmp_path / "dev/davinci2").exists()
    assert res.created == (str(tmp_path / "dev/davinci2"),)


def test_idempotent(tmp_path: Path) -> None:
    node, chips = node_910b()
    devfs.materialise(node, chips, tmp_path)
    before = sorted(p.name for p in (tmp_path / "dev").iterdir())
    res = devfs.materialise(node, chips, tmp_path)
    assert res.created == () and res.removed == ()
    assert sorted(p.name for p in (tmp_path / "dev").iterdir()) == before
    leftovers = [p for p in tmp_path.rglob(".*") if p.name != devfs.MARKER]
    assert leftovers == []


def test_unrelated_dev_entries_survive(tmp_path: Path) -> None:
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev/null-ish").write_text("x")
    node, chips = node_910b()
    devfs.materialise(node, chips, tmp_path)
    devfs.remove(tmp_path)
    assert (tmp_path / "dev/null-ish").exists()
    assert not (tmp_path / "dev/davinci0").exists()
    assert not (tmp_path / "usr").exists() and not (tmp_path / "etc").exists()


def test_in_tree_npu_smi_runs_without_site_packages(tmp_path: Path) -> None:
    node, chips = node_910b()
    chips[4]["npu_smi_health"] = "Warning"
    devfs.materialise(node, chips, tmp_path, interpreter=sys.executable)
    launcher = tmp_path / devfs.LAUNCHER
    text = launcher.read_text().replace("'/usr/local/Ascend/driver/tools'", repr(str(tmp_path / devfs.TOOLS)))
    launcher.write_text(text)
    env = {"NPU_EMU_STATE_FILE": str(tmp_path / devfs.STATE_FILE), "ASCEND_VISIBLE_DEVICES": "4",
           "PATH": "/usr/bin:/bin"}
    # -I -S: no site-packages, no user path, no cwd: only the copied package can be imported
    res = subprocess.run([sys.executable, "-I", "-S", str(launcher), "info"], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=30)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "| 4     910B3               | Warning" in res.stdout
    assert "| 0     910B3" not in res.stdout
    assert os.access(launcher, os.X_OK)


def test_in_tree_hccn_tool_runs_without_site_packages(tmp_path: Path) -> None:
    node, chips = node_910b("no-netns-here")
    chips[1]["link_up"] = False
    devfs.materialise(node, chips, tmp_path)
    launcher = tmp_path / devfs.HCCN_LAUNCHER
    text = launcher.read_text().replace("'/usr/local/Ascend/driver/tools'", repr(str(tmp_path / devfs.TOOLS)))
    launcher.write_text(text)
    env = {"NPU_EMU_STATE_FILE": str(tmp_path / devfs.STATE_FILE), "PATH": "/usr/bin:/bin"}
    res = subprocess.run([sys.executable, "-I", "-S", str(launcher), "-i", "1", "-link", "-g"], env=env,
                         cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert (res.returncode, res.stdout) == (0, "link status: DOWN\n"), res.stderr


def test_unchanged_files_are_not_rewritten(tmp_path: Path) -> None:
    node, chips = node_910b()
    devfs.materialise(node, chips, tmp_path)
    info = tmp_path / "usr/local/Ascend/driver/version.info"
    state = tmp_path / devfs.STATE_FILE
    before = (info.stat().st_ino, state.stat().st_ino)
    devfs.materialise(node, chips, tmp_path)
    assert (info.stat().st_ino, state.stat().st_ino) == before
    chips[0]["temperature_c"] = 80
    devfs.materialise(node, chips, tmp_path)
    assert state.stat().st_ino != before[1]
    assert json.loads(state.read_text())["chips"][0]["temperature_c"] == 80
