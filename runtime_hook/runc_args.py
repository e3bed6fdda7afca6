"""Find the subcommand and the bundle in a runc command line without changing it. Stdlib only.

runc (urfave/cli on Go's flag package) accepts `-flag` and `--flag`, `--flag value` and `--flag=value`.
Global flags come before the subcommand; `--bundle`/`-b` belongs to `create` and `run`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

# runc's global flags that take a value (runc 1.1 `runc --help`); the boolean ones take none.
GLOBAL_VALUE_FLAGS = frozenset({"log", "log-format", "root", "criu", "rootless"})
# Value flags of `create` / `run` other than --bundle (boolean ones need no entry).
SUBCOMMAND_VALUE_FLAGS = frozenset({"console-socket", "pid-file", "preserve-fds"})
EDITING_SUBCOMMANDS = frozenset({"create", "run"})


@dataclass(frozen=True, slots=True)
class RuncCall:
    subcommand: str | None
    bundle: str | None  # None: runc uses the current directory
    args: tuple[str, ...]

    @property
    def edits_spec(self) -> bool:
        return self.subcommand in EDITING_SUBCOMMANDS

    def bundle_dir(self) -> str:
        return self.bundle if self.bundle else os.getcwd()


def _flag(arg: str) -> tuple[str, str | None] | None:
    """`--root=/x` -> ("root", "/x"); `-b` -> ("b", None); a non-flag -> None."""
    if arg in ("-", "--") or not arg.startswith("-"):
        return None
    name, sep, value = arg.lstrip("-").partition("=")
    return name, (value if sep else None)


def parse(args: list[str]) -> RuncCall:
    """`args` is runc's argv without the program name."""
    i, subcommand = 0, None
    while i < len(args):
        flag = _flag(args[i])
        if flag is None:
            subcommand = args[i]
            break
        name, value = flag
        i += 2 if name in GLOBAL_VALUE_FLAGS and value is None else 1
    bundle = None
    if subcommand in EDITING_SUBCOMMANDS:
        j = i + 1
        while j < len(args):
            arg = args[j]
            if arg == "--":
                break
            flag = _flag(arg)
            if flag is None:  # the container id; runc stops reading flags there
                break
            name, value = flag
            if name in ("bundle", "b"):
                if value is None:
                    value = args[j + 1] if j + 1 < len(args) else None
                    j += 1
                bundle = value
            elif name in SUBCOMMAND_VALUE_FLAGS and value is None:
                j += 1
            j += 1
    return RuncCall(subcommand=subcommand, bundle=bundle, args=tuple(args))
