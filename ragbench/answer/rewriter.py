"""Contextual follow-up rewriting (Enterprise source ``ContextualQueryRewriter``, seed-behaviour 3.9).

A follow-up with a pronoun ("What is it capped at?") gets the subject of the previous user question appended as
``(referring to …)``; one that starts with "and", "also" or "what about" is prefixed with the previous question.
The chat history keeps the *original* question as its content and the standalone form in ``meta["query"]``; the
subject is taken from the previous turn's standalone form, so a chain keeps its subject past the second turn
(ragbench addition; "one"/"ones" count as pronouns: "the most serious one").
"""
from __future__ import annotations

import re
from typing import Sequence

from ..schema import Message

PRONOUNS = frozenset({"it", "this", "that", "they", "them", "these", "those", "he", "she", "one", "ones"})
#: ``Message.meta`` key under which a chat session keeps a user turn's standalone (rewritten) form.
QUERY_META = "query"
CONTINUATIONS = ("and ", "also ", "what about ")
_WORD = re.compile(r"[^\W_]+")
_TRAIL = "?.! \t\r\n"


def extract_subject(previous: str) -> str:
    """Text after the first " about ", else after the first " of ", else the last two words longer than three
    characters; trailing ``?.!`` and spaces removed, original casing kept."""
    lower = previous.lower()
    for sep in (" about ", " of "):
        i = lower.find(sep)
        if i >= 0:
            subject = previous[i + len(sep):].rstrip(_TRAIL).strip()
            if subject:
                return subject
    long_words = [w for w in previous.split() if len(w) > 3]
    return " ".join(long_words[-2:]).rstrip(_TRAIL).strip()


def rewrite(query: str, history: Sequence[Message]) -> str:
    """The standalone form of ``query`` given the conversation so far."""
    q = query.strip()
    if not history or not q:
        return q
    # The previous turn's standalone form (when the session kept it) carries the chain's subject forward, so a
    # third turn still knows what the first one was about.
    last = next((m for m in reversed(history) if m.role == "user"), None)
    previous = "" if last is None else str((last.meta or {}).get(QUERY_META) or last.content).strip()
    if not previous:
        return q
    words = {w.lower() for w in _WORD.findall(q)}
    if words & PRONOUNS:
        subject = extract_subject(previous)
        return f"{q} (referring to {subject})" if subject else f"{q} ({previous})"
    if q.lower().startswith(CONTINUATIONS):
        return f"{previous}; {q}"
    return q
