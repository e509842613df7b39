"""Does the answer actually address the question? A check that runs after per-sentence grounding.

Grounding (:mod:`ragbench.answer.grounding`) only asks whether the answer's sentences are *supported by* the
context; a model that quotes a true sentence on a related topic ("Can I bring my dog to the office?" answered with
the remote-work rule on office days) passes it. This module asks the other question — whether the sentences
*answer* the question — from three signals that need no extra model:

* **coverage**: the share of the question's salient terms that the answer sentences (or the titles of the
  documents they cite) contain, each term weighted by its inverse document frequency over the documents the asker
  may read, so rare terms (names, numbers, specific nouns) count most and "policy" or "employees" barely count.
  Terms are compared after light suffix stripping (``approves`` = ``approved``); a term only of the question's
  setting (the sentences before the one that asks) is not counted. The weights come from permitted
  documents only, so a refusal never depends on text the asker may not see;
* **similarity**: the best cosine between the question and an answer sentence (with an embedder; 0 without);
* **answer type**: a question that asks *who* needs a role or person, *how much* money a currency amount, *how
  many / how long / how often* a number, *when* a time expression, and a question about a *rate* or *percentage*
  a percentage. A reply without an answer of the right kind does not answer the question.

The answer is judged answerable when its type is satisfied and ``coverage ≥ min_coverage`` or
``similarity ≥ min_similarity``; thresholds live in :class:`~ragbench.config.AnswerConfig`
(``answerability_*``). The answer-type lexicons (generic English question words, money, role and time words) live
in :mod:`ragbench.llm.extractive`, whose reader uses them to prefer sentences holding the asked-for kind.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from ..llm.answer_types import (ANSWER_TYPES, MONEY, NUMBER, PERCENT, PHONE, TEMPERATURE, TIME, expected_type,
                                has_type, header_cells, under_headers)
from ..llm.parts import question_parts, split_setting
from ..llm.signals import (QUESTION_WORDS, amount_terms_met, area_conflicts, conflicts, count_conflicts, coverage,
                           graded_codes, is_number, length_conflicts, lettered_codes, numerals, salient_terms, stem,
                           term_set, unglue_units, without_exclusions, words)
from ..schema import Acl, Principal
from ..stages import Embedder
from ..text import STOP_WORDS
from .frequency import zipf
from .kinship import ADDRESS_FORMS, same_relation_in, unlisted_relations
from .synonyms import rare_synonym_stems

if TYPE_CHECKING:
    from ..config import AnswerConfig

__all__ = ["ANSWER_TYPES", "AnswerabilityReport", "PermittedTermWeights", "QUESTION_WORDS", "TermWeights", "assess",
           "assess_answer", "coverage", "expected_type", "has_type", "rule_of", "salient_terms", "stem", "term_set"]


class TermWeights:
    """Inverse document frequencies ``ln((N + 1) / (df + 0.5))`` over a set of documents (a term in no document
    gets the largest weight)."""

    def __init__(self, df: Mapping[str, int], n_docs: int) -> None:
        self.df = dict(df)
        self.n_docs = int(n_docs)

    @classmethod
    def from_term_sets(cls, sets: Iterable[set[str]]) -> "TermWeights":
        df: dict[str, int] = {}
        n = 0
        for terms in sets:
            n += 1
            for t in terms:
                df[t] = df.get(t, 0) + 1
        return cls(df, n)

    @classmethod
    def from_texts(cls, texts: Iterable[str]) -> "TermWeights":
        return cls.from_term_sets(doc_terms(t) for t in texts)

    def __call__(self, term: str) -> float:
        return math.log((self.n_docs + 1) / (self.df.get(term, 0) + 0.5))


def doc_terms(text: str) -> set[str]:
    """A document's stemmed terms and its graded codes ("level 5", "grade iv", with the space, so no word
    collides): what a document must contain for a question's term or code to count as known."""
    return term_set(text) | graded_codes(text) | lettered_codes(text)


class PermittedTermWeights:
    """:class:`TermWeights` over the documents (title and text) of a store that a principal may read.

    Term sets are read once and re-read only when the store's documents change (ids, content hashes or ACLs);
    the weights are cached per principal. Restricting the counts to permitted documents keeps every refusal
    decision independent of text the asker may not see."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self._signature: str | None = None
        self._docs: list[tuple[Acl, set[str]]] = []
        self._by_doc: dict[str, set[str]] = {}
        self._cache: dict[Principal, TermWeights] = {}

    def _refresh(self) -> None:
        rows = [tuple(r) for r in self.store.query("SELECT doc_id, sha256, acl FROM documents ORDER BY doc_id")]
        signature = hashlib.sha256(json.dumps(rows).encode("utf-8")).hexdigest()
        if signature == self._signature:
            return
        docs = list(self.store.documents())
        self._by_doc = {d.doc_id: doc_terms(f"{d.title}\n{d.text}") for d in docs}
        self._docs = [(d.acl, self._by_doc[d.doc_id]) for d in docs]
        self._cache = {}
        self._signature = signature

    def for_principal(self, principal: Principal) -> TermWeights:
        self._refresh()
        if principal not in self._cache:
            self._cache[principal] = TermWeights.from_term_sets(t for acl, t in self._docs if acl.allows(principal))
        return self._cache[principal]

    def document_terms(self, doc_ids: Iterable[str]) -> set[str]:
        """The terms of these documents together (title and text; unknown ids add nothing)."""
        self._refresh()
        out: set[str] = set()
        for doc_id in doc_ids:
            out |= self._by_doc.get(doc_id, set())
        return out


_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def one_edit(word: str) -> set[str]:
    """Every string one deletion, swap of neighbours, substitution or insertion of a letter away from ``word``."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    return ({a + b[1:] for a, b in splits if b} | {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
            | {a + c + b[1:] for a, b in splits if b for c in _LETTERS}
            | {a + c + b for a, b in splits for c in _LETTERS}) - {word}


def misspelling(word: str, vocabulary: Mapping[str, int]) -> bool:
    """True when ``word`` (5 letters or more) is one edit from a word whose stem is in ``vocabulary`` (stem →
    document frequency) and nearly as long as ``word``, and is itself no common English word (Zipf under 3.0):
    "anual" (1.58) of "annual", "paswords" of "passwords". Such a word is a slip of the asker's, not a thing the
    documents lack. The length bound keeps a suffix from counting as a slip ("nursery" is no misspelt "nurses",
    whose stem is "nurs"); the frequency bound keeps a real word from counting as one ("curtains", 3.66, is one
    letter from "certains")."""
    w = word.lower()
    if len(w) < 5 or zipf(w) >= 3.0:
        return False
    return any(vocabulary.get(t, 0) > 0 and len(t) >= len(w) - 1 for t in map(stem, one_edit(w)))


_PRONOUNS = frozenset("hers theirs ours yours mine thine whom whose".split())


_MONTH_NAMES = "january february march april may june july august september october november december".split()
_MONTHS = "|".join(_MONTH_NAMES)
# "from April 2026", "starting 1 September", "after 2026/27", "from next August", "from next year"
_CHANGE_DATE = re.compile(rf"\b(?:from|starting|after)\s+((?:next\s+)?(?:\d{{1,2}}(?:st|nd|rd|th)?\s+)?(?:{_MONTHS})"
                          rf"(?:\s+\d{{4}})?|\d{{4}}(?:/\d{{2}})?|next\s+(?:year|month|term|season|week))\b", re.I)


def change_dates(question: str) -> list[str]:
    """The dates a question asks from ("What will it cost from April 2026?" → ``["April 2026"]``): a question about
    what holds from a date asks about a change."""
    return [m.group(1) for m in _CHANGE_DATE.finditer(question)]


_YEAR = re.compile(r"(?<![\d£$€.,])((?:19|20)\d{2})(?:\s*[/–-]\s*(\d{4}|\d{2}))?(?!\d|[.,]\d)")


def years(text: str) -> list[str]:
    """The calendar years ``text`` names, once each in order ("in 2024", "31 March 2026"; a financial year or season
    "FY 2023/24" names 2023 and 2024); not amounts ("£2,025", "2,025", "2025.50") or longer numbers."""
    out: list[str] = []
    for m in _YEAR.finditer(text):
        out.append(m.group(1))
        end = _label_end(m)
        if end is not None:
            out.append(end)
    return list(dict.fromkeys(out))


def _label_end(m: re.Match[str]) -> str | None:
    """The second year of a :data:`_YEAR` match that is a financial year's label ("2023/24" → "2024"); None for a
    year alone, a range of years or a code ("2023-17")."""
    end = m.group(2)
    if end is None:
        return None
    full = end if len(end) == 4 else m.group(1)[:2] + end
    return full if int(full) == int(m.group(1)) + 1 else None


def states_date(date: str, evidence: str) -> bool:
    """Whether ``evidence`` states ``date`` as asked: its month, then its year when one is asked ("1 April 2026",
    "April 1, 2026"; "31 March 2026" does not state "April 2026"); the day and "next" are not required."""
    words = [t for t in re.findall(r"[a-z0-9/]+", date.lower())
             if t != "next" and not re.fullmatch(r"\d{1,2}(st|nd|rd|th)?", t)]
    if not words:
        return True
    gap = r"[\s,]+(?:\d{1,2}(?:st|nd|rd|th)?[\s,]+)?"
    return re.search(r"\b" + gap.join(map(re.escape, words)) + r"\b", evidence.lower()) is not None


#: A closure to come ("When is the Dowerby shop closing down?", "Is Saltcote depot closing, and if so when?", "…
#: going to close"), not a day's hours ("closing today", "close on Saturdays", "closing time").
_CLOSURE = re.compile(r"\b(?:going\s+to\s+close|(?:is|are|be)\s+(?:[\w'’-]+\s+){0,5}?closing"
                      r"|will\s+(?:[\w'’-]+\s+){0,3}?close|clos(?:e|es|ing)\s+(?:down|for\s+good|permanently)"
                      r"|shut(?:ting)?\s+down)\b", re.I)
_DAY_HOURS = re.compile(r"\b(?:today|tonight|tomorrow|(?:mon|tues|wednes|thurs|fri|satur|sun)days?|weekends?|bank\s+"
                        r"holidays?|lunch|christmas|closing\s+time|what\s+time|early)\b", re.I)
#: Asked anywhere in the question ("Is Harrowmead going to close? When?", "…, and if so when?").
_WHEN_ASKED = re.compile(r"\bwhen\b|\b(?:what|which)\s+(?:date|day)\b", re.I)
_MONTH_SHORT = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)"
#: A date on the calendar: a day with its month ("30 September", "September 30th"), a month with its year ("March
#: 2027"), a numeric date ("30/09/2026", "2026-09-30"); a year alone is read by :func:`years`.
#: A numeric date with slashes ("30/09/2026", "31/03/27").
_SLASH_DATE = re.compile(r"\b\d{1,2}/\d{1,2}/\d{2,4}\b")
_CALENDAR_DATE = re.compile(rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS}|{_MONTH_SHORT})\b"
                            rf"|\b(?:{_MONTHS}|{_MONTH_SHORT})\.?\s+(?:\d{{1,2}}(?:st|nd|rd|th)?\b|\d{{4}}\b)"
                            rf"|{_SLASH_DATE.pattern}|\b\d{{4}}-\d{{2}}-\d{{2}}\b", re.I)


