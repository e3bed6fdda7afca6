from __future__ import annotations

import subprocess
import sys

import runtime_hook


def test_all_is_sorted_and_importable() -> None:
    assert runtime_hook.__all__ == sorted(runtime_hook.__all__)
    for name in runtime_hook.__all__:
        assert getattr(runtime_hook, name)


def test_wrapper_and_hook_start_on_the_standard_library_alone() -> None:
    code = ("import sys, runtime_hook.runtime, runtime_hook.prestart; "
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('yaml', 'pydantic', 'httpx', 'emulator', 'fastapi', 'grpc')); print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
