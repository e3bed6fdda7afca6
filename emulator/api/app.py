"""The FastAPI application over one engine, and the timer loop that drives the emulated clock."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from fastapi import Depends, FastAPI
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel, ConfigDict, Field

from .. import __version__
from ..clock import MAX_SPEED
from ..engine import Engine
from . import routes_events, routes_faults, routes_state
from .errors import install_error_handlers
from .routes_state import engine_of
from .security import BodyLimit, require_token

TICK_MAX_S = 0.25


class ClockUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    speed: float | None = Field(default=None, gt=0, le=MAX_SPEED)
    advance_s: float | None = Field(default=None, ge=0, le=10 * 365 * 86400)


async def run_timers(engine: Engine, wake: asyncio.Event) -> None:
    """Drain due timers; sleep until the next one is due in wall time (bounded, as speed may change)."""
    while True:
        engine.tick()
        due = engine.next_due_ms()
        delay = TICK_MAX_S if due is None else min(TICK_MAX_S, engine.clock.wall_delay_s(due))
        wake.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(wake.wait(), timeout=max(delay, 0.001))


def create_app(engine: Engine, token: str | None = None) -> FastAPI:
    wake = asyncio.Event()

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        task = asyncio.create_task(run_timers(engine, wake))
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    app = FastAPI(title="npu-emu", version=__version__, lifespan=lifespan,
                  description="Emulated Huawei Ascend NPUs: state, faults, events.")
    engine.on_commit.append(wake.set)  # a mutation may have added an earlier timer
    app.state.engine = engine
    app.state.token = token
    app.add_middleware(BodyLimit)
    install_error_handlers(app)
    app.include_router(routes_state.router)
    app.include_router(routes_faults.router)
    app.include_router(routes_events.router)

    @app.get("/healthz", tags=["misc"])
    async def healthz() -> dict[str, Any]:
        inv = engine.inventory
        return {"status": "ok", "cluster": inv.spec.metadata.name, "nodes": len(inv.nodes),
                "chips": inv.chip_count, "last_seq": engine.events.last_seq}

    @app.get("/v1/clock", tags=["misc"])
    async def get_clock(e: Engine = Depends(engine_of)) -> dict[str, Any]:
        return {"now_ms": e.clock.now_ms(), "speed": e.clock.speed}

    @app.put("/v1/clock", tags=["misc"], dependencies=[Depends(require_token)])
    async def put_clock(body: ClockUpdate, e: Engine = Depends(engine_of)) -> dict[str, Any]:
        if body.speed is None and body.advance_s is None:
            raise ValueError("clock update sets neither 'speed' nor 'advance_s'")
        e.set_clock(speed=body.speed, advance_s=body.advance_s)
        return {"now_ms": e.clock.now_ms(), "speed": e.clock.speed}

    @app.get("/metrics", tags=["misc"], response_class=PlainTextResponse)
    async def metrics(e: Engine = Depends(engine_of)) -> PlainTextResponse:
        from ..metrics import render_metrics

        nodes = [(e.inventory.node(n).summary(), e.node_chips(n)) for n in e.inventory.nodes]
        return PlainTextResponse(render_metrics(nodes), media_type="text/plain; version=0.0.4; charset=utf-8")

    return app
