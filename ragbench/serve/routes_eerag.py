"""EE-RAG + DCS conversations (``ragbench.eerag.conversation``) over the served store:
``POST /v1/eerag/conversations`` (201, a new id), ``POST /v1/eerag/conversations/{id}/messages`` → reply, elected
ids, tags; ``GET /v1/eerag/conversations/{id}`` → history and audit.

A conversation belongs to the principal who created it (by the POST, or by the first message to a new id); anyone
else gets 404, as for an unknown id. Retrieval runs as the caller (ACLs before scoring). Open conversations are
cached per process (at most ``CACHE`` of them, each with a lock, since turns append in order); a cached one whose
stored turn count moved (another worker answered) is re-opened from the store first.
"""
from __future__ import annotations

import re
import threading
import uuid
from collections import OrderedDict
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from ..eerag.conversation import Conversation, conversation_audit
from ..eerag.memory import DDL as MEMORY_DDL
from ..schema import Principal
from .deps import Caller, state_of
from .logs import current_request_id
from .problems import Problem

router = APIRouter(tags=["EE-RAG"])
CACHE = 64
_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
OWNERS_DDL = """
CREATE TABLE IF NOT EXISTS serve_eerag_owners (
    conversation_id TEXT PRIMARY KEY, owner TEXT NOT NULL, created_at TEXT NOT NULL);
"""


class MessageBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = Field(min_length=1, max_length=4000)


class _Open:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.items: OrderedDict[str, tuple[threading.Lock, Conversation | None]] = OrderedDict()

    def entry(self, cid: str) -> tuple[threading.Lock, Conversation | None]:
        with self.lock:
            found = self.items.pop(cid, None) or (threading.Lock(), None)
            self.items[cid] = found
            while len(self.items) > CACHE:
                self.items.popitem(last=False)
            return found

    def put(self, cid: str, lock: threading.Lock, conv: Conversation) -> None:
        with self.lock:
            self.items[cid] = (lock, conv)


def _cache(request: Request) -> _Open:
    app_state = request.app.state
    if not hasattr(app_state, "eerag_open"):
        app_state.eerag_open = _Open()
    return app_state.eerag_open


def _claim(request: Request, cid: str, who: Principal, create: bool) -> None:
    """Make sure ``who`` owns ``cid`` (claiming a new id when ``create``); 404 otherwise."""
    if not _ID.match(cid):
        raise Problem(422, "conversation ids are 1–64 characters of letters, digits, '.', '_' and '-'.")
    store = state_of(request).store
    store.ensure_schema("serve.eerag_owners", OWNERS_DDL, 1)
    store.ensure_schema("eerag.memory", MEMORY_DDL, 1)
    with store.transaction() as conn:
        row = conn.execute("SELECT owner FROM serve_eerag_owners WHERE conversation_id = ?", (cid,)).fetchone()
        if row is None and create:
            # A conversation made outside the API (ragbench eerag chat) has no owner here and is not served.
            if conn.execute("SELECT 1 FROM eerag_conversations WHERE conversation_id = ?", (cid,)).fetchone():
                raise Problem(404, f"no EE-RAG conversation {cid!r} for this principal.")
            conn.execute("INSERT INTO serve_eerag_owners VALUES (?, ?, ?)",
                         (cid, who.user_id, datetime.now(UTC).isoformat()))
            return
    if row is None or row[0] != who.user_id:
        raise Problem(404, f"no EE-RAG conversation {cid!r} for this principal.")


def _conversation(request: Request, cid: str, who: Principal, cached: Conversation | None) -> Conversation:
    state = state_of(request)
    if cached is not None:
        stored = state.store.query("SELECT COUNT(*) FROM eerag_turns WHERE conversation_id = ?", (cid,))[0][0]
        if stored == len(cached.memory):
            cached.pipeline.principal = who  # this request's claims, never an earlier token's
            return cached
    return Conversation.open(state.store, cid, state.cfg, embedder=state.embedder(), principal=who,
                             retrieval_mode=state.default_mode)


@router.post("/v1/eerag/conversations", status_code=201, summary="start an EE-RAG conversation owned by the caller")
def create_conversation(request: Request, who: Caller) -> dict[str, Any]:
    cid = uuid.uuid4().hex
    _claim(request, cid, who, create=True)
    return {"conversation_id": cid, "owner": who.user_id, "request_id": current_request_id()}


@router.post("/v1/eerag/conversations/{conversation_id}/messages",
             summary="one message through EE-RAG (L1–L5): reply, elected ids and [RAG:…] tags")
def conversation_message(conversation_id: str, body: MessageBody, request: Request, who: Caller) -> dict[str, Any]:
    _claim(request, conversation_id, who, create=True)
    cache = _cache(request)
    lock, cached = cache.entry(conversation_id)
    with lock:
        conv = _conversation(request, conversation_id, who, cached)
        result = conv.send(body.text)
        cache.put(conversation_id, lock, conv)
    return {"conversation_id": conversation_id, "reply": result.reply, "answer": result.answer,
            "elected_ids": result.elected_ids, "tags": result.tags, "surfaced_ids": result.surfaced_ids,
            "election_status": result.election_status, "failure": result.failure,
            "context_tokens": result.context_tokens, "model_id": result.model_id, "turn_id": result.request_id,
            "request_id": current_request_id()}


@router.get("/v1/eerag/conversations/{conversation_id}", summary="history and audit (owner only)")
def conversation_history(conversation_id: str, request: Request, who: Caller) -> dict[str, Any]:
    _claim(request, conversation_id, who, create=False)
    store = state_of(request).store
    turns = store.query("SELECT role, content FROM eerag_turns WHERE conversation_id = ? ORDER BY seq",
                        (conversation_id,))
    audit = conversation_audit(store, conversation_id) if turns else []
    return {"conversation_id": conversation_id, "messages": [{"role": r[0], "content": r[1]} for r in turns],
            "audit": audit, "request_id": current_request_id()}
