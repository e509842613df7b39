"""Layers 1–2: the candidate header the model sees first, and parsing of its ``RETRIEVE <id>`` election.

Ids are the numbers shown in this turn's header (1..k). They mean nothing outside the turn: the header is
transient, so no later prompt can refer to them, and the audit record keeps the number → chunk mapping.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from ..logs import log_decision
from ..schema import Hit
from ..text import truncate_chars

HEADER_OPEN = "--- Potentially Relevant Context ---"
HEADER_CLOSE = "---"
# Kept short on purpose: these lines are paid for on every turn (≈ 50 MiniLM tokens).
HEADER_INSTRUCTIONS = (
    "Entries are short summaries with database ids shown as [ID:<number>].",
    "To read one in full reply exactly RETRIEVE <number>; for several, RETRIEVE <id1> <id2>.",
    "Use the numbers shown, never renumber. Retrieving is optional.",
)
_PRIMARY = re.compile(r"RETRIEVE\s+([\d\s,]+)", re.IGNORECASE)
_DIGITS = re.compile(r"\d+")
_FALLBACK_WORDS = re.compile(r"\b(relevant|retrieve|elect|useful|helpful|applies|related)\b", re.IGNORECASE)
_ID_TAG = re.compile(r"\[ID:(\d+)\]", re.IGNORECASE)
_HEADER_LINE = re.compile(r"^\[ID:(\d+)\]\s?(.*)$")


@dataclass(frozen=True)
class Candidate:
    """One surfaced candidate: the number shown, the hit behind it and its summary line."""

    number: int
    hit: Hit
    summary: str


def summary_line(summary: str, text: str) -> str:
    """The stored summary (trimmed) or, when blank, the text cut to 150 characters (the source's fallback)."""
    s = (summary or "").strip()
    return s if s else truncate_chars(text, 150)


def make_candidates(hits: Sequence[Hit], summaries: dict[str, str]) -> list[Candidate]:
    return [Candidate(i + 1, h, summary_line(summaries.get(h.chunk_id, ""), h.text).replace("\n", " "))
            for i, h in enumerate(hits)]


#: ``eerag.header=compact``: one instruction line (≈ 20 tokens instead of ≈ 55) for electors whose system prompt
#: already explains the protocol (the policy, and the llm elector's eerag.elect prompts).
COMPACT_INSTRUCTIONS = ("Summaries with ids; reply RETRIEVE <id> … to read entries in full (optional).",)
HEADERS = ("full", "compact")


def build_header(candidates: Sequence[Candidate], style: str = "full") -> str:
    """The Layer-1 candidate header: instructions (the source's three lines, or one with ``style="compact"``),
    then one ``[ID:<n>] <summary>`` line per candidate."""
    lines = [HEADER_OPEN, *(COMPACT_INSTRUCTIONS if style == "compact" else HEADER_INSTRUCTIONS)]
    lines += [f"[ID:{c.number}] {c.summary}" for c in candidates]
    lines.append(HEADER_CLOSE)
    return "\n".join(lines)


def parse_header(text: str) -> list[tuple[int, str]]:
    """``(number, summary)`` pairs of a header (used by the policy elector to read what it was shown)."""
    out = []
    for line in text.splitlines():
        m = _HEADER_LINE.match(line.strip())
        if m:
            out.append((int(m.group(1)), m.group(2)))
    return out


def parse_retrieve_ids(response: str) -> list[int]:
    """Ids the model asked for, de-duplicated in first-seen order.

    Primary: the first case-insensitive ``RETRIEVE <ids>`` (digits separated by spaces, commas or newlines).
    Fallback, only without a primary match: if the reply contains one of the words relevant / retrieve / elect /
    useful / helpful / applies / related, every ``[ID:n]`` it mentions. Otherwise nothing.
    """
    m = _PRIMARY.search(response or "")
    if m:
        found = _DIGITS.findall(m.group(1))
    elif _FALLBACK_WORDS.search(response or ""):
        found = _ID_TAG.findall(response)
    else:
        found = []
    out: list[int] = []
    for f in found:
        n = int(f)
        if n not in out:
            out.append(n)
    return out


_LEADING_RETRIEVE = re.compile(r"^\W*RETRIEVE\b", re.IGNORECASE)


def election_failure(reply: str, requested: Sequence[int], kept: Sequence[int]) -> str:
    """Why an election failed ("" when it did not): an empty reply, a reply that starts with RETRIEVE but names no
    id, or one whose ids were all unshown (or over the cap). A plain answer without RETRIEVE is not a failure."""
    if not (reply or "").strip():
        return "empty reply"
    if requested and not kept:
        return f"only unshown ids {list(requested)[:20]}"
    if not requested and _LEADING_RETRIEVE.match(reply):
        return "RETRIEVE without a valid id"
    return ""


def filter_elected(requested: Sequence[int], shown: Sequence[int], max_expand: int) -> tuple[list[int], list[int]]:
    """Keep only ids that were shown (the security constraint), capped at ``max_expand``; return (kept, rejected)."""
    shown_set = set(shown)
    kept: list[int] = []
    rejected: list[int] = []
    for n in requested:
        if n in shown_set and len(kept) < max_expand:
            kept.append(n)
        else:
            rejected.append(n)
    if rejected:
        # Log at most 20 rejected ids so that a reply naming thousands cannot flood the log.
        log_decision("Pipeline", f"Rejected ids (not shown or over the cap of {max_expand}): {rejected[:20]}"
                     + (f" … (+{len(rejected) - 20})" if len(rejected) > 20 else ""),
                     rejected=rejected[:20], rejected_count=len(rejected))
    return kept, rejected
