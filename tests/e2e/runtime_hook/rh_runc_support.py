"""Helpers for the runc tests: an image, bundles, and containers run through the npu-emu wrapper.

The container image is busybox-static plus a Python interpreter bind-mounted read-only from the host (the
emulated npu-smi is a Python launcher, `#!/usr/bin/env python3`; real Ascend images ship python3).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runtime_hook.testing import EmulatedNode

APPLETS = ("sh", "ls", "stat", "cat", "mount", "touch", "echo", "grep", "env", "sleep", "true", "sort", "tr")
TIMEOUT_S = 60


def skip_reason() -> str | None:
    if sys.platform != "linux":
        return "runc needs Linux"
    if os.geteuid() != 0:
        return "runc with device nodes and cgroup rules needs root"
    if shutil.which("runc") is None:
        return "runc is not installed (apt-get install -y runc)"
    if busybox_path() is None:
        return "busybox-static is not installed (apt-get install -y busybox-static)"
    return None


def busybox_path() -> str | None:
    for candidate in ("/bin/busybox", "/usr/bin/busybox"):
        if os.path.exists(candidate):
            out = subprocess.run(["ldd", candidate], capture_output=True, text=True)
            if "not a dynamic executable" in out.stdout + out.stderr or "statically linked" in out.stdout:
                return candidate
    return None


@dataclass(frozen=True)
class Interpreter:
    """A host Python and what it needs, bind-mounted read-only at the same paths in the container."""

    executable: str
    paths: tuple[str, ...]


def host_interpreter() -> Interpreter:
    debian = "/usr/bin/python3"
    exe = os.path.realpath(debian if os.path.exists(debian) else sys.executable)
    stdlib = subprocess.run([exe, "-S", "-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"],
                            capture_output=True, text=True, check=True).stdout.strip()
    libs = []
    for line in subprocess.run(["ldd", exe], capture_output=True, text=True, check=True).stdout.splitlines():
        words = line.split()
        path = words[2] if "=>" in words and len(words) > 2 else words[0] if words else ""
        if path.startswith("/"):
            libs.append(path)
    return Interpreter(exe, (exe, stdlib, *libs))


@dataclass
class Container:
    """One bundle, run through `python -m runtime_hook.runtime` in front of runc."""

    bundle: Path
    state_root: Path
    node: EmulatedNode
    runc: str
    cid: str = field(default_factory=lambda: "npu-emu-" + uuid.uuid4().hex[:10])

    @property
    def config_path(self) -> Path:
        return self.bundle / "config.json"

    def wrapper(self, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "NPU_EMU_DEVFS_ROOT": str(self.node.root.root), "NPU_EMU_RUNC": self.runc,
               "NPU_EMU_RUNTIME_LOG_DIR": str(self.bundle.parent / "logs")}
        env.pop("NPU_EMU_HOOK", None)
        cmd = [sys.executable, "-m", "runtime_hook.runtime", "--root", str(self.state_root), *args]
        return subprocess.run(cmd, env=env, text=True, timeout=TIMEOUT_S, **kwargs)

    def run(self) -> subprocess.CompletedProcess[str]:
        """`runc run` in the foreground; the container's output is the result's stdout."""
        return self.wrapper("run", "--bundle", str(self.bundle), self.cid, capture_output=True,
                            stdin=subprocess.DEVNULL)

    def create_start(self) -> tuple[subprocess.CompletedProcess[str], str]:
        """`runc create` then `runc start`, the way containerd drives a runtime; returns (create, output)."""
        out = self.bundle.parent / f"{self.cid}.out"
        err = self.bundle.parent / f"{self.cid}.err"
        # files, not pipes: the container keeps runc's stdio open until it exits
        with open(out, "w") as f, open(err, "w") as e:
            created = self.wrapper("create", f"--bundle={self.bundle}", self.cid, stdout=f, stderr=e,
                                   stdin=subprocess.DEVNULL)
        created.stderr = err.read_text()
        if created.returncode != 0:
            return created, ""
        started = self.wrapper("start", self.cid, capture_output=True)
        assert started.returncode == 0, started.stderr
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline and self.status() not in ("stopped", None):
            time.sleep(0.05)
        return created, out.read_text()

    def status(self) -> str | None:
        res = subprocess.run([self.runc, "--root", str(self.state_root), "state", self.cid],
                             capture_output=True, text=True)
        return json.loads(res.stdout)["status"] if res.returncode == 0 else None

    def listed(self) -> list[str]:
        res = subprocess.run([self.runc, "--root", str(self.state_root), "list", "-q"],
                             capture_output=True, text=True, check=True)
        return res.stdout.split()

    def delete(self) -> None:
        subprocess.run([self.runc, "--root", str(self.state_root), "delete", "--force", self.cid],
                       capture_output=True)


class BundleFactory:
    def __init__(self, workdir: Path, node: EmulatedNode, runc: str, busybox: str,
                 python: Interpreter) -> None:
        self.workdir, self.node, self.runc, self.busybox, self.python = workdir, node, runc, busybox, python
        self.made: list[Container] = []

    def __call__(self, script: str, env: dict[str, str] | list[str] | None = None) -> Container:
        name = f"c{len(self.made)}"
        bundle = self.workdir / name / "bundle"
        rootfs = bundle / "rootfs"
        for d in ("bin", "usr/bin", "proc", "sys", "dev", "tmp"):
            (rootfs / d).mkdir(parents=True, exist_ok=True)
        shutil.copy2(self.busybox, rootfs / "bin/busybox")
        for applet in APPLETS:
            (rootfs / "bin" / applet).symlink_to("busybox")
        (rootfs / "usr/bin/env").symlink_to("/bin/busybox")
        if self.python.executable != "/usr/bin/python3":
            (rootfs / "usr/bin/python3").symlink_to(self.python.executable)
        subprocess.run([self.runc, "spec"], cwd=bundle, check=True)
        spec = json.loads((bundle / "config.json").read_text())
        spec["process"]["terminal"] = False
        spec["process"]["args"] = ["/bin/sh", "-c", script]
        pairs = env.items() if isinstance(env, dict) else [tuple(e.split("=", 1)) for e in env or []]
        spec["process"]["env"] += [f"{k}={v}" for k, v in pairs]
        spec["root"]["readonly"] = False
        spec["mounts"] += [{"destination": p, "type": "bind", "source": p, "options": ["rbind", "ro"]}
                           for p in self.python.paths]
        (bundle / "config.json").write_text(json.dumps(spec, indent=1))
        container = Container(bundle, self.workdir / "runc-state", self.node, self.runc)
        self.made.append(container)
        return container

    def cleanup(self) -> None:
        for c in self.made:
            c.delete()


def probe_runc(runc: str, busybox: str, workdir: Path) -> str | None:
    """Run one trivial container; return why runc cannot run containers here, or None."""
    bundle = workdir / "bundle"
    (bundle / "rootfs/bin").mkdir(parents=True)
    shutil.copy2(busybox, bundle / "rootfs/bin/busybox")
    subprocess.run([runc, "spec"], cwd=bundle, check=True)
    spec = json.loads((bundle / "config.json").read_text())
    spec["process"].update(terminal=False, args=["/bin/busybox", "true"])
    (bundle / "config.json").write_text(json.dumps(spec))
    res = subprocess.run([runc, "--root", str(workdir / "state"), "run", "--bundle", str(bundle), "probe"],
                         capture_output=True, text=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)
    return None if res.returncode == 0 else f"runc cannot start a container here: {res.stderr.strip()}"



def host_mounts_under(path: Path) -> list[str]:
    """Mount points in the test process's own namespace below `path` (nothing may leak there)."""
    prefix = str(path)
    with open("/proc/self/mountinfo") as f:
        return [line.split()[4] for line in f if line.split()[4].startswith(prefix)]
