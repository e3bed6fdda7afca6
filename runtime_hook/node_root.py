"""The emulated node's root directory (the devfs the emulator materialises). Stdlib only.

Everything the real runtime finds at `/` on a node (`/dev/davinciN`, the driver tree, the runtime's
`.list` files) npu-emu finds under this root. Container paths stay the real ones.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any

from .constants import EMULATOR_DIR
from .errors import RuntimeHookError

NODE_STATE = EMULATOR_DIR + "/node.json"


class NodeRoot:
    """Host view of one emulated node: maps a real absolute path to its place under `root`."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).absolute()

    def __repr__(self) -> str:
        return f"NodeRoot({str(self.root)!r})"

    def host(self, path: str) -> Path:
        """`/dev/davinci0` -> `<root>/dev/davinci0`."""
        return self.root / path.lstrip("/")

    def device(self, host_path: str, container_path: str | None = None) -> dict[str, Any]:
        """An OCI LinuxDevice for the device node at `host_path` (oci.DeviceFromPath).

        Raises with the runtime's message, e.g. `failed to get /dev/davinci9 info : no such file or
        directory`, naming the real path rather than the emulator's.
        """
        try:
            st = os.lstat(self.host(host_path))
        except OSError as e:
            reason = os.strerror(e.errno) if e.errno else str(e)
            raise RuntimeHookError(f"failed to get {host_path} info : {reason.lower()}") from None
        if stat.S_ISCHR(st.st_mode):
            kind = "c"
        elif stat.S_ISBLK(st.st_mode):
            kind = "b"
        elif stat.S_ISFIFO(st.st_mode):
            kind = "p"
        else:
            raise RuntimeHookError(f"failed to get {host_path} info : not a device node")
        return {
            "path": container_path or host_path, "type": kind,
            "major": os.major(st.st_rdev), "minor": os.minor(st.st_rdev),
            "fileMode": stat.S_IMODE(st.st_mode), "uid": st.st_uid, "gid": st.st_gid,
        }

    def exists(self, path: str) -> bool:
        return self.host(path).exists()

    def node_state(self) -> dict[str, Any] | None:
        """The node state file the emulator keeps live (`{"node": {...}, "chips": [...]}`), if any."""
        try:
            doc = json.loads(self.host(NODE_STATE).read_bytes())
        except (OSError, ValueError):
            return None
        return doc if isinstance(doc, dict) else None

    def chip_name(self) -> str | None:
        doc = self.node_state()
        if doc is None:
            return None
        node = doc.get("node", doc)
        name = node.get("chip_name") if isinstance(node, dict) else None
        return str(name) if name else None

    def lost_chips(self) -> set[int]:
        """Physical ids the emulator reports card-lost (`present: false`)."""
        doc = self.node_state()
        if doc is None:
            return set()
        chips = doc.get("chips", [])
        return {int(c["phy_id"]) for c in chips
                if isinstance(c, dict) and "phy_id" in c and c.get("present") is False}


def card_lost_error(phy_id: int) -> RuntimeHookError:
    path = f"/dev/davinci{phy_id}"
    return RuntimeHookError(f"failed to get {path} info : {os.strerror(errno.ENOENT).lower()}"
                            f" (npu-emu reports chip {phy_id} lost: present=false)")
