"""RAG-DAL's agent endpoint: ``POST /search/query`` over the research hub, ``GET /search/health``; and research
jobs: ``POST /v1/research`` (202 + job id) and ``GET /v1/research/{id}``."""
from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from .deps import Caller, state_of
from .logs import current_request_id
from .problems import Problem

router = APIRouter(tags=["research hub"])


class HubQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1, max_length=2000)
    k: int = Field(default=10, ge=1)
    min_tier: int | None = Field(default=None, ge=1, le=3,
                                 description="keep tiers 1..min_tier (1 = academic/official, 3 = community)")
    min_credibility: float | None = Field(default=None, ge=0.0, le=1.0)


class ResearchBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question: str = Field(min_length=3, max_length=500)
    max_passes: int | None = Field(default=None, ge=1, le=4)


@router.post("/search/query", summary="search the research hub (BM25 + dense), filtered by tier and credibility")
def hub_query(body: HubQuery, request: Request, who: Caller) -> dict[str, Any]:
    state = state_of(request)
    if body.k > state.serve.max_k:
        raise Problem(422, f"k must be ≤ {state.serve.max_k} (serve.max_k), found {body.k}.")
    results = state.hub_index().search(body.query, body.k, body.min_tier, body.min_credibility)
    return {"results": [r.to_json() for r in results], "request_id": current_request_id()}


@router.get("/search/health", summary="hub size and index state (no credentials needed)")
def hub_health(request: Request) -> dict[str, Any]:
    index = state_of(request).hub_index()
    index.refresh()
    return {"status": "ok", "entries": len(index.hub), "indexed": len(index), "retrievers": index.retrievers,
            "rebuilds": index.rebuilds, "appended": index.appended, "last_refresh": index.last_refresh}


@router.post("/v1/research", status_code=202, summary="start multi-pass research; poll the returned job")
def start_research(body: ResearchBody, request: Request, who: Caller) -> JSONResponse:
    state = state_of(request)
    passes = body.max_passes or state.serve.research_max_passes
    job = state.jobs().submit(who.user_id, body.question.strip(), passes, current_request_id())
    url = f"/v1/research/{job['job_id']}"
    return JSONResponse({**job, "location": url, "request_id": current_request_id()}, status_code=202,
                        headers={"Location": url})


@router.get("/v1/research/{job_id}", summary="a research job's status and coverage report (submitter only)")
def research_status(job_id: str, request: Request, who: Caller) -> dict[str, Any]:
    job = state_of(request).jobs().get(job_id, who.user_id)
    if job is None:
        raise Problem(404, f"no research job {job_id!r} for this principal.")
    return {**job, "request_id": current_request_id()}
