from __future__ import annotations

import ast
import http.server
import json
import os
import socketserver
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from npu_nodes import capture_910b, node_910b

from emulator.npu_smi import source

PKG = Path(__file__).resolve().parents[3] / "emulator" / "npu_smi"


def _state_file(tmp_path: Path, node: dict, chips: list) -> Path:
    p = tmp_path / "state.json"
    p.write_text(json.dumps({"node": node, "chips": chips}))
    return p


def _npu_smi(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("NPU_EMU", "ASCEND_"))}
    full.update(env)
    return subprocess.run([sys.executable, "-m", "emulator.npu_smi.cli", *args], env=full,
                          capture_output=True, text=True, timeout=30, cwd=PKG.parents[1])


def test_package_imports_only_stdlib_and_itself() -> None:
    for path in PKG.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # relative: inside the package
                    continue
                names = [node.module or ""]
            else:
                continue
            for name in names:
                assert name.split(".")[0] in sys.stdlib_module_names or name == "__future__", (path, name)


def test_subprocess_from_state_file(tmp_path: Path) -> None:
    node, chips = capture_910b()
    res = _npu_smi(["info"], {"NPU_EMU_STATE_FILE": str(_state_file(tmp_path, node, chips))})
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("+" + "-" * 96 + "+\n| npu-smi 25.0.rc1.2 ")


def test_visible_devices_filter(tmp_path: Path) -> None:
    node, chips = node_910b()
    env = {"NPU_EMU_STATE_FILE": str(_state_file(tmp_path, node, chips)), "ASCEND_VISIBLE_DEVICES": "1,3"}
    res = _npu_smi(["info", "-l"], env)
    assert res.returncode == 0
    assert "Total Count                    : 2" in res.stdout
    assert [line.split(":")[1].strip() for line in res.stdout.splitlines() if "NPU ID" in line] == ["1", "3"]
    bad = _npu_smi(["info", "-t", "board", "-i", "0"], env)
    assert bad.returncode != 0 and "card id 0 is invalid" in bad.stdout


@pytest.mark.parametrize(("value", "ids"), [
    ("0", {0}), ("1,3", {1, 3}), ("0-2,4", {0, 1, 2, 4}), ("Ascend910-1", {1}),
    ("Ascend910-1,Ascend910-5", {1, 5}), ("npu-2", {2}), ("", set()), ("void", set()),
])
def test_parse_visible_devices(value: str, ids: set[int]) -> None:
    assert source.parse_visible_devices(value) == ids


@pytest.mark.parametrize("value", ["x", "3-1", "0-200", "0,npu-1", "1-a"])
def test_parse_visible_devices_rejects(value: str) -> None:
    with pytest.raises(source.VisibleDevicesError):
        source.parse_visible_devices(value)


def test_bad_option_exits_non_zero(tmp_path: Path) -> None:
    node, chips = node_910b()
    env = {"NPU_EMU_STATE_FILE": str(_state_file(tmp_path, node, chips))}
    res = _npu_smi(["info", "-t", "bogus", "-i", "0"], env)
    assert res.returncode != 0
    assert res.stdout.startswith("Error parameter of -t\nUsage: npu-smi info")
    res = _npu_smi(["info", "-x"], env)
    assert res.returncode != 0 and res.stdout.startswith("Error parameter of -x")
    ok = _npu_smi(["info", "-h"], env)
    assert ok.returncode == 0 and ok.stdout.startswith("Usage: npu-smi info")


def test_unreachable_service_is_a_driver_error() -> None:
    res = _npu_smi(["info"], {"NPU_EMU_URL": "http://127.0.0.1:9", "NPU_EMU_NODE": "n"})
    assert res.returncode != 0
    assert res.stdout == "dcmi module initialize failed. ret is -8005\n"
    assert "emulator unreachable" in res.stderr


class _Handler(http.server.BaseHTTPRequestHandler):
    docs: dict[str, Any] = {}

    def do_GET(self) -> None:
        body = self.docs.get(self.path)
        if body is None:
            self.send_response(404)
            self.end_headers()
            return
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass

    def address_string(self) -> str:
        return "unix"


def _docs() -> dict[str, Any]:
    node, chips = node_910b("npu-node-7")
    summary = dict(node)
    return {"/v1/nodes": [summary], "/v1/nodes/npu-node-7": dict(node, chips=chips)}


@pytest.fixture
def tcp_emulator() -> Iterator[str]:
    _Handler.docs = _docs()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


class _UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


@pytest.fixture
def unix_emulator(tmp_path: Path) -> Iterator[str]:
    _Handler.docs = _docs()
    sock = tmp_path / "emu.sock"
    srv = _UnixHTTPServer(str(sock), _Handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield "unix://" + str(sock)
    srv.shutdown()
    srv.server_close()


def test_rest_named_node(tcp_emulator: str) -> None:
    node, chips = source.load_state({"NPU_EMU_URL": tcp_emulator, "NPU_EMU_NODE": "npu-node-7"})
    assert node["name"] == "npu-node-7" and len(chips) == 8


def test_rest_first_node_when_unset(tcp_emulator: str) -> None:
    node, _ = source.load_state({"NPU_EMU_URL": tcp_emulator})
    assert node["name"] == "npu-node-7"


def test_rest_unknown_node_is_an_error(tcp_emulator: str) -> None:
    with pytest.raises(source.SourceError, match="404"):
        source.load_state({"NPU_EMU_URL": tcp_emulator, "NPU_EMU_NODE": "nope"})


def test_rest_over_unix_socket(unix_emulator: str) -> None:
    res = _npu_smi(["info", "-t", "health", "-i", "2", "-c", "0"],
                   {"NPU_EMU_URL": unix_emulator, "NPU_EMU_NODE": "npu-node-7"})
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.startswith("\tHealth Status                  : OK\n")


def test_state_file_takes_precedence_over_url(tmp_path: Path) -> None:
    node, chips = node_910b("from-file")
    env = {"NPU_EMU_STATE_FILE": str(_state_file(tmp_path, node, chips)), "NPU_EMU_URL": "http://127.0.0.1:9"}
    assert source.load_state(env)[0]["name"] == "from-file"


def test_parse_chunked_response() -> None:
    raw = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n"
           b"5\r\n{\"a\":\r\n3;x=1\r\n 1}\r\n0\r\n\r\n")
    assert source._parse_response(raw, "u") == (200, b'{"a": 1}')


def test_parse_content_length_and_garbage() -> None:
    assert source._parse_response(b"HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\nnoEXTRA", "u") == (404, b"no")
    with pytest.raises(source.SourceError, match="no valid HTTP response"):
        source._parse_response(b"garbage", "u")
