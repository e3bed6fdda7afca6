"""`python -m cluster.ascendjob`: help, the healthz endpoint, the rank-table file sink, the Component."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from acjob_unit_helpers import example

from cluster.ascendjob import JobView, RankTable
from cluster.ascendjob.__main__ import main
from cluster.ascendjob.component import build_ascendjob_controller
from cluster.ascendjob.healthz import serve_healthz
from cluster.ascendjob.sink import RankTableSink, ranktable_file
from cluster.control_plane import free_port


def test_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for text in ("AscendJob", "rings-config-<job>", "--ranktable-root", "--healthz-port", "docs/ascendjob.md"):
        assert text in out


def test_healthz_answers_503_until_ready() -> None:
    ready = threading.Event()
    port = free_port()
    server = serve_healthz(port, ready)
    try:
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5)
        assert err.value.code == 503
        err.value.close()
        ready.set()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as resp:
            assert resp.status == 200
    finally:
        server.shutdown()
        server.server_close()


class NoConfigMaps:
    """Kube stand-in for a sink that only writes files: the ConfigMap is neither there nor created."""

    @staticmethod
    def core_path(ns: str, plural: str, name: str = "") -> str:
        return f"/api/v1/namespaces/{ns}/{plural}/{name}"

    def get(self, path: str) -> None:
        return None


def test_file_sink_writes_and_forgets(tmp_path: Path) -> None:
    sink = RankTableSink(NoConfigMaps(), tmp_path, create_configmap=False)  # type: ignore[arg-type]
    job = JobView(example())
    table = RankTable({"status": "completed", "server_list": [], "server_count": "0", "version": "1.0"},
                      frozenset())
    sink.write(job, table)
    path = ranktable_file(tmp_path, job)
    assert path == tmp_path / "acjob.default-test-pytorch" / "hccl.json"
    assert json.loads(path.read_text())["status"] == "completed"
    assert int(path.with_name("version").read_text()) > 0
    assert oct(path.stat().st_mode & 0o777) == "0o644"
    sink.forget("acjob", "default-test-pytorch")
    assert not path.parent.exists()


def test_component(tmp_path: Path) -> None:
    c = build_ascendjob_controller(kubeconfig=tmp_path / "kc", healthz_port=1234, ranktable_root=tmp_path / "rt")
    assert c.argv[1:4] == ["-m", "cluster.ascendjob", f"--kubeconfig={tmp_path / 'kc'}"]
    assert f"--ranktable-root={tmp_path / 'rt'}" in c.argv
    assert c.ready_probe is not None and c.ready_probe.url == "http://127.0.0.1:1234/healthz"
