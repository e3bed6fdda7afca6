"""Where npu-smi (and hccn_tool) get the node state from; stdlib only.

Order: env NPU_EMU_STATE_FILE, then the in-container file the devfs materialiser writes, then the REST
service (NPU_EMU_URL, http:// or unix://). ASCEND_VISIBLE_DEVICES filters the chips by physical id.
"""
# ruff: noqa: UP031  -- printf-style on purpose: the formats mirror the C source of npu-smi

from __future__ import annotations

import json
import os

# typing and collections.abc cost milliseconds at start-up: annotations only, imported for type checkers
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeAlias

    Node: TypeAlias = dict[str, Any]
    Chip: TypeAlias = dict[str, Any]

CONTAINER_STATE_FILE = "/usr/local/Ascend/driver/npu-emu/node.json"
DEFAULT_URL = "http://127.0.0.1:8910"
TIMEOUT_S = 5.0
MAX_RANGE_RIGHT = 128  # the runtime rejects range right bounds above this (reference §8.1)


class SourceError(Exception):
    """The emulated driver could not be reached or returned something unusable."""


class VisibleDevicesError(ValueError):
    """ASCEND_VISIBLE_DEVICES does not parse the way the runtime parses it."""


def load_state(env: dict[str, str] | None = None) -> tuple[Node, list[Chip]]:
    """Return (node, chips) with chips filtered by ASCEND_VISIBLE_DEVICES and sorted by phy_id."""
    env = dict(os.environ) if env is None else env
    path = env.get("NPU_EMU_STATE_FILE")
    if not path and os.path.exists(CONTAINER_STATE_FILE):
        path = CONTAINER_STATE_FILE
    doc = _read_file(path) if path else _fetch(env.get("NPU_EMU_URL") or DEFAULT_URL, env.get("NPU_EMU_NODE"))
    node, chips = _split(doc)
    visible = env.get("ASCEND_VISIBLE_DEVICES")
    if visible is not None:
        wanted = parse_visible_devices(visible)
        chips = [c for c in chips if c.get("phy_id") in wanted]
    return node, sorted(chips, key=lambda c: int(c.get("phy_id", 0)))


def parse_visible_devices(value: str) -> set[int]:
    """Parse the forms the Ascend runtime accepts: `0`, `1,3`, `0-2,4`, `Ascend910-1`, `npu-1`.

    Empty or `void` means no NPU. Mixing plain ids and names is rejected, as the runtime does.
    """
    value = value.strip()
    if value in ("", "void"):
        return set()
    ids: set[int] = set()
    kinds: set[str] = set()
    for item in (p.strip() for p in value.split(",")):
        named = _device_name_id(item)
        if named is not None:
            kinds.add("name")
            ids.add(named)
            continue
        kinds.add("id")
        if "-" in item:
            left, _, right = item.partition("-")
            if not (left.isdigit() and right.isdigit()):
                raise VisibleDevicesError(f"invalid device range: {item}")
            lo, hi = int(left), int(right)
            if lo > hi:
                # sic: the runtime's wording
                msg = f"left boarder ({lo}) should not be larger than the right one({hi})"
                raise VisibleDevicesError(msg)
            if hi > MAX_RANGE_RIGHT:
                raise VisibleDevicesError(f"invalid device range: {item}")
            ids.update(range(lo, hi + 1))
        elif item.isdigit():
            ids.add(int(item))
        else:
            raise VisibleDevicesError(f"invalid single device parameter: {item}")
    if len(kinds) > 1:
        raise VisibleDevicesError(f"mixing device ids and names is not supported: {value}")
    return ids


def _device_name_id(item: str) -> int | None:
    """`Ascend910-3` / `Ascend910B-3` / `npu-3` -> 3 (no `re`: json already costs enough to import)."""
    prefix, _, num = item.rpartition("-")
    if not num.isdigit():
        return None
    if prefix == "npu":
        return int(num)
    model = prefix[len("Ascend"):]
    if prefix.startswith("Ascend") and model[:1].isdigit() and model.isalnum() and model.isascii():
        return int(num)
    return None


