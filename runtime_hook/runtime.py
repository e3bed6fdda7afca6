"""`npu-emu-runtime`: the ascend-docker-runtime wrapper in front of runc.

On `create` (and `run`) it edits `<bundle>/config.json` from ASCEND_VISIBLE_DEVICES (devices, cgroup
rules, env, the prestart hook), then execs the real runc with its arguments untouched; any other
subcommand goes straight to runc. Stdlib only: it runs on every runc call.

Configuration comes from the environment (a runtime cannot take flags of its own without clashing with
runc's), or from leading `--npu-emu-devfs-root=DIR` / `--npu-emu-runc=PATH` / `--npu-emu-hook=PATH`
arguments, which are removed before runc sees the command line:

- NPU_EMU_DEVFS_ROOT: the emulated node's root (default `/`, a real node layout);
- NPU_EMU_RUNC: the real runc (default: `runc` on PATH, never this wrapper itself);
- NPU_EMU_HOOK: the hook executable (default: `npu-emu-hook` beside this program or on PATH, else
  `<python> -m runtime_hook.prestart`);
- NPU_EMU_RUNTIME_LOG_DIR: write runtime-run.log / hook-run.log there.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from . import oci_spec, runc_args
from .constants import ENV_DEVFS_ROOT, ENV_HOOK, ENV_LOG_DIR, ENV_RUNC, HOOK_CONSOLE_SCRIPT, HOOK_MODULE
from .errors import RuntimeHookError
from .inject import Hook, process_spec
from .log import log
from .node_root import NodeRoot

HOOK_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_OWN_FLAGS = {"--npu-emu-devfs-root": ENV_DEVFS_ROOT, "--npu-emu-runc": ENV_RUNC, "--npu-emu-hook": ENV_HOOK}


def split_own_flags(argv: Sequence[str], environ: Mapping[str, str]) -> tuple[list[str], dict[str, str]]:
    """Take the leading `--npu-emu-*=VALUE` flags off argv and fold them into a copy of environ."""
    env = dict(environ)
    args = list(argv)
    while args and args[0].split("=", 1)[0] in _OWN_FLAGS:
        name, sep, value = args.pop(0).partition("=")
        if not sep:
            if not args:
                raise RuntimeHookError(f"{name} needs an argument")
            value = args.pop(0)
        env[_OWN_FLAGS[name]] = value
    return args, env


def find_runc(environ: Mapping[str, str]) -> str:
    explicit = environ.get(ENV_RUNC)
    if explicit:
        return explicit
    me = os.path.realpath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    for name in ("docker-runc", "runc"):
        for directory in environ.get("PATH", os.defpath).split(os.pathsep):
            candidate = os.path.join(directory or ".", name)
            if os.access(candidate, os.X_OK) and os.path.realpath(candidate) != me:
                return os.path.realpath(candidate)
    raise RuntimeHookError("failed to find the path of runc: executable file not found in $PATH")


def hook_for(environ: Mapping[str, str], devfs_root: str) -> Hook:
    """The prestart hook entry; it carries the devfs root because runc gives hooks only their `env`."""
    env = [f"{ENV_DEVFS_ROOT}={devfs_root}", f"PATH={HOOK_PATH}"]
    if environ.get(ENV_LOG_DIR):
        env.append(f"{ENV_LOG_DIR}={environ[ENV_LOG_DIR]}")
    explicit = environ.get(ENV_HOOK)
    beside = Path(sys.argv[0]).absolute().parent / HOOK_CONSOLE_SCRIPT if sys.argv and sys.argv[0] else None
    script = explicit or (str(beside) if beside and os.access(beside, os.X_OK) else None)
    script = script or shutil.which(HOOK_CONSOLE_SCRIPT, path=environ.get("PATH"))
    if script:
        return Hook(path=script, args=(script,), env=tuple(env))
    # -S: no site import (editable-install finders, .pth files); the hook is stdlib-only and PYTHONPATH
    # finds the package.
    package_parent = str(Path(__file__).resolve().parent.parent)
    env.append(f"PYTHONPATH={package_parent}")
    return Hook(path=sys.executable, args=(sys.executable, "-S", "-m", HOOK_MODULE), env=tuple(env))


def edit_bundle(bundle: str, environ: Mapping[str, str]) -> list[int]:
    """Edit `<bundle>/config.json` in place; on error nothing is written."""
    path = os.path.join(bundle, "config.json")
    devfs_root = environ.get(ENV_DEVFS_ROOT) or "/"
    try:
        spec = oci_spec.load(path)
        ids = process_spec(spec, NodeRoot(devfs_root), hook_for(environ, devfs_root))
        oci_spec.save(path, spec)
    except RuntimeHookError as e:
        raise e.wrap(f"failed to modify spec file {path}") from None
    return ids


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        args, environ = split_own_flags(args, os.environ)
        call = runc_args.parse(args)
        runc = find_runc(environ)
        if call.edits_spec:
            ids = edit_bundle(call.bundle_dir(), environ)
            log("runtime", f"{call.subcommand} {call.bundle_dir()}: devices {ids}", environ)
    except RuntimeHookError as e:
        message = f"npu-emu-runtime: {e}"
        log("runtime", message, os.environ)
        print(message, file=sys.stderr)
        return 1
    os.execv(runc, [runc, *args])
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
