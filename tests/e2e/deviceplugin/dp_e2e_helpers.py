"""Real processes for the device-plugin e2e tests: the emulator service and the plugin's entry point."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Proc:
    """A child process in its own session; stop() sends SIGTERM, then SIGKILL, and raises if it survives."""

    def __init__(self, args: Sequence[str], log: Path) -> None:
        self.args = list(args)
        self.log = log
        self.popen: subprocess.Popen[bytes] | None = None

    def start(self) -> Proc:
        with open(self.log, "ab") as out:
            self.popen = subprocess.Popen(
                self.args,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        return self

    def stop(self, timeout: float = 10.0) -> None:
        p, self.popen = self.popen, None
        if p is None or p.poll() is not None:
            return
        os.killpg(p.pid, signal.SIGTERM)
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(5)
            raise RuntimeError(f"{self.args[:4]} didn't stop on SIGTERM; log: {self.log.read_text()[-2000:]}") from None

    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None


class Emulator(Proc):
    def __init__(self, workdir: Path, *extra: str, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.state = workdir / "state.db"
        self.extra = list(extra)
        super().__init__(self._args(), workdir / "emulator.log")

    def _args(self, *more: str) -> list[str]:
        return [
            sys.executable,
            "-m",
            "emulator",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--state",
            str(self.state),
            *self.extra,
            *more,
        ]

    def start(self, *more: str) -> Emulator:  # type: ignore[override]
        self.args = self._args(*more)
        super().start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return self
            if not self.alive():
                raise RuntimeError(f"emulator exited: {self.log.read_text()[-3000:]}")
            time.sleep(0.05)
        raise TimeoutError(f"emulator not ready: {self.log.read_text()[-3000:]}")

    def inject(self, node: str, chips: list[int], code: str = "80E01801") -> str:
        r = httpx.post(f"{self.url}/v1/faults", json={"selector": {"node": node, "chips": chips}, "code": code})
        r.raise_for_status()
        return str(r.json()["id"])

    def clear(self, fault_id: str) -> None:
        httpx.delete(f"{self.url}/v1/faults/{fault_id}").raise_for_status()


@contextlib.contextmanager
def running(proc: Proc) -> Iterator[Proc]:
    proc.start()
    try:
        yield proc
    finally:
        proc.stop()
