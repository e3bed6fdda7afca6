"""Refusals: the container is not created, the error names the id or value, and nothing stays mounted."""

from __future__ import annotations

import pytest
from rh_runc_support import BundleFactory, Container, host_mounts_under

pytestmark = [pytest.mark.e2e, pytest.mark.runc]


def assert_left_nothing(c: Container, config_before: str | None = None) -> None:
    assert c.cid not in c.listed()
    assert c.status() is None
    assert host_mounts_under(c.bundle.parent) == []
    if config_before is not None:
        assert c.config_path.read_text() == config_before  # the wrapper refused before writing


def test_chip_9_on_an_8_chip_node_is_refused(bundle_factory: BundleFactory) -> None:
    c = bundle_factory("echo started", {"ASCEND_VISIBLE_DEVICES": "9"})
    before = c.config_path.read_text()
    res = c.run()
    assert res.returncode != 0
    assert "started" not in res.stdout
    assert "failed to get /dev/davinci9 info : no such file or directory" in res.stderr
    assert "failed to add davinci device to spec" in res.stderr
    assert_left_nothing(c, before)


@pytest.mark.lost_chips(3)
def test_card_lost_chip_is_refused(bundle_factory: BundleFactory) -> None:
    c = bundle_factory("echo started", {"ASCEND_VISIBLE_DEVICES": "2,3"})
    before = c.config_path.read_text()
    res = c.run()
    assert res.returncode != 0
    assert "failed to get /dev/davinci3 info" in res.stderr
    assert_left_nothing(c, before)


@pytest.mark.lost_chips(3)
def test_other_chips_of_a_node_with_a_lost_card_still_work(bundle_factory: BundleFactory) -> None:
    c = bundle_factory("ls /dev | grep -E 'davinci[0-9]'; npu-smi info | grep -c 910B3",
                       {"ASCEND_VISIBLE_DEVICES": "2,4"})
    res = c.run()
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["davinci2", "davinci4", "2"]


@pytest.mark.parametrize(("value", "message"), [
    ("x", "invalid single device parameter: x"),
    ("1,,3", "invalid single device parameter: "),
    ("1-2-3", "invalid device range: 1-2-3"),
    ("3-1", "left boarder (3) should not be larger than the right one(1)"),
    ("0-129", "invalid right boarder range parameter: 129"),
    ("0,npu-1", "invalid device format: 0"),
    ("Ascend310P-1", "chip type not match really: 310P"),
])
def test_malformed_lists_are_refused(bundle_factory: BundleFactory, value: str, message: str) -> None:
    c = bundle_factory("echo started", {"ASCEND_VISIBLE_DEVICES": value})
    before = c.config_path.read_text()
    res = c.run()
    assert res.returncode != 0
    assert message in res.stderr
    assert "failed to check ASCEND_VISIBLE_DEVICES parameter" in res.stderr
    assert_left_nothing(c, before)


@pytest.mark.parametrize(("env", "message"), [
    ({"ASCEND_RUNTIME_OPTIONS": "NODRV,BOGUS"}, "invalid runtime option of invalid input value"),
    ({"ASCEND_ALLOW_LINK": "yes"}, "invalid soft link option"),
    ({"ASCEND_RUNTIME_MOUNTS": "base,nonexistent"}, "failed to process config nonexistent"),
])
def test_hook_refuses_bad_values_and_leaves_no_mount(bundle_factory: BundleFactory, env: dict[str, str],
                                                     message: str) -> None:
    c = bundle_factory("echo started", {"ASCEND_VISIBLE_DEVICES": "1", **env})
    res = c.run()
    assert res.returncode != 0
    assert "started" not in res.stdout
    assert message in res.stderr
    assert_left_nothing(c)


def test_a_soft_link_in_the_driver_tree_is_refused_unless_allowed(bundle_factory: BundleFactory) -> None:
    node = bundle_factory.node
    include = node.root.host("/usr/local/Ascend/driver/include")
    real = include.with_name("include.real")
    include.rename(real)
    include.symlink_to(real)
    refused = bundle_factory("echo started", {"ASCEND_VISIBLE_DEVICES": "1"})
    res = refused.run()
    assert res.returncode != 0
    assert "filePath has a soft link!" in res.stderr
    assert_left_nothing(refused)
    allowed = bundle_factory("ls /usr/local/Ascend/driver/include",
                             {"ASCEND_VISIBLE_DEVICES": "1", "ASCEND_ALLOW_LINK": "True"})
    res = allowed.run()
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["dsmi_common_interface.h"]
