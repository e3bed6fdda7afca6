"""Fault injection, listing, clearing, and scenario replay."""

from __future__ import annotations

from typing import Any

import yaml
from fastapi import APIRouter, Depends, Query, Request

from ..engine import Engine, FaultRequest
from ..scenario import load_scenario, parse_scenario, scenario_names
from .routes_state import engine_of
from .security import require_token

router = APIRouter(prefix="/v1", tags=["faults"])


@router.post("/faults", status_code=201, dependencies=[Depends(require_token)])
async def inject(body: FaultRequest, engine: Engine = Depends(engine_of)) -> dict[str, Any]:
    return engine.inject(body).public()


@router.get("/faults")
async def list_faults(state: str | None = Query(default=None, description="scheduled, active, cleared, ..."),
                      node: str | None = None, engine: Engine = Depends(engine_of)) -> list[dict[str, Any]]:
    faults = engine.faults.values()
    return [f.public() for f in faults
            if (state is None or f.state == state) and (node is None or any(n == node for n, _ in f.targets))]


@router.get("/faults/{fault_id}")
async def get_fault(fault_id: str, engine: Engine = Depends(engine_of)) -> dict[str, Any]:
    return engine.fault(fault_id).public()


@router.delete("/faults/{fault_id}", dependencies=[Depends(require_token)])
async def clear_fault(fault_id: str, engine: Engine = Depends(engine_of)) -> dict[str, Any]:
    return engine.clear_fault(fault_id).public()


@router.get("/scenarios")
async def list_scenarios() -> list[str]:
    return scenario_names()


@router.post("/scenarios", status_code=201, dependencies=[Depends(require_token)],
             openapi_extra={"requestBody": {"content": {
                 "application/json": {"schema": {"type": "object"}},
                 "application/yaml": {"schema": {"type": "string"}}}, "required": True}})
async def replay(request: Request, engine: Engine = Depends(engine_of)) -> dict[str, Any]:
    """Replay a scenario given in the body, as JSON or YAML; all of its faults are injected or none."""
    raw = await request.body()
    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        raise ValueError(f"scenario body is neither JSON nor YAML: {exc}") from None
    scenario = parse_scenario(data)
    faults = engine.inject_many(scenario.requests())
    return {"scenario": scenario.metadata.name, "faults": [f.public() for f in faults]}


@router.post("/scenarios/{name}", status_code=201, dependencies=[Depends(require_token)])
async def replay_named(name: str, engine: Engine = Depends(engine_of)) -> dict[str, Any]:
    """Replay a scenario from the library in fixtures/scenarios/."""
    scenario = load_scenario(name)
    faults = engine.inject_many(scenario.requests())
    return {"scenario": scenario.metadata.name, "faults": [f.public() for f in faults]}
