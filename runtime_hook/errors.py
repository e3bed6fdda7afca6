"""The one exception the wrapper, the hook and the CDI generator raise for bad input. Stdlib only."""

from __future__ import annotations


class RuntimeHookError(Exception):
    """Refusal with the Ascend runtime's message; `wrap` prefixes context the way the Go code does."""

    def wrap(self, context: str) -> RuntimeHookError:
        return RuntimeHookError(f"{context}: {self}")
