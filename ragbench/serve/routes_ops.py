"""``GET /healthz`` (the process answers), ``GET /readyz`` (store open, default service and hub index built) and
``GET /metrics`` (Prometheus text)."""
from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from .deps import state_of
from .problems import problem_response

router = APIRouter(tags=["operations"])


@router.get("/healthz", summary="liveness")
def healthz() -> dict[str, Any]:
    return {"status": "ok"}


@router.get("/readyz", summary="readiness: the store answers and the default retriever is indexed")
def readyz(request: Request) -> Any:
    state = state_of(request)
    if not state.ready.is_set():
        detail = f"warm-up failed: {state.warm_error}" if state.warm_error else "warming up (indexing the store)."
        return problem_response(503, detail, headers={"Retry-After": "1"})
    try:
        state.store.query("SELECT 1")
    except Exception as exc:  # noqa: BLE001 - whatever the store raises, the answer is "not ready"
        return problem_response(503, f"store unavailable ({type(exc).__name__}).", "store-unavailable")
    return JSONResponse({"status": "ready", "retriever": state.default_mode, "chunks": state.store.chunk_count(),
                         "hub_entries": len(state.hub_index())})


@router.get("/metrics", summary="Prometheus metrics")
def metrics(request: Request) -> Response:
    body, content_type = request.app.state.metrics.render()
    return Response(body, media_type=content_type)