def _split(doc: Any) -> tuple[Node, list[Chip]]:
    if not isinstance(doc, dict):
        raise SourceError("node state is not a JSON object")
    if "node" in doc:
        node, chips = doc["node"], doc.get("chips", [])
    else:  # the REST shape: node object plus "chips"
        node, chips = doc, doc.get("chips", [])
    if not isinstance(node, dict) or not isinstance(chips, list):
        raise SourceError("node state has no node object or no chip list")
    return node, [c for c in chips if isinstance(c, dict)]


def _read_file(path: str) -> Any:
    try:
        with open(path, "rb") as f:
            return json.loads(f.read())
    except (OSError, ValueError) as e:
        raise SourceError(f"cannot read node state {path}: {e}") from None


def _fetch(url: str, node: str | None) -> Any:
    if node:
        return _get_json(url, "/v1/nodes/" + _quote(node))
    nodes = _get_json(url, "/v1/nodes")
    if isinstance(nodes, dict):  # tolerate {"items": [...]} / {"nodes": [...]}
        nodes = nodes.get("items", nodes.get("nodes", []))
    if not nodes:
        raise SourceError(f"emulator at {url} has no nodes")
    return _get_json(url, "/v1/nodes/" + _quote(str(nodes[0]["name"])))


def _quote(s: str) -> str:
    return "".join(c if c.isalnum() or c in "-._~" else "%%%02X" % ord(c) for c in s)


def _get_json(url: str, path: str) -> Any:
    status, body = _http_get(url, path)
    if status != 200:
        raise SourceError(f"emulator at {url} answered {status} for GET {path}: {body[:200]!r}")
    try:
        return json.loads(body)
    except ValueError as e:
        raise SourceError(f"emulator at {url} returned invalid JSON for GET {path}: {e}") from None


def _http_get(url: str, path: str) -> tuple[int, bytes]:
    """A minimal HTTP/1.1 GET over TCP or a unix socket.

    Not http.client: importing it pulls in the email package, which costs more than the rest of a call.
    """
    import socket

    if url.startswith("unix://"):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        address: Any = url[len("unix://"):]
        host, prefix = "localhost", ""
    elif url.startswith("http://"):
        host, _, base = url[len("http://"):].partition("/")
        name, _, port = host.rpartition(":") if ":" in host else (host, "", "80")
        sock = socket.socket(socket.AF_INET6 if name.startswith("[") else socket.AF_INET, socket.SOCK_STREAM)
        address = (name.strip("[]"), int(port))
        prefix = "/" + base.rstrip("/") if base else ""
    else:
        raise SourceError(f"unsupported NPU_EMU_URL {url!r}: use http://host:port or unix:///path.sock")
    request = (f"GET {prefix}{path} HTTP/1.1\r\nHost: {host}\r\nAccept: application/json\r\n"
               "Connection: close\r\n\r\n").encode()
    chunks = []
    try:
        with sock:
            sock.settimeout(TIMEOUT_S)
            sock.connect(address)
            sock.sendall(request)
            while True:
                data = sock.recv(65536)
                if not data:
                    break
                chunks.append(data)
    except (OSError, ValueError) as e:
        raise SourceError(f"emulator unreachable at {url}: {e}") from None
    return _parse_response(b"".join(chunks), url)


def _parse_response(raw: bytes, url: str) -> tuple[int, bytes]:
    head, sep, body = raw.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    parts = lines[0].split(b" ", 2)
    if not sep or len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
        raise SourceError(f"emulator at {url} sent no valid HTTP response")
    headers = {}
    for line in lines[1:]:
        key, _, value = line.partition(b":")
        headers[key.strip().lower()] = value.strip()
    if headers.get(b"transfer-encoding", b"").lower() == b"chunked":
        body = _dechunk(body)
    elif b"content-length" in headers:
        body = body[: int(headers[b"content-length"])]
    return int(parts[1]), body


def _dechunk(data: bytes) -> bytes:
    out = []
    while data:
        size_line, _, rest = data.partition(b"\r\n")
        size = int(size_line.split(b";")[0].strip() or b"0", 16)
        if size == 0:
            break
        out.append(rest[:size])
        data = rest[size + 2:]
    return b"".join(out)