#: A period named by its end ("the full year to March 2026", "the half-year to 30 September 2026", "the year ended 31
#: March 2025", "the quarter ending June"): its figures are that period's, not those of another period in the table.
_PERIOD_END = re.compile(rf"\b(year|half[\s-]?year|months?|quarter|period)\s+(?:to|ended|ending)\s+(?:the\s+)?"
                         rf"(?:\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?)?({_MONTHS}|{_MONTH_SHORT})\b\.?"
                         r"(?:,?\s*(\d{4})\b)?", re.I)
#: A month as a date states it: with a day before it or a year after it, or after "to"/"ended"/"ending"/"until".
_MONTH_IN_DATE = re.compile(rf"(?:\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?|\b(?:to|ended|ending|until)\s+)?"
                            rf"\b({_MONTHS}|{_MONTH_SHORT})\b\.?(?:,?\s*(?:\d{{1,2}}(?:st|nd|rd|th)?,?\s+)?(\d{{4}})\b)?",
                            re.I)
_NUMERIC_DATE = re.compile(r"\b\d{1,2}/(\d{1,2})/(\d{4})\b|\b(\d{4})-(\d{2})-\d{2}\b")


def _month(name: str) -> int:
    """1–12 for a month's name or short form ("Sept" → 9)."""
    return next(i for i, m in enumerate(_MONTH_NAMES, 1) if m.startswith(name.lower()[:3]))


#: A span of months with its year ("October to December 2026", "Apr–Sep 2026"): a period named by its two ends.
_MONTH_SPAN = re.compile(rf"\b(?:{_MONTHS}|{_MONTH_SHORT})\.?\s*(?:to|until|through|-|–)\s*({_MONTHS}|{_MONTH_SHORT})"
                         r"\b\.?,?\s*((?:19|20)\d{2})\b", re.I)


def period_ends(text: str, spans: bool = False) -> list[tuple[str, int, str | None, bool]]:
    """The periods ``text`` asks about by their end: (as written, month 1–12, year or None, whether year-long) —
    "What was total income for the full year to March 2026?" → ``[("March 2026", 3, "2026", True)]``; with
    ``spans`` also a span of months with its year ("for October to December 2026" → ``("December 2026", 12,
    "2026", False)``)."""
    out = []
    for m in _PERIOD_END.finditer(text):
        unit, month, year = m.group(1).lower(), m.group(2), m.group(3)
        written = f"{month} {year}" if year else month
        out.append((written, _month(month), year, unit == "year"))
    if spans:
        ends = {(month, year) for _, month, year, _ in out}
        out += [(f"{m.group(1)} {m.group(2)}", _month(m.group(1)), m.group(2), False)
                for m in _MONTH_SPAN.finditer(text) if (_month(m.group(1)), m.group(2)) not in ends]
    return out


def states_period_end(month: int, year: str | None, year_long: bool, text: str) -> bool:
    """Whether ``text`` states the end of an asked period: that month as a date ("30 Sept 2026", "March 2026", "to
    March"), with the asked year when there is one, or a numeric date of that month and year; for a year-long period
    a financial year ending in the asked year ("2025-26", "FY 2025/26") states it too."""
    for m in _MONTH_IN_DATE.finditer(text):
        dated = m.group(0)[:1].isdigit() or m.group(3) is not None or m.group(0).lower().startswith(
            ("to", "ended", "ending", "until"))
        if dated and _month(m.group(2)) == month and (year is None or m.group(3) == year):
            return True
    for m in _NUMERIC_DATE.finditer(text):
        mon, yr = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
        if int(mon) == month and (year is None or yr == year):
            return True
    return year_long and year is not None and any(full == year for _, full in year_labels(text))


#: The top of a band ("the top of the qualified technician pay band", "the maximum of the E1 band", "at the top of
#: their pay scale").
_BAND_TOP = re.compile(r"\b(?:top|maximum|max|upper\s+end|ceiling)\s+of\s+(?:the\s+|their\s+|our\s+|your\s+|an?\s+)?"
                       r"(?:[\w'’-]+\s+){0,5}?(?:band|scale|range|grade)\b", re.I)
_MONEY = re.compile(r"[£$€]\s?\d[\d,]*(?:\.\d+)?")
#: An amount with an upper bound: "up to £800", "to £31,800", "£27,500–£31,800", "maximum £15.70".
_UPPER_BOUND = re.compile(r"\b(?:up\s+to|maximum|max|top|at\s+most|rising\s+to|to)\s+[£$€]\s?\d"
                          r"|[£$€]\s?\d[\d,.]*\s*(?:-|–|to)\s*[£$€]?\s?\d", re.I)
#: A range written out: "between £24,000 and £28,000".
_BETWEEN = re.compile(r"\bbetween\s+[£$€]\s?\d[\d,.]*\s+and\s+[£$€]?\s?\d", re.I)


#: A month asked about with its year, as a point ("in March 2025", "at 30 June 2026", "the June 2026 board meeting"),
#: not a period's end, a change or a deadline ("to March 2026", "from April 2026", "by May 2026").
_MONTH_ASKED = re.compile(rf"(?<!\w)(?:(?:to|ended|ending|from|starting|after|until|by|before)\s+(?:the\s+)?"
                          rf"(?:\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?)?)?({_MONTHS})\s+((?:19|20)\d{{2}})\b", re.I)
_BOUNDARY = re.compile(r"(?:to|ended|ending|from|starting|after|until|by|before)\s", re.I)


def months_asked(text: str) -> list[tuple[str, int]]:
    """The months ``text`` asks about as points, with their year: (as written, month 1–12) — "What was monthly
    churn in March 2025?" → ``[("March 2025", 3)]``; "the year to March 2026" → ``[]``."""
    return [(f"{m.group(1)} {m.group(2)}", _month(m.group(1))) for m in _MONTH_ASKED.finditer(text)
            if not _BOUNDARY.match(m.group(0))]


def names_month(month: int, text: str) -> bool:
    """Whether ``text`` names the month (its name or short form, "Sept"); May only as a date ("1 May", "May 2026",
    "to May"), since "may" is also a verb."""
    if month != 5:
        return re.search(rf"\b(?:{_MONTH_NAMES[month - 1]}|{_MONTH_NAMES[month - 1][:3]}"
                         rf"{'t' if month == 9 else ''}?)\b", text, re.I) is not None
    return states_period_end(5, None, False, text)


#: A part of a year: "H1", "Q3", "half", "half-year", "quarter", "six months" ("H1 2025-26" is half of 2025-26).
_PART = r"\b(?:H[12]|Q[1-4]|half(?:[\s-]?year)?|quarter|months)"
_YEAR_PART = re.compile(_PART + r"\b", re.I)
#: A part of a year right before a label ("H1 ", "Same half ", "six months of ").
_BEFORE_PART = re.compile(_PART + r"\s+(?:of\s+|to\s+)?(?:the\s+)?(?:FY\s*)?$", re.I)


def asks_year_part(text: str) -> bool:
    """Whether ``text`` asks about a part of a year ("the first half of 2026-27", "Q2 2025/26")."""
    return _YEAR_PART.search(text) is not None


def year_labels(text: str, whole: bool = False) -> list[tuple[str, str]]:
    """The financial years or seasons ``text`` names by their label — two years, the second the first's next, joined
    by "-", "–" or "/" — as (as written, its second year): "What were total sales for the full year 2025-26?" →
    ``[("2025-26", "2026")]``; not a range of years ("2023-2025") or a code ("2023-17"). With ``whole``, not a
    label named as a part of its year ("H1 2025-26", "Same half 2025-26")."""
    out = []
    for m in _YEAR.finditer(text):
        end = _label_end(m)
        if end is not None and not (whole and _BEFORE_PART.search(text, 0, m.start())):
            out.append((m.group(0), end))
    return out


def states_year_label(end_year: str, text: str, whole: bool = False) -> bool:
    """Whether ``text`` states the financial year ending in ``end_year``: its label in any form ("2025-26",
    "2025/2026") or a year-long period ending that year ("the year to 31 March 2026"); with ``whole``, not as a
    part of that year ("H1 2025-26")."""
    return (any(full == end_year for _, full in year_labels(text, whole))
            or any(long and year == end_year for _, _, year, long in period_ends(text)))


#: A place abroad asked about ("a business trip abroad", "fieldwork overseas", "outside the UK").
_ABROAD_ASKED = re.compile(r"\b(?:abroad|overseas|foreign\s+(?:country|countries|trips?|travel)"
                           r"|outside\s+(?:the\s+)?(?:uk|united\s+kingdom|country|britain))\b", re.I)
#: Words that speak of a place abroad.
_ABROAD_SAID = re.compile(r"\b(?:abroad|overseas|foreign|international|outside\s+(?:the\s+)?(?:uk|united\s+kingdom"
                          r"|country|britain|great\s+britain)|europe|european|eu|worldwide)\b", re.I)


def asks_abroad(question: str) -> bool:
    """Whether ``question`` asks about a place abroad ("What is the hotel limit for a trip abroad?")."""
    return _ABROAD_ASKED.search(question) is not None


def speaks_of_abroad(text: str) -> bool:
    """Whether ``text`` speaks of a place abroad (abroad, overseas, foreign, international, outside the UK, Europe,
    the EU, worldwide); "Elsewhere in the UK | £90" does not."""
    return _ABROAD_SAID.search(text) is not None


#: An interest rate asked for ("the interest rate on the term loan", "the rate of interest", "the APR", "the AER").
_INTEREST_ASKED = re.compile(r"\binterest\s+rates?\b|\brates?\s+of\s+interest\b|\b(?:apr|aer)\b", re.I)
#: A percentage stated with its number ("5.4%", "5.24 per cent", "five percent"). Unlike the answer type's percent
#: test (:func:`has_type`), the word "percentage" alone and an amount per unit do not count.
_PERCENTAGE = re.compile(r"(?:\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|half))\s*(?:%|per\s*cent\b"
                         r"|percent\b)", re.I)


#: Sick pay by name ("sick pay", "company sick pay", "sickness pay", "sick leave pay"). Maternity, paternity and
#: adoption pay are not read so: statutory pay for them is stated as money a week.
_SICK_PAY = re.compile(r"\bsick(?:ness)?(?:\s+leave)?\s+pay\b", re.I)


def asks_sick_pay(question: str) -> bool:
    """Whether ``question`` asks about sick pay ("What company sick pay does an employee with six years' service
    get?"); "How much paternity pay do we give?" does not."""
    return _SICK_PAY.search(question) is not None


def asks_interest_rate(question: str) -> bool:
    """Whether ``question`` asks for an interest rate ("What interest rate is the bank charging on the loan?", "What
    is the APR on a personal loan?")."""
    return _INTEREST_ASKED.search(question) is not None


