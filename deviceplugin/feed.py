"""The emulator as chip source: re-list over REST, then follow the SSE event stream into a NodeState.

On every (re)connect the feed re-lists the node, so no health outlives an emulator restart, and resumes
the stream from the last sequence number it applied (or from the emulator's current one when the
emulator's log is younger than ours, i.e. its state was reset). While the emulator is unreachable for
longer than `stale_after_s`, every chip is reported Unhealthy.
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx

from .model import Chip, Node
from .state import NodeState

__all__ = ["EmulatorFeed", "http_client"]

log = logging.getLogger(__name__)


def http_client(base_url: str, token: str | None = None, timeout: float = 10.0) -> httpx.Client:
    """An httpx client for `http://host:port` or `unix:///path.sock` (NPU_EMU_URL forms)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    if base_url.startswith("unix://"):
        transport = httpx.HTTPTransport(uds=base_url.removeprefix("unix://"))
        return httpx.Client(base_url="http://npu-emu", headers=headers, timeout=timeout, transport=transport)
    return httpx.Client(base_url=base_url.rstrip("/"), headers=headers, timeout=timeout)


def iter_sse(response: httpx.Response) -> Iterator[dict[str, Any]]:
    """Parsed `data:` payloads of a server-sent event stream."""
    data: list[str] = []
    for line in response.iter_lines():
        if not line:
            if data:
                yield json.loads("\n".join(data))
                data = []
        elif line.startswith("data:"):
            data.append(line[5:].lstrip(" "))


class EmulatorFeed:
    """Keeps `states[node]` current for each followed node. One thread; `run(stop)` blocks."""

    def __init__(
        self,
        base_url: str,
        states: dict[str, NodeState],
        *,
        token: str | None = None,
        stale_after_s: float = 1.0,
        on_reconnect: Callable[[], None] | None = None,
        on_event: Callable[[dict[str, Any]], None] | None = None,
        on_relist: Callable[[], None] | None = None,
    ) -> None:
        self.base_url = base_url
        self.states = states
        self.token = token
        self.stale_after_s = stale_after_s
        self.on_reconnect = on_reconnect
        self.on_event = on_event
        self.on_relist = on_relist
        self.last_seq: int | None = None
        self.connected = threading.Event()
        self.connections = 0
        self._client: httpx.Client | None = None
        self._response: httpx.Response | None = None

    def run(self, stop: threading.Event) -> None:
        lost_at: float | None = None
        backoff = 0.05
        while not stop.is_set():
            try:
                self._client = http_client(self.base_url, self.token)
                self._session(stop)
                backoff = 0.05
            except (httpx.HTTPError, ValueError, KeyError) as exc:
                if not stop.is_set():
                    log.info("emulator stream lost: %s", exc)
            finally:
                self.connected.clear()
                if self._client is not None:
                    self._client.close()
            if stop.is_set():
                break
            lost_at = lost_at or time.monotonic()
            while not stop.is_set() and not self._reachable():
                if time.monotonic() - lost_at >= self.stale_after_s:
                    for state in self.states.values():
                        state.set_stale()
                stop.wait(backoff)
                backoff = min(backoff * 2, 1.0)
            lost_at = None

    def stop(self) -> None:
        """Interrupt a blocked stream read (call after setting the stop event)."""
        response = self._response
        if response is None:
            return
        stream = response.extensions.get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def _reachable(self) -> bool:
        try:
            with http_client(self.base_url, self.token, timeout=1.0) as client:
                return client.get("/healthz").status_code == 200
        except httpx.HTTPError:
            return False

    def _session(self, stop: threading.Event) -> None:
        client = self._client
        assert client is not None
        health = client.get("/healthz")
        health.raise_for_status()
        server_seq = int(health.json().get("last_seq", 0))
        since = self.last_seq if self.last_seq is not None and self.last_seq <= server_seq else server_seq
        params: dict[str, Any] = {"since": since}
        if len(self.states) == 1:
            params["node"] = next(iter(self.states))
        timeout = httpx.Timeout(5.0, read=30.0)  # the service sends a keepalive every 10 s
        with client.stream("GET", "/v1/events", params=params, timeout=timeout) as response:
            if response.status_code == 410:  # our resume point is gone: start from now, after a re-list
                self.last_seq = None
                raise ValueError("event window passed; re-listing")
            response.raise_for_status()
            self._response = response
            self.last_seq = since
            self._relist(client)
            if self.on_relist is not None:
                self.on_relist()
            self.connections += 1
            self.connected.set()
            if self.connections > 1 and self.on_reconnect is not None:
                self.on_reconnect()
            try:
                for event in iter_sse(response):
                    if stop.is_set():
                        return
                    self.apply(event)
            finally:
                self._response = None

    def _relist(self, client: httpx.Client) -> None:
        for name, state in self.states.items():
            r = client.get(f"/v1/nodes/{name}")
            r.raise_for_status()
            body = r.json()
            state.replace(Node.from_json(body), [Chip.from_json(c) for c in body.get("chips", [])])

    def apply(self, event: dict[str, Any]) -> None:
        seq = event.get("seq")
        if isinstance(seq, int):
            self.last_seq = seq
        if event.get("type") == "chip.changed":
            state = self.states.get(str(event.get("node")))
            data = event.get("data") or {}
            if state is not None and "phy_id" in data:
                state.update_chip(Chip.from_json(data))
        if self.on_event is not None:
            self.on_event(event)
