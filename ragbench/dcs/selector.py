"""``DcsContextSelector``: DCS behind EE-RAG's context-selector hook (structurally; no import of ``eerag``).

* ``select(message, history)`` registers history messages it has not seen (id from ``meta["id"]`` or
  ``meta["message_id"]``, else ``"h<position>"``; time from ``meta["timestamp"]``, else the clock), then returns
  the history messages DCS assembles for ``message``, in conversation order. A blank message selects nothing.
* ``rerank(query, hits)``: the source pipeline's boost — hits whose ``doc_id`` is among the message ids DCS
  assembles for ``query`` move to the front; within each group the order is by score (stable). Ranks are
  renumbered from 0. With ``drop_irrelevant=True`` the other hits are removed (a pre-filter); if that would
  remove everything the hits are kept.
"""
from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Sequence

from ..errors import DataError
from ..schema import Hit, Message
from .assembler import DcsContextAssembler
from .classifier import Classifier


def _timestamp(meta: object) -> datetime | None:
    value = meta.get("timestamp") if hasattr(meta, "get") else None
    if value is None or isinstance(value, datetime):
        return value
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise DataError(f"message timestamp {value!r} is not ISO-8601. Fix: use e.g. 2025-01-15T09:00:00Z.") from None


class DcsContextSelector:
    """Context selection and candidate boosting by DCS identifiers."""

    def __init__(self, assembler: DcsContextAssembler, classifier: Classifier, max_total: int | None = None,
                 drop_irrelevant: bool = False) -> None:
        self.assembler = assembler
        self.classifier = classifier
        self.max_total = max_total
        self.drop_irrelevant = drop_irrelevant

    @staticmethod
    def message_id(message: Message, position: int) -> str:
        meta = message.meta or {}
        return str(meta.get("id") or meta.get("message_id") or f"h{position}")

    def observe(self, history: Sequence[Message]) -> int:
        """Register unseen history messages; returns how many were added."""
        added = 0
        for pos, m in enumerate(history):
            mid = self.message_id(m, pos)
            if mid in self.assembler or not m.content.strip():
                continue
            self.assembler.observe(mid, self.classifier.classify(m.content), m.content, _timestamp(m.meta))
            added += 1
        return added

    def relevant_ids(self, text: str) -> list[str]:
        """Message ids DCS assembles for ``text``, best first (no DCN is created or touched)."""
        if not text.strip():
            return []
        key = self.classifier.classify(text)
        node = self.assembler.match_dcn(key)
        if node is not None:
            key = key.with_dcns((node.dcn_id,))
        return [s.message.message_id for s in self.assembler.assemble(key, self.max_total)]

    def select(self, message: str, history: Sequence[Message]) -> list[Message]:
        self.observe(history)
        keep = set(self.relevant_ids(message))
        return [m for pos, m in enumerate(history) if self.message_id(m, pos) in keep]

    def rerank(self, query: str, hits: Sequence[Hit]) -> list[Hit]:
        relevant = set(self.relevant_ids(query))
        ordered = sorted(hits, key=lambda h: (h.doc_id not in relevant, -h.score))
        if self.drop_irrelevant and relevant & {h.doc_id for h in hits}:
            ordered = [h for h in ordered if h.doc_id in relevant]
        return [replace(h, rank=i) for i, h in enumerate(ordered)]
