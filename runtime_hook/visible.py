"""ASCEND_VISIBLE_DEVICES parsing, as the Ascend runtime does it (reference §8.1). Stdlib only.

Forms: `0`, `1,3`, `0-2,4` (range right bound <= 128), `Ascend910-1`, `npu-1`; empty or `void` means
no NPU. A value with any name in it is parsed as a list of names, so `0,npu-1` fails on `0`.
"""

from __future__ import annotations

import re

from .constants import MAX_RANGE_RIGHT, VOID
from .errors import RuntimeHookError

_ATOI = re.compile(r"[+-]?\d+")  # what Go's strconv.Atoi accepts
_NAME = re.compile(r"^(?:Ascend(910|310B|310P|310)|(npu))-(\d+)$")
_NAME_HINT = re.compile(r"Ascend|npu-")


def is_empty(value: str | None) -> bool:
    """True when the value asks for no NPU at all (unset, empty or `void`)."""
    return value is None or value == "" or value == VOID


def parse_visible_devices(value: str, chip_name: str | None = None) -> list[int]:
    """Return the sorted, de-duplicated physical ids; raise RuntimeHookError with the runtime's message.

    `chip_name` (e.g. `910B3`) lets `Ascend310P-1` be refused on a 910 node, as the runtime does.
    """
    if is_empty(value):
        return []
    if _NAME_HINT.search(value):
        return _parse_names(value, chip_name)
    ids: list[int] = []
    for item in value.split(","):
        ids.extend(_parse_item(item.strip()))
    return sorted(set(ids))


def device_type(chip_name: str) -> str:
    """`Ascend910`, `Ascend310P`, ... for a chip name such as `910B3` (GetDeviceTypeByChipName)."""
    for number in ("310B", "310P", "310", "910"):
        if number in chip_name:
            return "Ascend" + number
    return ""


def _parse_item(item: str) -> list[int]:
    if "-" in item:
        borders = item.split("-")
        if len(borders) != 2:
            raise RuntimeHookError(f"invalid device range: {item}")
        left_s, right_s = borders[0].strip(), borders[1].strip()
        if not _ATOI.fullmatch(left_s) or int(left_s) < 0:
            raise RuntimeHookError(f"invalid left boarder range parameter: {left_s}")
        if not _ATOI.fullmatch(right_s) or int(right_s) > MAX_RANGE_RIGHT:
            raise RuntimeHookError(f"invalid right boarder range parameter: {right_s}")
        left, right = int(left_s), int(right_s)
        if left > right:
            raise RuntimeHookError(f"left boarder ({left}) should not be larger than the right one({right})")
        return list(range(left, right + 1))
    if not _ATOI.fullmatch(item) or int(item) < 0:
        raise RuntimeHookError(f"invalid single device parameter: {item}")
    return [int(item)]


def _parse_names(value: str, chip_name: str | None) -> list[int]:
    ids: list[int] = []
    kind = ""
    for raw in value.split(","):
        match = _NAME.match(raw.strip())
        if match is None:
            raise RuntimeHookError(f"invalid device format: {raw}")
        this_kind = match.group(1) or match.group(2)
        if kind and this_kind != kind:
            raise RuntimeHookError(f"invalid device chip type: {raw}")
        kind = this_kind
        ids.append(int(match.group(3)))
    if kind != "npu" and chip_name is not None and "Ascend" + kind != device_type(chip_name):
        raise RuntimeHookError(f"chip type not match really: {kind}")
    return sorted(set(ids))