#: A profit asked for ("What profit did Welterby make last year?", "the operating result for the half", "EBITDA");
#: "surplus" is left out, as it also names spare stock ("surplus bread").
_PROFIT_ASKED = re.compile(r"\b(?:profits?|ebitda|(?:operating|net)\s+(?:result|loss))\b", re.I)
#: A profit or loss named by an answer sentence or its headings and table headers.
_PROFIT_STATED = re.compile(r"\b(?:profits?|loss(?:es)?|surplus|deficit|ebitda|(?:operating|net)\s+result)\b", re.I)


def asks_profit(question: str) -> bool:
    """Whether ``question`` asks for a profit or loss ("What profit did Wythenbury make last year?", "What was the
    operating result for the half year?")."""
    return _PROFIT_ASKED.search(question) is not None


def states_profit(text: str) -> bool:
    """Whether ``text`` names a profit or loss ("Operating profit | £61,000", "a surplus of £24,000"); a turnover,
    a price or a rent does not."""
    return _PROFIT_STATED.search(text) is not None


def states_percentage(text: str) -> bool:
    """Whether ``text`` states a percentage with its number ("5.4%", "5.24 per cent fixed", "2.75% above base
    rate"); "£5,200 a month including interest" does not."""
    return _PERCENTAGE.search(text) is not None


#: Mileage asked for: "the mileage rate", "how much a mile", "per mile", "claim back for the distance".
_MILEAGE_ASKED = re.compile(r"\bmileage\b|\b(?:per|a|each)\s+mile\b|\bthe\s+distance\b", re.I)
#: The kinds of vehicle other than a car, each by the words that name it. A car is what a mileage table is mostly
#: about and is often written as "own vehicle", so it is not required.
VEHICLE_KINDS: dict[str, re.Pattern[str]] = {
    "van": re.compile(r"\bvans?\b", re.I),
    # "motor bike" written apart is a motorbike, not a bike.
    "bicycle": re.compile(r"\b(?:bicycles?|(?<!motor )(?<!motor-)bikes?|cycl(?:e|es|ed|ing|ist|ists)|pushbikes?"
                          r"|e-?bikes?)\b", re.I),
    "motorbike": re.compile(r"\b(?:motor\s?bikes?|motorcycles?|mopeds?|scooters?)\b", re.I),
}


def vehicles_asked(question: str) -> list[str]:
    """The kinds of vehicle other than a car that ``question`` asks mileage for ("what's the mileage rate if I use my
    own van" → ``["van"]``); none when it asks no mileage."""
    if _MILEAGE_ASKED.search(question) is None:
        return []
    return [kind for kind, words in VEHICLE_KINDS.items() if words.search(question)]


def names_vehicle(kind: str, text: str) -> bool:
    """Whether ``text`` names the vehicle ``kind`` (a key of :data:`VEHICLE_KINDS`) by any of its words ("Bicycle |
    20p" names a bike)."""
    return VEHICLE_KINDS[kind].search(text) is not None


_MILES = re.compile(r"\bmiles?\b", re.I)
#: A rate per mile: pence ("45p", "24.5p"), a fraction of a pound ("£0.45", "£.45"), or an amount "a mile", "per mile".
_MILEAGE_RATE = re.compile(r"(?<![\w.,£$€])\d{1,3}(?:\.\d+)?\s?p\b|[£$€]\s?0?\.\d{1,2}\b"
                           r"|\b(?:per|a|each|every)\s+(?:business\s+|work\s+)?mile\b", re.I)


def states_mileage_rate(text: str) -> bool:
    """Whether ``text`` states a rate per mile ("Private van | 52p", "£0.45 a mile"): a van's sale value of £31,000
    "depending on mileage" states none."""
    return _MILEAGE_RATE.search(text) is not None


def known_by_kind(word: str, text: str) -> bool:
    """Whether ``text`` names what ``word`` names by another word of the same closed class: a vehicle kind of
    :data:`VEHICLE_KINDS` ("motorbike" by "Motorcycle | 24p"), or "mileage" by "mile" or "miles" ("45p per mile").
    Such a word is no rare word the documents lack when the answer says it so."""
    if word.lower() == "mileage":
        return _MILES.search(text) is not None
    return any(words.fullmatch(word) is not None and names_vehicle(kind, text) for kind, words in VEHICLE_KINDS.items())


#: A word for a disciplinary measure in general ("What sanction did the driver get?"), which a case record names by
#: the measure itself.
_SANCTION_WORDS = re.compile(r"sanctions?|punishments?", re.I)
#: A disciplinary outcome: a warning of a stage ("final written warning", "first written warning", "verbal warning"),
#: dismissal, suspension, demotion, or no further action.
_SANCTION_STATED = re.compile(r"\b(?:(?:first|second|final|formal|verbal|oral|written)\s+(?:written\s+)?warning"
                              r"|dismiss(?:al|ed)|suspen(?:sion|ded)|demot(?:ion|ed)|no\s+further\s+action)\b", re.I)


def names_sanction(word: str, text: str) -> bool:
    """Whether ``word`` asks for a disciplinary measure in general ("sanction", "punishment") and ``text`` states
    one ("Final written warning; it stays current for 18 months"): a case record names the outcome, not its class,
    so the word is no rare word the documents lack when the answer states an outcome."""
    return _SANCTION_WORDS.fullmatch(word) is not None and _SANCTION_STATED.search(text) is not None


#: The most someone can earn ("the most a room leader can earn per hour"), or a maximum, highest or top salary, wage,
#: pay or hourly rate ("max salary for a property manager", "the highest freelance hourly rate").
_TOP_PAY = re.compile(r"\bmost\s+(?:an?\s+|the\s+|our\s+|your\s+|their\s+|my\s+)?(?:[\w'’-]+\s+){0,5}?"
                      r"(?:can|could|will|would|might|may)\s+(?:ever\s+)?earn\b"
                      r"|\b(?:max(?:imum)?|highest|top)\s+(?:[\w'’-]+\s+){0,2}?"
                      r"(?:salary|salaries|wages?|pay|hourly\s+rate|rate\s+of\s+pay)\b", re.I)


def asks_band_top(question: str, top_pay: bool = False) -> bool:
    """Whether ``question`` asks for the top of a band, scale, range or grade ("What's the top of the presser pay
    band?"): the band's upper end answers it, not where it starts. With ``top_pay``, so does a question asking the
    most someone can earn or a maximum salary, wage or pay rate ("What's the most a room leader can earn per
    hour?")."""
    return _BAND_TOP.search(question) is not None or (top_pay and _TOP_PAY.search(question) is not None)


#: A table cell under a column for a band's top ("Top of band (per hour) £15.95", "Maximum £31,800"), as
#: :func:`~ragbench.llm.answer_types.under_headers` writes a row: the header's words, then the cell.
_TOP_CELL = re.compile(r"\b(?:top|maximum|max|ceiling|upper)\b[^|]*?[£$€]\s?\d", re.I)


#: What a named third party charges, asked ("what does Tallowin charge us per hour for me", "how much is Silverplate
#: charging Tamberlow"): the words between the verb and "charge" name who charges. No question word inside.
_WHO = r"(?:(?!\b(?:what|how|and)\b)[^,;?])+?"
_CHARGE_ASKED = re.compile(r"\b(?:what|how\s+much)\s+(?:(?:does|do|did|will|would)\s+(?P<who>" + _WHO
                           + r")\s+(?:charge|bill|invoice)|(?:is|are)\s+(?P<who2>" + _WHO
                           + r")\s+(?:charging|billing|invoicing))\b", re.I)
#: Who is the organisation itself, the asker or no one named, not a third party: "the college", "my agency", "your
#: shop", "it" ("How much would it cost to charge my car?").
_OWN_SUBJECT = re.compile(r"(?:the|a|an|my|your|our|this|that|these|those|their|his|her|its|it|i|we|you|they|he|she)\b",
                          re.I)
#: A sentence stating a charge: a charge, bill, invoice, cost or fee, or what "we pay" someone.
_CHARGE_STATED = re.compile(r"\b(?:charg(?:e|es|ed|ing)|bill(?:s|ed|ing)?|invoic(?:e|es|ed|ing)|costs?|fees?)\b"
                            r"|\bwe\s+pay\b|\bpaid\s+to\b", re.I)


def charger_name(question: str) -> str:
    """Who ``question`` asks the charge of, as typed ("Tallowin Staffing"); empty when none."""
    m = _CHARGE_ASKED.search(question)
    return "" if m is None else (m.group("who") or m.group("who2") or "").strip()


def charger_asked(question: str) -> set[str]:
    """The stemmed terms naming a third party whose charge ``question`` asks ("What does Tallowin Staffing charge us
    per hour?" → tallowin, staff); empty when none is asked, or when who charges is the organisation, the asker or
    no one named ("How much does the college charge …?", "what do you charge …")."""
    who = charger_name(question)
    return set() if not who or _OWN_SUBJECT.match(who) else set(salient_terms(who))


def states_charge_of(who: set[str], text: str) -> bool:
    """Whether ``text`` (a sentence under its headers and headings) names the party ``who`` and states a charge."""
    return bool(who & term_set(text)) and _CHARGE_STATED.search(text) is not None


#: A table cell that gives no value: blank, a dash, "n/a", or what is not sold, offered or available ("Plaice | not
#: sold | £11.80 | not sold"). "none", "free" and "no charge" are values (nothing to pay), not gaps.
_EMPTY_CELL = re.compile(r"[-‐‑–—]*|n/?a|not\s+(?:sold|offered|available|applicable|stocked|run|brewed)\b.*", re.I)
_PARENTHESES = re.compile(r"\([^)]*\)")


def empty_asked_cell(asked: set[str], sentence: str, context: str = "") -> str | None:
    """The header of the column a question asks for that a quoted table row leaves empty, else ``None``. ``asked``
    holds the question's stemmed terms; the row must be about what is asked (every term of its first cell asked) and
    one column must be asked by name (every term of its header outside brackets asked; of several, the one naming
    most). "How much is a magnum of the Sloeburn Pinot Noir?" against "Sloeburn Pinot Noir | – | £27 | –" under
    "Wine | Half bottle (37.5cl) | Bottle (75cl) | Magnum (150cl)" asks the magnum column, which is empty: the £27
    is a bottle's price."""
    split = header_cells(sentence, context)
    if split is None:
        return None
    heads, cells = split
    label = term_set(cells[0])
    if not label or not label <= asked:
        return None
    named = [(len(t), h, c) for h, c in zip(heads[1:], cells[1:])
             if (t := term_set(_PARENTHESES.sub(" ", h))) and t <= asked and not t <= label]
    if not named:
        return None
    most = max(n for n, _, _ in named)
    best = [(h, c) for n, h, c in named if n == most]
    if len(best) != 1:
        return None
    head, cell = best[0]
    return head if _EMPTY_CELL.fullmatch(cell.strip().rstrip(".").strip()) else None


def about_asked(asked: set[str], sentence: str, context: str = "") -> bool:
    """Whether a quoted sentence may speak to the asked thing: running text always, a table row when every term of
    its first cell is asked (the row for "Mushy peas" does not price a plaice)."""
    split = header_cells(sentence, context)
    return split is None or term_set(split[1][0]) <= asked


