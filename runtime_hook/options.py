"""ASCEND_RUNTIME_OPTIONS, ASCEND_ALLOW_LINK and ASCEND_RUNTIME_MOUNTS, validated as the hook does.

Stdlib only. Messages are the hook's (reference §8.2).
"""

from __future__ import annotations

from .constants import BASE_CONFIG, MAX_MOUNTS_LEN, MAX_OPTIONS_LEN, VALID_RUNTIME_OPTIONS
from .errors import RuntimeHookError


def parse_runtime_options(value: str) -> list[str]:
    """`NODRV`, `VIRTUAL` or both, comma separated; empty means none."""
    if value == "":
        return []
    if len(value) > MAX_OPTIONS_LEN:
        raise RuntimeHookError("invalid runtime option, the length exceeds 128 characters")
    options = []
    for option in (o.strip() for o in value.split(",")):
        if option not in VALID_RUNTIME_OPTIONS:
            raise RuntimeHookError("invalid runtime option of invalid input value")
        options.append(option)
    return options


def parse_allow_link(value: str) -> bool:
    """`True` allows symbolic links in mounted paths; `False` or empty refuses them."""
    if value == "True":
        return True
    if value in ("", "False"):
        return False
    raise RuntimeHookError("invalid soft link option")


def parse_mounts(value: str) -> list[str]:
    """Names of the `<name>.list` files to read: lower-cased, `base` when empty or too long."""
    if value == "" or len(value) > MAX_MOUNTS_LEN:
        return [BASE_CONFIG]
    return [m.strip().lower() for m in value.split(",")]
