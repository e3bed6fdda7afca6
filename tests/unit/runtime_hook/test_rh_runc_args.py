from __future__ import annotations

import os

import pytest

from runtime_hook import runc_args


@pytest.mark.parametrize(("argv", "sub", "bundle"), [
    (["create", "--bundle", "/b", "id"], "create", "/b"),
    (["create", "-b", "/b", "id"], "create", "/b"),
    (["create", "--bundle=/b", "id"], "create", "/b"),
    (["-b", "x", "create", "id"], "x", None),  # not a global flag: runc refuses it, we do not edit
    (["--root", "/run/x", "--log", "/l", "--log-format", "json", "--systemd-cgroup", "create",
      "--pid-file", "/p", "--console-socket", "/s", "--bundle", "/b", "id"], "create", "/b"),
    (["--root=/create", "create", "--no-pivot", "-b=/b", "id"], "create", "/b"),
    (["-root", "/r", "create", "-bundle", "/b", "id"], "create", "/b"),
    (["--root", "create", "start", "create"], "start", None),  # a container named create
    (["run", "--detach", "--bundle", "/b", "id"], "run", "/b"),
    (["create", "id", "--bundle", "/b"], "create", None),  # runc stops reading flags at the id
    (["start", "id"], "start", None),
    (["--version"], None, None),
    ([], None, None),
])
def test_parse(argv: list[str], sub: str | None, bundle: str | None) -> None:
    call = runc_args.parse(argv)
    assert (call.subcommand, call.bundle, call.args) == (sub, bundle, tuple(argv))


def test_bundle_defaults_to_cwd() -> None:
    call = runc_args.parse(["create", "id"])
    assert call.edits_spec and call.bundle_dir() == os.getcwd()
    assert not runc_args.parse(["delete", "id"]).edits_spec
