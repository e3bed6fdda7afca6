"""The Ascend Docker Runtime equivalent: an OCI runtime wrapper, a prestart hook and a CDI spec generator.

Entry points: `runtime_hook.runtime:main` (npu-emu-runtime), `runtime_hook.prestart:main` (npu-emu-hook),
`runtime_hook.cdi:main` (npu-emu-cdi). Everything on the wrapper's and the hook's start-up path is
standard library only; see docs/runtime-hook.md.
"""

from __future__ import annotations

from .errors import RuntimeHookError
from .node_root import NodeRoot
from .visible import parse_visible_devices

__all__ = ["NodeRoot", "RuntimeHookError", "parse_visible_devices"]
