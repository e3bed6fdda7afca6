from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator

import pytest
from npu_nodes import node_910b

from emulator import hccn_tool

CAP_NET_ADMIN = 12
CAP_SYS_ADMIN = 21


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "not root: network namespaces need root"
    with open("/proc/self/status") as f:
        eff = next(int(line.split()[1], 16) for line in f if line.startswith("CapEff:"))
    for bit, name in ((CAP_NET_ADMIN, "CAP_NET_ADMIN"), (CAP_SYS_ADMIN, "CAP_SYS_ADMIN")):
        if not eff >> bit & 1:
            return f"no {name}"
    return None


REASON = _why_not()
if REASON:
    print(f"test_netns: skipping: {REASON}")
pytestmark = [pytest.mark.netns, pytest.mark.skipif(REASON is not None, reason=REASON or "")]


@pytest.fixture
def two_nodes() -> Iterator[tuple]:
    from emulator import netns

    tag = uuid.uuid4().hex[:6]
    a_node, a_chips = node_910b(f"t{tag}-a", index=900)
    b_node, b_chips = node_910b(f"t{tag}-b", index=901)
    for n in (a_node, b_node):
        n["tor_id"] = 9000 + int(tag, 16) % 1000
    for c in a_chips:
        c["device_ip"] = f"10.200.0.{c['phy_id'] + 1}"
    for c in b_chips:
        c["device_ip"] = f"10.200.1.{c['phy_id'] + 1}"
    yield (a_node, a_chips), (b_node, b_chips)
    netns.remove(a_node)
    netns.remove(b_node)


def test_sync_link_fault_and_remove(two_nodes: tuple) -> None:
    from pyroute2 import netns as pnetns

    from emulator import netns

    (node, chips), _ = two_nodes
    res = netns.sync(node, chips)
    assert res.netns in pnetns.listnetns() and res.tor_netns in pnetns.listnetns()
    assert hccn_tool.read_link(res.netns, "eth3") == hccn_tool.LinkState(True, "10.200.0.4", "255.255.0.0")
    chips[3]["link_up"] = False
    netns.sync(node, chips)
    assert hccn_tool.read_link(res.netns, "eth3").up is False
    assert hccn_tool.run(["-i", "3", "-link", "-g"], (node, chips)) == "link status: DOWN\n"
    # the chip object says UP but the real interface is down: hccn_tool follows the real state
    chips[3]["link_up"] = True
    assert hccn_tool.run(["-i", "3", "-link", "-g"], (node, chips)) == "link status: DOWN\n"
    netns.sync(node, chips)
    assert hccn_tool.run(["-i", "3", "-link", "-g"], (node, chips)) == "link status: UP\n"
    again = netns.sync(node, chips)  # idempotent
    assert again.up == tuple(range(8)) and again.down == ()
    netns.remove(node)
    assert res.netns not in pnetns.listnetns()


def test_ip_change_is_applied(two_nodes: tuple) -> None:
    from emulator import netns

    (node, chips), _ = two_nodes
    netns.sync(node, chips)
    chips[0]["device_ip"] = "10.200.9.9"
    netns.sync(node, chips)
    ns = hccn_tool.netns_name(node["name"])
    assert hccn_tool.read_link(ns, "eth0").ip == "10.200.9.9"


def _tcp_reaches(src_ns: str, dst_ns: str, dst_ip: str, port: int) -> bool:
    """Listen in dst_ns, connect from src_ns (no ping binary needed)."""
    server = subprocess.Popen(
        ["ip", "netns", "exec", dst_ns, sys.executable, "-c",
         "import socket,sys; s=socket.socket(); s.bind((sys.argv[1], int(sys.argv[2]))); s.listen();"
         " print('ok', flush=True); s.settimeout(5); s.accept()", dst_ip, str(port)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None and server.stdout.readline().strip() == "ok"
        client = subprocess.run(
            ["ip", "netns", "exec", src_ns, sys.executable, "-c",
             "import socket,sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=2)",
             dst_ip, str(port)],
            capture_output=True, timeout=15)
        return client.returncode == 0
    finally:
        server.kill()
        server.wait()
        if server.stdout is not None:
            server.stdout.close()


def test_chips_under_one_tor_reach_each_other(two_nodes: tuple) -> None:
    from emulator import netns

    (a, ac), (b, bc) = two_nodes
    netns.sync(a, ac)
    netns.sync(b, bc)
    a_ns, b_ns = hccn_tool.netns_name(a["name"]), hccn_tool.netns_name(b["name"])
    assert _tcp_reaches(a_ns, b_ns, bc[0]["device_ip"], 7777)
    assert _tcp_reaches(b_ns, a_ns, ac[0]["device_ip"], 7778)
    ac[0]["link_up"] = False
    netns.sync(a, ac)
    assert not _tcp_reaches(b_ns, a_ns, ac[0]["device_ip"], 7779)
    assert _tcp_reaches(b_ns, a_ns, ac[1]["device_ip"], 7780)
