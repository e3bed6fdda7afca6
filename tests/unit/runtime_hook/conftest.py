from __future__ import annotations

import json
from pathlib import Path

import pytest
from rh_unit_support import minimal_spec

from runtime_hook.testing import EmulatedNode, emulated_node_root


@pytest.fixture
def node(tmp_path: Path) -> EmulatedNode:
    emulated = emulated_node_root(tmp_path / "emu", lost=(5,))
    if not emulated.char_devices:
        pytest.skip("no CAP_MKNOD: the devfs has plain files, not device nodes")
    return emulated


@pytest.fixture
def bundle(tmp_path: Path):  # type: ignore[no-untyped-def]
    def make(env: list[str]) -> Path:
        b = tmp_path / "bundle"
        (b / "rootfs").mkdir(parents=True, exist_ok=True)
        (b / "config.json").write_text(json.dumps(minimal_spec(env)))
        return b
    return make
