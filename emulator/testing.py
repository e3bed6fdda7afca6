"""Running the emulator service as a child process, for tests (npu-emu's own and its users').

    with EmulatorProcess(tmp_path / "state.db") as emu:
        emu.client.inject({"node": "npu-node-0", "chips": [3]}, kind="hbm-multi-bit-ecc")
        emu.kill9(); emu.start()        # a crash and a restart from the same state file
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType

import httpx

from .client import EmulatorClient


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class EmulatorProcess:
    """`npu-emu serve` in its own process group, started and stopped with readiness checked."""

    def __init__(self, state: Path, *, args: list[str] | None = None, port: int | None = None,
                 token: str | None = None, startup_timeout: float = 30.0) -> None:
        self.state = Path(state)
        self.args = list(args or [])
        self.port = port or free_port()
        self.token = token
        self.startup_timeout = startup_timeout
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = self.state.with_suffix(".log")
        self._proc: subprocess.Popen[bytes] | None = None
        self.client = EmulatorClient(self.url, token=token)

    @property
    def env(self) -> dict[str, str]:
        """Environment for npu-smi / hccn_tool / device-plugin processes pointed at this emulator."""
        env = dict(os.environ, NPU_EMU_URL=self.url)
        if self.token:
            env["NPU_EMU_TOKEN"] = self.token
        return env

    def start(self) -> EmulatorProcess:
        cmd = [sys.executable, "-m", "emulator", "serve", "--state", str(self.state), "--port", str(self.port),
               *self.args]
        if self.token:
            cmd += ["--token", self.token]
        log = self.log_path.open("ab")
        self._proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"npu-emu serve exited with {self._proc.returncode}: {self.log_tail()}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        self.stop()
        raise TimeoutError(f"npu-emu serve not ready within {self.startup_timeout}s: {self.log_tail()}")

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except FileNotFoundError:
            return ""

    def kill9(self) -> None:
        """Crash the service: SIGKILL, no clean-up of any kind."""
        if self._proc is not None:
            os.killpg(self._proc.pid, signal.SIGKILL)
            self._proc.wait()
            self._proc = None

    def stop(self, grace: float = 10.0) -> None:
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise RuntimeError("npu-emu serve did not stop on SIGTERM; killed it") from None

    def __enter__(self) -> EmulatorProcess:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.client.close()
        self.stop()
