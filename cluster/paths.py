"""Where npu-emu's fixtures are: $NPU_EMU_FIXTURES, this checkout's fixtures/, or the installed
`npu_emu_fixtures` package (a wheel install)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["fixtures_dir"]


def fixtures_dir() -> Path:
    override = os.environ.get("NPU_EMU_FIXTURES")
    if override:
        return Path(override)
    checkout = Path(__file__).resolve().parent.parent / "fixtures"
    if checkout.is_dir():
        return checkout
    from importlib.resources import files

    return Path(str(files("npu_emu_fixtures")))
