"""Nodes, chips, telemetry and separation."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field

from ..engine import Engine
from .security import require_token

router = APIRouter(prefix="/v1", tags=["state"])


def engine_of(request: Request) -> Engine:
    return request.app.state.engine  # type: ignore[no-any-return]


class Process(BaseModel):
    model_config = ConfigDict(extra="forbid")
    pid: int = Field(ge=0)
    name: str = Field(max_length=64)
    memory_mb: int = Field(ge=0)


class Telemetry(BaseModel):
    """Fields to set; omitted fields keep their values."""

    model_config = ConfigDict(extra="forbid")
    temperature_c: int | None = Field(default=None, ge=-40, le=200)
    hbm_temperature_c: int | None = Field(default=None, ge=-40, le=200)
    power_w: float | None = Field(default=None, ge=0, le=2000)
    voltage_v: float | None = Field(default=None, ge=0, le=5)
    aicore_util_pct: int | None = Field(default=None, ge=0, le=100)
    aivector_util_pct: int | None = Field(default=None, ge=0, le=100)
    aicpu_util_pct: int | None = Field(default=None, ge=0, le=100)
    ctrlcpu_util_pct: int | None = Field(default=None, ge=0, le=100)
    hbm_bw_util_pct: int | None = Field(default=None, ge=0, le=100)
    hbm_used_mb: int | None = Field(default=None, ge=0)
    ddr_used_mb: int | None = Field(default=None, ge=0)
    hugepages_total: int | None = Field(default=None, ge=0)
    hugepages_used: int | None = Field(default=None, ge=0)
    aicore_cur_freq_mhz: int | None = Field(default=None, ge=0)
    link_up: bool | None = None
    processes: list[Process] | None = Field(default=None, max_length=1024)
    ecc: dict[str, int] | None = None


@router.get("/nodes")
async def list_nodes(engine: Engine = Depends(engine_of)) -> list[dict[str, Any]]:
    return [n.summary() for n in engine.inventory.nodes.values()]


@router.get("/nodes/{node}")
async def get_node(node: str, engine: Engine = Depends(engine_of)) -> dict[str, Any]:
    return engine.node(node)


@router.get("/nodes/{node}/chips")
async def list_chips(node: str, engine: Engine = Depends(engine_of)) -> list[dict[str, Any]]:
    return engine.node_chips(node)


@router.get("/nodes/{node}/chips/{phy_id}")
async def get_chip(node: str, phy_id: int, engine: Engine = Depends(engine_of)) -> dict[str, Any]:
    return engine.chip(node, phy_id)


@router.patch("/nodes/{node}/chips/{phy_id}/telemetry", dependencies=[Depends(require_token)])
async def set_telemetry(node: str, phy_id: int, body: Telemetry, engine: Engine = Depends(engine_of)) -> dict[str, Any]:
    fields = body.model_dump(exclude_none=True)
    if not fields:
        raise ValueError("telemetry body sets no field")
    return engine.set_telemetry(node, phy_id, fields)


@router.delete("/nodes/{node}/chips/{phy_id}/separation", dependencies=[Depends(require_token)])
async def clear_separation(node: str, phy_id: int, engine: Engine = Depends(engine_of)) -> dict[str, Any]:
    return engine.clear_separation(node, phy_id)
