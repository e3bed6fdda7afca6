"""A typed client of the emulator's REST API, for tests, the CLI and the other npu-emu parts."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import yaml

DEFAULT_URL = "http://127.0.0.1:8910"


class EmulatorError(Exception):
    """The emulator refused a request; `status` is the HTTP status, `detail` its message."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(f"{status}: {detail}")
        self.status = status
        self.detail = detail


def _transport_for(base_url: str) -> tuple[str, httpx.HTTPTransport | None]:
    if base_url.startswith("unix://"):
        return "http://npu-emu", httpx.HTTPTransport(uds=base_url.removeprefix("unix://"))
    return base_url.rstrip("/"), None


class EmulatorClient:
    def __init__(self, base_url: str = DEFAULT_URL, token: str | None = None, timeout: float = 30.0) -> None:
        url, transport = _transport_for(base_url)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.base_url = base_url
        self._http = httpx.Client(base_url=url, headers=headers, timeout=timeout, transport=transport)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> EmulatorClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self._http.request(method, path, **kwargs)
        if response.status_code >= 400:
            try:
                detail = response.json().get("detail", response.text)
            except ValueError:
                detail = response.text
            raise EmulatorError(response.status_code, str(detail))
        return response.json() if response.content else None

    # state
    def health(self) -> dict[str, Any]:
        return self._call("GET", "/healthz")  # type: ignore[no-any-return]

    def nodes(self) -> list[dict[str, Any]]:
        return self._call("GET", "/v1/nodes")  # type: ignore[no-any-return]

    def node(self, name: str) -> dict[str, Any]:
        return self._call("GET", f"/v1/nodes/{name}")  # type: ignore[no-any-return]

    def chips(self, node: str) -> list[dict[str, Any]]:
        return self._call("GET", f"/v1/nodes/{node}/chips")  # type: ignore[no-any-return]

    def chip(self, node: str, phy_id: int) -> dict[str, Any]:
        return self._call("GET", f"/v1/nodes/{node}/chips/{phy_id}")  # type: ignore[no-any-return]

    def set_telemetry(self, node: str, phy_id: int, **fields: Any) -> dict[str, Any]:
        return self._call("PATCH", f"/v1/nodes/{node}/chips/{phy_id}/telemetry", json=fields)  # type: ignore[no-any-return]

    def clear_separation(self, node: str, phy_id: int) -> dict[str, Any]:
        return self._call("DELETE", f"/v1/nodes/{node}/chips/{phy_id}/separation")  # type: ignore[no-any-return]

    # faults
    def inject(self, selector: dict[str, Any], *, kind: str | None = None, code: str | None = None,
               level: str | None = None, start_after_s: float = 0, duration_s: float | None = None,
               repeat: dict[str, Any] | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"selector": selector, "start_after_s": start_after_s}
        for key, value in (("kind", kind), ("code", code), ("level", level), ("duration_s", duration_s),
                           ("repeat", repeat)):
            if value is not None:
                body[key] = value
        return self._call("POST", "/v1/faults", json=body)  # type: ignore[no-any-return]

    def faults(self, state: str | None = None) -> list[dict[str, Any]]:
        return self._call("GET", "/v1/faults", params={"state": state} if state else None)  # type: ignore[no-any-return]

    def fault(self, fault_id: str) -> dict[str, Any]:
        return self._call("GET", f"/v1/faults/{fault_id}")  # type: ignore[no-any-return]

    def clear(self, fault_id: str) -> dict[str, Any]:
        return self._call("DELETE", f"/v1/faults/{fault_id}")  # type: ignore[no-any-return]

    def replay(self, scenario: str | Path | dict[str, Any]) -> dict[str, Any]:
        """Replay a scenario: a library name, a YAML file path, or a parsed scenario."""
        if isinstance(scenario, dict):
            return self._call("POST", "/v1/scenarios", json=scenario)  # type: ignore[no-any-return]
        path = Path(scenario)
        if path.suffix in (".yaml", ".yml", ".json") and path.exists():
            body = yaml.safe_load(path.read_text())
            return self._call("POST", "/v1/scenarios", json=body)  # type: ignore[no-any-return]
        return self._call("POST", f"/v1/scenarios/{scenario}")  # type: ignore[no-any-return]

    # clock
    def clock(self) -> dict[str, Any]:
        return self._call("GET", "/v1/clock")  # type: ignore[no-any-return]

    def set_clock(self, *, speed: float | None = None, advance_s: float | None = None) -> dict[str, Any]:
        body = {k: v for k, v in (("speed", speed), ("advance_s", advance_s)) if v is not None}
        return self._call("PUT", "/v1/clock", json=body)  # type: ignore[no-any-return]

    def metrics(self) -> str:
        return self._http.get("/metrics").text

    # events
    def events(self, since: int | None = None, node: str | None = None,
               timeout: float | None = None) -> Iterator[dict[str, Any]]:
        """Follow the event stream; yields parsed events. Stops after `timeout` seconds without data."""
        params: dict[str, Any] = {}
        if since is not None:
            params["since"] = since
        if node is not None:
            params["node"] = node
        with self._http.stream("GET", "/v1/events", params=params,
                               timeout=httpx.Timeout(self._http.timeout.connect, read=timeout)) as response:
            if response.status_code >= 400:
                response.read()
                raise EmulatorError(response.status_code, response.json().get("detail", response.text))
            for line in response.iter_lines():
                if line.startswith("data: "):
                    yield json.loads(line[6:])

    def wait_for_chip(self, node: str, phy_id: int, predicate: Callable[[dict[str, Any]], bool],
                      timeout: float = 10.0, interval: float = 0.05) -> dict[str, Any]:
        """Poll a chip until `predicate(chip)` holds; raise TimeoutError with its last state otherwise."""
        deadline = time.monotonic() + timeout
        while True:
            chip = self.chip(node, phy_id)
            if predicate(chip):
                return chip
            if time.monotonic() > deadline:
                raise TimeoutError(f"chip {phy_id} of {node} did not reach the expected state: {chip}")
            time.sleep(interval)
