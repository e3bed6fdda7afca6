"""The event stream: server-sent events, one per state change, with the sequence number as the SSE id."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import StreamingResponse

from ..engine import Engine
from .routes_state import engine_of

router = APIRouter(prefix="/v1", tags=["events"])
KEEPALIVE_S = 10.0


@router.get("/events", response_class=StreamingResponse)
async def events(request: Request,
                 since: int | None = Query(default=None, ge=0,
                                           description="resume after this seq; default: only new events"),
                 node: str | None = Query(default=None, description="only events of this node (and global ones)"),
                 last_event_id: str | None = Header(default=None),
                 engine: Engine = Depends(engine_of)) -> StreamingResponse:
    if since is None and last_event_id and last_event_id.isdigit():
        since = int(last_event_id)
    cursor = engine.events.last_seq if since is None else since
    if node is not None:
        engine.inventory.node(node)
    engine.events.after(cursor, limit=1)  # raises EventsGone (410) before the stream starts

    async def stream() -> AsyncIterator[str]:
        nonlocal cursor
        waiter = engine.events.waiter()
        try:
            yield f": npu-emu events after {cursor}\n\n"
            while not await request.is_disconnected():
                waiter.clear()
                batch = engine.events.after(cursor)
                if not batch:
                    try:
                        await asyncio.wait_for(waiter.wait(), KEEPALIVE_S)
                    except TimeoutError:
                        yield ": keepalive\n\n"
                    continue
                chunks = []
                for seq, body in batch:
                    cursor = seq
                    if node is not None:
                        event_node = json.loads(body).get("node")
                        if event_node not in (None, node):
                            continue
                    etype = body[body.index('"type":"') + 8:].split('"', 1)[0]
                    chunks.append(f"id: {seq}\nevent: {etype}\ndata: {body}\n\n")
                if chunks:
                    yield "".join(chunks)
        finally:
            engine.events.drop_waiter(waiter)

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
