"""Editions of one document: an answer that quotes an edition that was replaced and the edition that replaced it
states the one in force.

A price list or policy kept for the record answers the same questions as its successor with other values, and the
reader quoted both, last year's price beside this year's (docs/answers.md, session 47). An edition is known by its
metadata: the old document's ``superseded_by``, at the top level (the golden loader's) or under ``front_matter``
(``ragbench ingest``'s). Only the answer's sentences change, never what is read or checked, so no refusal can."""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping, Sequence

from .grounding import split_answer
from ..schema import Hit

#: Words by which a question speaks of the past: then the old edition may be what it asks about ("old" not of an
#: age: "my eight-year-old", "a 6 year old", "how old").
PAST = re.compile(r"\b(?:was|were|did|used to|last year'?s?|previous(?:ly)?|older|earlier|former(?:ly)?|before"
                  r"|back in)\b|(?<![-\w])(?<!years )(?<!year )(?<!how )old\b", re.IGNORECASE)
YEAR = re.compile(r"\b(?:19|20)\d{2}\b")


def front_field(metadata: Mapping[str, Any] | None, name: str) -> Any:
    """``name`` of a document's metadata, read at its top level or under ``front_matter``; None when absent."""
    meta = dict(metadata or {})
    if meta.get(name):
        return meta[name]
    nested = meta.get("front_matter")
    return nested.get(name) if isinstance(nested, Mapping) else None


def successors(metadata: Mapping[str, Any] | None) -> list[str]:
    """The documents a document's ``superseded_by`` names (one id, a list, or ids separated by commas)."""
    value = front_field(metadata, "superseded_by")
    if not value:
        return []
    items = value if isinstance(value, (list, tuple)) else str(value).split(",")
    return list(dict.fromkeys(s for s in (str(v).strip() for v in items) if s))


def asks_about_past(question: str, current_titles: Iterable[str] = ()) -> bool:
    """True when ``question`` speaks of the past: a past-time word, or a year no current edition's title carries
    ("What was it in 2025?", "on the old 2021 policy"; not "the 2026 prices" when the current list is 2026's)."""
    if PAST.search(question):
        return True
    carried = {y for t in current_titles for y in YEAR.findall(t)}
    return any(y not in carried for y in YEAR.findall(question))


def current_sentences(text: str, hits: Sequence[Hit], replaced_by: Mapping[str, set[str]]) -> str | None:
    """``text`` (an answer with ``[n]`` markers into ``hits``) without the sentences that cite only passages of
    documents in ``replaced_by`` (old document → its successors), each left out only when a sentence kept cites one
    of its successors; None when nothing is left out."""
    sentences = split_answer(text)
    docs = [{hits[n - 1].doc_id for n in s.markers if 1 <= n <= len(hits)} for s in sentences]
    old = [bool(d) and d <= set(replaced_by) for d in docs]
    kept_docs = set().union(*(d for d, o in zip(docs, old) if not o))
    drop = [o and all(replaced_by[doc] & kept_docs for doc in d) for d, o in zip(docs, old)]
    if not any(drop):
        return None
    return " ".join(" ".join([s.text, *(f"[{n}]" for n in dict.fromkeys(s.markers))])
                    for s, gone in zip(sentences, drop) if not gone and s.text)
