"""npu-emu's kwok Stages (fixtures/kwok/stages/<resource>/<stage>.yaml), loaded as plain documents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

__all__ = ["STAGES_DIR", "load_stages", "stage_files"]

from .paths import fixtures_dir

STAGES_DIR = fixtures_dir() / "kwok" / "stages"


def stage_files(directory: Path | None = None) -> list[Path]:
    return sorted((directory or STAGES_DIR).glob("*/*.yaml"))


def load_stages(directory: Path | None = None) -> list[dict[str, Any]]:
    """Every Stage, node ones first. kwokctl replaces ALL its default Stages with these."""
    directory = directory or STAGES_DIR
    stages = []
    for path in stage_files(directory):
        doc = yaml.safe_load(path.read_text())
        if not isinstance(doc, dict) or doc.get("kind") != "Stage":
            raise ValueError(f"{path}: not a kwok Stage")
        if doc["metadata"]["name"] != path.stem:
            raise ValueError(f"{path}: metadata.name {doc['metadata']['name']!r} must match the file name")
        stages.append(doc)
    if not stages:
        raise FileNotFoundError(f"no kwok Stages under {directory}")
    return stages
