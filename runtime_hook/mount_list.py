"""Which driver files go into a container: the runtime's `<name>.list` files, read from the emulated node.

Stdlib only. Follows the hook (reading, skipping missing paths) and ascend-docker-cli (white list, soft
link check) of reference §8.2. Sources are the emulator's copies under the node root; targets are the
real paths.
"""

from __future__ import annotations

import os
import stat

from .constants import (
    CONFIG_DIR,
    EMULATOR_MOUNTS,
    EXTRA_MOUNTS,
    LIST_SUFFIX,
    MAX_LIST_ENTRIES,
    MOUNT_WHITELIST,
    NPU_SMI_NAMES,
)
from .errors import RuntimeHookError
from .mounts import Mount
from .node_root import NodeRoot


def read_lists(node: NodeRoot, names: list[str]) -> tuple[list[str], list[str]]:
    """(files, dirs): the existing entries of every named list, then the extra UB/topology paths."""
    config_dir = node.host(CONFIG_DIR)
    try:
        st = os.stat(config_dir)
    except OSError as e:
        raise RuntimeHookError(f"cannot stat configuration directory {CONFIG_DIR} : {e.strerror}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise RuntimeHookError(f"{CONFIG_DIR} should be a dir for docker runtime, but now it is not")
    files: list[str] = []
    dirs: list[str] = []
    for name in names:
        try:
            for path in _read_list(node, name):
                _classify(node, path, files, dirs)
        except RuntimeHookError as e:
            raise e.wrap(f"failed to process config {name}") from None
    for path in EXTRA_MOUNTS:
        _classify(node, path, files, dirs)
    return files, dirs


def _read_list(node: NodeRoot, name: str) -> list[str]:
    real = f"{CONFIG_DIR}/{name}{LIST_SUFFIX}"
    path = node.host(real)
    try:
        st = os.stat(path)
    except OSError as e:
        raise RuntimeHookError(f"cannot stat base configuration file {real} : {e.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise RuntimeHookError("base configuration file damaged because is not a regular file")
    lines = path.read_text(errors="replace").splitlines()
    if len(lines) > MAX_LIST_ENTRIES:
        raise RuntimeHookError("mount list too long")
    return [os.path.normpath(line.strip()) for line in lines if line.strip().startswith("/")]


def _classify(node: NodeRoot, path: str, files: list[str], dirs: list[str]) -> None:
    try:
        st = os.stat(node.host(path))
    except OSError:
        return  # missing paths are skipped silently, as the hook does
    if stat.S_ISREG(st.st_mode) and path not in files:
        files.append(path)
    elif stat.S_ISDIR(st.st_mode) and path not in dirs:
        dirs.append(path)


def check(node: NodeRoot, paths: list[str], allow_link: bool) -> None:
    """ascend-docker-cli's argument checks: white-listed path, and no soft link unless allowed."""
    real_root = os.path.realpath(node.root)
    for path in paths:
        if path not in MOUNT_WHITELIST:
            raise RuntimeHookError(f"failed to check whiteList value: {path}.")
        expected = os.path.join(real_root, path.lstrip("/"))
        if not allow_link and os.path.realpath(node.host(path)) != expected:
            raise RuntimeHookError(f"failed to check files: {path}: filePath has a soft link!")


def plan(node: NodeRoot, files: list[str], dirs: list[str]) -> list[Mount]:
    """Files first, then directories (the cli's order), then what the emulated npu-smi needs."""
    mounts = [Mount(node.host(p), p) for p in [*files, *dirs]]
    if any(p in NPU_SMI_NAMES for p in files):
        mounts += [Mount(node.host(p), p) for p in EMULATOR_MOUNTS
                   if p not in dirs and node.host(p).is_dir()]
    return mounts
