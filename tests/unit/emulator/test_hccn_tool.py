from __future__ import annotations

import pytest
from npu_nodes import node_910b

from emulator import hccn_tool


def test_answers_from_chip_when_no_namespace() -> None:
    node, chips = node_910b("no-such-netns-node")
    chips[2]["link_up"] = False
    chips[2]["network_healthy"] = False
    state = (node, chips)
    assert hccn_tool.run(["-i", "0", "-link", "-g"], state) == "link status: UP\n"
    assert hccn_tool.run(["-i", "2", "-link", "-g"], state) == "link status: DOWN\n"
    assert hccn_tool.run(["-i", "1", "-ip", "-g"], state) == "ipaddr:10.64.0.2\nnetmask:255.255.0.0\n"
    assert hccn_tool.run(["-i", "0", "-net_health", "-g"], state) == "net health status: Success\n"
    assert hccn_tool.run(["-i", "2", "-net_health", "-g"], state) == "net health status: Fault\n"


BAD = [[], ["-i", "0", "-link"], ["-i", "x", "-ip", "-g"], ["-i", "0", "-foo", "-g"]]


@pytest.mark.parametrize("args", BAD)
def test_bad_arguments(args: list[str]) -> None:
    with pytest.raises(ValueError, match="Usage: hccn_tool"):
        hccn_tool.run(args, node_910b())


def test_unknown_or_lost_device() -> None:
    node, chips = node_910b()
    chips[3]["present"] = False
    with pytest.raises(ValueError, match="device id 3 is invalid"):
        hccn_tool.run(["-i", "3", "-link", "-g"], (node, chips))
    with pytest.raises(ValueError, match="device id 8 is invalid"):
        hccn_tool.run(["-i", "8", "-link", "-g"], (node, chips))
