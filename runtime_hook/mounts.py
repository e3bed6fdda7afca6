"""Read-only bind mounts inside a container's mount namespace (ascend-docker-cli's job). Stdlib only.

The prestart hook runs in the runtime's namespaces while the container's init waits before pivot_root,
so its rootfs is still reachable at the host path. We enter the init's mount namespace with setns(2),
bind each source onto `<rootfs><target>`, remount it `ro,nosuid`, and go back. The mounts live only in
the container's namespace: when the container dies (or runc aborts the create) they are gone.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .errors import RuntimeHookError

CLONE_NEWNS = 0x00020000
MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_REMOUNT = 0x20
MS_BIND = 0x1000


@dataclass(frozen=True, slots=True)
class Mount:
    """Bind `source` (a host path) read-only onto `target` (an absolute path inside the container)."""

    source: Path
    target: str

    @property
    def is_dir(self) -> bool:
        return self.source.is_dir()


def _libc() -> ctypes.CDLL:
    # the interpreter is linked against libc: no ctypes.util.find_library (it forks ldconfig, ~100 ms)
    return ctypes.CDLL(None, use_errno=True)


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise RuntimeHookError(f"{what}: {os.strerror(err)}")


def _setns(libc: ctypes.CDLL, fd: int, what: str) -> None:
    _check(libc.setns(fd, CLONE_NEWNS), what)


def _bind_ro(libc: ctypes.CDLL, source: Path, dest: Path) -> None:
    src = os.fsencode(source)
    dst = os.fsencode(dest)
    _check(libc.mount(src, dst, None, MS_BIND, None), f"failed to mount src: {source}")
    _check(libc.mount(None, dst, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID, None),
           f"failed to re-mount. dst: {dest}")


def mount_point(rootfs: Path, target: str, is_dir: bool) -> Path:
    """Create `<rootfs><target>` (directory, or empty file), refusing paths that leave the rootfs."""
    dest = rootfs / target.lstrip("/")
    real_root = os.path.realpath(rootfs)
    parent = dest if is_dir else dest.parent
    parent.mkdir(parents=True, exist_ok=True)
    real_parent = os.path.realpath(parent)
    if os.path.commonpath([real_root, real_parent]) != real_root:
        raise RuntimeHookError(f"mount target {target} leaves the container rootfs")
    dest = Path(real_parent) if is_dir else Path(real_parent) / dest.name
    if not is_dir and not dest.exists():
        dest.touch(mode=0o644)
    return dest


def bind_read_only(pid: int, rootfs: Path, mounts: Iterable[Mount]) -> list[str]:
    """Mount each entry into the mount namespace of `pid`; return the container paths mounted."""
    mounts = list(mounts)
    if not mounts:
        return []
    libc = _libc()
    try:
        target_ns = os.open(f"/proc/{pid}/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
    except OSError as e:
        raise RuntimeHookError(f"failed to get container mnt ns path: pid({pid}): {e.strerror}") from None
    origin_ns = os.open("/proc/self/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
    done: list[str] = []
    try:
        _setns(libc, target_ns, f"failed to set to container ns: /proc/{pid}/ns/mnt")
        try:
            for m in mounts:
                dest = mount_point(rootfs, m.target, m.is_dir)
                _bind_ro(libc, m.source, dest)
                done.append(m.target)
        finally:
            _setns(libc, origin_ns, "failed to set ns back")
    finally:
        os.close(target_ns)
        os.close(origin_ns)
    return done
