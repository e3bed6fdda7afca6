"""Helpers for the runtime_hook unit tests (imported by name: pytest puts this directory on sys.path)."""

from __future__ import annotations

from typing import Any


def minimal_spec(env: list[str], rootfs: str = "rootfs") -> dict[str, Any]:
    """The parts of a `runc spec` config the wrapper and the hook read."""
    return {"ociVersion": "1.0.2-dev", "process": {"args": ["sh"], "env": ["PATH=/bin", *env], "cwd": "/"},
            "root": {"path": rootfs}, "hooks": {},
            "linux": {"resources": {"devices": [{"allow": False, "access": "rwm"}]}, "devices": []}}
