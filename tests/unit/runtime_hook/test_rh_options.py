from __future__ import annotations

import pytest

from runtime_hook import RuntimeHookError
from runtime_hook.options import parse_allow_link, parse_mounts, parse_runtime_options


def test_runtime_options() -> None:
    assert parse_runtime_options("") == []
    assert parse_runtime_options("NODRV") == ["NODRV"]
    assert parse_runtime_options("NODRV, VIRTUAL") == ["NODRV", "VIRTUAL"]
    for bad in ("nodrv", "NODRV,", "FOO", "NODRV,FOO"):
        with pytest.raises(RuntimeHookError, match=r"^invalid runtime option of invalid input value$"):
            parse_runtime_options(bad)
    with pytest.raises(RuntimeHookError, match="exceeds 128"):
        parse_runtime_options("NODRV," * 30)


def test_allow_link() -> None:
    assert parse_allow_link("True") is True
    assert parse_allow_link("False") is False and parse_allow_link("") is False
    with pytest.raises(RuntimeHookError, match=r"^invalid soft link option$"):
        parse_allow_link("true")


def test_mounts() -> None:
    assert parse_mounts("") == ["base"]
    assert parse_mounts("Base, Extra") == ["base", "extra"]
    assert parse_mounts("x" * 129) == ["base"]
