"""Emulated `hccn_tool` (stdlib only): `-i N -link -g`, `-i N -ip -g`, `-i N -net_health -g`.

`-i` is the device (logic) id. When the node's network namespace exists (emulator.netns), the answer comes
from the real interface in it: the tool enters the namespace in a helper thread (setns only moves that
thread) and asks the kernel with ioctls on a socket created there. Otherwise it answers from the chip
object (`link_up`, `device_ip`, `netmask`, `network_healthy`).
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import socket
import struct
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO, TypeVar

try:
    from emulator.npu_smi import source
except ImportError:  # copied into an emulated driver tree next to the npu_smi package
    from npu_smi import source  # type: ignore[no-redef]

T = TypeVar("T")
NETNS_DIR = "/var/run/netns"
NETNS_PREFIX = "npu-emu-"
CLONE_NEWNET = 0x40000000
SIOCGIFFLAGS = 0x8913
SIOCGIFADDR = 0x8915
SIOCGIFNETMASK = 0x891B
IFF_UP = 0x1
IFF_RUNNING = 0x40
# hccn_tool -net_health values (HCCN Tool reference): 0 Success, 5 Fault, 6 Init, ...
NET_HEALTH_OK = "Success"
NET_HEALTH_FAULT = "Fault"
USAGE = "Usage: hccn_tool -i <device_id> <-link|-ip|-net_health> -g\n"


@dataclass(frozen=True)
class LinkState:
    up: bool
    ip: str
    netmask: str


def netns_name(node_name: str) -> str:
    """The namespace emulator.netns creates for a node (kept here so hccn_tool stays stdlib only)."""
    return NETNS_PREFIX + node_name


def ifname(phy_id: int) -> str:
    return f"eth{phy_id}"


def in_netns(netns: str, fn: Callable[[], T]) -> T:
    """Run fn in a helper thread that has entered the named network namespace (setns moves only that
    thread, so the caller's namespace is untouched)."""
    path = os.path.join(NETNS_DIR, netns)
    result: list[Any] = [None, None]

    def worker() -> None:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = os.open(path, os.O_RDONLY)
            try:
                if libc.setns(fd, CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), "setns " + path)
            finally:
                os.close(fd)
            result[0] = fn()
        except BaseException as e:
            result[1] = e

    t = threading.Thread(target=worker, name="npu-emu-netns")
    t.start()
    t.join()
    if result[1] is not None:
        raise result[1]
    return result[0]  # type: ignore[no-any-return]


def read_link(netns: str, iface: str) -> LinkState | None:
    """Read the interface's flags and IPv4 address inside the named namespace; None if it is absent."""
    if not os.path.exists(os.path.join(NETNS_DIR, netns)):
        return None
    return in_netns(netns, lambda: _query(iface))


def _query(iface: str) -> LinkState | None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = struct.pack("16s16x", iface.encode())
        try:
            flags = struct.unpack("16sH", fcntl.ioctl(s.fileno(), SIOCGIFFLAGS, req)[:18])[1]
        except OSError:
            return None
        return LinkState(bool(flags & IFF_UP and flags & IFF_RUNNING), _addr(s, SIOCGIFADDR, req),
                         _addr(s, SIOCGIFNETMASK, req))


def _addr(s: socket.socket, op: int, req: bytes) -> str:
    try:
        return socket.inet_ntoa(fcntl.ioctl(s.fileno(), op, req)[20:24])
    except OSError:
        return ""


def link_state(node: dict[str, Any], chip: dict[str, Any]) -> LinkState:
    """Real state from the namespace when it exists, else the chip object's."""
    try:
        real = read_link(netns_name(str(node.get("name", ""))), ifname(int(chip.get("phy_id", 0))))
    except OSError:
        real = None
    if real is not None:
        return real
    return LinkState(bool(chip.get("link_up", True)), str(chip.get("device_ip") or ""),
                     str(chip.get("netmask") or ""))


def run(args: list[str], state: tuple[dict[str, Any], list[dict[str, Any]]] | None = None) -> str:
    if len(args) != 4 or args[0] != "-i" or not args[1].isdigit() or args[3] != "-g" \
            or args[2] not in ("-link", "-ip", "-net_health"):
        raise ValueError(USAGE)
    node, chips = state if state is not None else source.load_state()
    dev = int(args[1])
    chip = next((c for c in chips if int(c.get("logic_id", c.get("phy_id", -1))) == dev
                 and c.get("present", True)), None)
    if chip is None:
        raise ValueError(f"device id {dev} is invalid.\n")
    st = link_state(node, chip)
    if args[2] == "-link":
        return "link status: %s\n" % ("UP" if st.up else "DOWN")
    if args[2] == "-ip":
        return f"ipaddr:{st.ip}\nnetmask:{st.netmask}\n"
    healthy = st.up and chip.get("network_healthy", True)
    return "net health status: %s\n" % (NET_HEALTH_OK if healthy else NET_HEALTH_FAULT)


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    try:
        out.write(run(list(sys.argv[1:] if argv is None else argv)))
    except ValueError as e:
        out.write(str(e))
        return 1
    except (source.SourceError, OSError) as e:
        out.write("hccn_tool: driver error\n")
        sys.stderr.write(f"npu-emu: {e}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
