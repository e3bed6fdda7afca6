"""Edit a container's OCI spec the way ascend-docker-runtime does on `create` (reference §8.1).

Stdlib only: this runs on every container start.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import oci_spec
from .constants import (
    ASCEND_DOCKER_RUNTIME,
    ASCEND_RUNTIME_OPTIONS,
    ASCEND_VISIBLE_DEVICES,
    DAVINCI,
    DRIVER_LIB_DIRS,
    HOOK_NAMES,
    LD_LIBRARY_PATH,
    MANAGER_DEVICES,
    OPTIONAL_MANAGER_DEVICES,
    VDAVINCI,
)
from .errors import RuntimeHookError
from .node_root import NodeRoot, card_lost_error
from .visible import is_empty, parse_visible_devices


@dataclass(frozen=True, slots=True)
class Hook:
    """The prestart hook entry to add: runc runs it with exactly `args` and `env`."""

    path: str
    args: tuple[str, ...]
    env: tuple[str, ...] = field(default=())

    def entry(self) -> dict[str, object]:
        doc: dict[str, object] = {"path": self.path, "args": list(self.args)}
        if self.env:
            doc["env"] = list(self.env)
        return doc


def visible_devices(spec: oci_spec.Spec, node: NodeRoot) -> list[int]:
    """Physical ids asked for by the last ASCEND_VISIBLE_DEVICES in the spec (checkVisibleDevice)."""
    value = oci_spec.env_last(oci_spec.env_list(spec), ASCEND_VISIBLE_DEVICES)
    if value is None or is_empty(value):
        return []
    try:
        return parse_visible_devices(value, node.chip_name())
    except RuntimeHookError as e:
        kind = "ascend device" if "Ascend" in value else "device"
        raise e.wrap(f"failed to parse {kind} ").wrap(
            f"failed to check {ASCEND_VISIBLE_DEVICES} parameter, err") from None


def process_spec(spec: oci_spec.Spec, node: NodeRoot, hook: Hook) -> list[int]:
    """Add the hook, devices, cgroup rules and env; return the ids injected. Raises without editing."""
    env = oci_spec.env_list(spec)
    ids = visible_devices(spec, node)
    if ids:
        devices = _devices(spec, node, ids)  # everything is checked before the spec is touched
        _add_hook(spec, hook)
        for device in devices:
            oci_spec.add_device(spec, device)
        # one ASCEND_VISIBLE_DEVICES entry, so the hook, runc and npu-smi in the container agree
        value = oci_spec.env_last(env, ASCEND_VISIBLE_DEVICES)
        oci_spec.env_set(env, ASCEND_VISIBLE_DEVICES, value or "")
        _extend_ld_library_path(env)
    env.append(f"{ASCEND_DOCKER_RUNTIME}=True")
    return ids


def _devices(spec: oci_spec.Spec, node: NodeRoot, ids: list[int]) -> list[dict[str, object]]:
    options = oci_spec.env_last(oci_spec.env_list(spec), ASCEND_RUNTIME_OPTIONS) or ""
    host_name = VDAVINCI if "VIRTUAL" in options else DAVINCI
    lost = node.lost_chips()
    devices = []
    try:
        for phy in ids:
            if host_name == DAVINCI and phy in lost:
                raise card_lost_error(phy)
            devices.append(node.device(f"/dev/{host_name}{phy}", f"/dev/{DAVINCI}{phy}"))
    except RuntimeHookError as e:
        raise e.wrap("failed to add davinci device to spec").wrap("failed to add device to env") from None
    for name in OPTIONAL_MANAGER_DEVICES:
        if node.exists(f"/dev/{name}"):
            devices.append(node.device(f"/dev/{name}"))
    for name in MANAGER_DEVICES:
        try:
            devices.append(node.device(f"/dev/{name}"))
        except RuntimeHookError as e:
            raise e.wrap(f"add {name} to spec error").wrap("failed to add Manager device to spec").wrap(
                "failed to add device to env") from None
    return devices


def _add_hook(spec: oci_spec.Spec, hook: Hook) -> None:
    hooks = oci_spec.prestart_hooks(spec)
    for existing in hooks:
        words = [str(existing.get("path", "")), *map(str, existing.get("args") or [])]
        if any(name in word for word in words for name in HOOK_NAMES):
            return
    hooks.append(hook.entry())


def _extend_ld_library_path(env: list[str]) -> None:
    current = oci_spec.env_last(env, LD_LIBRARY_PATH) or ""
    parts = [p for p in current.split(":") if p]
    parts += [d for d in DRIVER_LIB_DIRS if d not in parts]
    oci_spec.env_set(env, LD_LIBRARY_PATH, ":".join(parts))
