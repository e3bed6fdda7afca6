"""json.Marshal as Go writes it: compact, HTML-escaped (<, >, & as \\u003c...), U+2028/9 escaped.

Map keys must be sorted by the caller where Go would sort them (Go sorts map keys, keeps struct order).
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["marshal"]

_GO_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def marshal(value: Any) -> str:
    out = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    for raw, esc in _GO_ESCAPES.items():
        out = out.replace(raw, esc)
    return out
