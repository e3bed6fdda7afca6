"""Small helpers over an OCI runtime spec held as a plain dict (config.json). Stdlib only."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .errors import RuntimeHookError

Spec = dict[str, Any]


def load(path: str | os.PathLike[str]) -> Spec:
    try:
        with open(path, "rb") as f:
            doc = json.load(f)
    except OSError as e:
        raise RuntimeHookError(f"cannot open oci spec file {path}: {e.strerror}") from None
    except ValueError as e:
        raise RuntimeHookError(f"failed to unmarshal oci spec file {path}: {e}") from None
    if not isinstance(doc, dict):
        raise RuntimeHookError(f"failed to unmarshal oci spec file {path}: not a JSON object")
    return doc


def save(path: str | os.PathLike[str], spec: Spec) -> None:
    """Write atomically (same directory, then rename) so runc never reads half a file."""
    target = Path(path)
    tmp = target.with_name(f".{target.name}.npu-emu.{os.getpid()}")
    tmp.write_text(json.dumps(spec, indent=1))
    os.replace(tmp, target)


def env_list(spec: Spec) -> list[str]:
    process = spec.get("process")
    if not isinstance(process, dict):
        raise RuntimeHookError("empty process info")
    env = process.setdefault("env", [])
    if not isinstance(env, list):
        raise RuntimeHookError("invalid process env in OCI spec")
    return env


def env_last(env: list[str], key: str) -> str | None:
    """The value of the last `key=` entry (what the runtime uses), or None."""
    for entry in reversed(env):
        name, sep, value = entry.partition("=")
        if sep and name == key:
            return value
    return None


def env_set(env: list[str], key: str, value: str) -> None:
    """Drop every `key=` entry and append one, so every reader sees the same value."""
    env[:] = [e for e in env if e.partition("=")[0] != key]
    env.append(f"{key}={value}")


def add_device(spec: Spec, device: dict[str, Any]) -> None:
    """Add a LinuxDevice and its `rwm` cgroup rule (addDeviceToSpec)."""
    linux = spec.setdefault("linux", {})
    devices = linux.setdefault("devices", [])
    devices[:] = [d for d in devices if d.get("path") != device["path"]]
    devices.append(device)
    rules = linux.setdefault("resources", {}).setdefault("devices", [])
    rules.append({"allow": True, "type": device["type"], "major": device["major"],
                  "minor": device["minor"], "access": "rwm"})


def prestart_hooks(spec: Spec) -> list[dict[str, Any]]:
    hooks = spec.setdefault("hooks", {})
    result: list[dict[str, Any]] = hooks.setdefault("prestart", [])
    return result


def rootfs(spec: Spec, bundle: str | os.PathLike[str]) -> Path:
    root = spec.get("root")
    if not isinstance(root, dict) or not root.get("path"):
        raise RuntimeHookError("invalid OCI spec for empty root")
    path = Path(str(root["path"]))
    return path if path.is_absolute() else Path(bundle) / path
