"""`python -m cluster up | status | down` next to the session's cluster: two clusters coexist, and
`down` leaves no process and no file behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.cluster]


def cli(*args: str, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cluster", *args], env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_up_status_down_next_to_another_cluster(control_plane, tmp_path, request):
    env = {**os.environ, "NPU_EMU_STATE_DIR": str(tmp_path)}
    bin_dir = request.config.getoption("--npu-emu-bin-dir")
    if bin_dir:
        env["NPU_EMU_BIN_DIR"] = bin_dir
    name = f"cli-{uuid.uuid4().hex[:6]}"
    up = cli("up", "--name", name, "--nodes", "3", "--no-progress", env=env)
    try:
        assert up.returncode == 0, up.stderr
        kubeconfig = up.stdout.strip().splitlines()[-1]
        assert Path(kubeconfig).exists()

        again = cli("up", "--name", name, "--nodes", "1", env=env)
        assert again.returncode == 1 and "already exists" in again.stderr

        st = cli("status", "--name", name, "--json", env=env)
        assert st.returncode == 0, st.stdout + st.stderr
        status = json.loads(st.stdout)
        assert status["nodes"] == {"total": 3, "ready": 3, "ascend910_allocatable": 24}
        assert set(status["processes"]) >= {"etcd", "kube-apiserver", "kube-controller-manager",
                                            "kwok-controller", "vc-scheduler", "vc-controller-manager",
                                            "ascendjob-controller", "npu-emu-serve"}
        assert status["processes"]["npu-emu-serve"] == "running (healthz ok)"
        pids = [int(p.split("pid ")[1].rstrip(")")) for p in status["processes"].values() if "pid " in p]
        pid_files = (tmp_path / "clusters" / name / "pids").glob("*.json")
        pids += [json.loads(f.read_text())["pid"] for f in pid_files]
        # kwokctl's four, Volcano's two, the AscendJob controller, the emulator and fleet mode
        assert len(pids) == 9 and all(alive(p) for p in pids)
        # Different ports from the session's cluster, which is still serving.
        assert Path(kubeconfig).read_text() != control_plane.kubeconfig.read_text()
        assert control_plane.count_nodes()[0] >= 0
    finally:
        down = cli("down", "--name", name, env=env)
    assert down.returncode == 0, down.stderr
    assert not any(alive(p) for p in pids)
    assert not (tmp_path / "clusters" / name).exists()
    missing = cli("status", "--name", name, env=env)
    assert missing.returncode == 1 and "no cluster named" in missing.stderr
