"""`npu-emu-cdi`: a CDI spec (kind `huawei.com/npu`) for one emulated node, from the emulator's inventory.

A CDI-aware runtime (containerd >= 1.7, CRI-O, podman) then injects the same devices the wrapper does,
without the wrapper: one CDI device per present chip, named by its physical id, plus `all`.

    python -m runtime_hook.cdi --devfs-root /var/lib/npu-emu/node-0 --output /etc/cdi/huawei-npu.yaml

The chip list comes from the emulator (NPU_EMU_URL / --url and NPU_EMU_NODE / --node) or a node state
file (--state-file, default: the one the emulator keeps in the devfs driver tree). Device numbers are
read from the devfs device nodes; a chip reported lost (`present: false`) or without a node is left out.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .constants import ASCEND_VISIBLE_DEVICES, CONFIG_DIR, MANAGER_DEVICES
from .errors import RuntimeHookError
from .mount_list import plan, read_lists
from .node_root import NODE_STATE, NodeRoot

CDI_VERSION = "0.5.0"  # the lowest version with deviceNodes.hostPath and names starting with a digit
KIND = "huawei.com/npu"
ALL = "all"
MOUNT_OPTIONS = ["ro", "nosuid", "nodev", "bind"]

_LABEL = r"[a-z0-9]([a-z0-9-]*[a-z0-9])?"
_KIND_RE = re.compile(rf"^{_LABEL}(\.{_LABEL})+/[a-zA-Z0-9]([a-zA-Z0-9_.-]*[a-zA-Z0-9])?$")
_NAME_RE = re.compile(r"^[a-zA-Z0-9]([a-zA-Z0-9_.:-]*[a-zA-Z0-9])?$")
_SEMVER_RE = re.compile(r"^\d+\.\d+\.\d+$")


def _device_node(node: NodeRoot, path: str) -> dict[str, Any]:
    dev = node.device(path)
    return {"path": path, "hostPath": str(node.host(path)), "type": dev["type"],
            "major": dev["major"], "minor": dev["minor"], "permissions": "rwm"}


def build_spec(node: NodeRoot, chips: list[dict[str, Any]]) -> dict[str, Any]:
    """The CDI spec for the present chips that have a device node under the devfs root."""
    devices: list[dict[str, Any]] = []
    ids: list[int] = []
    nodes: list[dict[str, Any]] = []
    for chip in sorted(chips, key=lambda c: int(c["phy_id"])):
        phy = int(chip["phy_id"])
        if chip.get("present") is False or not node.exists(f"/dev/davinci{phy}"):
            continue
        dev = _device_node(node, f"/dev/davinci{phy}")
        ids.append(phy)
        nodes.append(dev)
        devices.append({"name": str(phy), "containerEdits": {"deviceNodes": [dev]}})
    if not devices:
        raise RuntimeHookError(f"no present chip has a device node under {node.root}/dev")
    devices.append({"name": ALL, "containerEdits": {
        "env": [f"{ASCEND_VISIBLE_DEVICES}={','.join(map(str, ids))}"], "deviceNodes": nodes}})
    common: dict[str, Any] = {
        "env": ["ASCEND_DOCKER_RUNTIME=True"],
        "deviceNodes": [_device_node(node, f"/dev/{name}") for name in MANAGER_DEVICES
                        if node.exists(f"/dev/{name}")],
    }
    mounts = _mounts(node)
    if mounts:
        common["mounts"] = mounts
    return {"cdiVersion": CDI_VERSION, "kind": KIND, "devices": devices, "containerEdits": common}


def _mounts(node: NodeRoot) -> list[dict[str, Any]]:
    """base.list entries (and npu-smi's state directory) as read-only bind mounts."""
    if not node.exists(CONFIG_DIR):
        return []
    files, dirs = read_lists(node, ["base"])
    return [{"hostPath": str(m.source), "containerPath": m.target, "options": list(MOUNT_OPTIONS)}
            for m in plan(node, files, dirs)]


def validate(spec: dict[str, Any]) -> None:
    """Check the rules of the CDI spec that a runtime enforces when it loads the file."""
    allowed_top = {"cdiVersion", "kind", "annotations", "devices", "containerEdits"}
    if set(spec) - allowed_top:
        raise RuntimeHookError(f"unknown CDI fields {sorted(set(spec) - allowed_top)}")
    if not _SEMVER_RE.match(str(spec.get("cdiVersion", ""))):
        raise RuntimeHookError(f"invalid cdiVersion {spec.get('cdiVersion')!r}")
    if not _KIND_RE.match(str(spec.get("kind", ""))):
        raise RuntimeHookError(f"invalid kind {spec.get('kind')!r}")
    devices = spec.get("devices")
    if not isinstance(devices, list) or not devices:
        raise RuntimeHookError("a CDI spec needs at least one device")
    seen: set[str] = set()
    for device in devices:
        name = str(device.get("name", ""))
        if not _NAME_RE.match(name) or name in seen:
            raise RuntimeHookError(f"invalid or duplicate device name {name!r}")
        seen.add(name)
        if set(device) - {"name", "annotations", "containerEdits"}:
            raise RuntimeHookError(f"unknown fields in device {name}")
        _validate_edits(device.get("containerEdits"), f"device {name}", required=True)
    _validate_edits(spec.get("containerEdits"), "spec", required=False)


def _validate_edits(edits: Any, where: str, required: bool) -> None:
    if edits is None and not required:
        return
    if not isinstance(edits, dict) or (required and not edits):
        raise RuntimeHookError(f"{where}: containerEdits missing or empty")
    allowed = {"env", "deviceNodes", "hooks", "mounts", "intelRdt", "additionalGids"}
    if set(edits) - allowed:
        raise RuntimeHookError(f"{where}: unknown containerEdits fields {sorted(set(edits) - allowed)}")
    for env in edits.get("env", []):
        if "=" not in env:
            raise RuntimeHookError(f"{where}: invalid env {env!r}")
    for dev in edits.get("deviceNodes", []):
        if not str(dev.get("path", "")).startswith("/") or dev.get("type", "c") not in ("b", "c", "u", "p"):
            raise RuntimeHookError(f"{where}: invalid device node {dev!r}")
        if not set(str(dev.get("permissions", "rwm"))) <= set("rwm"):
            raise RuntimeHookError(f"{where}: invalid device permissions {dev!r}")
    for mount in edits.get("mounts", []):
        if not str(mount.get("containerPath", "")).startswith("/") or not mount.get("hostPath"):
            raise RuntimeHookError(f"{where}: invalid mount {mount!r}")


def qualified_names(spec: dict[str, Any]) -> list[str]:
    """`huawei.com/npu=0`, ... : what a device plugin returns in CDIDevices (or the CDI annotation)."""
    return [f"{spec['kind']}={d['name']}" for d in spec["devices"]]


def load_chips(node: NodeRoot, state_file: str | None, url: str | None,
               node_name: str | None) -> list[dict[str, Any]]:
    from emulator.npu_smi import source  # stdlib-only client shared with npu-smi

    env: dict[str, str] = {}
    if url:
        env["NPU_EMU_URL"] = url
        if node_name:
            env["NPU_EMU_NODE"] = node_name
    else:
        env["NPU_EMU_STATE_FILE"] = state_file or str(node.host(NODE_STATE))
    try:
        _, chips = source.load_state(env)
    except source.SourceError as e:
        raise RuntimeHookError(str(e)) from None
    return chips


def write(spec: dict[str, Any], output: str) -> None:
    import yaml

    text = (json.dumps(spec, indent=2) + "\n" if output.endswith(".json")
            else yaml.safe_dump(spec, sort_keys=False))
    if output == "-":
        sys.stdout.write(text)
        return
    path = Path(output)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="npu-emu-cdi", description=__doc__.split("\n\n")[0])
    parser.add_argument("--devfs-root", default=os.environ.get("NPU_EMU_DEVFS_ROOT", "/"),
                        help="the emulated node's root (env NPU_EMU_DEVFS_ROOT; default /)")
    parser.add_argument("--output", default="/etc/cdi/huawei-npu.yaml",
                        help="where to write the spec (.yaml or .json; - for stdout)")
    parser.add_argument("--state-file", help=f"node state JSON (default <devfs-root>{NODE_STATE})")
    parser.add_argument("--url", default=os.environ.get("NPU_EMU_URL"), help="emulator URL (env NPU_EMU_URL)")
    parser.add_argument("--node", default=os.environ.get("NPU_EMU_NODE"), help="node name (env NPU_EMU_NODE)")
    args = parser.parse_args(argv)
    node = NodeRoot(args.devfs_root)
    try:
        spec = build_spec(node, load_chips(node, args.state_file, args.url, args.node))
        validate(spec)
        write(spec, args.output)
    except (RuntimeHookError, OSError) as e:
        print(f"npu-emu-cdi: {e}", file=sys.stderr)
        return 1
    if args.output != "-":
        print(f"wrote {args.output}: {', '.join(qualified_names(spec))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
