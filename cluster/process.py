"""Run a Component as a child process: own process group, log file, readiness against a deadline,
SIGTERM -> wait -> SIGKILL of the whole group.

A process can outlive the Python process that started it (`npu-emu cluster up` exits, the cluster
stays): `detach()` writes a pid file, and `stop_pid_file()` stops it later from another process.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

from .components import Component, HttpProbe

__all__ = [
    "ManagedProcess",
    "ProcessDidNotStop",
    "ProcessNotReady",
    "probe_once",
    "process_alive",
    "stop_pid_file",
    "stop_process_group",
    "tail",
]


class ProcessNotReady(RuntimeError):
    """The process exited or did not pass its readiness probe before the deadline."""


class ProcessDidNotStop(RuntimeError):
    """The process group survived SIGKILL."""


def tail(path: Path, lines: int = 30) -> str:
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 64 * 1024))
            text = f.read().decode(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


_INSECURE = ssl.create_default_context()
_INSECURE.check_hostname = False
_INSECURE.verify_mode = ssl.CERT_NONE


def probe_once(probe: HttpProbe, timeout_s: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(probe.url, timeout=timeout_s, context=_INSECURE) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child counts as gone.
    with contextlib.suppress(OSError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            return False
    return True


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return process_alive(pgid)


def stop_process_group(pgid: int, grace_s: float = 10.0,
                       popen: subprocess.Popen[bytes] | None = None) -> None:
    """SIGTERM the group, wait up to `grace_s`, then SIGKILL; raise ProcessDidNotStop if it survives."""

    def gone() -> bool:
        if popen is not None and popen.poll() is None:
            return False
        return not _group_alive(pgid)

    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
        if gone():
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, sig)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if gone():
                return
            time.sleep(0.05)
    if not gone():
        raise ProcessDidNotStop(f"process group {pgid} survived SIGKILL")


def _cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").decode().split("\0")
    except OSError:
        return []


def stop_pid_file(pid_file: Path, grace_s: float = 10.0) -> bool:
    """Stop the process group recorded by ManagedProcess.detach(); True if something was running.

    The recorded argv[0] must match /proc/<pid>/cmdline, so a recycled pid is never signalled.
    """
    try:
        record = json.loads(pid_file.read_text())
    except (OSError, ValueError):
        return False
    pid = int(record["pid"])
    if not process_alive(pid) or _cmdline(pid)[:1] != record["argv"][:1]:
        pid_file.unlink(missing_ok=True)
        return False
    stop_process_group(pid, grace_s)
    pid_file.unlink(missing_ok=True)
    return True


class ManagedProcess:
    """Start `component`; `with` waits for readiness and stops the process group on exit."""

    def __init__(self, component: Component, log_dir: Path, *, ready_timeout_s: float = 60.0,
                 stop_grace_s: float = 10.0) -> None:
        self.component = component
        self.log_path = log_dir / f"{component.name}.log"
        self.ready_timeout_s = ready_timeout_s
        self.stop_grace_s = stop_grace_s
        self._popen: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        if self._popen is None:
            raise RuntimeError(f"{self.component.name} is not started")
        return self._popen.pid

    def start(self) -> ManagedProcess:
        c = self.component
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, **c.env}
        with self.log_path.open("ab") as log:
            try:
                self._popen = subprocess.Popen(
                    c.argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
                    cwd=c.workdir, start_new_session=True,
                )
            except OSError as e:
                raise ProcessNotReady(f"{c.name}: cannot start {c.binary}: {e}") from e
        return self

    def wait_ready(self) -> ManagedProcess:
        c = self.component
        deadline = time.monotonic() + self.ready_timeout_s
        while True:
            code = self._popen.poll() if self._popen else None
            if code is not None:
                raise ProcessNotReady(
                    f"{c.name} exited with code {code} before becoming ready; last log lines "
                    f"({self.log_path}):\n{tail(self.log_path)}")
            if c.ready_probe is None or probe_once(c.ready_probe):
                return self
            if time.monotonic() > deadline:
                raise ProcessNotReady(
                    f"{c.name} not ready within {self.ready_timeout_s:.0f}s "
                    f"(probe {c.ready_probe.url}); last log lines ({self.log_path}):\n{tail(self.log_path)}")
            time.sleep(0.1)

    def stop(self) -> None:
        if self._popen is None:
            return
        stop_process_group(self._popen.pid, self.stop_grace_s, self._popen)
        self._popen.wait(timeout=5)

    def detach(self, pid_file: Path) -> None:
        """Leave the process running after this object is gone; record it for stop_pid_file()."""
        pid_file.parent.mkdir(parents=True, exist_ok=True)
        pid_file.write_text(json.dumps({"pid": self.pid, "argv": self.component.argv,
                                        "log": str(self.log_path)}))
        self._popen = None

    def __enter__(self) -> ManagedProcess:
        self.start()
        try:
            return self.wait_ready()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
