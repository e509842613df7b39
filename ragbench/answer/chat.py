"""Chat sessions: follow-ups rewritten against the history, history kept in the store.

The history stores the *original* question and the answer text (never the rewrite), as the Enterprise source's
``ChatOrchestrator`` does (seed-behaviour 3.9). A session belongs to one principal: opening someone else's session
raises :class:`PermissionDenied`.
"""
from __future__ import annotations

import uuid
from datetime import datetime, timezone
from typing import Any

from ..errors import DataError, PermissionDenied
from ..llm.signals import salient_terms
from ..schema import Message, Principal
from .rewriter import QUERY_META, rewrite, rewrite_subject
from .service import Answer, AnsweringService

SCHEMA = "answer.chat"
DDL = """
CREATE TABLE IF NOT EXISTS chat_sessions (
    session_id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    title TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS chat_messages (
    session_id TEXT NOT NULL REFERENCES chat_sessions(session_id),
    seq INTEGER NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    answer_id TEXT,
    prompt_version TEXT,
    PRIMARY KEY (session_id, seq)
);
"""
#: ``Message.meta`` key under which an assistant turn keeps the ids of the documents its answer cited.
CITED_META = "cited_docs"


def session_title(question: str) -> str:
    """The first question, cut to 60 characters with an ellipsis."""
    q = question.strip()
    return q if len(q) <= 60 else q[:60] + "\u2026"


class ChatSession:
    """A conversation of one principal with an :class:`AnsweringService`."""

    def __init__(self, service: AnsweringService, principal: Principal | str, session_id: str | None = None,
                 tenant: str | None = None) -> None:
        self.service = service
        self.principal = service.resolve(principal)
        self.tenant = tenant
        self.session_id = session_id
        self.history: list[Message] = []
        service.store.ensure_schema(SCHEMA, DDL, 1)
        if session_id is not None:
            self._load(session_id)

    def _load(self, session_id: str) -> None:
        rows = self.service.store.query("SELECT user_id FROM chat_sessions WHERE session_id = ?", (session_id,))
        if not rows:
            raise DataError(f"unknown chat session {session_id!r}. Fix: start a new session (session_id=None).")
        if rows[0][0] != self.principal.user_id:
            raise PermissionDenied(f"chat session {session_id!r} belongs to another user. Fix: open your own.")
        self.history = []
        for role, content, answer_id in self.service.store.query(
                "SELECT role, content, answer_id FROM chat_messages WHERE session_id = ? ORDER BY seq", (session_id,)):
            # The standalone form is recomputed in order (deterministic), so it is not stored.
            meta: dict[str, Any] = {QUERY_META: self.rewrite(content)} if role == "user" else {}
            if answer_id:
                meta = {"answer_id": answer_id, CITED_META: self._cited_docs(answer_id)}
            self.history.append(Message(role, content, meta))

    def _cited_docs(self, answer_id: str) -> tuple[str, ...]:
        """The documents a logged answer cited (the answer log keeps chunk ids; none when answers are not logged)."""
        entry = self.service.answer_log.get(answer_id) if self.service.log_answers else None
        chunks = [self.service.store.get_chunk(c) for c in (entry or {}).get("cited_chunk_ids", ())]
        return tuple(dict.fromkeys(c.doc_id for c in chunks if c is not None))

    def rewrite(self, question: str, force: bool = False) -> str:
        """The standalone form of ``question`` after this session's history (``answer.rewriter``); with ``force``,
        read as a follow-up whatever its wording (the "subject" rewriter only)."""
        if self.service.cfg.rewriter == "seed":
            return rewrite(question, self.history)
        weights = self.service.term_weights(self.principal)
        # Only words the asker's documents contain are carried: a word of none matches no passage.
        return rewrite_subject(question, self.history, weights, known=weights.df,
                               siblings=self.service.cfg.rewriter_siblings, force=force)

    def focus_docs(self) -> list[str]:
        """The documents this conversation's answers cited, the latest answer's first (``answer.followup_focus``)."""
        docs: list[str] = []
        for m in reversed(self.history):
            if m.role == "assistant":
                docs += [d for d in m.meta.get(CITED_META, ()) if d not in docs]
        return docs

    def ask(self, question: str) -> Answer:
        """Answer a (follow-up) question; the retrieval query is the rewrite, the history keeps the original."""
        if not isinstance(question, str) or not question.strip():
            raise DataError(f"question must be a non-blank string, found {question!r}.")
        query = self.rewrite(question)
        # A turn not worded as a follow-up ("Is there a minimum?", "What if I'm part time?") that its own words cannot
        # answer is read once more as one when it says too little to stand alone: an elliptical question leans on
        # the last turn, one naming its own topic does not.
        context = None
        cfg = self.service.cfg
        if (cfg.followup_context and query == question.strip()
                and len(salient_terms(question)) <= cfg.followup_context_max_terms):
            context = self.rewrite(question, force=True)
        result = self.service.answer(question, self.principal, tenant=self.tenant, query=query,
                                     focus_docs=self.focus_docs(), context_query=context)
        self._append(question.strip(), result, query)
        return result

    def _append(self, question: str, result: Answer, query: str | None = None) -> None:
        store: Any = self.service.store
        with store.transaction() as conn:
            if self.session_id is None:
                self.session_id = uuid.uuid4().hex
                conn.execute("INSERT INTO chat_sessions VALUES (?, ?, ?, ?)",
                             (self.session_id, self.principal.user_id, session_title(question),
                              datetime.now(timezone.utc).isoformat()))
            seq = len(self.history)
            conn.execute("INSERT INTO chat_messages VALUES (?, ?, 'user', ?, NULL, NULL)",
                         (self.session_id, seq, question))
            conn.execute("INSERT INTO chat_messages VALUES (?, ?, 'assistant', ?, ?, ?)",
                         (self.session_id, seq + 1, result.answer, result.answer_id, result.prompt_version))
        self.history.append(Message("user", question, {QUERY_META: query or question}))
        self.history.append(Message("assistant", result.answer, {"answer_id": result.answer_id,
                                                                 CITED_META: tuple(result.cited_doc_ids),
                                                                 "prompt_version": result.prompt_version}))
