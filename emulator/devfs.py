"""Materialise a node's Ascend device files and driver tree under a root directory.

`materialise()` is an idempotent sync: run it after every chip change.
Device numbers (docs/devfs-and-nics.md): davinciN = 236:N, davinci_manager = 235:0,
hisi_hdc = 237:0, devmm_svm = 238:0 (the last two as on a real 910B host). Real character devices need
CAP_MKNOD; without it every device is a plain file and the marker `<root>/dev/.npu-emu-devfs` says so.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Node = dict[str, Any]
Chip = dict[str, Any]

DAVINCI_MAJOR = 236
MANAGER = ("davinci_manager", 235, 0)
HISI_HDC = ("hisi_hdc", 237, 0)
DEVMM_SVM = ("devmm_svm", 238, 0)
DEVICE_MODE = 0o660
MARKER = ".npu-emu-devfs"
DRIVER = Path("usr/local/Ascend/driver")
STATE_FILE = DRIVER / "npu-emu" / "node.json"
TOOLS = DRIVER / "tools"
LAUNCHER = Path("usr/local/bin/npu-smi")
HCCN_LAUNCHER = TOOLS / "hccn_tool"
BASE_LIST = Path("etc/ascend-docker-runtime.d/base.list")
# reference §8.2, the default base.list
BASE_LIST_TEXT = """/usr/local/Ascend/driver/lib64
/usr/local/Ascend/driver/include
/usr/local/dcmi
/usr/local/bin/npu-smi
/var/queue_schedule
"""
DEFAULT_INTERPRETER = "/usr/bin/env python3"
LIBS = ("libascend_hal.so", "libdrvdsmi_host.so", "libc_sec.so", "libmmpa.so")
DRIVER_DIRS = ("lib64/driver", "lib64/common", "include", "kernel", "tools")
DCMI_FILES = ("libdcmi.so", "dcmi_interface_api.h")
DAVINCI_PREFIX = "davinci"


@dataclass(frozen=True)
class Result:
    """What one sync did. `char_devices` is False when devices are plain files (no CAP_MKNOD)."""

    char_devices: bool
    davinci: tuple[int, ...]
    created: tuple[str, ...]
    removed: tuple[str, ...]


def materialise(node: Node, chips: list[Chip], root: Path, *,
                interpreter: str = DEFAULT_INTERPRETER) -> Result:
    """Create or update the device files, driver tree, launcher, base.list and node.json under `root`."""
    root = Path(root)
    dev = root / "dev"
    dev.mkdir(parents=True, exist_ok=True)
    use_chr = _can_mknod(dev)
    created: list[str] = []
    removed: list[str] = []
    wanted = {int(c["phy_id"]) for c in chips if c.get("present", True)}
    for name, major, minor in (MANAGER, HISI_HDC, DEVMM_SVM):
        _ensure_device(dev / name, major, minor, use_chr, created)
    for phy in sorted(wanted):
        _ensure_device(dev / f"{DAVINCI_PREFIX}{phy}", DAVINCI_MAJOR, phy, use_chr, created)
    for entry in dev.iterdir():
        suffix = entry.name[len(DAVINCI_PREFIX):]
        if entry.name.startswith(DAVINCI_PREFIX) and suffix.isdigit() and int(suffix) not in wanted:
            entry.unlink()
            removed.append(str(entry))
    _atomic_write(dev / MARKER, json.dumps({"char_devices": use_chr, "node": node.get("name")}) + "\n")
    _driver_tree(node, root)
    _tools(root, interpreter)
    _atomic_write(root / BASE_LIST, BASE_LIST_TEXT)
    _atomic_write(root / STATE_FILE, json.dumps({"node": node, "chips": chips}, sort_keys=True) + "\n")
    return Result(use_chr, tuple(sorted(wanted)), tuple(created), tuple(removed))


def remove(root: Path) -> None:
    """Remove everything `materialise` created under `root` (and nothing else)."""
    root = Path(root)
    dev = root / "dev"
    if dev.is_dir():
        for entry in dev.iterdir():
            if entry.name.startswith(DAVINCI_PREFIX) or entry.name in (HISI_HDC[0], DEVMM_SVM[0], MARKER):
                entry.unlink()
        _rmdir_if_empty(dev)
    for tree in (root / DRIVER, root / "usr/local/dcmi"):
        shutil.rmtree(tree, ignore_errors=True)
    for f in (root / LAUNCHER, root / BASE_LIST):
        f.unlink(missing_ok=True)
    for d in (root / "usr/local/Ascend", root / "usr/local/bin", root / "usr/local", root / "usr",
              root / "etc/ascend-docker-runtime.d", root / "etc"):
        _rmdir_if_empty(d)


def _rmdir_if_empty(d: Path) -> None:
    with contextlib.suppress(OSError):
        d.rmdir()


_MKNOD_OK: dict[int, bool] = {}  # per filesystem (st_dev): the answer does not change within a process


def _can_mknod(dev: Path) -> bool:
    fs = dev.stat().st_dev
    if fs not in _MKNOD_OK:
        _MKNOD_OK[fs] = _probe_mknod(dev)
    return _MKNOD_OK[fs]


def _probe_mknod(dev: Path) -> bool:
    probe = dev / ".npu-emu-mknod-probe"
    probe.unlink(missing_ok=True)
    try:
        os.mknod(probe, stat.S_IFCHR | 0o600, os.makedev(1, 3))  # /dev/null's numbers
    except OSError as e:
        if e.errno in (errno.EPERM, errno.EACCES, errno.EINVAL, errno.EROFS):
            return False
        raise
    probe.unlink()
    return True


def _ensure_device(path: Path, major: int, minor: int, use_chr: bool, created: list[str]) -> None:
    want = os.makedev(major, minor)
    try:
        st = path.lstat()
    except FileNotFoundError:
        st = None
    if st is not None:
        if use_chr and stat.S_ISCHR(st.st_mode) and st.st_rdev == want:
            return
        if not use_chr and stat.S_ISREG(st.st_mode):
            return
        path.unlink()
    if use_chr:
        os.mknod(path, stat.S_IFCHR | DEVICE_MODE, want)
        os.chmod(path, DEVICE_MODE)  # umask must not narrow the mode
    else:
        path.write_text(f"npu-emu placeholder for char device {major}:{minor}\n")
    created.append(str(path))


def version_info(node: Node) -> str:
    """/usr/local/Ascend/driver/version.info in the real driver's key=value layout."""
    version = str((node.get("versions") or {}).get("driver", "24.1.rc2"))
    return (
        f"Version={version}\n"
        "ascendhal_version=7.35.23\n"
        "aicpu_version=1.0\n"
        "tdt_version=1.0\n"
        "log_version=1.0\n"
        "prof_version=2.0\n"
        "dvppkernels_version=1.1\n"
        "tsfw_version=1.0\n"
        "Innerversion=V100R001C18SPC001B233\n"
        "compatible_version=[V100R001C30],[V100R001C13],[V100R001C15],[V100R001C17],[V100R001C18]\n"
        "compatible_version_fw=[7.0.0,7.7.99]\n"
        f"package_version={version}\n"
    )


