from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from runtime_hook import RuntimeHookError
from runtime_hook.cdi import build_spec, main, qualified_names, validate
from runtime_hook.testing import EmulatedNode


def test_one_device_per_present_chip_plus_all(node: EmulatedNode) -> None:
    spec = build_spec(node.root, node.chips)
    validate(spec)
    assert (spec["cdiVersion"], spec["kind"]) == ("0.5.0", "huawei.com/npu")
    names = [d["name"] for d in spec["devices"]]
    assert names == ["0", "1", "2", "3", "4", "6", "7", "all"]  # chip 5 is card-lost
    dev3 = spec["devices"][3]["containerEdits"]["deviceNodes"]
    assert dev3 == [{"path": "/dev/davinci3", "hostPath": str(node.root.host("/dev/davinci3")), "type": "c",
                     "major": 236, "minor": 3, "permissions": "rwm"}]
    everything = spec["devices"][-1]["containerEdits"]
    assert everything["env"] == ["ASCEND_VISIBLE_DEVICES=0,1,2,3,4,6,7"]
    assert [n["path"] for n in everything["deviceNodes"]] == [
        f"/dev/davinci{i}" for i in (0, 1, 2, 3, 4, 6, 7)]
    common = spec["containerEdits"]
    assert [n["path"] for n in common["deviceNodes"]] == [
        "/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc"]
    assert {m["containerPath"] for m in common["mounts"]} >= {
        "/usr/local/Ascend/driver/lib64", "/usr/local/bin/npu-smi", "/usr/local/Ascend/driver/npu-emu"}
    assert all(m["options"] == ["ro", "nosuid", "nodev", "bind"] for m in common["mounts"])
    assert qualified_names(spec)[:2] == ["huawei.com/npu=0", "huawei.com/npu=1"]


@pytest.mark.parametrize(("patch", "message"), [
    ({"cdiVersion": "0.5"}, "cdiVersion"),
    ({"kind": "npu"}, "invalid kind"),
    ({"devices": []}, "at least one device"),
    ({"devices": [{"name": "-x", "containerEdits": {"env": ["A=1"]}}]}, "device name"),
    ({"devices": [{"name": "0", "containerEdits": {}}]}, "containerEdits missing"),
    ({"devices": [{"name": "0", "containerEdits": {"deviceNodes": [{"path": "dev/x"}]}}]}, "device node"),
    ({"bogus": 1}, "unknown CDI fields"),
])
def test_validate_refuses(node: EmulatedNode, patch: dict[str, object], message: str) -> None:
    spec = {**build_spec(node.root, node.chips), **patch}
    with pytest.raises(RuntimeHookError, match=message):
        validate(spec)


def test_main_writes_yaml_from_the_node_state(node: EmulatedNode, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cdi" / "huawei-npu.yaml"
    assert main(["--devfs-root", str(node.root.root), "--output", str(out)]) == 0
    spec = yaml.safe_load(out.read_text())
    validate(spec)
    assert spec == build_spec(node.root, node.chips)
    assert "huawei.com/npu=all" in capsys.readouterr().out
    as_json = tmp_path / "huawei-npu.json"
    assert main(["--devfs-root", str(node.root.root), "--output", str(as_json)]) == 0
    assert json.loads(as_json.read_text()) == spec


def test_main_fails_without_inventory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--devfs-root", str(tmp_path), "--output", str(tmp_path / "x.yaml")]) == 1
    assert "npu-emu-cdi: cannot read node state" in capsys.readouterr().err
    assert not (tmp_path / "x.yaml").exists()
