"""The CDI spec, applied the way a CDI-aware runtime applies it, gives plain runc the same container."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from rh_runc_support import BundleFactory

from runtime_hook.testing import EmulatedNode

pytestmark = [pytest.mark.e2e, pytest.mark.runc]


def inject_cdi(config: Path, cdi: dict[str, Any], names: list[str]) -> None:
    """Apply the spec-wide and the named devices' containerEdits to an OCI config (CDI's injection)."""
    spec = json.loads(config.read_text())
    by_name = {d["name"]: d["containerEdits"] for d in cdi["devices"]}
    for edits in [cdi.get("containerEdits", {}), *(by_name[n] for n in names)]:
        spec["process"]["env"] += edits.get("env", [])
        for node in edits.get("deviceNodes", []):
            spec["linux"].setdefault("devices", []).append({k: node[k] for k in ("path", "type", "major", "minor")})
            spec["linux"]["resources"]["devices"].append(
                {"allow": True, "type": node["type"], "major": node["major"], "minor": node["minor"],
                 "access": node["permissions"]})
        for m in edits.get("mounts", []):
            spec["mounts"].append({"destination": m["containerPath"], "source": m["hostPath"], "type": "bind",
                                   "options": m["options"]})
    config.write_text(json.dumps(spec))


def test_cdi_devices_under_plain_runc(bundle_factory: BundleFactory, emulated_node: EmulatedNode,
                                      runc_bin: str, tmp_path: Path) -> None:
    out = tmp_path / "huawei-npu.yaml"
    subprocess.run([sys.executable, "-m", "runtime_hook.cdi", "--devfs-root", str(emulated_node.root.root),
                    "--output", str(out)], check=True, capture_output=True)
    cdi = yaml.safe_load(out.read_text())
    c = bundle_factory("ls /dev | grep davinci; touch /usr/local/dcmi/x 2>/dev/null || echo ro; "
                       "npu-smi info | grep -c 910B3", {"ASCEND_VISIBLE_DEVICES": "1,3"})
    inject_cdi(c.config_path, cdi, ["1", "3"])
    res = subprocess.run([runc_bin, "--root", str(c.state_root), "run", "--bundle", str(c.bundle), c.cid],
                         capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                         env=dict(os.environ))
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["davinci1", "davinci3", "davinci_manager", "ro", "2"]