#: Words of a question for a band's top that ask for the top rather than name whose band it is ("What's the most a
#: room leader can earn per hour?" names a room leader).
_BAND_TOP_WORDS = frozenset(stem(w) for w in "top band bands pay scale scales grade rate rates hourly hour hours "
                            "maximum max highest upper ceiling most earn earns salary salaries wage wages end range "
                            "per year annual annually".split())


#: Where a question's clauses part: a comma, semicolon or question mark, "and", "compared with", "versus".
_CLAUSE_BREAK = re.compile(r"[,;?]|\band\b|\bcompared\s+(?:with|to)\b|\bversus\b|\bvs\.?(?=\s)", re.I)


def band_top_role(asking: str) -> set[str]:
    """The stemmed terms of ``asking`` that name whose band's top is asked ("What is the top of band for an area
    manager?" → area, manager): the clause that asks for the top (a comma, "and" or "compared with" ends it), less the
    words asking for a top (:data:`_BAND_TOP_WORDS`). "What's the top of the duty manager band, compared with the
    starting pay on the careers page?" asks the duty manager's."""
    clauses = [c for c in _CLAUSE_BREAK.split(asking) if c.strip()]
    asked = [c for c in clauses if asks_band_top(c, top_pay=True)]
    return set(salient_terms(asked[0] if asked else asking)) - _BAND_TOP_WORDS


def states_band_top(text: str) -> bool:
    """Whether a table row ``text``, read under its headers, has an amount in a column for a band's top ("Band S1 |
    Roles Shop supervisor | Top of band (per hour) £15.95"): a pay sheet that records only each band's top states
    it in one column. Running text is not read so: "anyone at the top of their band … receives £400" prices
    something else."""
    return "|" in text and _TOP_CELL.search(text) is not None


def states_range(text: str, forms: bool = False) -> bool:
    """Whether ``text`` states a range of money: two amounts ("£27,500 | £31,800"), or one with an upper bound ("up to
    £800", "£12.90 to £13.85"); "from £27,500 a year" or one rate does not. With ``forms``, two amounts count only in a
    table row (a band's start and top columns); running text needs a range's form ("£12.90 to £13.85", "between £X and
    £Y"): "a surcharge of £25 on Saturday and £40 on Sunday" states two prices, not a band."""
    if _UPPER_BOUND.search(text) is not None:
        return True
    if forms and "|" not in text:
        return _BETWEEN.search(text) is not None
    return len(_MONEY.findall(text)) >= 2


def asks_closure_date(question: str) -> bool:
    """Whether ``question`` asks when a closure to come happens ("When is the Tessingham practice closing?"): a date
    on the calendar answers it, the hours of a day ("9:30am to 5pm (closed Mondays)") do not."""
    return (_WHEN_ASKED.search(question) is not None and _CLOSURE.search(question) is not None
            and _DAY_HOURS.search(question) is None)


def states_calendar_date(text: str) -> bool:
    """Whether ``text`` states a date on the calendar (:data:`_CALENDAR_DATE`) or a year."""
    return _CALENDAR_DATE.search(text) is not None or bool(years(text))


def states_closure_date(text: str) -> bool:
    """Whether ``text`` dates a closure to come: a date naming its year ("27 March 2027", "in 2027", "31/03/27").
    A day and month alone recur every year ("closed 25 and 26 December", "from 24 December to 2 January")."""
    return bool(years(text)) or _SLASH_DATE.search(text) is not None


_SUBJECT_WORDS = frozenset("i we you they he she it to self".split())


def after_subject(word: str, question: str) -> bool:
    """True when ``word`` follows a personal pronoun, "to" or "self-" in ``question``: then it is a verb ("did we
    enrol", "can I swap", "can I self-certify"), which paraphrases swap freely. (After a modal it is the subject:
    "should ferrets be".)"""
    toks = re.findall(r"[a-z0-9']+", question.lower())
    w = word.lower()
    return any(t == w and i > 0 and toks[i - 1] in _SUBJECT_WORDS for i, t in enumerate(toks))


def rare_thing(word: str, below: float) -> bool:
    """True when ``word`` is a plain word rarer than ``below`` on the Zipf scale, not a verb form (-ed, -ing) and not
    a pronoun ("hers" 3.97 names nothing)."""
    w = word.lower()
    return w.isalpha() and not w.endswith(("ed", "ing")) and w not in _PRONOUNS and zipf(w) < below


# ------------------------------------------------------------------------------------------ the check


#: Words for a part of the week, each met by the names of the days it is made of: "weekday" by "Monday to Thursday",
#: "weekend" by "Saturday". A price list says which days a price holds on; the asker says "on a weekday".
_WEEK_PARTS: dict[str, frozenset[str]] = {
    **dict.fromkeys(("weekday", "weekdays", "weeknight", "weeknights", "midweek"),
                    frozenset("monday tuesday wednesday thursday friday".split())),
    **dict.fromkeys(("weekend", "weekends"), frozenset(("saturday", "sunday"))),
}


def days_named_for(word: str, candidates: Iterable[str]) -> bool:
    """Whether ``candidates`` name a day of the part of the week ``word`` names ("weekday" and "Tuesday")."""
    days = _WEEK_PARTS.get(word.lower())
    return days is not None and any(c.lower() in days for c in candidates)


class WordMatcher:
    """Cosine similarity between single words with a sentence embedder (cached), so that a question term with no
    exact match in the answer can still be covered by a near-synonym (``vacation`` ~ ``holiday``)."""

    def __init__(self, embedder: Any, synonym_zipf: float = 0.0, kinship: bool = False,
                 week_parts: bool = False) -> None:
        self.embedder = embedder
        self.synonym_zipf = synonym_zipf
        self.kinship = kinship
        self.week_parts = week_parts
        self._vecs: dict[str, np.ndarray] = {}

    def _embed(self, words: Sequence[str]) -> None:
        todo = [w for w in dict.fromkeys(words) if w not in self._vecs]
        if todo:
            vecs = np.asarray(self.embedder.embed(todo), dtype=np.float32)
            self._vecs.update(zip(todo, vecs))

    def days_named_for(self, word: str, candidates: Iterable[str]) -> bool:
        """With ``week_parts``, whether ``candidates`` name a day of the part of the week ``word`` names
        (:func:`days_named_for`); always false without."""
        return self.week_parts and days_named_for(word, candidates)

    def synonym_in(self, word: str, candidates: Sequence[str]) -> bool:
        """Is one of ``candidates`` a WordNet synonym of ``word`` (compared by stem)? Only asked of a word rarer than
        ``synonym_zipf`` (0: never): a common word's many senses give synonyms of the wrong one. With ``kinship``, a
        family word is matched by any word of its family relation ("grandparent" for "grandad"; :mod:`.kinship`).
        With ``week_parts``, a word for a part of the week by the name of one of its days ("weekday" by "Tuesday";
        :func:`days_named_for`)."""
        if not candidates:
            return False
        if self.kinship and same_relation_in(word, candidates):
            return True
        if self.days_named_for(word, candidates):
            return True
        if self.synonym_zipf <= 0:
            return False
        syn = rare_synonym_stems(word, self.synonym_zipf)
        return bool(syn) and any(stem(c.lower()) in syn for c in candidates)

    def best(self, word: str, candidates: Sequence[str]) -> float:
        """The highest cosine between ``word`` and any of ``candidates`` (0 without candidates); 1 for a WordNet
        synonym among them (:meth:`synonym_in`)."""
        if not candidates:
            return 0.0
        if self.synonym_in(word, candidates):
            return 1.0
        self._embed([word, *candidates])
        mat = np.stack([self._vecs[c] for c in dict.fromkeys(candidates)])
        return float(np.max(mat @ self._vecs[word]))


#: Stance and emphasis words and discourse markers: they say how the asker stands to what they ask ("And if I
#: *actually* get called in?", "is it *ok* to *just* turn up?"), not what they ask.
STANCE_WORDS: frozenset[str] = frozenset("""actually really just ok okay exactly basically definitely anyway anyways
    honestly literally simply certainly surely""".split())


def stance_terms(text: str) -> set[str]:
    """The stemmed terms of ``text`` that only its stance words (:data:`STANCE_WORDS`) stand for: "really" gives
    ``real`` unless "real" is asked too ("the real cost")."""
    tokens = words(text, stopwords=True)
    return {stem(t) for t in tokens if t in STANCE_WORDS} - {stem(t) for t in tokens if t not in STANCE_WORDS}


#: The words that name a kind of value rather than which value is asked: "the phone number of the swarm line" asks
#: for the swarm line's number, and "01999 408 227" says "phone number" by being one. Measure nouns that say which
#: figure is asked (salary, revenue, profit, bonus) are not among them.
TYPE_NAMES: Mapping[str, frozenset[str]] = {
    MONEY: frozenset("cost costs price prices fee fees charge charges".split()),
    PERCENT: frozenset("rate rates percentage percent proportion".split()),
    PHONE: frozenset("phone telephone fax mobile number".split()),
    TEMPERATURE: frozenset("temperature temperatures".split()),
    TIME: frozenset("time date".split()),
    NUMBER: frozenset(["number"]),
}


def type_name_terms(text: str, kind: str | None) -> set[str]:
    """The stemmed terms of ``text`` that only name the asked ``kind`` of value (:data:`TYPE_NAMES`): "price" of
    "What's the price of a large box?" when an amount of money is asked."""
    names_of = TYPE_NAMES.get(kind or "", frozenset())
    return {stem(t) for t in words(text, stopwords=True) if t in names_of}


def content_words(text: str) -> dict[str, str]:
    """Stemmed term → its first surface word, for the content words of ``text``."""
    out: dict[str, str] = {}
    for t in words(text, stopwords=True):
        if t not in QUESTION_WORDS and (len(t) > 1 or t.isdigit()):
            out.setdefault(stem(t), t)
    return out


def soft_coverage(terms: Sequence[str], surface: Mapping[str, str], evidence: Mapping[str, str],
                  weight: Callable[[str], float], matcher: WordMatcher | None, min_word_similarity: float) -> float:
    """Weighted coverage where a term absent from the evidence earns its best word cosine with an evidence word
    when that reaches ``min_word_similarity`` (numbers and codes need an exact match)."""
    total = sum(weight(t) for t in terms)
    if total <= 0:
        return 1.0
    got = 0.0
    words = [w for w in evidence.values() if w.isalpha()]
    for t in terms:
        if t in evidence:
            got += weight(t)
        elif matcher is not None and surface.get(t, t).isalpha():
            sim = matcher.best(surface.get(t, t), words)
            if sim >= min_word_similarity:
                got += weight(t) * sim
    return got / total


