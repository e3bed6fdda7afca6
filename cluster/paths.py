"""Where npu-emu's fixtures are (one definition, the emulator's): $NPU_EMU_FIXTURES or this checkout's
fixtures/."""

from __future__ import annotations

from emulator.profiles import fixtures_dir

__all__ = ["fixtures_dir"]
