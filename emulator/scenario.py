"""Fault scenarios: YAML timelines of injections, replayed through the engine as one atomic batch."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from .engine import FaultRequest
from .profiles import Metadata, fixtures_dir


class Step(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    at_s: float = Field(default=0, ge=0, description="emulated seconds after the replay starts")
    fault: FaultRequest


class ScenarioBody(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    description: str = ""
    steps: list[Step] = Field(min_length=1, max_length=100_000)


class Scenario(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    apiVersion: Literal["npu-emu.io/v1alpha1"]
    kind: Literal["Scenario"]
    metadata: Metadata
    spec: ScenarioBody

    def requests(self) -> list[FaultRequest]:
        return [step.fault.model_copy(update={"start_after_s": step.fault.start_after_s + step.at_s})
                for step in self.spec.steps]


def parse_scenario(data: Any) -> Scenario:
    return Scenario.model_validate(data)


def scenario_names() -> list[str]:
    return sorted(p.stem for p in (fixtures_dir() / "scenarios").glob("*.yaml"))


def load_scenario(name_or_path: str | Path) -> Scenario:
    path = Path(name_or_path)
    if not path.suffix:
        path = fixtures_dir() / "scenarios" / f"{name_or_path}.yaml"
        if not path.exists():
            raise LookupError(f"unknown scenario {str(name_or_path)!r}; known: {', '.join(scenario_names())}")
    with path.open() as f:
        return parse_scenario(yaml.safe_load(f))