@dataclass(frozen=True)
class AnswerabilityReport:
    """The signals and the verdict; ``reason`` says why an answer was judged not to address the question.

    ``coverage``: exact weighted coverage of the question's terms by the answer sentences and their contexts
    (titles, headings); ``soft_coverage``: the same with near-synonyms credited; ``similarity``: best cosine of
    the question and an answer sentence; ``conflicts``: qualifiers of the question the answer contradicts;
    ``parts``: for a multi-part question the whole check refused, each part's own text and report
    (:func:`combine_parts`)."""

    coverage: float
    similarity: float
    expected_type: str | None
    type_found: bool
    answerable: bool
    reason: str | None = None
    soft_coverage: float = 0.0
    conflicts: tuple[str, ...] = ()
    unknown: tuple[tuple[str, float], ...] = ()
    rarest_missing: str | None = None
    parts: tuple[tuple[str, AnswerabilityReport], ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The signals and the verdict as plain JSON (``rule``: :func:`rule_of` the reason, ``None`` when answerable;
        ``unknown``: each unknown asked word with its best near-synonym cosine)."""
        return {"answerable": self.answerable, "reason": self.reason,
                "rule": None if self.answerable else rule_of(self.reason),
                "coverage": round(self.coverage, 6), "soft_coverage": round(self.soft_coverage, 6),
                "similarity": round(self.similarity, 6), "expected_type": self.expected_type,
                "type_found": self.type_found, "conflicts": list(self.conflicts),
                "unknown": [[w, round(sim, 6)] for w, sim in self.unknown], "rarest_missing": self.rarest_missing,
                "parts": [{"text": text, "answerable": r.answerable, "reason": r.reason} for text, r in self.parts]}

    @property
    def unanswered_parts(self) -> tuple[str, ...]:
        """The parts of an answered multi-part question that no answer sentence answers on its own."""
        return tuple(text for text, r in self.parts if not r.answerable) if self.answerable else ()

    @property
    def on_thresholds(self) -> bool:
        """Refused (at least partly) on the coverage and similarity thresholds, so other thresholds could
        answer it (what ``benchmarks/answer_thresholds.py`` records)."""
        return not self.answerable and _on_thresholds(self.reason)

    @property
    def splittable(self) -> bool:
        """Refused for a reason one part of a multi-part question may not share (the thresholds, or a name the
        answer's documents never mention), so :func:`combine_parts` may answer a part on its own."""
        return not self.answerable and _splittable(self.reason)


def _on_thresholds(reason: str | None) -> bool:
    return reason is not None and reason.startswith("coverage")


def _splittable(reason: str | None) -> bool:
    return _on_thresholds(reason) or (reason is not None and (
        reason.startswith((ABSENT_NAME, RARE_WORD, SIBLING_WORD, UNDATED, UNSTATED_YEAR, CLOSURE_UNDATED,
                           PERIOD_UNSTATED, BAND_TOP_UNSTATED, UNSTATED_MONTH, UNSTATED_LABEL,
                           ABROAD_UNSAID, INTEREST_UNSTATED, UNNAMED_VEHICLE, UNLISTED_RELATION,
                           PROFIT_UNSTATED, UNSTATED_COUNT, UNSTATED_LENGTH, UNSTATED_AREA, CHARGE_UNSTATED,
                           EMPTY_CELL))
        or (reason.startswith("no ") and TYPE_NAMING in reason)))


ABSENT_NAME = "names "
RARE_WORD = "asks about the rare word "
SIBLING_WORD = "asks about the word "
UNDATED = "asks what holds from "
UNSTATED_YEAR = "asks about the year "
CLOSURE_UNDATED = "asks for the date of a closure"
PERIOD_UNSTATED = "asks for a period ending "
BAND_TOP_UNSTATED = "asks for the top of a band"
UNSTATED_MONTH = "asks about the month "
UNSTATED_LABEL = "asks about the financial year "
ABROAD_UNSAID = "asks about abroad"
INTEREST_UNSTATED = "asks for an interest rate"
PROFIT_UNSTATED = "asks for a profit"
UNSTATED_COUNT = "asks about the count "
UNSTATED_LENGTH = "asks about the length "
UNSTATED_AREA = "asks about the area "
UNNAMED_VEHICLE = "asks about the vehicle "
CHARGE_UNSTATED = "asks for the charge of "
EMPTY_CELL = "asks for the column "
UNLISTED_RELATION = "asks about the relation "
#: Inside the type-specific reason, after "no <kind>" (typed_zipf).
TYPE_NAMING = " in an answer sentence naming "


# The named rules of the check, by the opening of the reason each gives (first match wins: the rare- and sibling-word
# reasons open like the unknown-word one).
_RULES: tuple[tuple[str, str], ...] = (
    ("coverage", "thresholds"), ("no answer sentences", "no-sentences"), ("answers another", "conflict"),
    ("the answer does not mention", "rarest-term"), (UNDATED, "undated"), (UNSTATED_YEAR, "unstated-year"),
    (CLOSURE_UNDATED, "closure-date"), (PERIOD_UNSTATED, "period-end"),
    (BAND_TOP_UNSTATED, "band-top"), (UNSTATED_MONTH, "unstated-month"), (UNSTATED_LABEL, "year-label"),
    (ABROAD_UNSAID, "abroad"), (INTEREST_UNSTATED, "interest-rate"), (UNNAMED_VEHICLE, "vehicle"),
    (UNLISTED_RELATION, "relation"), (PROFIT_UNSTATED, "profit"), (UNSTATED_COUNT, "count-band"),
    (UNSTATED_LENGTH, "length-band"), (UNSTATED_AREA, "area-band"), (CHARGE_UNSTATED, "charge"),
    (EMPTY_CELL, "empty-cell"), (RARE_WORD, "rare-word"),
    (SIBLING_WORD, "sibling-word"), (ABSENT_NAME, "absent-name"), ("asks about ", "unknown-word"))


#: The named rules a refusal can come from (:func:`rule_of`), without the thresholds and "other".
NAMED_RULES: tuple[str, ...] = ("answer-type", "type-off-topic", "type-specific",
                                *(rule for _, rule in _RULES if rule != "thresholds"))


def rule_of(reason: str | None) -> str:
    """The short, stable name of the rule behind a refusal ``reason`` of :func:`assess` (``"thresholds"`` for the
    coverage and similarity bars, ``"answer-type"``, ``"type-off-topic"``, ``"sibling-word"``, …; ``"other"`` for
    a reason no rule gives), for reports that count refusals by rule. A multi-part question's combined reason
    opens with the whole question's."""
    if not reason:
        return "other"
    if reason.startswith("no ") and " in an answer sentence on the question's topic" in reason:
        return "type-off-topic"
    if reason.startswith("no ") and TYPE_NAMING in reason:
        return "type-specific"
    for opening, rule in _RULES:
        if reason.startswith(opening):
            return rule
    if reason.startswith("no ") and " in the answer" in reason:
        return "answer-type"
    return "other"


def splits_type_topic(report: AnswerabilityReport) -> bool:
    """Refused by the type-off-topic rule: no sentence stating the asked type covers enough of the question. For a
    two-part question that share is counted over both parts' words, and a sentence on one part's topic rarely says
    the other's ("How much is a new laptop keyboard, and how long is it guaranteed for?"), so with
    ``answer.answerability_split_type_topic`` each part is judged on its own."""
    return not report.answerable and rule_of(report.reason) == "type-off-topic"


def combine_parts(whole: AnswerabilityReport, parts: Sequence[tuple[str, AnswerabilityReport]],
                  type_topic: bool = False) -> AnswerabilityReport:
    """The verdict on a multi-part question ("How many of us have to go, and can the drugs stay in the car?")
    that the whole check refused on the coverage and similarity thresholds, for a name the answer's documents
    never mention (one part may ask about another venue than the other) or for a rare word no readable document
    contains: answered when one part is answered on its own (a partial answer, the other parts listed in
    :attr:`AnswerabilityReport.unanswered_parts`), else refused with every part's reason. A two-part question
    mixes two topics, so its coverage and cosine against either part's sentences are low. A whole question refused
    for a contradiction (a missing answer type, a sibling qualifier, an unknown name) stays refused: its sentences
    would be quoted as they are. With ``type_topic``, so is one refused because no sentence stating the asked type
    covers enough of the whole question (:func:`splits_type_topic`)."""
    if whole.answerable or not parts or not (_splittable(whole.reason) or (type_topic and splits_type_topic(whole))):
        return whole
    if any(r.answerable for _, r in parts):
        return replace(whole, answerable=True, reason=None, parts=tuple(parts))
    reasons = "; ".join(f"{text!r}: {r.reason}" for text, r in parts)
    return replace(whole, parts=tuple(parts), reason=f"{whole.reason} (whole question); parts: {reasons}")



def assess_answer(cfg: "AnswerConfig", question: str, query: str, sentences: Sequence[str], titles: Sequence[str],
                  weights: TermWeights, embedder: Embedder | None = None, matcher: WordMatcher | None = None, *,
                  similarity_route: bool = True, document_terms: set[str] | None = None,
                  restricted_terms: set[str] | None = None, sentence_contexts: Sequence[str] | None = None
                  ) -> AnswerabilityReport:
    """:func:`assess` with every check ``cfg`` (``answer.answerability_*``) switches on; with ``answer.decompose``
    a multi-part question that the whole check refused on a splittable reason is judged per part too
    (:func:`combine_parts`). The one entry point for ``ask`` and for research answers, so both refuse alike."""
    def check(asked: str, standalone: str) -> AnswerabilityReport:
        return assess(asked, standalone, sentences, titles, weights, embedder, cfg.answerability_min_coverage,
                      cfg.answerability_min_similarity, cfg.answerability_types, matcher,
                      cfg.answerability_min_word_similarity, cfg.answerability_conflicts,
                      cfg.answerability_min_unknown_similarity, cfg.answerability_rarest, cfg.answerability_names,
                      similarity_route, document_terms if cfg.answerability_known_names else None,
                      cfg.answerability_everyday_zipf, restricted_terms, cfg.answerability_rare_zipf,
                      sentence_contexts, cfg.answerability_type_coverage, cfg.answerability_sibling_zipf,
                      cfg.answerability_change_dates, cfg.answerability_everyday_known_zipf,
                      cfg.answerability_years, cfg.answerability_typed_zipf, cfg.answerability_type_soft,
                      cfg.answerability_closure_dates, cfg.answerability_period_ends,
                      cfg.answerability_band_tops, cfg.answerability_months, cfg.answerability_year_labels,
                      cfg.answerability_whole_years, cfg.answerability_abroad,
                      cfg.answerability_interest_rates, cfg.answerability_vehicles,
                      cfg.answerability_vehicle_words, cfg.answerability_top_pay,
                      cfg.answerability_letter_codes, cfg.answerability_stance_words,
                      cfg.answerability_sick_pay_periods, cfg.answerability_type_names,
                      cfg.answerability_relations, cfg.answerability_range_forms,
                      cfg.answerability_closure_years, cfg.answerability_profits,
                      cfg.answerability_count_bands, cfg.answerability_other_relations,
                      cfg.answerability_lengths, cfg.answerability_vehicle_rates,
                      cfg.answerability_top_columns, cfg.answerability_areas,
                      cfg.answerability_sanctions, cfg.answerability_top_column_roles,
                      cfg.answerability_charges, cfg.answerability_empty_cells,
                      cfg.answerability_period_spans)

    asked = question.strip()
    if cfg.answerability_glued_units:
        # "a 20cm bread knife" asks about the row "Up to 20 cm": the check reads a unit glued to its number apart.
        asked, query = unglue_units(asked), unglue_units(query)
        sentences, titles = [unglue_units(s) for s in sentences], [unglue_units(t) for t in titles]
        if sentence_contexts is not None:
            sentence_contexts = [unglue_units(c) for c in sentence_contexts]
    if cfg.answerability_number_words:
        # "three years' service" asks for the row "3 years": the check reads numbers written as words as digits.
        asked, query = numerals(asked), numerals(query)
        sentences, titles = [numerals(s) for s in sentences], [numerals(t) for t in titles]
        if sentence_contexts is not None:
            sentence_contexts = [numerals(c) for c in sentence_contexts]
    whole = check(asked, query)
    split = whole.splittable or (cfg.answerability_split_type_topic and splits_type_topic(whole))
    parts = question_parts(query) if cfg.decompose and split else [query]
    if len(parts) < 2:
        return whole
    # The user's own wording of each part when it splits the same way (a follow-up's carried subject is on every
    # part of the standalone form).
    own = question_parts(asked)
    own = own if len(own) == len(parts) else parts
    return combine_parts(whole, [(p, check(o, p)) for o, p in zip(own, parts)], cfg.answerability_split_type_topic)


_WORD_SHAPE = re.compile(r"[^\W\d_][\w'’-]*")
_CALENDAR = frozenset("monday tuesday wednesday thursday friday saturday sunday".split()) | frozenset(_MONTH_NAMES)
_NOT_NAMES = _CALENDAR | ADDRESS_FORMS  # "Mum", "Grandad": forms of address, not names


def names(question: str) -> list[str]:
    """Capitalised words inside a sentence of ``question`` — names and acronyms ("Fenwick", "LTIP", "Wi-Fi") —
    of at least three letters; sentence-initial words, "I"-forms, days, months, kinship words ("Mum", "Grandad")
    and stop words ("The" of "The Quayside") are not names."""
    out = []
    for m in _WORD_SHAPE.finditer(question):
        w = m.group()
        before = question[:m.start()].rstrip()
        if not before or before[-1] in ".?!:;\"“(" or not w[0].isupper():
            continue
        if sum(ch.isalpha() for ch in w) < 3 or not w[1:2].isalpha():  # "I'm", "X-rayed"
            continue
        if w.lower().split("'")[0].split("’")[0] in _NOT_NAMES:
            continue
        if w.lower() in STOP_WORDS:  # "The" in "at The Quayside" is part of a name, not a name of its own
            continue
        out.append(w)
    return out


def assess(question: str, query: str, sentences: Sequence[str], titles: Sequence[str], weights: TermWeights,
           embedder: Embedder | None = None, min_coverage: float = 0.5, min_similarity: float = 0.45,
           check_type: bool = True, matcher: WordMatcher | None = None, min_word_similarity: float = 0.6,
           check_conflicts: bool = True, min_unknown_similarity: float = 0.0,
           check_rarest: bool = False, check_names: bool = True, similarity_route: bool = True,
           document_terms: set[str] | None = None, everyday_zipf: float = 0.0,
           restricted_terms: set[str] | None = None, rare_zipf: float = 0.0,
           sentence_contexts: Sequence[str] | None = None, type_coverage: float = 0.0,
           sibling_zipf: float = 0.0, check_dates: bool = False,
           everyday_known_zipf: float = 0.0, check_years: bool = False,
           typed_zipf: float = 0.0, type_soft: bool = False, check_closures: bool = False,
           check_periods: bool = False, check_band_tops: bool = False,
           check_months: bool = False, check_year_labels: bool = False,
           whole_years: bool = False, check_abroad: bool = False,
           check_interest_rates: bool = False, check_vehicles: bool = False,
           vehicle_words: bool = False, top_pay: bool = False, letter_codes: bool = False,
           stance_words: bool = False, sick_pay_periods: bool = False,
           type_names: bool = False, check_relations: bool = False,
           range_forms: bool = False, closure_years: bool = False,
           check_profits: bool = False, check_counts: bool = False,
           other_relations: bool = False, check_lengths: bool = False,
           vehicle_rates: bool = False, top_columns: bool = False,
           check_areas: bool = False, sanctions: bool = False,
           top_column_roles: bool = False, check_charges: bool = False,
           empty_cells: bool = False, period_spans: bool = False) -> AnswerabilityReport:
    """Judge whether ``sentences`` (the answer, markers removed) answer the question.

    ``question`` is what the user typed (its form decides the answer type, its qualifiers must not be
    contradicted, its terms weigh fully); ``query`` is what was retrieved with (a follow-up rewritten with its
    subject: carried terms weigh half). ``titles`` are the contexts of the cited passages (titles, headings).

    Answerable ⇔ the asked type is present, no qualifier conflicts, every *unknown* question term (one that no
    document the asker may read contains: ``ferret``, ``V3``, ``2026``) has a near-synonym in the answer with word
    cosine ≥ ``min_unknown_similarity``, and soft coverage ≥ ``min_coverage`` or similarity ≥ ``min_similarity``
    (the latter only with ``similarity_route``). With ``document_terms`` (the terms of the documents the answer
    quotes), a name of the question that readable documents contain but none of those documents does ("Thimble"
    asked, the Lyric's and Corbel Hall's times quoted) makes the answer one about a sibling. With ``everyday_zipf``
    > 0, a question word no readable document contains weighs nothing in coverage when it is an everyday English word
    (Zipf ≥ ``everyday_zipf``: "expected", "supposed", "turn") and no restricted passage among the question's top
    (``restricted_terms``) contains it either. With ``rare_zipf`` > 0, an asked word no readable document contains
    that is rarer than that in general English ("motorbike" 3.2) and no verb (by form or by place) is unanswerable,
    like a name. With ``everyday_known_zipf`` > 0, a question word readable documents do contain also weighs nothing
    when it is that common (Zipf ≥ ``everyday_known_zipf``) and no restricted top passage has it (off in the
    service's default: docs/answers.md, session 35).
    With ``type_coverage`` > 0, the asked type counts only in a sentence that, with its own title and headings
    (``sentence_contexts``, one per sentence), covers at least that share of the question's weighted terms: a
    percentage from another passage ("25 per cent off treatments") does not answer "What commission do spa
    therapists earn?". With ``sibling_zipf`` > 0 and ``document_terms``, an asked word rarer than that in general
    English that readable documents contain but neither the answer nor its documents do ("surveyor" asked, the
    on-call operative's and supervisor's allowances quoted) makes the answer one about a sibling, like a name. With
    ``check_dates``, a question about what holds from a date ("from April 2026") is answered only when the answer or
    its headings state that date: otherwise it gives what holds now. With ``check_years``, a year the question asks
    about (not one of the asker's setting) must be stated by the answer or its sentences' contexts. With
    ``typed_zipf`` > 0, the asked type must come from one sentence that, with its own headings, names every asked
    word rarer than that which the readable documents know; with ``type_soft``, the per-sentence share of
    ``type_coverage`` is counted as soft coverage. (Both measured and left off: docs/answers.md, session 40.) With
    ``check_closures``, a question asking when a closure to come happens (:func:`asks_closure_date`) is answered
    only when the answer or its sentences' contexts state a date on the calendar, not the hours of a day. With
    ``check_periods``, a figure asked for a period named by its end ("the full year to March 2026") is answered only
    when the answer or its sentences' contexts state that end (:func:`states_period_end`); with ``period_spans`` a
    span of months with its year ("October to December 2026") too. With ``check_band_tops``,
    a question asking for the top of a band (:func:`asks_band_top`; with ``top_pay``, the most someone can earn too) is
    answered only when some answer sentence, read under its table headers, states a range of money
    (:func:`states_range`). With ``check_months``, a month the question asks about with its year (:func:`months_asked`)
    must be named by the answer or its sentences' contexts (:func:`names_month`). With ``check_year_labels``, a
    financial year the question names by its label ("2025-26", :func:`year_labels`) must be stated by them as a label or
    a year-long period ending that year (:func:`states_year_label`); with ``whole_years`` too, a year asked whole is not
    stated by a part of it ("H1 2025-26") unless the question asks for a part. With ``check_abroad``, a question about a
    place abroad (:func:`asks_abroad`) is answered only when the answer or its sentences' contexts speak of one
    (:func:`speaks_of_abroad`): the rows for London and elsewhere in the UK answer another place. With
    ``check_interest_rates``, a question asking for an interest rate, APR or AER (:func:`asks_interest_rate`) is
    answered only when an answer sentence, under its headers, states a percentage (:func:`states_percentage`): an
    amount a month "including interest" is no rate of interest. With ``check_vehicles``, a question asking mileage for
    a van, a bicycle or a motorbike (:func:`vehicles_asked`) is answered only when an answer sentence, under its
    headers, names that kind (:func:`names_vehicle`): the car rows answer another vehicle; with ``vehicle_rates``, a
    question asking for an amount is named only by a sentence stating a rate per mile (:func:`states_mileage_rate`).
    With ``vehicle_words``, a
    rare word naming a vehicle kind or "mileage" is no reason to refuse when the answer says it by another word of
    its class (:func:`known_by_kind`: "Motorcycle" for "motorbike", "per mile" for "mileage"). With ``letter_codes``,
    a graded code written with a capital letter or a Roman numeral ("grade E", "Grade IV", :func:`lettered_codes`) is
    one identifier too, known when a readable document or the answer under its headers mentions it. With
    ``stance_words``, a word that says how the asker stands to the question (:data:`STANCE_WORDS`: "actually",
    "really", "just") weighs nothing in coverage. With ``sick_pay_periods``, a question about sick pay
    (:func:`asks_sick_pay`) asks for a number, not money: a period at full pay answers it. With ``type_names``, the
    words that name the asked kind of value (:data:`TYPE_NAMES`: "price", "phone number") weigh nothing in coverage
    once the answer holds a value of that kind. With ``check_relations``, a family relation the question asks about
    that the quoted sentences, under their headers, leave out of their own list of relations
    (:func:`~ragbench.answer.kinship.unlisted_relations`: a cousin, the rows naming parents and aunts) is unanswered.
    With ``range_forms``, the band-top rule counts two amounts as a range only in a table row (:func:`states_range`);
    with ``top_columns``, a row's amount in a column for a band's top states that top (:func:`states_band_top`), and
    with ``top_column_roles`` only when the row names the role its clause asks about (:func:`band_top_role`).
    With ``closure_years``, the closure rule reads the date from the answer's own sentences only, and only a date
    naming its year dates a closure to come (:func:`states_closure_date`). With ``check_profits``, a question asking
    for a profit (:func:`asks_profit`) is answered only when an answer sentence, with its headings and table headers,
    names a profit or loss (:func:`states_profit`). With ``check_counts``, a count of a plural noun the question asks
    about ("15 radiators") that every count of that noun in the quoted sentences excludes ("up to 10 radiators") is
    unanswered (:func:`~ragbench.llm.signals.count_conflicts`). With ``other_relations`` too, the relation rule reads a
    friend or a pet asked about as a relation ("bereavement leave when my dog dies" against the rows for family). With
    ``check_lengths``, a length the question asks about ("5 metres wide") that every length in the quoted sentences
    excludes ("up to 3.0 m", "3.0 m to 4.0 m") is unanswered (:func:`~ragbench.llm.signals.length_conflicts`); with
    ``check_areas``, likewise an area ("8 square metres", "a 300 sq ft unit";
    :func:`~ragbench.llm.signals.area_conflicts`). With ``sanctions``, a rare word for a disciplinary measure
    ("sanction") is known by a quoted sentence stating an outcome (:func:`names_sanction`). With ``check_charges``, a
    question asking what a named firm charges is answered only by a sentence that, with its headers and headings,
    names the firm and states a charge (:func:`charger_asked`, :func:`states_charge_of`). With ``empty_cells``, a
    question whose quoted table rows about what it asks all leave the column it names empty ("a magnum" where the
    magnum column says "–") is unanswered, unless another quoted sentence states its type (:func:`empty_asked_cell`)."""
    own_contexts = list(sentence_contexts) if sentence_contexts is not None else [""] * len(sentences)
    kept = [(s, c) for s, c in zip(sentences, own_contexts) if s.strip()]
    sentences = [s for s, _ in kept]
    if not sentences:
        return AnswerabilityReport(0.0, 0.0, None, False, False, "no answer sentences")
    kind = expected_type(question)
    # Company sick pay is stated as a period at full or half pay ("8 weeks' full pay"): a count answers "How much
    # company sick pay do I get?" as well as an amount does.
    if sick_pay_periods and kind == MONEY and asks_sick_pay(question):
        kind = NUMBER
    # What the type tests read: a table row's cells under their column headers, any other sentence as it is.
    typed_as = [under_headers(s, c) for s, c in kept]
    found = has_type(" ".join(typed_as), kind, question)
    evidence_text = " . ".join([*sentences, *titles])
    # An asked amount inside a band the answer states ("£400,000" under "Up to £1 million") is answered.
    met = amount_terms_met(question, " ".join(sentences))
    answer_terms = term_set(evidence_text) | met
    terms = salient_terms(query)
    own = set(salient_terms(question))
    # A term only of the question's setting ("My brother passed away at the weekend." before "How much paid time
    # off can I have?") describes the asker, not what is asked: coverage counts what is asked.
    setting, asking = split_setting(question)
    asking_terms = set(salient_terms(asking))
    told = set(salient_terms(setting)) - asking_terms
    # Nor does a clause the question sets aside ("…, not counting bank holidays?", "instead of coming in").
    aside = told | (own - set(salient_terms(without_exclusions(question))))
    # Unless nothing would be left to cover: then the setting is all there is to go on.
    skipped = aside if any(weights(t) > 0 for t in terms if t not in aside) else set()

    # A word no readable document contains has no IDF of its own and gets the largest. For a rare word ("ferret")
    # that is right: it names what the documents lack. An everyday word ("expected", "supposed", "turn up") is the
    # asker's phrasing, not the topic, unless a passage the asker may not read that ranks among the question's top
    # uses it ("died" of "How many animals died last year?"): then it is the restricted topic, which must be refused.
    df = getattr(weights, "df", None)
    surface = content_words(query)
    plain = {t for t in terms if everyday_zipf > 0 and df is not None and df.get(t, 0) == 0
             and (restricted_terms is None or t not in restricted_terms) and surface.get(t, t).isalpha()
             and zipf(surface.get(t, t)) >= everyday_zipf}
    if everyday_known_zipf > 0 and df is not None:
        # Likewise a word the documents do contain ("got", "wants", "turned"): the asker's phrasing. A question of
        # nothing but such words then has nothing left to cover, and passes coverage.
        plain |= {t for t in terms if df.get(t, 0) > 0 and (restricted_terms is None or t not in restricted_terms)
                  and surface.get(t, t).isalpha() and zipf(surface.get(t, t)) >= everyday_known_zipf}

    # "And if I actually get called in?" asks about being called in: "actually" says how the asker stands to it.
    if stance_words:
        plain |= stance_terms(query)
    # "What's the phone number of the swarm line?" asks for the swarm line's number: a number in the answer says
    # "phone number" by being one, so only "swarm line" is left to cover.
    if type_names and found:
        plain |= type_name_terms(query, kind)

    def weight(t: str) -> float:
        return 0.0 if t in skipped or t in plain else weights(t) * (1.0 if t in own else 0.5)

    cov = coverage(terms, answer_terms, weight)
    on_topic = True
    if found and kind is not None and type_coverage > 0:
        # The asked kind of value must come from a sentence about what is asked, not from a neighbour quoted
        # beside it: some sentence must state the type and, read with its own headings, cover enough.
        # With type_soft, "enough" is counted as the main check counts it, near-synonyms credited.
        def topical(text: str) -> float:
            if type_soft:
                return soft_coverage(terms, surface, {**content_words(text), **{t: t for t in met}}, weight, matcher,
                                     min_word_similarity)
            return coverage(terms, term_set(text) | met, weight)

        on_topic = any(has_type(t, kind, question) and topical(f"{s} . {c}") >= type_coverage
                       for t, (s, c) in zip(typed_as, kept))
    # With typed_zipf > 0, the asked kind of value must come from one sentence that, with its own headings, names
    # every specific word asked (rarer than typed_zipf in general English, known to readable documents, not a
    # verb): the pork sausages' price beside a gluten-free loaf's does not answer "How much are the gluten-free
    # sausages?", though the two sentences together cover the question.
    unnamed: list[str] = []
    if found and on_topic and kind is not None and typed_zipf > 0 and df is not None:
        specific = [t for t in sorted(asking_terms - aside) if t in terms and df.get(t, 0) > 0
                    and rare_thing(surface.get(t, t), typed_zipf) and not after_subject(surface.get(t, t), question)]
        if specific and not any(has_type(typed, kind, question)
                                and all(t in term_set(f"{s} . {c}") | met for t in specific)
                                for typed, (s, c) in zip(typed_as, kept)):
            unnamed = [surface.get(t, t) for t in specific]
    soft = soft_coverage(terms, surface, {**content_words(evidence_text), **{t: t for t in met}}, weight, matcher,
                         min_word_similarity)
    sim = 0.0
    if embedder is not None:
        vecs = np.asarray(embedder.embed([query, *sentences]), dtype=np.float32)
        sim = float(np.max(vecs[1:] @ vecs[0]))
    clash = tuple(conflicts(question, evidence_text, modifiers=False, attributive=True)) if check_conflicts else ()
    evidence_words = [w for w in content_words(evidence_text).values() if w.isalpha()]
    unknown = []
    for t in terms:
        if df is not None and df.get(t, 0) == 0 and t not in answer_terms:
            word = surface.get(t, t)
            best = matcher.best(word, evidence_words) if matcher is not None and word.isalpha() else 0.0
            unknown.append((word, round(best, 4)))
    # An identifier or year nothing readable mentions (V3, L5, 2026) cannot be answered: no near-synonym exists.
    # Other plain words are only reported: word cosines do not separate paraphrase vocabulary from unasked-for topics.
    # A word only of the question's setting ("I'm 19 and at college.", "For the conference in York I'm …") says
    # something about the asker, which the documents need not mention; only what is asked must be readable.
    unknown_ids = [w for w, _ in unknown if any(ch.isdigit() for ch in w) and stem(w.lower()) not in told]
    # So can a rare English word that no readable document contains ("motorbike", "reservists", "curtains"): it
    # names a thing the documents lack, and a paraphrase rarely swaps an everyday word for a rarer one. A verb form
    # ("faked", "typed") or a word in a verb's place ("if I misplace", "can I nip") is left out: paraphrases swap
    # verbs freely. Like a sibling name, such a word may belong to one part of a multi-part question only, so that
    # reason is splittable.
    rare: list[str] = []
    if rare_zipf > 0:
        asked = asking_terms - aside
        rare = [w for w, _ in unknown if rare_thing(w, rare_zipf) and stem(w.lower()) in asked
                and not after_subject(w, question) and (df is None or not misspelling(w, df))
                and not (matcher is not None and matcher.synonym_in(w, evidence_words))
                and not (vehicle_words and known_by_kind(w, evidence_text))
                and not (sanctions and names_sanction(w, evidence_text))]
    # A graded code ("Level 5", "Category 9") is one identifier: its number alone is in every document.
    if df is not None:
        answer_codes = graded_codes(evidence_text)
        unknown_ids += [code.title() for code in sorted(graded_codes(asking) - graded_codes(setting))
                        if df.get(code, 0) == 0 and code not in answer_codes]
        # So is one written with a letter or a Roman numeral ("grade E" where the price table lists grades A to D);
        # the answer's table rows count under their column headers ("Grade D | …").
        if letter_codes:
            answer_letters = lettered_codes(" . ".join([evidence_text, *typed_as]))
            unknown_ids += [f"{code.split()[0].title()} {code.split()[1].upper()}"
                            for code in sorted(lettered_codes(asking) - lettered_codes(setting))
                            if df.get(code, 0) == 0 and code not in answer_letters]
    # Likewise a name or acronym of the question ("Fenwick", "LTIP", "Wi-Fi") that no readable document contains.
    if check_names and df is not None:
        told_names = set(names(setting)) - set(names(asking))
        seen = {w.lower() for w in unknown_ids}
        for name in names(question):
            if name in told_names or name.lower() in seen:
                continue
            parts = [stem(t) for t in words(name) if len(t) > 1]
            if any(df.get(p, 0) == 0 and p not in answer_terms for p in parts):
                unknown_ids.append(name)
                seen.add(name.lower())
    # A name the readable documents know but none of the quoted documents mention: the answer is about a sibling
    # (another venue, depot or site) of the asked one.
    absent: list[str] = []
    if check_names and df is not None and document_terms is not None:
        told_names = set(names(setting)) - set(names(asking))
        for name in names(question):
            if name in told_names or name.lower() in {w.lower() for w in unknown_ids + absent}:
                continue
            known_parts = [p for p in (stem(t) for t in words(name) if len(t) > 1) if df.get(p, 0) > 0]
            if any(p not in answer_terms and p not in document_terms for p in known_parts):
                absent.append(name)
    # Likewise a plain asked word the readable documents know but the answer's documents never mention, when it is
    # specific (rarer than sibling_zipf in general English: "surveyor", "leaseholder", "occupancy") and not a verb:
    # the answer is about a sibling role, tenure or measure of the one asked ("on-call operative" for "surveyor").
    siblings: list[str] = []
    if sibling_zipf > 0 and df is not None and document_terms is not None:
        seen_words = {w.lower() for w in unknown_ids + absent}
        for t in sorted(asking_terms - aside):
            w = surface.get(t, t)
            if (t in terms and df.get(t, 0) > 0 and t not in answer_terms and t not in document_terms
                    and rare_thing(w, sibling_zipf) and not after_subject(w, question) and w.lower() not in seen_words
                    and not (matcher is not None and matcher.days_named_for(w, evidence_words))):
                siblings.append(w)
    # What holds from a date is a change: an answer that never states the date gives what holds now (today's dog
    # charge for "How much will the dog charge be from April 2026?").
    undated = [d for d in change_dates(asking) if not states_date(d, evidence_text)] if check_dates else []
    # So is a year asked about ("revenue in 2024", "the 2025 scheme", "FY 2023/24"): an answer that states no such
    # year in its sentences, titles, headings or table headers is about another year, usually the current one.
    # What the date rules read: the answer, its titles, and each sentence's headings and table headers.
    dated_text = " . ".join([evidence_text, *own_contexts])
    unstated_years: list[str] = []
    if check_years:
        stated = set(years(dated_text))
        unstated_years = [y for y in years(asking) if y not in stated]
    # The question's most specific term that the readable corpus knows (highest IDF, df ≥ 1): when the answer and
    # its headings lack it, the answer is about a neighbour ("ferret" asked, dogs and cats answered).
    known = [t for t in terms if t in own and (df is None or df.get(t, 0) > 0) and not is_number(t)]
    rarest = max(known, key=weights, default=None)
    rarest_missing = surface.get(rarest, rarest) if rarest is not None and rarest not in answer_terms else None
    signals: dict[str, Any] = dict(soft_coverage=soft, conflicts=clash, unknown=tuple(unknown),
                                   rarest_missing=rarest_missing)
    if check_type and not found:
        return AnswerabilityReport(cov, sim, kind, False, False, f"no {kind} in the answer", **signals)
    if check_type and not on_topic:
        return AnswerabilityReport(cov, sim, kind, False, False, f"no {kind} in an answer sentence on the question's "
                                   f"topic (coverage < {type_coverage})", **signals)
    if unnamed:
        return AnswerabilityReport(cov, sim, kind, found, False, f"no {kind}{TYPE_NAMING}" + ", ".join(unnamed),
                                   **signals)
    if clash:
        return AnswerabilityReport(cov, sim, kind, found, False, "answers another " + "; ".join(clash), **signals)
    if check_rarest and rarest_missing is not None:
        return AnswerabilityReport(cov, sim, kind, found, False, f"the answer does not mention {rarest_missing!r}, "
                                   "the question's most specific term", **signals)
    missing = unknown_ids + [w for w, best in unknown if best < min_unknown_similarity and w not in unknown_ids]
    # Words the answer cannot speak to, in order of precedence: the first kind found is the reason.
    for found_words, prefix, suffix in ((missing, "asks about ", ", which no readable document mentions"),
                                        (absent, ABSENT_NAME, ", which the answer's documents never mention"),
                                        (rare, RARE_WORD, ", which no readable document contains"),
                                        (undated, UNDATED, ", which the answer never states"),
                                        (unstated_years, UNSTATED_YEAR, ", which the answer never states"),
                                        (siblings, SIBLING_WORD, ", which the answer's documents never mention")):
        if found_words:
            return AnswerabilityReport(cov, sim, kind, found, False, prefix + ", ".join(found_words) + suffix,
                                       **signals)
    # "When is the Dowerby shop closing down?" asks for a day on the calendar; the shop's opening hours ("Mon to Sat
    # 7:30am to 5pm; closed Sunday") carry the time type and the word "closed", and answer another question.
    # A title's "price list 2026-27" dates no closure, and "closed from 24 December to 2 January" is the yearly one.
    if check_closures and asks_closure_date(question) and not (
            states_closure_date(" . ".join(sentences)) if closure_years else states_calendar_date(dated_text)):
        return AnswerabilityReport(cov, sim, kind, found, False, CLOSURE_UNDATED + ", which the answer never states",
                                   **signals)
    # "What was total revenue for the full year to March 2026?" asks for that period's figure; a table of the six
    # months to 30 September beside their budget ("Total income | £2,865,000 | …") answers another period.
    if check_periods:
        unstated = [w for w, month, year, long in period_ends(asking, period_spans)
                    if not states_period_end(month, year, long, dated_text)]
        if unstated:
            return AnswerabilityReport(cov, sim, kind, found, False, PERIOD_UNSTATED + ", ".join(unstated)
                                       + ", which the answer never states", **signals)
    # "What was availability in August 2026?" asks for August's figure; the rows of September to November, which
    # state the year, answer other months.
    if check_months:
        unnamed_months = [w for w, month in months_asked(asking) if not names_month(month, dated_text)]
        if unnamed_months:
            return AnswerabilityReport(cov, sim, kind, found, False, UNSTATED_MONTH + ", ".join(unnamed_months)
                                       + ", which the answer never states", **signals)
    # "What were total sales for the full year 2025-26?" asks for one period; half-year accounts that state 2025 and
    # 2026 apart ("Six months to 30 Sept 2025") answer another.
    if check_year_labels:
        whole_year = whole_years and not asks_year_part(asking)
        unstated_labels = [w for w, end in year_labels(asking) if not states_year_label(end, dated_text, whole_year)]
        if unstated_labels:
            return AnswerabilityReport(cov, sim, kind, found, False, UNSTATED_LABEL + ", ".join(unstated_labels)
                                       + ", which the answer never states", **signals)
    # "What is the hotel limit for a business trip abroad?" asks about a place abroad; "Elsewhere in the UK | £90"
    # answers another.
    if check_abroad and asks_abroad(asking) and not speaks_of_abroad(dated_text):
        return AnswerabilityReport(cov, sim, kind, found, False, ABROAD_UNSAID + ", which the answer never mentions",
                                   **signals)
    # "What interest rate is the bank charging on the loan?" asks for a share of the sum lent; "The loan costs about
    # £5,200 a month including interest" states an amount per month, which the percent type counts as a rate.
    if check_interest_rates and asks_interest_rate(asking) and not any(states_percentage(t) for t in typed_as):
        return AnswerabilityReport(cov, sim, kind, found, False, INTEREST_UNSTATED
                                   + ", which the answer never states as a percentage", **signals)
    # "How much is a power flush for a system with 15 radiators?" asks about one count; "Power flush of a system with
    # up to 10 radiators: from £520" states the price for fewer. The band rule's units do not include radiators. So
    # for a length ("driveway gates 5 metres wide" against "up to 3.0 m" and "3.0 m to 4.0 m", compared in metres)
    # and an area ("a patch repair of 8 square metres" against "up to 2 square metres", in square metres).
    typed_text = " . ".join(typed_as)
    for on, sizes_in_conflict, opening, noun in ((check_counts, count_conflicts, UNSTATED_COUNT, "count"),
                                                 (check_lengths, length_conflicts, UNSTATED_LENGTH, "length"),
                                                 (check_areas, area_conflicts, UNSTATED_AREA, "area")):
        sized = sizes_in_conflict(question, typed_text) if on else []
        if sized:
            asked_size, stated_size = sized[0].split("≠", 1)
            return AnswerabilityReport(cov, sim, kind, found, False, opening + asked_size
                                       + f", which every {noun} the answer states leaves out ({stated_size})",
                                       **signals)
    # "What profit did Welterby make last year?" asks for a profit; the purchase paper's turnover, staff and rent rows
    # state other figures. The sentences count with their own headings and table headers, not the documents' titles.
    if check_profits and asks_profit(asking) and not states_profit(" . ".join([*typed_as, *(c for _, c in kept)])):
        return AnswerabilityReport(cov, sim, kind, found, False, PROFIT_UNSTATED + ", which the answer never states",
                                   **signals)
    # "What's the mileage rate if I use my own van?" asks about a van; "Car | 45p | Motorcycle | 24p" answers other
    # vehicles. Only the quoted sentences, under their column headers, count: the table's heading ("Mileage for
    # cars, vans and bicycles") and its rows not quoted do not. Asked for an amount, a sentence naming the vehicle
    # without a rate per mile ("£31,000 for a family van, depending on mileage") prices something else.
    if check_vehicles:
        amount = kind in (MONEY, PERCENT, NUMBER)
        naming = [t for t in typed_as if states_mileage_rate(t)] if vehicle_rates and amount else typed_as
        unnamed = [k for k in vehicles_asked(asking) if not any(names_vehicle(k, t) for t in naming)]
        if unnamed:
            return AnswerabilityReport(cov, sim, kind, found, False, UNNAMED_VEHICLE + ", ".join(unnamed)
                                       + ", which the answer never names", **signals)
    # "What does Tallowin charge us per hour for me?" asks what a named firm charges; the careers page's pay rows and
    # "Your pay comes from Tallowin Staffing" state no charge of Tallowin's. A sentence counts with its table headers
    # and section headings ("Agency charges (Tidewell Staffing)" over "Weekday | £17.85").
    if check_charges:
        who = charger_asked(asking)
        if who and not any(states_charge_of(who, f"{t} . {c}") for t, (_, c) in zip(typed_as, kept)):
            return AnswerabilityReport(cov, sim, kind, found, False, CHARGE_UNSTATED + charger_name(asking)
                                       + ", which no answer sentence states", **signals)
    # "How much is a small plaice?" asks the small column; "Plaice | not sold | £11.80 | not sold" states the regular
    # price, and the small cell is empty. Another quoted sentence stating the asked type may still answer.
    if empty_cells:
        asked_terms = term_set(asking)
        gaps = [empty_asked_cell(asked_terms, s, c) for s, c in kept]
        if any(gaps) and not any(gap is None and about_asked(asked_terms, s, c) and has_type(t, kind, question)
                                 for gap, (s, c), t in zip(gaps, kept, typed_as)):
            return AnswerabilityReport(cov, sim, kind, found, False, EMPTY_CELL + next(g for g in gaps if g)
                                       + ", which the answer's row leaves empty", **signals)
    # "How much bereavement leave do I get for a cousin?" asks about one relation; rows for parents, grandparents,
    # aunts and uncles answer others. Only the quoted sentences count, as for vehicles.
    if check_relations:
        unlisted = unlisted_relations(asking, " . ".join(typed_as), other_relations)
        if unlisted:
            return AnswerabilityReport(cov, sim, kind, found, False, UNLISTED_RELATION + ", ".join(unlisted)
                                       + ", which the answer's relations leave out", **signals)
    # "What's the top of the qualified technician pay band?" asks for the band's upper end; a job advert's "from
    # £27,500 a year" states where it starts.
    # With top_column_roles, a row read as a band's top must name whose band is asked: the shop manager's row does not
    # state an area manager's top.
    if check_band_tops and asks_band_top(asking, top_pay):
        role = band_top_role(asking) if top_column_roles else set()
        if not any(states_range(t, range_forms) or (top_columns and states_band_top(t) and role <= term_set(t))
                   for t in typed_as):
            return AnswerabilityReport(cov, sim, kind, found, False,
                                       BAND_TOP_UNSTATED + ", which the answer never states", **signals)
    if soft >= min_coverage or (similarity_route and sim >= min_similarity):
        return AnswerabilityReport(cov, sim, kind, found, True, **signals)
    why = f" and similarity {sim:.2f} < {min_similarity}" if similarity_route else " (coverage decides)"
    return AnswerabilityReport(cov, sim, kind, found, False, f"coverage {soft:.2f} < {min_coverage}{why}", **signals)
