from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from emulator.api import create_app
from emulator.engine import Engine
from emulator.profiles import load_cluster_spec, simple_cluster_spec
from emulator.service import EmulatorOptions, open_engine


@pytest.fixture
def state_path(tmp_path: Path) -> Path:
    return tmp_path / "state.db"


@pytest.fixture
def engine(state_path: Path) -> Iterator[Engine]:
    eng = open_engine(EmulatorOptions(state_path=state_path, cluster=load_cluster_spec("default")))
    yield eng
    eng.store.close()


@pytest.fixture
def mixed_engine(tmp_path: Path) -> Iterator[Engine]:
    eng = open_engine(EmulatorOptions(state_path=tmp_path / "mixed.db", cluster=load_cluster_spec("mixed-small")))
    yield eng
    eng.store.close()


@pytest.fixture
def a910_engine(tmp_path: Path) -> Iterator[Engine]:
    eng = open_engine(EmulatorOptions(state_path=tmp_path / "a.db", cluster=simple_cluster_spec("atlas-800-9000", 2)))
    yield eng
    eng.store.close()


@pytest.fixture
def api(engine: Engine) -> Iterator[TestClient]:
    with TestClient(create_app(engine)) as client:
        yield client
