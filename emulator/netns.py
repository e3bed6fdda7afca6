"""Per-node network namespaces with one NIC per chip (pyroute2); link faults are real link-downs.

Layout (docs/devfs-and-nics.md): namespace `npu-emu-<node>` holds `eth<phy_id>` per chip, the chip end of a
veth pair, addressed with the chip's device IP/netmask. The peer end `v<node index>_<phy_id>` sits in the
ToR namespace `npu-emu-tor-<tor_id>`, enslaved to bridge `br0`, so chips under one ToR reach each other.
`sync()` is idempotent; a chip with `link_up: false` or `present: false` has its `eth<phy>` set down.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any

from pyroute2 import NetNS, netns

from emulator.hccn_tool import ifname, in_netns, netns_name

Node = dict[str, Any]
Chip = dict[str, Any]

TOR_PREFIX = "npu-emu-tor-"
IFF_UP = 0x1
BRIDGE = "br0"
# All chip NICs of a node share one namespace and one subnet; without these the kernel would answer ARP
# for a downed chip's IP on a sibling NIC, and a link fault would not cut that chip off.
SYSCTLS = {"net/ipv4/conf/all/arp_ignore": "1", "net/ipv4/conf/all/arp_announce": "2"}


@dataclass(frozen=True)
class SyncResult:
    netns: str
    tor_netns: str
    up: tuple[int, ...]
    down: tuple[int, ...]


def tor_netns_name(tor_id: int) -> str:
    return f"{TOR_PREFIX}{tor_id}"


def peer_name(node: Node, phy_id: int) -> str:
    name = f"v{int(node.get('index', 0))}_{phy_id}"
    if len(name) > 15:  # IFNAMSIZ - 1
        raise ValueError(f"interface name {name!r} is longer than 15 characters")
    return name


def sync(node: Node, chips: list[Chip]) -> SyncResult:
    """Create or update the node's namespace, its chip NICs and their ToR bridge ports.

    Reads the current links and addresses once and changes only what differs, so a resync after one chip
    changed costs a few netlink calls.
    """
    ns_name = netns_name(str(node["name"]))
    tor_name = tor_netns_name(int(node.get("tor_id", 0)))
    existing = set(netns.listnetns())
    for name in (ns_name, tor_name):
        if name not in existing:
            netns.create(name)
    in_netns(ns_name, _write_sysctls)
    up: list[int] = []
    down: list[int] = []
    with NetNS(tor_name) as tor, NetNS(ns_name) as ns:
        bridge = _ensure_bridge(tor)
        links = _links(ns)
        if "lo" in links and not links["lo"][1] & IFF_UP:
            ns.link("set", index=links["lo"][0], state="up")
        ports = _links(tor)
        addrs: dict[int, list[tuple[str, int]]] = {}
        for a in ns.get_addr(family=2):
            addrs.setdefault(a["index"], []).append((a.get_attr("IFA_ADDRESS"), a["prefixlen"]))
        for chip in sorted(chips, key=lambda c: int(c["phy_id"])):
            phy = int(chip["phy_id"])
            chip_if, peer = ifname(phy), peer_name(node, phy)
            if chip_if not in links:
                ns.link("add", ifname=chip_if, kind="veth", peer={"ifname": peer})
                ns.link("set", index=ns.link_lookup(ifname=peer)[0], net_ns_fd=tor_name)
                links[chip_if] = (int(ns.link_lookup(ifname=chip_if)[0]), 0, 0)
                ports = _links(tor)
            if peer in ports and (ports[peer][2] != bridge or not ports[peer][1] & IFF_UP):
                tor.link("set", index=ports[peer][0], master=bridge, state="up")
            idx, flags, _ = links[chip_if]
            _ensure_addr(ns, idx, chip, addrs.get(idx, []))
            want_up = bool(chip.get("link_up", True)) and bool(chip.get("present", True))
            if bool(flags & IFF_UP) != want_up:
                ns.link("set", index=idx, state="up" if want_up else "down")
            (up if want_up else down).append(phy)
    return SyncResult(ns_name, tor_name, tuple(up), tuple(down))


def remove(node: Node) -> None:
    """Delete the node's namespace (its veths go with it) and the ToR namespace once no port is left."""
    ns_name = netns_name(str(node["name"]))
    tor_name = tor_netns_name(int(node.get("tor_id", 0)))
    names = set(netns.listnetns())
    if ns_name in names:
        # delete the veths first: that removes their ToR peers at once, whereas namespace teardown
        # is asynchronous in the kernel and would leave the peers behind for a while
        with NetNS(ns_name) as ns:
            for link in ns.get_links():
                if str(link.get("ifname", "")).startswith("eth"):
                    ns.link("del", index=link["index"])
        netns.remove(ns_name)
    if tor_name in names:
        with NetNS(tor_name) as tor:
            ports = [link for link in tor.get_links() if link.get("ifname") not in ("lo", BRIDGE)]
        if not ports:
            netns.remove(tor_name)


def _write_sysctls() -> None:
    for key, value in SYSCTLS.items():
        with open("/proc/sys/" + key, "w") as f:  # resolved in the calling thread's namespace
            f.write(value)


def _ensure_bridge(tor: NetNS) -> int:
    found = tor.link_lookup(ifname=BRIDGE)
    if not found:
        tor.link("add", ifname=BRIDGE, kind="bridge")
        found = tor.link_lookup(ifname=BRIDGE)
    tor.link("set", index=found[0], state="up")
    return int(found[0])


def _links(ns: NetNS) -> dict[str, tuple[int, int, int]]:
    """ifname -> (index, flags, master index or 0)."""
    return {str(link.get_attr("IFLA_IFNAME")): (int(link["index"]), int(link["flags"]),
                                                int(link.get_attr("IFLA_MASTER") or 0))
            for link in ns.get_links()}


def _ensure_addr(ns: NetNS, idx: int, chip: Chip, have: list[tuple[str, int]]) -> None:
    ip = chip.get("device_ip")
    if not ip:
        return
    prefix = ipaddress.IPv4Network(f"0.0.0.0/{chip.get('netmask') or '255.255.255.0'}").prefixlen
    if have == [(ip, prefix)]:
        return
    for address, plen in have:
        ns.addr("del", index=idx, address=address, prefixlen=plen)
    ns.addr("add", index=idx, address=ip, prefixlen=prefix)
