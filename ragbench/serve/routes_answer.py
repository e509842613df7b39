"""The Enterprise assistant: ``POST /v1/ask``, chat sessions, ``POST /v1/feedback``, ``GET /v1/search``.

The principal is always the authenticated one; every hit passes the retriever's ACL check and the post-filter
against the store before it is returned or used.
"""
from __future__ import annotations

import copy
import threading
import uuid
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from ..answer import ChatSession, post_filter
from ..answer.chat import DDL as CHAT_DDL, SCHEMA as CHAT_SCHEMA
from ..errors import DataError, PermissionDenied
from ..retrieval.retriever import MODES
from ..schema import Principal
from .deps import Caller, state_of
from .logs import current_request_id
from .problems import Problem

router = APIRouter(tags=["assistant"])
Mode = str


class AskBody(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a principal (or anything else) in the body is refused
    question: str = Field(min_length=1, max_length=2000)
    retriever: Mode | None = Field(default=None, description=f"one of {', '.join(MODES)} (default: the server's)")
    k: int | None = Field(default=None, ge=1, description="passages per question part (answer.top_k)")


class MessageBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question: str = Field(min_length=1, max_length=2000)


class SessionBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    retriever: Mode | None = None


class FeedbackBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    answer_id: str = Field(min_length=1, max_length=64)
    rating: int = Field(ge=1, le=5)
    comment: str = Field(default="", max_length=2000)


def _mode(request: Request, mode: str | None) -> str:
    if mode is not None and mode.strip().lower() not in MODES + ("keyword",):
        raise Problem(422, f"retriever must be one of {', '.join(MODES)}, found {mode!r}.")
    return mode or state_of(request).default_mode


def _service(request: Request, mode: str | None, k: int | None) -> Any:
    state = state_of(request)
    service = state.service(_mode(request, mode))
    if k is not None:
        if k > state.serve.max_k:
            raise Problem(422, f"k must be ≤ {state.serve.max_k} (serve.max_k), found {k}.")
        service = copy.copy(service)  # shares the retriever, model and caches; only the config differs
        service.cfg = replace(service.cfg, top_k=k, candidate_k=max(service.cfg.candidate_k, k))
    return service


def answer_json(answer: Any, request: Request) -> dict[str, Any]:
    """The JSON of one answer, counted in the metrics (every route that answers comes through here once).
    ``decided_by`` is never in the body: there a restricted-gap refusal must read like a weak retrieval."""
    request.app.state.metrics.answered(answer.refused, answer.refusal_reason, answer.decided_by)
    return {"answer": answer.answer, "refused": answer.refused, "refusal_reason": answer.refusal_reason,
            "citations": [{"doc_id": c.doc_id, "title": c.title, "chunk_id": c.chunk_id, "marker": c.n,
                           "start": c.start, "end": c.end} for c in answer.citations],
            "prompt_version": answer.prompt_version, "model_id": answer.model_id,
            "retrieval_mode": answer.retrieval_mode, "support_ratio": round(answer.support_ratio, 6),
            "answer_id": answer.answer_id, "unanswered_parts": list(answer.unanswered_parts),
            "judge_p_yes": answer.judge_p_yes, "request_id": current_request_id()}


@router.post("/v1/ask", summary="a grounded, cited answer (or a refusal) as the caller")
def ask(body: AskBody, request: Request, who: Caller) -> dict[str, Any]:
    service = _service(request, body.retriever, body.k)
    return answer_json(service.answer(body.question, who), request)


# ---------------------------------------------------------------------------------------------- chat

_session_locks: dict[str, threading.Lock] = {}
_session_locks_guard = threading.Lock()


def _session_lock(session_id: str) -> threading.Lock:
    # Turns of one session are serialised: each appends at the next sequence number.
    with _session_locks_guard:
        return _session_locks.setdefault(session_id, threading.Lock())


def _open_session(request: Request, session_id: str, who: Principal, mode: str | None = None) -> ChatSession:
    state = state_of(request)
    service = state.service(_mode(request, mode))
    try:
        return ChatSession(service, who, session_id=session_id)
    except DataError:
        raise Problem(404, f"no chat session {session_id!r}.") from None
    except PermissionDenied:
        # Someone else's session: answered like an unknown one, so ids cannot be probed.
        raise Problem(404, f"no chat session {session_id!r}.") from None


@router.post("/v1/chat/sessions", status_code=201, summary="start a chat session owned by the caller")
def create_session(request: Request, who: Caller, body: SessionBody | None = None) -> dict[str, Any]:
    state = state_of(request)
    _mode(request, body.retriever if body else None)
    state.store.ensure_schema(CHAT_SCHEMA, CHAT_DDL, 1)
    session_id = uuid.uuid4().hex
    with state.store.transaction() as conn:
        conn.execute("INSERT INTO chat_sessions VALUES (?, ?, ?, ?)",
                     (session_id, who.user_id, "", datetime.now(UTC).isoformat()))
    return {"session_id": session_id, "owner": who.user_id, "request_id": current_request_id()}


@router.post("/v1/chat/sessions/{session_id}/messages", summary="ask in a session (follow-ups are rewritten)")
def session_message(session_id: str, body: MessageBody, request: Request,
                    who: Caller) -> dict[str, Any]:
    with _session_lock(session_id):
        session = _open_session(request, session_id, who)
        answer = session.ask(body.question)
    out = answer_json(answer, request)
    out["session_id"] = session_id
    out["turn"] = len(session.history) // 2
    return out


@router.get("/v1/chat/sessions/{session_id}", summary="the session's history (owner only)")
def session_history(session_id: str, request: Request, who: Caller) -> dict[str, Any]:
    session = _open_session(request, session_id, who)
    return {"session_id": session_id, "owner": who.user_id,
            "messages": [{"role": m.role, "content": m.content, **({"answer_id": m.meta["answer_id"]}
                                                                    if m.meta.get("answer_id") else {})}
                         for m in session.history],
            "request_id": current_request_id()}


# ---------------------------------------------------------------------------------------------- feedback


@router.post("/v1/feedback", status_code=201, summary="rate one of the caller's answers (1–5)")
def feedback(body: FeedbackBody, request: Request, who: Caller) -> dict[str, Any]:
    service = state_of(request).service()
    try:
        service.answer_log.feedback(body.answer_id, who.user_id, body.rating, body.comment)
    except (DataError, PermissionDenied):
        raise Problem(404, f"no answer {body.answer_id!r} given to this principal.") from None
    return {"answer_id": body.answer_id, "rating": body.rating, "request_id": current_request_id()}


# ---------------------------------------------------------------------------------------------- search


@router.get("/v1/search", summary="ACL-aware retrieval hits for the caller")
def search(request: Request, who: Caller, q: str = Query(min_length=1, max_length=2000),
           k: int = Query(default=10, ge=1), retriever: str | None = None) -> dict[str, Any]:
    state = state_of(request)
    if k > state.serve.max_k:
        raise Problem(422, f"k must be ≤ {state.serve.max_k} (serve.max_k), found {k}.")
    service = state.service(_mode(request, retriever))
    raw = service.retriever.search(q, k=max(k, service.cfg.candidate_k), principal=who)
    hits = service._context(post_filter(raw, who, service.store)[:k])
    # Callers are often agents: flagged paragraphs are redacted here as they are before the service's own reader.
    shown = service.quarantine.redact(hits) if service.cfg.quarantine else hits
    return {"query": q, "retrieval_mode": service.retrieval_mode,
            "hits": [{"rank": h.rank, "doc_id": h.doc_id, "chunk_id": h.chunk_id, "title": h.title,
                      "score": round(float(h.score), 6), "text": s.text, "quarantined": s.text != h.text}
                     for h, s in zip(hits, shown, strict=True)],
            "request_id": current_request_id()}
