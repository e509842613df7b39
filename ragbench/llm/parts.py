"""The questions a multi-part question asks (text only: the reader and the answering service both use it).

"A locum starts on Monday. How far ahead must the clinic manager ask for their account, and may the locum sign for
the controlled drugs delivery?" asks two things that live in two documents. :func:`question_parts` splits at a
coordinated clause that opens with a question word or an auxiliary (", and how …", "; and may …") unless that
clause is elliptical ("…, and how many days?" asks the first clause's question again, for a number), gives each
part the question's preceding sentences (and a lead-in before the first question word) as its setting, and keeps a
rewritten follow-up's ``(referring to …)`` subject on every part.
"""
from __future__ import annotations

import re

#: ", and how …" / "; and may …" / " and who …": a second question coordinated with the first.
_AND_Q = re.compile(r"(?:[,;])?\s+and\s+(?=(?:how|what|when|who|whom|which|where|why|can|may|must|should|is|are|"
                    r"do|does|did|will|would|could|has|have)\b)", re.IGNORECASE)
#: A clause that borrows its predicate from the one before ("…, and how many days?", "and for how long?", "and
#: when?"): not a question of its own.
_ELLIPTICAL = re.compile(r"(?:for|by|until|till|from)?\s*(?:how\s+(?:many|much|long|often|far|soon)(?:\s+[^\W\d_]+)?"
                         r"|when|where|why|what\s+for|which\s+ones?)\s*[?.!]*", re.IGNORECASE)
_LEAD_IN = re.compile(r"(.+?,)\s*(?=(?:how|what|when|who|whom|which|where|why|can|may|must|should|is|are|do|does|"
                      r"did|will|would|could|has|have)\b)", re.IGNORECASE)
_SUBJECT = re.compile(r"\s*(\(referring to [^)]*\))\s*$")
_SENTENCE = re.compile(r"(?<=[.?!])\s+|\s+[-–—]\s+(?=(?:how|what|what's|whats|when|who|whom|which|where|why|can|may|"
                       r"must|should|is|are|do|does|did|will|would|could|has|have)\b)", re.IGNORECASE)
#: Abbreviations whose full stop ends no sentence ("at 2 a.m. on Sunday, how quickly …").
_ABBREVIATIONS = frozenset("a.m. p.m. am. pm. e.g. i.e. etc. vs. approx. no. mr. mrs. ms. dr. st.".split())


def _sentences(text: str) -> list[str]:
    """The sentences of ``text``, not split after an abbreviation."""
    out: list[str] = []
    start = 0
    for m in _SENTENCE.finditer(text):
        words = text[start:m.start()].split()
        if words and words[-1].lower() in _ABBREVIATIONS:
            continue
        out.append(text[start:m.start()].strip())
        start = m.end()
    out.append(text[start:].strip())
    return [s for s in out if s]


def split_setting(question: str) -> tuple[str, str]:
    """``(setting, asked)``: the sentences of ``question`` before the one that asks ("I'm 19 and at college." in
    "I'm 19 and at college. Is there a cheaper ticket …?"), which say something about the asker's situation ("" for
    a one-sentence question), and the rest. The asking sentences are those ending in "?", else the last one. A lead-in
    set off by a spaced dash before a question word ("My grandson wants to apply - what's the rate …?") is a sentence,
    as after a full stop."""
    sentences = _sentences(_SUBJECT.sub("", question).strip())
    asking = [i for i, s in enumerate(sentences) if s.endswith("?")] or [len(sentences) - 1]
    return " ".join(sentences[:asking[0]]), " ".join(sentences[asking[0]:])


def question_parts(query: str) -> list[str]:
    """The separate questions of ``query`` (one element, the query itself, when it asks one thing)."""
    m = _SUBJECT.search(query)
    subject = f" {m.group(1)}" if m else ""
    body = query[: m.start()] if m else query
    sentences = _sentences(body.strip())
    if not sentences:
        return [query]
    setting, last = " ".join(sentences[:-1]), sentences[-1]
    clauses = [c.strip() for c in _AND_Q.split(last) if c.strip()]
    if len(clauses) < 2 or any(_ELLIPTICAL.fullmatch(c) for c in clauses[1:]):
        return [query]
    # A lead-in before the first question word ("If a burst comes in on Sunday, how quickly …, and what rate …")
    # sets the scene for every part.
    lead = _LEAD_IN.match(clauses[0])
    shared = " ".join(x for x in (setting, lead.group(1) if lead else "") if x)
    return [" ".join(x for x in (setting if i == 0 else shared, clause) if x) + subject
            for i, clause in enumerate(clauses)]
