"""Where a rank table goes (§7.4): the ConfigMap rings-config-<job> (keys hccl.json and version) and,
for a job with a volume named `ranktable`, the file <ranktable root>/<namespace>.<job>/hccl.json (plus
a `version` file beside it).

Differences from the real operator, on purpose: the ConfigMap is created (owned by the job, so it goes
with it) when the user did not create one; the file is written only when the controller is given a
ranktable root (the real one always uses /user/mindx-dl/ranktable on its own host).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

from kubernetes.client.exceptions import ApiException

from . import constants as k
from .kube import Kube
from .podgroup import owner_reference
from .ranktable import RankTable
from .spec import JobView

__all__ = ["RankTableSink", "configmap_name", "ranktable_file"]


def configmap_name(job: JobView) -> str:
    return f"{k.RANKTABLE_CONFIGMAP_PREFIX}{job.name}"


def ranktable_file(root: Path, job: JobView) -> Path:
    return root / f"{job.namespace}.{job.name}" / k.RANKTABLE_KEY


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o744)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class RankTableSink:
    def __init__(self, kube: Kube, root: Path | None = None, *, create_configmap: bool = True) -> None:
        self.kube = kube
        self.root = root
        self.create_configmap = create_configmap

    def write(self, job: JobView, table: RankTable) -> None:
        text = table.to_json()
        version = str(int(time.time())) if table.completed else "0"
        self._configmap(job, text, version)
        if self.root is not None and job.has_ranktable_volume():
            path = ranktable_file(self.root, job)
            _atomic_write(path, text)
            _atomic_write(path.with_name(k.RANKTABLE_VERSION_KEY), version)

    def forget(self, namespace: str, name: str) -> None:
        """The job is gone: remove its rank-table directory (the ConfigMap goes by garbage collection)."""
        if self.root is not None:
            directory = self.root / f"{namespace}.{name}"
            if directory.is_dir() and not directory.is_symlink():
                shutil.rmtree(directory, ignore_errors=True)

    def _configmap(self, job: JobView, text: str, version: str) -> None:
        name = configmap_name(job)
        path = self.kube.core_path(job.namespace, "configmaps", name)
        data = {k.RANKTABLE_KEY: text, k.RANKTABLE_VERSION_KEY: version}
        for _ in range(3):
            cm = self.kube.get(path)
            if cm is None:
                if not self.create_configmap:
                    return
                body = {"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": name, "namespace": job.namespace,
                                     "labels": {k.LABEL_JOB_NAME: job.name},
                                     "ownerReferences": [owner_reference(job)]},
                        "data": data}
                if self.kube.create(self.kube.core_path(job.namespace, "configmaps"), body) is not None:
                    return
                continue  # created meanwhile: update it
            cm["data"] = {**(cm.get("data") or {}), **data}
            try:
                self.kube.call("PUT", path, body=cm)
                return
            except ApiException as e:
                if e.status != 409:
                    raise
        raise RuntimeError(f"ConfigMap {job.namespace}/{name}: conflicting writes, will retry")
