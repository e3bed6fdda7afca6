"""Names the real Ascend Operator uses (shared/reference/ascend-stack.md §7), kept in one place."""

from __future__ import annotations

# The AscendJob kind.
GROUP = "mindxdl.gitee.com"
VERSION = "v1"
API_VERSION = f"{GROUP}/{VERSION}"
KIND = "AscendJob"
PLURAL = "ascendjobs"

# Volcano.
PODGROUP_GROUP = "scheduling.volcano.sh"
PODGROUP_VERSION = "v1beta1"
PODGROUP_PLURAL = "podgroups"
GANG_SCHEDULER = "volcano"
DEFAULT_QUEUE = "default"

# Replica types. The first three are the "master role" of a framework.
MASTER = "Master"  # PyTorch
SCHEDULER = "Scheduler"  # MindSpore
CHIEF = "Chief"  # TensorFlow
WORKER = "Worker"
MASTER_TYPES = (MASTER, CHIEF, SCHEDULER)
REPLICA_TYPES = (*MASTER_TYPES, WORKER)

FRAMEWORK_LABEL = "framework"
PYTORCH = "pytorch"
MINDSPORE = "mindspore"
TENSORFLOW = "tensorflow"
FRAMEWORKS = (PYTORCH, MINDSPORE, TENSORFLOW)

# Labels on pods and services (kubeflow common GenLabels plus the operator's own).
OPERATOR_NAME = "ascendjob-controller"
LABEL_OPERATOR_NAME = "training.kubeflow.org/operator-name"
LABEL_JOB_NAME = "training.kubeflow.org/job-name"
LABEL_REPLICA_TYPE = "training.kubeflow.org/replica-type"
LABEL_REPLICA_INDEX = "training.kubeflow.org/replica-index"
LABEL_JOB_ROLE = "training.kubeflow.org/job-role"
LABEL_JOB_NAME_DEPRECATED = "job-name"
LABEL_GROUP_NAME = "group-name"
LABEL_VERSION = "version"

# Annotations on pods.
ANN_GROUP_NAME = "scheduling.k8s.io/group-name"
ANN_TASK_SPEC = "volcano.sh/task-spec"
ANN_RANK_INDEX = "hccl/rankIndex"
ANN_NPU = "huawei.com/Ascend910"  # the chips, written by Volcano / the device plugin
ANN_CONFIGURATION = "ascend.kubectl.kubernetes.io/ascend-910-configuration"  # written by the device plugin
# Job annotations the operator reads or writes.
ANN_NON_WORKER_MOUNTS_CHIPS = "nonWorkerPodMountChipStatus"
ANN_SP_BLOCK = "sp-block"
ANN_SCHEDULE_POLICY = "huawei.com/schedule_policy"

# The container and port.
CONTAINER = "ascend"
PORT_NAME = "ascendjob-port"
DEFAULT_PORT = 2222
NPU_RESOURCE_PREFIX = "huawei.com/"
NPU_RESOURCE = "huawei.com/Ascend910"

# ClusterD, which MINDX_SERVER_IP points at when it exists.
CLUSTERD_SERVICE = "clusterd-grpc-svc"
CLUSTERD_NAMESPACE = "mindx-dl"
CLUSTERD_DOMAIN = "clusterd-grpc-svc.mindx-dl.svc.cluster.local"

# Rank table.
RANKTABLE_CONFIGMAP_PREFIX = "rings-config-"
RANKTABLE_KEY = "hccl.json"
RANKTABLE_VERSION_KEY = "version"
RANKTABLE_VOLUME = "ranktable"
RANKTABLE_INITIALIZING = "initializing"
RANKTABLE_COMPLETED = "completed"
A3_ACCELERATOR_TYPES = ("module-a3-16-super-pod", "module-a3-8-super-pod")
A3_SCHEDULE_POLICIES = ("chip2-node16-sp", "chip2-node8-sp")

# Fault-tolerance labels (§7.5), read by recovery.py.
LABEL_FAULT_SCHEDULING = "fault-scheduling"
LABEL_FAULT_RETRY_TIMES = "fault-retry-times"
LABEL_POD_RESCHEDULING = "pod-rescheduling"
# Set by fleet mode on a pod it failed for a device fault (deviceplugin/workload_faults.py): npu-emu's
# stand-in for ascend-for-volcano reading the device-info ConfigMaps.
ANN_DEVICE_FAULT = "npu-emu.io/device-fault"
FAULT_SCHEDULING_ON = ("force", "grace")
GRACE_FORCE_AFTER_S = 15 * 60  # fault-scheduling grace: force-delete pods still there 15 min later (§7.5)

# Job condition types (kubeflow JobConditionType) and reasons (kubeflow util).
CREATED = "Created"
RUNNING = "Running"
RESTARTING = "Restarting"
SUCCEEDED = "Succeeded"
FAILED = "Failed"
REASON_CREATED = "AscendJobCreated"
REASON_RUNNING = "JobRunning"
REASON_RESTARTING = "JobRestarting"
REASON_SUCCEEDED = "JobSucceeded"
REASON_FAILED = "JobFailed"
REASON_INVALID = "InvalidJob"
REASON_BACKOFF = "BackoffLimitExceeded"
