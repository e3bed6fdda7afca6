"""Names copied from the real Ascend Device Plugin (shared/reference/ascend-stack.md §1, §2)."""

from __future__ import annotations

RESOURCE_PREFIX = "huawei.com/"
DEVICE_TYPE = "Ascend910"
RESOURCE_NAME = RESOURCE_PREFIX + DEVICE_TYPE  # 910A, 910B and A3 alike (§1.1)
ENDPOINT = DEVICE_TYPE + ".sock"  # §1.2
DEVICE_ID_PREFIX = DEVICE_TYPE + "-"  # Ascend910-<phyID>

# Pod annotations (§1.8, §5.4)
ANN_VOLCANO_DEVICES = RESOURCE_NAME  # written by Volcano: "Ascend910-0,Ascend910-1"
ANN_PREDICATE_TIME = "predicate-time"
ANN_REAL = RESOURCE_PREFIX + "AscendReal"
ANN_KLT_DEV = RESOURCE_PREFIX + "kltDev"
ANN_CONFIGURATION = "ascend.kubectl.kubernetes.io/ascend-910-configuration"
PREDICATE_TIME_CONSUMED = str(2**64 - 1)  # MaxUint64: "this pod's chips are mounted"

# Volcano-mode Allocate (§1.5)
VOLCANO_POD_RETRIES = 3
VOLCANO_POD_RETRY_INTERVAL_S = 1.0
ERR_NO_VALID_POD = "not get valid pod"
ERR_NO_NPU_RESOURCE = "no npu resource"  # common.NoNPUResource
ERR_UNKNOWN_DEVICE = "plugin doesn't have device %s"

# Ascend Docker Runtime response (§1.5.3)
ENV_ASCEND_DOCKER_RUNTIME = "ASCEND_DOCKER_RUNTIME"
ENV_VISIBLE_DEVICES = "ASCEND_VISIBLE_DEVICES"
ENV_RUNTIME_OPTIONS = "ASCEND_RUNTIME_OPTIONS"

# Default device nodes, in the order the real plugin returns them (§1.5.4)
DEFAULT_DEVICES: tuple[str, ...] = ("davinci_manager", "hisi_hdc", "devmm_svm", "dvpp_cmdlist")
EXTRA_DEVICE_DIRS: tuple[str, ...] = ("uburma", "ummu")

# device-info ConfigMap (§2)
CM_NAMESPACE = "kube-system"
CM_NAME_PREFIX = "mindx-dl-deviceinfo-"
CM_LABEL = {"mx-consumer-cim": "true"}
CM_KEY_DEVICE_INFO = "DeviceInfoCfg"
CM_KEY_MANUALLY_SEPARATE = "ManuallySeparateNPU"
CM_KEY_UPGRADE_FAULT_REASON = "UpgradeFaultReason"
CM_KEY_DESCRIPTION = "Description"
CM_DESCRIPTION = (
    "The field[xxx.com/xxx] is sunset. Volcano has the ability to maintain the usage status of chips on its "
    "own, and can temporarily use this field by configuring the Volcano parameter "
    "'self-maintain-available-card'"
)
DL_FAULT = RESOURCE_NAME + "-Fault"
DL_NETWORK_UNHEALTHY = RESOURCE_NAME + "-NetworkUnhealthy"
DL_RECOVERING = RESOURCE_NAME + "-Recovering"
DL_UNHEALTHY = RESOURCE_NAME + "-Unhealthy"

# Node labels and annotations (§1.6, §1.7)
LABEL_CHIP_NAME = "node.kubernetes.io/npu.chip.name"
LABEL_SERVER_TYPE = "servertype"
LABEL_DRIVER_VERSION = "huawei.com/driver.version"
LABEL_ACCELERATOR = "accelerator"
LABEL_CHIP_MEMORY = "mind-cluster/npu-chip-memory"
LABEL_SUPERPOD_ID = "huawei.com/topotree.superpodid"
ANN_BASE_DEVICE_INFOS = "baseDeviceInfos"
ANN_SUPERPOD_ID = "superPodID"
ANN_SERVER_INDEX = "serverIndex"
ANN_SERVER_TYPE = "serverType"

# Events (§1.9)
EVENT_NAMESPACE = "kube-system"
EVENT_COMPONENT = "device-plugin"
REASON_OCCUR = "Occur"
REASON_RECOVERY = "Recovery"

# Levels at which a chip is being reset, which takes its reset group down with it (§3.2). Chosen by npu-emu:
# the hot-reset levels; see docs/device-plugin.md.
RESET_LEVELS = frozenset({"RestartNPU", "FreeRestartNPU"})
HEALTHY = "Healthy"
