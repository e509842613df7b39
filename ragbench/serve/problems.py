"""RFC 9457 problem details: every error is ``application/problem+json`` with ``type``, ``title``, ``status``,
``detail`` and the ``request_id``.

``type`` is ``urn:ragbench:problem:<slug>`` (docs/serve.md lists them). Details never hold document text: typed
errors name the field and the fix; anything unexpected becomes a bare 500 whose detail is only the request id.
"""
from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..errors import BudgetExceeded, ConfigError, DataError, PermissionDenied, RagbenchError, SchemaError, StoreError
from .logs import current_request_id

MEDIA_TYPE = "application/problem+json"
log = logging.getLogger("ragbench.serve")

TITLES = {400: "Bad request", 401: "Unauthorized", 403: "Forbidden", 404: "Not found", 405: "Method not allowed",
          409: "Conflict", 413: "Request body too large", 415: "Unsupported media type",
          422: "Invalid request", 429: "Too many requests", 500: "Internal server error",
          503: "Service unavailable"}
SLUGS = {400: "bad-request", 401: "unauthorized", 403: "forbidden", 404: "not-found", 405: "method-not-allowed",
         409: "conflict", 413: "body-too-large", 415: "unsupported-media-type", 422: "invalid-request",
         429: "rate-limited", 500: "internal", 503: "unavailable"}


class Problem(Exception):
    """Raise anywhere in a route to answer with a problem document."""

    def __init__(self, status: int, detail: str, slug: str | None = None, title: str | None = None,
                 headers: Mapping[str, str] | None = None, **extra: Any) -> None:
        super().__init__(detail)
        self.status, self.detail, self.slug, self.title = status, detail, slug, title
        self.headers = dict(headers or {})
        self.extra = extra


def problem_body(status: int, detail: str, slug: str | None = None, title: str | None = None,
                 request_id: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"type": f"urn:ragbench:problem:{slug or SLUGS.get(status, 'error')}",
            "title": title or TITLES.get(status, "Error"), "status": status, "detail": detail,
            "request_id": request_id or current_request_id(), **extra}


def problem_response(status: int, detail: str, slug: str | None = None, title: str | None = None,
                     headers: Mapping[str, str] | None = None, **extra: Any) -> JSONResponse:
    return JSONResponse(problem_body(status, detail, slug, title, **extra), status_code=status,
                        media_type=MEDIA_TYPE, headers=dict(headers or {}))


def status_of(exc: RagbenchError) -> tuple[int, str]:
    """HTTP status and slug of a typed ragbench error."""
    if isinstance(exc, PermissionDenied):
        return 403, "forbidden"
    if isinstance(exc, BudgetExceeded):
        return 429, "budget-exceeded"
    if isinstance(exc, (DataError, SchemaError, ConfigError)):
        return 422, "invalid-request"
    if isinstance(exc, StoreError):
        return 503, "store-unavailable"
    return 500, "internal"


def install(app: FastAPI) -> None:
    """Exception handlers turning every error into a problem document."""

    @app.exception_handler(Problem)
    async def _problem(request: Request, exc: Problem) -> JSONResponse:
        return problem_response(exc.status, exc.detail, exc.slug, exc.title, exc.headers, **exc.extra)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        detail = exc.detail if isinstance(exc.detail, str) else TITLES.get(exc.status_code, "Error")
        return problem_response(exc.status_code, detail, headers=getattr(exc, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        # Field locations and messages only: pydantic's "input" echo is left out.
        errors = [{"loc": [str(x) for x in e.get("loc", ())], "msg": str(e.get("msg", ""))} for e in exc.errors()]
        where = "; ".join(f"{'.'.join(e['loc'])}: {e['msg']}" for e in errors[:5])
        return problem_response(422, f"the request does not match the schema ({where}).", errors=errors)

    @app.exception_handler(RagbenchError)
    async def _typed(request: Request, exc: RagbenchError) -> JSONResponse:
        status, slug = status_of(exc)
        if status >= 500:
            log.error("request failed: %s", type(exc).__name__)
            return problem_response(status, f"{type(exc).__name__}; see the server log for request "
                                            f"{current_request_id()}.", slug)
        return problem_response(status, str(exc), slug)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error")
        return problem_response(500, f"unexpected server error; see the server log for request "
                                     f"{current_request_id()}.")
