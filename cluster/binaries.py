"""Where the control-plane binaries live: the per-version cache that ci/build-control-plane.sh fills."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "BUILD_SCRIPT",
    "CONTROL_PLANE_BINARIES",
    "ETCD_VERSION",
    "K8S_VERSION",
    "KWOK_VERSION",
    "VERSION_SET",
    "VOLCANO_VERSION",
    "Binaries",
    "BinariesMissing",
    "default_bin_dir",
    "find_binaries",
]

# Keep in step with ci/build-control-plane.sh (a unit test checks that they agree).
K8S_VERSION = "v1.35.3"
ETCD_VERSION = "v3.6.10"
KWOK_VERSION = "v0.8.0"
VOLCANO_VERSION = "v1.15.1"
VERSION_SET = f"k8s-{K8S_VERSION}_etcd-{ETCD_VERSION}_kwok-{KWOK_VERSION}_volcano-{VOLCANO_VERSION}"
BUILD_SCRIPT = "ci/build-control-plane.sh"
CONTROL_PLANE_BINARIES = (
    "etcd", "kube-apiserver", "kube-controller-manager", "kwok", "kwokctl", "vc-scheduler",
    "vc-controller-manager",
)


class BinariesMissing(RuntimeError):
    """The binary cache lacks something; the message says what and how to build it."""


def default_bin_dir() -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "npu-emu" / "bin" / VERSION_SET


@dataclass(frozen=True, slots=True)
class Binaries:
    """Absolute paths of the control-plane binaries and of the Volcano CRDs copied beside them."""

    dir: Path

    def path(self, name: str) -> Path:
        return self.dir / name

    @property
    def volcano_crds(self) -> list[Path]:
        return sorted((self.dir / "crds" / "volcano").glob("*.yaml"))


def find_binaries(bin_dir: str | Path | None = None) -> Binaries:
    """Locate the binaries: `bin_dir`, else $NPU_EMU_BIN_DIR, else the default cache directory.

    Raises BinariesMissing naming every missing file and the build script that makes them.
    """
    source = "argument"
    if bin_dir is None:
        env = os.environ.get("NPU_EMU_BIN_DIR")
        bin_dir, source = (env, "$NPU_EMU_BIN_DIR") if env else (default_bin_dir(), "default cache")
    directory = Path(bin_dir).expanduser().resolve()
    missing = [b for b in CONTROL_PLANE_BINARIES if not os.access(directory / b, os.X_OK)]
    binaries = Binaries(directory)
    if not binaries.volcano_crds:
        missing.append("crds/volcano/*.yaml")
    if missing:
        raise BinariesMissing(
            f"control-plane binaries missing in {directory} ({source}): {', '.join(missing)}.\n"
            f"Build them with `{BUILD_SCRIPT}` (first run takes a while; it prints the directory), "
            f"or point NPU_EMU_BIN_DIR at a directory that has them."
        )
    return binaries
