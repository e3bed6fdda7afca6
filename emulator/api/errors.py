"""Turning domain errors into 4xx responses whose message names the problem."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError

from ..events import EventsGone


def _describe(errors: Sequence[Any]) -> str:
    parts = []
    for err in errors:
        if err.get("type") == "json_invalid":
            reason = err.get("ctx", {}).get("error", "invalid JSON")
            parts.append(f"malformed JSON body at position {err.get('loc', ('', '?'))[-1]}: {reason}")
            continue
        where = ".".join(str(p) for p in err.get("loc", ()) if p not in ("body",))
        msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        parts.append(f"{where}: {msg}" if where else msg)
    return "; ".join(parts)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(status_code=422, content={"detail": _describe(exc.errors())})

    @app.exception_handler(ValidationError)
    async def _model_validation(_: Request, exc: ValidationError) -> JSONResponse:
        return JSONResponse(status_code=422, content={"detail": _describe(exc.errors())})

    @app.exception_handler(LookupError)
    async def _not_found(_: Request, exc: LookupError) -> JSONResponse:
        return JSONResponse(status_code=404, content={"detail": str(exc.args[0]) if exc.args else "not found"})

    @app.exception_handler(ValueError)
    async def _bad_value(_: Request, exc: ValueError) -> JSONResponse:
        return JSONResponse(status_code=422, content={"detail": str(exc)})

    @app.exception_handler(EventsGone)
    async def _gone(_: Request, exc: EventsGone) -> JSONResponse:
        return JSONResponse(status_code=410, content={"detail": str(exc)})
