"""Contextual follow-up rewriting (Enterprise source ``ContextualQueryRewriter``, seed-behaviour 3.9).

A follow-up with a pronoun ("What is it capped at?") gets the subject of the previous user question appended as
``(referring to …)``; one that starts with "and", "also" or "what about" is prefixed with the previous question.
The chat history keeps the *original* question as its content and the standalone form in ``meta["query"]``; the
subject is taken from the previous turn's standalone form, so a chain keeps its subject past the second turn
(ragbench addition; "one"/"ones" count as pronouns: "the most serious one").

Seed flaw, fixed by default (``answer.rewriter: subject``): the seed's subject is the text after " about "/" of "
or the last two long words, which carries junk ("their own" from "… approve on their own?", "What have" from "What
do I have to do?") and loses the chain's topic, and a continuation is prefixed with the whole previous question, so
a chain grows by a question per turn. ``rewrite_subject`` appends, to any follow-up (a pronoun or a continuation
opener), the previous standalone question's content words that the follow-up does not already contain and the
asker's documents do (a word of none matches no passage) — with term weights (the asker's IDF), the ``max_terms``
most distinctive ones, in their original order.
``answer.rewriter: seed`` keeps the seed's behaviour (``rewrite``).

A follow-up that names another member of a closed class swaps it for the previous turn's ("and a saturday?" after a
weekday price, "and for my nan?" after a dad, "And in October?" after August): with ``siblings``
(``answer.rewriter_siblings``) the replaced member is not carried, as a code of the same family already is not ("And
a P3?" after P2). Carried, it asks for both days at once, and the sentence that answers the follow-up names only one.
"""
from __future__ import annotations

import re
from typing import Callable, Container, Sequence

from ..llm.signals import QUESTION_WORDS, codes, stem, words
from ..schema import Message
from .kinship import relation

PRONOUNS = frozenset({"it", "its", "this", "that", "they", "them", "their", "theirs", "these", "those", "he", "him",
                      "his", "she", "her", "hers", "one", "ones"})
#: ``Message.meta`` key under which a chat session keeps a user turn's standalone (rewritten) form.
QUERY_META = "query"
CONTINUATIONS = ("and ", "also ", "what about ")
_WORD = re.compile(r"[^\W_]+")
_TRAIL = "?.! \t\r\n"


_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
#: The days each day word spans. A weeknight is Monday to Thursday night: Friday night is priced and paid with the
#: weekend on most rotas and price lists. Two day words are siblings when their spans do not overlap: "Sunday" narrows
#: "the weekend" rather than replacing it.
_DAY_SPANS: dict[str, frozenset[str]] = {**{d: frozenset({d}) for d in _DAYS}, "weekday": frozenset(_DAYS[:5]),
                                         "weeknight": frozenset(_DAYS[:4]), "weekend": frozenset(_DAYS[5:])}
#: Months by name; not "may", which is mostly the verb.
_MONTH_NAMES = frozenset("january february march april june july august september october november december".split())
_SIZES = frozenset({"small", "medium", "large"})


def closed_member(word: str) -> tuple[str, frozenset[str]] | None:
    """The closed class ``word`` belongs to and what it spans there: a day word ("saturdays", "weekend") → its days, a
    month, a family relation (:mod:`ragbench.answer.kinship`: "nan" and "grandparent" span the same), a size; else
    ``None``."""
    w = word.lower()
    days = _DAY_SPANS.get(w) or (_DAY_SPANS.get(w[:-1]) if w.endswith("s") else None)
    if days:
        return "day", days
    if w in _MONTH_NAMES:
        return "month", frozenset({w})
    r = relation(w)
    if r is not None:
        return "kin", frozenset({str(r)})
    return ("size", frozenset({w})) if w in _SIZES else None


