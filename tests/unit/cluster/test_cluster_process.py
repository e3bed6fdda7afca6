import json
import os
import sys
import time
from pathlib import Path

import pytest

from cluster.components import Component, HttpProbe
from cluster.control_plane import free_port
from cluster.process import ManagedProcess, ProcessNotReady, process_alive, stop_pid_file

PY = Path(sys.executable)


def _server(port: int, delay_s: float = 0.0, child: bool = False) -> Component:
    """A python HTTP server that is ready after `delay_s`; with child=True it forks a grandchild."""
    code = (
        "import http.server, os, subprocess, sys, time\n"
        f"time.sleep({delay_s})\n"
        + ("subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n" if child else "")
        + f"http.server.HTTPServer(('127.0.0.1', {port}), http.server.SimpleHTTPRequestHandler)"
        ".serve_forever()\n"
    )
    return Component(name="srv", binary=PY, args=("-c", code), ports={"http": port},
                     ready_probe=HttpProbe(f"http://127.0.0.1:{port}/"))


def _children_of(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(d.name))
    return out


def test_ready_then_whole_group_stopped(tmp_path):
    port = free_port()
    with ManagedProcess(_server(port, delay_s=0.3, child=True), tmp_path, ready_timeout_s=20) as proc:
        pid = proc.pid
        deadline = time.monotonic() + 5
        while not _children_of(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        grandchildren = _children_of(pid)
        assert grandchildren
    assert not process_alive(pid)
    assert not any(process_alive(g) for g in grandchildren)


def test_exit_before_ready_reports_the_log(tmp_path):
    comp = Component(name="boom", binary=PY, args=("-c", "print('bad flag --x'); raise SystemExit(3)"),
                     ready_probe=HttpProbe(f"http://127.0.0.1:{free_port()}/"))
    with pytest.raises(ProcessNotReady, match=r"(?s)exited with code 3.*bad flag --x"), \
            ManagedProcess(comp, tmp_path, ready_timeout_s=10):
        pass


def test_not_ready_before_deadline_is_stopped(tmp_path):
    comp = Component(name="slow", binary=PY, args=("-c", "import time; time.sleep(60)"),
                     ready_probe=HttpProbe(f"http://127.0.0.1:{free_port()}/"))
    proc = ManagedProcess(comp, tmp_path, ready_timeout_s=0.5)
    with pytest.raises(ProcessNotReady, match="not ready within"):
        proc.__enter__()
    assert proc._popen is not None and proc._popen.poll() is not None


def test_detached_process_stopped_through_pid_file(tmp_path):
    port = free_port()
    proc = ManagedProcess(_server(port), tmp_path, ready_timeout_s=20).start().wait_ready()
    pid = proc.pid
    pid_file = tmp_path / "srv.json"
    popen = proc._popen
    proc.detach(pid_file)
    assert json.loads(pid_file.read_text())["pid"] == pid
    assert stop_pid_file(pid_file) is True
    popen.wait(timeout=5)
    assert not pid_file.exists()
    assert not process_alive(pid)


def test_stale_pid_file_never_signals_a_stranger(tmp_path):
    pid_file = tmp_path / "x.json"
    # Our own pid with another argv: must be left alone.
    pid_file.write_text(json.dumps({"pid": os.getpid(), "argv": ["/not/what/runs"]}))
    assert stop_pid_file(pid_file) is False
    assert process_alive(os.getpid())
