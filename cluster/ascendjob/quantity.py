"""Kubernetes resource quantities: just enough to add pod requests up for a PodGroup's minResources."""

from __future__ import annotations

import re
from fractions import Fraction

__all__ = ["format_quantity", "parse_quantity"]

_SUFFIX: dict[str, Fraction | int] = {
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
    "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": 1,
    "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
}
_RE = re.compile(r"^([+-]?[0-9.]+)([eE][+-]?[0-9]+)?([a-zA-Z]*)$")


def parse_quantity(value: str | int | float) -> Fraction:
    text = str(value).strip()
    m = _RE.match(text)
    if not m or m.group(3) not in _SUFFIX:
        raise ValueError(f"not a Kubernetes quantity: {value!r}")
    number = Fraction(m.group(1))
    if m.group(2):
        number *= Fraction(10) ** int(m.group(2)[1:])
    return number * _SUFFIX[m.group(3)]


def format_quantity(value: Fraction) -> str:
    """Whole numbers plain, fractions in milli-units rounded up (as Kubernetes does for CPU)."""
    if value.denominator == 1:
        return str(value.numerator)
    milli = -(-value.numerator * 1000 // value.denominator)
    return f"{milli}m"
