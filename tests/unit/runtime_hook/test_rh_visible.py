from __future__ import annotations

import pytest

from runtime_hook import RuntimeHookError, parse_visible_devices
from runtime_hook.visible import device_type, is_empty


@pytest.mark.parametrize(("value", "ids"), [
    ("0", [0]), ("1,3", [1, 3]), ("0-2,4", [0, 1, 2, 4]), (" 3 , 1 ", [1, 3]), ("2,2,1-2", [1, 2]),
    ("0-128", list(range(129))), ("Ascend910-1", [1]), ("Ascend910-3,Ascend910-0", [0, 3]),
    ("npu-1", [1]), ("npu-1,npu-5", [1, 5]), ("", []), ("void", []), ("+3", [3]),
])
def test_accepted_forms(value: str, ids: list[int]) -> None:
    assert parse_visible_devices(value, "910B3") == ids


@pytest.mark.parametrize(("value", "message"), [
    ("x", "invalid single device parameter: x"),
    ("1,,3", "invalid single device parameter: "),
    ("1.5", "invalid single device parameter: 1.5"),
    ("1-2-3", "invalid device range: 1-2-3"),
    ("a-3", "invalid left boarder range parameter: a"),
    ("1-b", "invalid right boarder range parameter: b"),
    ("0-129", "invalid right boarder range parameter: 129"),
    ("3-1", "left boarder (3) should not be larger than the right one(1)"),
    ("0,npu-1", "invalid device format: 0"),
    ("npu-1,Ascend910-2", "invalid device chip type: Ascend910-2"),
    ("Ascend910-x", "invalid device format: Ascend910-x"),
    ("Ascend310P-0", "chip type not match really: 310P"),
])
def test_refused_with_the_runtime_message(value: str, message: str) -> None:
    with pytest.raises(RuntimeHookError) as e:
        parse_visible_devices(value, "910B3")
    assert str(e.value) == message


def test_chip_type_is_checked_only_when_known() -> None:
    assert parse_visible_devices("Ascend310P-0", None) == [0]
    assert parse_visible_devices("Ascend310P-0", "310P3") == [0]


def test_device_type_and_empty() -> None:
    assert [device_type(n) for n in ("910B3", "910", "Ascend910_93", "310P3", "310B1", "xx")] == [
        "Ascend910", "Ascend910", "Ascend910", "Ascend310P", "Ascend310B", ""]
    assert is_empty(None) and is_empty("") and is_empty("void") and not is_empty("0")