def swapped_member(word: str, query: str) -> bool:
    """Whether ``query`` swaps ``word`` for a sibling: it names a member of ``word``'s closed class and none of the
    members it names overlaps ``word`` ("and a saturday?" swaps "weekday"; "the Sunday night of it" narrows
    "weekend" and keeps it)."""
    mine = closed_member(word)
    if mine is None:
        return False
    named = [m[1] for m in map(closed_member, words(query)) if m is not None and m[0] == mine[0]]
    return bool(named) and not any(span & mine[1] for span in named)


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
    """The seed's standalone form of ``query`` given the conversation so far (``answer.rewriter: seed``)."""
    q = query.strip()
    if not history or not q:
        return q
    # The previous turn's standalone form (when the session kept it) carries the chain's subject forward, so a
    # third turn still knows what the first one was about.
    previous = previous_query(history)
    if not previous:
        return q
    typed = {w.lower() for w in _WORD.findall(q)}
    if typed & PRONOUNS:
        subject = extract_subject(previous)
        return f"{q} (referring to {subject})" if subject else f"{q} ({previous})"
    if q.lower().startswith(CONTINUATIONS):
        return f"{previous}; {q}"
    return q


def previous_query(history: Sequence[Message]) -> str:
    """The last user turn's standalone form (its original words when the session kept none)."""
    last = next((m for m in reversed(history) if m.role == "user"), None)
    return "" if last is None else str((last.meta or {}).get(QUERY_META) or last.content).strip()


def is_follow_up(query: str) -> bool:
    """A pronoun ("it", "that", "ones", …) or a continuation opener ("and …", "what about …")."""
    q = query.strip()
    opener = q.lower().startswith((*CONTINUATIONS, "how about "))
    return opener or bool({w.lower() for w in _WORD.findall(q)} & PRONOUNS)


def subject_terms(previous: str, query: str, weight: Callable[[str], float] | None = None,
                  max_terms: int = 6, known: Container[str] | None = None, siblings: bool = False) -> list[str]:
    """Content words of ``previous`` (stop, question-form and pronoun words removed) whose stem ``query`` lacks,
    first-appearance order, no repeats, at most ``max_terms``: the heaviest by ``weight`` (of a stemmed term) when
    given, else the first. A code of a family ``query`` names another member of is left out (P2 when it asks
    "And a P3?"). With ``known`` (the stems the asker's documents contain), a word outside it is left out unless
    it holds a digit: it can match no passage, and by IDF it would weigh most ("turn" of "if I just turn up"). With
    ``siblings``, a member of a closed class ``query`` swaps for another is left out (:func:`swapped_member`)."""
    have = {stem(w) for w in words(query)}
    # A code the follow-up swaps for another of its family ("And a P3?" after a P2 question) is not the subject.
    swapped = {family for family, _ in codes(query)}
    out: list[str] = []
    for w in words(previous, stopwords=True):
        s = stem(w)
        if w in QUESTION_WORDS or w in PRONOUNS or s in have or (len(w) < 2 and not w.isdigit()):
            continue
        if known is not None and s not in known and not any(ch.isdigit() for ch in w):
            continue
        if any(family in swapped for family, _ in codes(w)):
            continue
        if siblings and swapped_member(w, query):
            continue
        have.add(s)
        out.append(w)
    if len(out) <= max_terms:
        return out
    if weight is None:
        return out[:max_terms]
    # Stable sort: among equal weights the earlier word wins, so the choice is deterministic.
    keep = set(sorted(range(len(out)), key=lambda i: -weight(stem(out[i])))[:max_terms])
    return [w for i, w in enumerate(out) if i in keep]


def rewrite_subject(query: str, history: Sequence[Message], weight: Callable[[str], float] | None = None,
                    max_terms: int = 6, known: Container[str] | None = None, siblings: bool = False,
                    force: bool = False) -> str:
    """The standalone form of a follow-up: ``query (referring to <the previous turn's subject terms>)``; other
    questions unchanged, unless ``force`` (any question read as a follow-up). The previous turn's standalone form
    already carries its own subject, so the chain's topic survives every turn while the weight cap keeps the
    rewrite short."""
    q = query.strip()
    if not history or not q or not (force or is_follow_up(q)):
        return q
    terms = subject_terms(previous_query(history), q, weight, max_terms, known, siblings)
    return f"{q} (referring to {' '.join(terms)})" if terms else q
