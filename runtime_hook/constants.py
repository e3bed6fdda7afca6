"""Names, paths and limits the Ascend Docker Runtime uses, in one place (reference §8). Stdlib only."""

from __future__ import annotations

# Environment variables read from the container's OCI spec.
ASCEND_VISIBLE_DEVICES = "ASCEND_VISIBLE_DEVICES"
ASCEND_RUNTIME_OPTIONS = "ASCEND_RUNTIME_OPTIONS"
ASCEND_RUNTIME_MOUNTS = "ASCEND_RUNTIME_MOUNTS"
ASCEND_ALLOW_LINK = "ASCEND_ALLOW_LINK"
ASCEND_DOCKER_RUNTIME = "ASCEND_DOCKER_RUNTIME"
LD_LIBRARY_PATH = "LD_LIBRARY_PATH"

# npu-emu's own configuration (read by the wrapper from its environment, and passed to the hook
# through the hook's `env` in the spec, because runc runs hooks with only that environment).
ENV_DEVFS_ROOT = "NPU_EMU_DEVFS_ROOT"
ENV_RUNC = "NPU_EMU_RUNC"
ENV_HOOK = "NPU_EMU_HOOK"
ENV_LOG_DIR = "NPU_EMU_RUNTIME_LOG_DIR"

VOID = "void"
MAX_RANGE_RIGHT = 128  # right bound of an id range
MAX_OPTIONS_LEN = 128  # ASCEND_RUNTIME_OPTIONS
MAX_MOUNTS_LEN = 128  # ASCEND_RUNTIME_MOUNTS longer than this falls back to base
MAX_LIST_ENTRIES = 128  # lines read from one <name>.list
VALID_RUNTIME_OPTIONS = ("NODRV", "VIRTUAL")

DEV_DIR = "/dev"
DAVINCI = "davinci"
VDAVINCI = "vdavinci"
# Manager devices, in the order the runtime adds them (§8.1 step 3; dvpp_cmdlist only warns if missing).
OPTIONAL_MANAGER_DEVICES = ("dvpp_cmdlist",)
MANAGER_DEVICES = ("davinci_manager", "devmm_svm", "hisi_hdc")

DRIVER_DIR = "/usr/local/Ascend/driver"
DRIVER_LIB_DIRS = (
    "/usr/local/Ascend/driver/lib64",
    "/usr/local/Ascend/driver/lib64/common",
    "/usr/local/Ascend/driver/lib64/driver",
)
CONFIG_DIR = "/etc/ascend-docker-runtime.d"
BASE_CONFIG = "base"
LIST_SUFFIX = ".list"
EXTRA_MOUNTS = ("/etc/hccl_rootinfo.json", "/usr/local/Ascend/driver/topo")

# Where the emulator keeps the live node state and npu-smi's code inside the driver tree (emulator/devfs.py);
# the hook mounts both next to the base.list entries whenever npu-smi is mounted, so that the emulated
# npu-smi (a Python launcher, `#!/usr/bin/env python3`) works in the container.
EMULATOR_DIR = "/usr/local/Ascend/driver/npu-emu"
EMULATOR_TOOLS_DIR = "/usr/local/Ascend/driver/tools"
EMULATOR_MOUNTS = (EMULATOR_TOOLS_DIR, EMULATOR_DIR)
NPU_SMI_NAMES = ("/usr/local/bin/npu-smi", "/usr/local/sbin/npu-smi")

# The paths ascend-docker-cli accepts (its MOUNT_WHITE_LIST); anything else in a .list file is refused.
MOUNT_WHITELIST = frozenset({
    "/usr/local/Ascend/driver/lib64", "/usr/local/Ascend/driver/include", "/usr/local/dcmi",
    "/usr/local/bin/npu-smi", "/home/data/miniD/driver/lib64", "/usr/local/sbin/npu-smi",
    "/usr/local/Ascend/driver/tools", "/etc/hdcBasic.cfg", "/etc/sys_version.conf",
    "/etc/ld.so.conf.d/mind_so.conf", "/etc/slog.conf", "/var/dmp_daemon", "/var/slogd",
    "/usr/lib64/libsemanage.so.2", "/usr/lib64/libmmpa.so", "/usr/lib64/libcrypto.so.1.1",
    "/usr/lib64/libdrvdsmi.so", "/usr/lib64/libdcmi.so", "/usr/lib64/libstackcore.so",
    "/usr/lib64/libmpi_dvpp_adapter.so", "/usr/lib64/libaicpu_scheduler.so",
    "/usr/lib64/libaicpu_processer.so", "/usr/lib64/libaicpu_prof.so", "/usr/lib64/libaicpu_sharder.so",
    "/usr/lib64/libadump.so", "/usr/lib64/libtsd_eventclient.so", "/usr/lib64/aicpu_kernels",
    "/usr/lib64/libyaml-0.so.2", "/usr/lib/aarch64-linux-gnu/libyaml-0.so.2",
    "/usr/lib/aarch64-linux-gnu/libcrypto.so.1.1", "/var/queue_schedule", "/etc/hccl_rootinfo.json",
    "/usr/local/Ascend/driver/topo",
})

HOOK_NAMES = ("ascend-docker-hook", "npu-emu-hook", "runtime_hook.prestart")
HOOK_MODULE = "runtime_hook.prestart"
HOOK_CONSOLE_SCRIPT = "npu-emu-hook"
