"""The OCI prestart hook (ascend-docker-hook + ascend-docker-cli): mount the driver files read-only.

runc runs it with the container state (OCI runtime spec, "State") on stdin, after the container's
namespaces exist and before its process starts; a non-zero exit aborts the create. Stdlib only.

Run as `python -m runtime_hook.prestart`, or the `npu-emu-hook` console script.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence

from . import mount_list, oci_spec
from .constants import (
    ASCEND_ALLOW_LINK,
    ASCEND_RUNTIME_MOUNTS,
    ASCEND_RUNTIME_OPTIONS,
    ASCEND_VISIBLE_DEVICES,
    ENV_DEVFS_ROOT,
)
from .errors import RuntimeHookError
from .log import log
from .mounts import bind_read_only
from .node_root import NodeRoot
from .options import parse_allow_link, parse_mounts, parse_runtime_options

MAX_STATE_BYTES = 1 << 20


def run(state_json: bytes, environ: Mapping[str, str]) -> list[str]:
    """Do the hook's work; return the container paths mounted."""
    try:
        state = json.loads(state_json)
        bundle, pid = str(state["bundle"]), int(state["pid"])
    except (ValueError, KeyError, TypeError):
        raise RuntimeHookError("failed to parse the container's state") from None
    try:
        spec = oci_spec.load(os.path.join(bundle, "config.json"))
        env = oci_spec.env_list(spec)
        rootfs = oci_spec.rootfs(spec, bundle).absolute()
    except RuntimeHookError as e:
        raise e.wrap("failed to get container config") from None
    if not oci_spec.env_last(env, ASCEND_VISIBLE_DEVICES):
        return []
    node = NodeRoot(environ.get(ENV_DEVFS_ROOT) or "/")
    names = parse_mounts(oci_spec.env_last(env, ASCEND_RUNTIME_MOUNTS) or "")
    try:
        files, dirs = mount_list.read_lists(node, names)
    except RuntimeHookError as e:
        raise e.wrap("failed to read configuration from config directory") from None
    try:
        options = parse_runtime_options(oci_spec.env_last(env, ASCEND_RUNTIME_OPTIONS) or "")
    except RuntimeHookError as e:
        raise e.wrap("failed to parse runtime options") from None
    try:
        allow_link = parse_allow_link(oci_spec.env_last(env, ASCEND_ALLOW_LINK) or "")
    except RuntimeHookError as e:
        raise e.wrap("failed to parse soft link mode") from None
    mount_list.check(node, [*files, *dirs], allow_link)
    if "NODRV" in options:
        return []
    mounted = bind_read_only(pid, rootfs, mount_list.plan(node, files, dirs))
    log("hook", f"container pid {pid} rootfs {rootfs}: mounted {', '.join(mounted) or 'nothing'}", environ)
    return mounted


def main(argv: Sequence[str] | None = None) -> int:
    del argv  # runc passes the hook's args; none change what it does
    try:
        run(sys.stdin.buffer.read(MAX_STATE_BYTES), os.environ)
    except RuntimeHookError as e:
        message = f"npu-emu-hook: {e}"
        log("hook", message, os.environ)
        print(message, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
