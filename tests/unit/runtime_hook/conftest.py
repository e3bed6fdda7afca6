from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from runtime_hook.testing import EmulatedNode, emulated_node_root


@pytest.fixture
def node(tmp_path: Path) -> EmulatedNode:
    emulated = emulated_node_root(tmp_path / "emu", lost=(5,))
    if not emulated.char_devices:
        pytest.skip("no CAP_MKNOD: the devfs has plain files, not device nodes")
    return emulated


def minimal_spec(env: list[str], rootfs: str = "rootfs") -> dict[str, Any]:
    """The parts of a `runc spec` config the wrapper and the hook read."""
    return {"ociVersion": "1.0.2-dev", "process": {"args": ["sh"], "env": ["PATH=/bin", *env], "cwd": "/"},
            "root": {"path": rootfs}, "hooks": {},
            "linux": {"resources": {"devices": [{"allow": False, "access": "rwm"}]}, "devices": []}}


@pytest.fixture
def bundle(tmp_path: Path):  # type: ignore[no-untyped-def]
    def make(env: list[str]) -> Path:
        b = tmp_path / "bundle"
        (b / "rootfs").mkdir(parents=True, exist_ok=True)
        (b / "config.json").write_text(json.dumps(minimal_spec(env)))
        return b
    return make


def git_root() -> Path:
    return Path(subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True,
                               cwd=Path(__file__).parent, check=True).stdout.strip())
