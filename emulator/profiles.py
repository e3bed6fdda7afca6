"""Product profiles and cluster specs: the YAML under fixtures/ and their strict pydantic models.

A profile fixes what one kind of server looks like (chips, topology, versions, node labels); a cluster
spec says how many nodes of which profile, their names, ToR grouping and SuperPoD membership.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

API_VERSION = "npu-emu.io/v1alpha1"
_REPO_FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
Generation = Literal["910A", "910B", "A3"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Metadata(_Strict):
    name: str = Field(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=63)


class Versions(_Strict):
    npu_smi: str
    driver: str
    firmware: str


class Board(_Strict):
    board_id: str
    pcb_id: str
    bom_id: str
    pci_vendor_id: str
    pci_device_id: str
    subsystem_vendor_id: str
    subsystem_device_id: str


class ChipSlot(_Strict):
    bus_id: str = Field(pattern=r"^[0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]$")
    numa_node: int = Field(ge=0)
    cpu_affinity: str


class Topology(_Strict):
    kind: Literal["rings", "full-mesh", "superpod"]
    rings: list[list[int]]
    sio_pairs: list[list[int]] = []


class TelemetryDefaults(_Strict):
    temperature_c: int = 45
    hbm_temperature_c: int = 38
    power_w: float = 90.0
    voltage_v: float = 0.85
    hbm_used_mb: int = 0
    ddr_used_mb: int = 0
    aicore_cur_freq_mhz: int = 800


class ProfileSpec(_Strict):
    product: str
    generation: Generation
    chip_name: str
    chip_count: int = Field(ge=1, le=64)
    chips_per_card: int = Field(default=1, ge=1, le=2)
    ai_core_count: int = Field(ge=1)
    hbm_total_mb: int = Field(ge=0)
    ddr_total_mb: int = Field(ge=0)
    aicore_freq_mhz: int = Field(ge=1)
    versions: Versions
    board: Board
    host_arch: Literal["huawei-arm", "huawei-x86"]
    chips: list[ChipSlot]
    topology: Topology
    node_labels: dict[str, str] = {}
    node_capacity: dict[str, str] = {}
    telemetry_defaults: TelemetryDefaults = TelemetryDefaults()

    @model_validator(mode="after")
    def _cross_references(self) -> ProfileSpec:
        if len(self.chips) != self.chip_count:
            raise ValueError(f"chips lists {len(self.chips)} entries but chip_count is {self.chip_count}")
        every = set(range(self.chip_count))
        in_rings = [c for ring in self.topology.rings for c in ring]
        if sorted(in_rings) != sorted(every):
            raise ValueError("topology.rings must name every chip exactly once")
        in_pairs = [c for pair in self.topology.sio_pairs for c in pair]
        if in_pairs and (sorted(in_pairs) != sorted(every) or any(len(p) != 2 for p in self.topology.sio_pairs)):
            raise ValueError("topology.sio_pairs must pair every chip exactly once")
        if self.chip_count % self.chips_per_card:
            raise ValueError("chip_count must be a multiple of chips_per_card")
        return self


class Profile(_Strict):
    apiVersion: Literal["npu-emu.io/v1alpha1"]
    kind: Literal["Profile"]
    metadata: Metadata
    spec: ProfileSpec

    @property
    def name(self) -> str:
        return self.metadata.name


class NodeGroup(_Strict):
    profile: str
    count: int = Field(ge=1, le=131072)
    name_pattern: str = "npu-node-{index}"
    super_pod_size: int = Field(default=0, ge=0, description="nodes per SuperPoD; 0 = not a SuperPoD")

    @model_validator(mode="after")
    def _pattern_has_index(self) -> NodeGroup:
        if self.count > 1 and "{index}" not in self.name_pattern:
            raise ValueError(f"name_pattern {self.name_pattern!r} needs '{{index}}' when count > 1")
        return self


class ClusterSpecBody(_Strict):
    nodes_per_tor: int = Field(default=8, ge=1)
    node_groups: list[NodeGroup] = Field(min_length=1)


class ClusterSpec(_Strict):
    apiVersion: Literal["npu-emu.io/v1alpha1"]
    kind: Literal["ClusterSpec"]
    metadata: Metadata
    spec: ClusterSpecBody


def fixtures_dir() -> Path:
    """fixtures/ of this checkout, or $NPU_EMU_FIXTURES."""
    override = os.environ.get("NPU_EMU_FIXTURES")
    if override:
        return Path(override)
    if not _REPO_FIXTURES.is_dir():
        raise FileNotFoundError(f"npu-emu's fixtures are not at {_REPO_FIXTURES}; install npu-emu from a "
                                "checkout (pip install -e .) or set NPU_EMU_FIXTURES to its fixtures/ folder")
    return _REPO_FIXTURES


def _read_yaml(path: Path) -> Any:
    try:
        with path.open() as f:
            return yaml.safe_load(f)
    except FileNotFoundError:
        raise FileNotFoundError(f"no such file: {path}") from None


def load_profile(name_or_path: str | Path) -> Profile:
    """Load a profile by name (fixtures/profiles/<name>.yaml) or by path."""
    path = Path(name_or_path)
    if not path.suffix:
        path = fixtures_dir() / "profiles" / f"{name_or_path}.yaml"
        if not path.exists():
            raise ValueError(f"unknown profile {str(name_or_path)!r}; known: {', '.join(profile_names())}")
    return Profile.model_validate(_read_yaml(path))


def profile_names() -> list[str]:
    return sorted(p.stem for p in (fixtures_dir() / "profiles").glob("*.yaml"))


def load_cluster_spec(name_or_path: str | Path) -> ClusterSpec:
    """Load a cluster spec by name (fixtures/clusters/<name>.yaml) or by path."""
    path = Path(name_or_path)
    if not path.suffix:
        path = fixtures_dir() / "clusters" / f"{name_or_path}.yaml"
    return ClusterSpec.model_validate(_read_yaml(path))


def simple_cluster_spec(profile: str, count: int, name_pattern: str = "npu-node-{index}",
                        nodes_per_tor: int = 8, super_pod_size: int = 0) -> ClusterSpec:
    """A one-group cluster spec, for command-line flags."""
    return ClusterSpec.model_validate({
        "apiVersion": API_VERSION, "kind": "ClusterSpec", "metadata": {"name": "flags"},
        "spec": {"nodes_per_tor": nodes_per_tor, "node_groups": [
            {"profile": profile, "count": count, "name_pattern": name_pattern,
             "super_pod_size": super_pod_size}]},
    })
