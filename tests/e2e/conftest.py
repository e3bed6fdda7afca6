"""Everything under tests/e2e is an end-to-end test: it runs real processes and is marked `e2e`."""

from __future__ import annotations

from pathlib import Path

import pytest

E2E_DIR = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if E2E_DIR in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.e2e)
