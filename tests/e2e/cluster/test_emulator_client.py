"""The plugin's emulator_client fixture reaches a running emulator (started for the session)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.e2e]


def test_emulator_client_is_connected(emulator_client):
    health = emulator_client.health()
    assert health
