"""Fixtures for real containers under Debian's runc, through the npu-emu runtime wrapper."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from rh_runc_support import BundleFactory, Interpreter, busybox_path, host_interpreter, probe_runc, skip_reason

from runtime_hook.testing import EmulatedNode, emulated_node_root


@pytest.fixture(scope="session")
def runc_bin(tmp_path_factory: pytest.TempPathFactory) -> str:
    reason = skip_reason()
    runc = str(shutil.which("runc"))
    if reason is None:
        reason = probe_runc(runc, str(busybox_path()), tmp_path_factory.mktemp("runc-probe"))
    if reason:
        print(f"\nskipping runc tests: {reason}")
        pytest.skip(reason)
    return runc


@pytest.fixture(scope="session")
def interpreter() -> Interpreter:
    return host_interpreter()


@pytest.fixture
def emulated_node(tmp_path: Path, request: pytest.FixtureRequest) -> EmulatedNode:
    marker = request.node.get_closest_marker("lost_chips")
    lost = tuple(marker.args) if marker else ()
    node = emulated_node_root(tmp_path / "emulator", lost=lost)
    if not node.char_devices:
        pytest.skip("no CAP_MKNOD: the devfs has plain files, not device nodes")
    return node


@pytest.fixture
def bundle_factory(tmp_path: Path, emulated_node: EmulatedNode, runc_bin: str,
                   interpreter: Interpreter) -> Iterator[BundleFactory]:
    busybox = busybox_path()
    assert busybox is not None
    factory = BundleFactory(tmp_path / "containers", emulated_node, runc_bin, busybox, interpreter)
    yield factory
    factory.cleanup()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "lost_chips(*ids): chips the emulated node reports card-lost")