def _driver_tree(node: Node, root: Path) -> None:
    drv = root / DRIVER
    for d in DRIVER_DIRS:
        (drv / d).mkdir(parents=True, exist_ok=True)
    _atomic_write(drv / "version.info", version_info(node))
    for lib in LIBS:
        _touch(drv / "lib64/driver" / lib)
    _touch(drv / "include/dsmi_common_interface.h")
    dcmi = root / "usr/local/dcmi"
    dcmi.mkdir(parents=True, exist_ok=True)
    for f in DCMI_FILES:
        _touch(dcmi / f)


def _touch(path: Path) -> None:
    if not path.exists():
        path.write_bytes(b"")


def _tools(root: Path, interpreter: str) -> None:
    """Copy the stdlib-only npu_smi package into the driver tree and write launchers that run it."""
    src = Path(__file__).resolve().parent / "npu_smi"
    tools = root / TOOLS
    tools.mkdir(parents=True, exist_ok=True)
    _sync_package(src, tools / "npu_smi")
    hccn = Path(__file__).resolve().parent / "hccn_tool.py"
    if hccn.exists():
        _atomic_write(tools / "npu_emu_hccn_tool.py", hccn.read_text())
    shebang = f"#!{interpreter}" if interpreter.startswith("/usr/bin/env") else f"#!{interpreter} -S"
    tools_in_container = "/" + str(TOOLS)
    npu_smi = (
        f"{shebang}\n"
        "# npu-emu launcher: runs the emulated npu-smi copied into the driver tree.\n"
        "import sys\n"
        f"sys.path.insert(0, {tools_in_container!r})\n"
        "from npu_smi.cli import main\n"
        "sys.exit(main())\n"
    )
    hccn_launcher = (
        f"{shebang}\n"
        "# npu-emu launcher: runs the emulated hccn_tool copied into the driver tree.\n"
        "import sys\n"
        f"sys.path.insert(0, {tools_in_container!r})\n"
        "from npu_emu_hccn_tool import main\n"
        "sys.exit(main())\n"
    )
    _atomic_write(root / LAUNCHER, npu_smi, mode=0o755)
    _atomic_write(root / HCCN_LAUNCHER, hccn_launcher, mode=0o755)


def _sync_package(src: Path, dst: Path) -> None:
    dst.mkdir(parents=True, exist_ok=True)
    names = {p.name for p in src.glob("*.py")}
    for name in names:
        text = (src / name).read_text()
        target = dst / name
        if not target.exists() or target.read_text() != text:
            _atomic_write(target, text)
    for stale in dst.glob("*.py"):
        if stale.name not in names:
            stale.unlink()


def _atomic_write(path: Path, text: str, *, mode: int = 0o644) -> None:
    """Write via temp file + rename; skip when the file already has this content and mode."""
    try:
        st = path.stat()
        if stat.S_IMODE(st.st_mode) == mode and st.st_size == len(text.encode()) and path.read_text() == text:
            return
    except (FileNotFoundError, UnicodeDecodeError):
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + path.name + ".", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
