"""RAG measures, each defined once as a named value object with its formula: answer citations and refusals,
EE-RAG election, memory evidence recall (LoCoMo), cost. Per-question tables are long ``qid, measure, value``.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import pandas as pd

from ..errors import ConfigError, DataError



@dataclass(frozen=True)
class RagMeasure:
    """A named per-question RAG measure; ``formula`` is the definition shown in docs and reports.

    Per-question values may be NaN where a measure does not apply (e.g. citation precision of a refused answer);
    :func:`ragbench.eval.ir_metrics.aggregate` then averages over the questions where it applies (pandas skips NaN)."""

    name: str
    formula: str

    def __str__(self) -> str:
        return self.name


CITATION_PRECISION = RagMeasure("CitationPrecision", "|cited ∩ (expected ∪ alternates)| / |cited|")
CITATION_RECALL = RagMeasure("CitationRecall", "|expected ∩ cited| / |expected|  (strict: alternates do not count)")
ANY_CORRECT_CITATION = RagMeasure("AnyCorrectCitation", "1 if |cited ∩ (expected ∪ alternates)| ≥ 1 else 0")
REFUSAL_ACCURACY = RagMeasure("RefusalAccuracy", "1 if refused == should_refuse else 0  (over all questions)")
SUPPORT_RATIO = RagMeasure("SupportRatio", "share of answer sentences supported by the cited context")
CONTEXT_TOKENS = RagMeasure("ContextTokens", "tokens of context sent to the model for the question")
MODEL_CALLS = RagMeasure("ModelCalls", "chat-model calls made for the question")
CANDIDATE_RECALL = RagMeasure("CandidateRecall", "|expected ∩ surfaced| / |expected|  (1 if none expected)")
ELECTION_PRECISION = RagMeasure(
    "ElectionPrecision", "|expected ∩ elected| / |elected|  (nothing elected: 1 if nothing expected else 0)")
ELECTION_RECALL = RagMeasure("ElectionRecall", "|expected ∩ elected| / |expected|  (1 if none expected)")
ELECTION_F1 = RagMeasure("ElectionF1", "2PR / (P + R)  (0 if P + R = 0)")
RETRIEVAL_RATE = RagMeasure("RetrievalRate", "1 if anything was elected (retrieved) else 0; mean = rate")
RETRIEVAL_EXPECTED = RagMeasure("RetrievalExpected", "1 if the case expects retrieval else 0; mean = rate")
EVIDENCE_RECALL = RagMeasure(
    "EvidenceRecall", "|gold evidence ids ∩ selected ids| / |gold evidence ids|  (1 if no gold evidence)")


def _norm(items: Iterable[str] | None) -> set[str]:
    """Distinct, case-insensitive, whitespace-trimmed ids or titles."""
    return {str(i).strip().casefold() for i in (items or ()) if str(i).strip()}


def citation_precision(cited: Iterable[str], expected: Iterable[str], alternates: Iterable[str] = ()) -> float:
    """|cited ∩ (expected ∪ alternates)| / |cited| over distinct, case-insensitive ids; NaN without citations."""
    c = _norm(cited)
    return len(c & (_norm(expected) | _norm(alternates))) / len(c) if c else math.nan


def citation_recall(cited: Iterable[str], expected: Iterable[str]) -> float:
    """|expected ∩ cited| / |expected| (alternates do not count); NaN when nothing is expected."""
    e = _norm(expected)
    return len(e & _norm(cited)) / len(e) if e else math.nan


def any_correct_citation(cited: Iterable[str], expected: Iterable[str], alternates: Iterable[str] = ()) -> float:
    """1.0 when at least one citation is an expected or acceptable document, else 0.0; NaN without citations."""
    c = _norm(cited)
    return float(bool(c & (_norm(expected) | _norm(alternates)))) if c else math.nan


def refusal_correct(should_refuse: bool, refused: bool) -> float:
    """1.0 when the system refused exactly when it should have."""
    return float(bool(should_refuse) == bool(refused))


def candidate_recall(expected: Iterable[str], surfaced: Iterable[str]) -> float:
    """|expected ∩ surfaced| / |expected|; 1.0 when nothing is expected (EE-RAG, seed 1.11)."""
    e = set(expected)
    return len(e & set(surfaced)) / len(e) if e else 1.0


def election_precision(expected: Iterable[str], elected: Iterable[str]) -> float:
    """|expected ∩ elected| / |elected|; with nothing elected: 1.0 if nothing was expected, else 0.0."""
    e, el = set(expected), set(elected)
    if not el:
        return 1.0 if not e else 0.0
    return len(e & el) / len(el)


def election_recall(expected: Iterable[str], elected: Iterable[str]) -> float:
    """|expected ∩ elected| / |expected|; 1.0 when nothing is expected."""
    e = set(expected)
    return len(e & set(elected)) / len(e) if e else 1.0


def election_f1(expected: Iterable[str], elected: Iterable[str]) -> float:
    """Harmonic mean of election precision and recall; 0.0 when both are 0."""
    e, el = list(expected), list(elected)
    p, r = election_precision(e, el), election_recall(e, el)
    return 2 * p * r / (p + r) if p + r > 0 else 0.0


_DIA = re.compile(r"^D:?(\d+):(\d+)$")


def normalize_dia_id(raw: str) -> str | None:
    """``"D:11:26"`` → ``"D11:26"``, ``"D30:05"`` → ``"D30:5"``; ``None`` when it is not a dialog id."""
    m = _DIA.match(raw.strip())
    return f"D{int(m.group(1))}:{int(m.group(2))}" if m else None


def split_evidence(raw: Iterable[str]) -> list[str]:
    """LoCoMo evidence strings → normalised dia_ids, splitting ``"D8:6; D9:17"`` on ``;`` and whitespace;
    tokens that are not dialog ids (e.g. a bare ``"D"``) are dropped. Order kept, duplicates removed."""
    out: list[str] = []
    for item in raw:
        for tok in re.split(r"[;\s]+", str(item)):
            norm = normalize_dia_id(tok) if tok else None
            if norm and norm not in out:
                out.append(norm)
    return out


def evidence_recall(gold: Iterable[str], selected: Iterable[str], level: str = "turn") -> float:
    """Share of gold evidence dia_ids present in the selected context (LoCoMo "recall accuracy").

    Both sides are normalised with :func:`split_evidence`; questions without gold evidence count 1.0.
    ``level="session"`` matches by session (``D3:7`` ~ ``D3:1``), as the paper does for session summaries."""
    g, s = split_evidence(gold), set(split_evidence(selected))
    if level == "session":
        g = [x.split(":")[0] for x in g]
        s = {x.split(":")[0] for x in s}
    elif level != "turn":
        raise ConfigError(f"evidence_recall: level must be 'turn' or 'session', found {level!r}.")
    if not g:
        return 1.0
    return sum(1 for x in g if x in s) / len(g)


def evidence_recall_at_k(gold: Iterable[str], ranked: Sequence[str], k: int, level: str = "turn") -> float:
    """:func:`evidence_recall` of the first ``k`` selected ids."""
    if k < 1:
        raise ConfigError(f"evidence_recall_at_k: k must be ≥ 1, found {k}.")
    return evidence_recall(gold, list(ranked)[:k], level)


# --------------------------------------------------------------------------------- table-level RAG scoring


@dataclass(frozen=True)
class AnswerGold:
    """What a question expects: documents to cite (ids), acceptable alternates, and whether to refuse."""

    qid: str
    expected: tuple[str, ...] = ()
    alternates: tuple[str, ...] = ()
    should_refuse: bool = False

    @classmethod
    def from_golden(cls, question: Any) -> "AnswerGold":
        """From a ``GoldenQuestion`` (qid, expected_docs, alternates, should_refuse)."""
        return cls(str(question.qid), tuple(question.expected_docs or ()), tuple(question.alternates or ()),
                   bool(question.should_refuse))


def _get(record: Any, key: str, default: Any = None) -> Any:
    if isinstance(record, Mapping):
        return record.get(key, default)
    return getattr(record, key, default)


def cited_ids(record: Any) -> list[str]:
    """Document ids an answer cites: ``cited_docnos`` when present, else ``citations`` given as ids, mappings
    (``doc_id`` / ``docno``) or objects with a ``doc_id`` attribute."""
    docnos = _get(record, "cited_docnos")
    if docnos is not None and not (isinstance(docnos, float) and math.isnan(docnos)):
        return [str(d) for d in docnos]
    out: list[str] = []
    for c in _get(record, "citations", None) or ():
        if isinstance(c, str):
            out.append(c)
        elif isinstance(c, Mapping):
            out.append(str(c.get("doc_id", c.get("docno", ""))))
        else:
            out.append(str(getattr(c, "doc_id", c)))
    return out


_ABSENT = object()


def _records(answers: Any) -> list[Any]:
    if isinstance(answers, pd.DataFrame):
        return answers.to_dict("records")
    return list(answers)


def _num(value: Any) -> float | None:
    if value is None:
        return None
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


#: Per-question measures that an answer system computes itself (it knows the corpus, the ACLs and the prompts it
#: sent) and hands over in its records; passed through unchanged when a record carries them
#: (:mod:`ragbench.eval.answers` fills them for the golden answer systems).
PASS_THROUGH = ("FactInAnswer", "LeakedDocs", "SecretInAnswer", "InjectionQuoted", "HandledRight")


def evaluate_answers(answers: Any, gold: Iterable[AnswerGold]) -> pd.DataFrame:
    """Per-question answer measures, long format ``qid, measure, value`` (NaN where a measure does not apply).

    ``answers``: an answers table or records with ``qid``, ``refused``, ``citations`` / ``cited_docnos`` and
    optionally ``support_ratio``, ``context_tokens``, ``model_calls``. Citation measures apply to questions that
    should be answered and were answered with ≥ 1 citation (seed 3.11); refusal accuracy to every question.
    Raises :class:`DataError` when a gold question has no answer or an answer has no gold question.
    """
    gold_by_qid = {g.qid: g for g in gold}
    by_qid: dict[str, Any] = {}
    for rec in _records(answers):
        by_qid[str(_get(rec, "qid"))] = rec
    missing = sorted(set(gold_by_qid) - set(by_qid))
    unknown = sorted(set(by_qid) - set(gold_by_qid))
    if missing or unknown:
        raise DataError(f"evaluate_answers: questions without an answer {missing[:10]}, answers without a gold "
                        f"question {unknown[:10]}. Fix: answer exactly the gold questions.")
    rows: list[tuple[str, str, float]] = []
    for qid, g in gold_by_qid.items():
        rec = by_qid[qid]
        refused = bool(_get(rec, "refused", False))
        cited = cited_ids(rec)
        scored = not g.should_refuse and not refused and bool(_norm(cited))
        rows.append((qid, str(CITATION_PRECISION),
                     citation_precision(cited, g.expected, g.alternates) if scored else math.nan))
        rows.append((qid, str(CITATION_RECALL), citation_recall(cited, g.expected) if scored else math.nan))
        rows.append((qid, str(ANY_CORRECT_CITATION),
                     any_correct_citation(cited, g.expected, g.alternates) if scored else math.nan))
        rows.append((qid, str(REFUSAL_ACCURACY), refusal_correct(g.should_refuse, refused)))
        support = _num(_get(rec, "support_ratio"))
        rows.append((qid, str(SUPPORT_RATIO), support if support is not None and not refused else math.nan))
        for measure, key in ((CONTEXT_TOKENS, "context_tokens"), (MODEL_CALLS, "model_calls")):
            v = _num(_get(rec, key))
            rows.append((qid, str(measure), v if v is not None else math.nan))
        for key in PASS_THROUGH:
            if _get(rec, key, _ABSENT) is not _ABSENT:
                v = _num(_get(rec, key))
                rows.append((qid, key, v if v is not None else math.nan))
    return pd.DataFrame(rows, columns=["qid", "measure", "value"])


def evaluate_election(cases: Iterable[Any]) -> pd.DataFrame:
    """EE-RAG benchmark scoring (seed 1.11), long format ``qid, measure, value``.

    Each case (mapping or object) has ``case_id``, ``expected`` (slugs), ``surfaced`` (candidates shown to the
    model), ``elected`` (entries it expanded), optional ``expect_retrieval`` (default: expected non-empty) and
    optional ``answer`` / ``hint`` (then ``AnswerHintMatched`` = hint is a case-insensitive substring of answer).
    """
    rows: list[tuple[str, str, float]] = []
    for case in cases:
        cid = str(_get(case, "case_id"))
        exp, sur = list(_get(case, "expected") or ()), list(_get(case, "surfaced") or ())
        el = list(_get(case, "elected") or ())
        expect = _get(case, "expect_retrieval")
        rows += [(cid, str(CANDIDATE_RECALL), candidate_recall(exp, sur)),
                 (cid, str(ELECTION_PRECISION), election_precision(exp, el)),
                 (cid, str(ELECTION_RECALL), election_recall(exp, el)),
                 (cid, str(ELECTION_F1), election_f1(exp, el)),
                 (cid, str(RETRIEVAL_RATE), float(bool(el))),
                 (cid, str(RETRIEVAL_EXPECTED), float(bool(exp) if expect is None else bool(expect)))]
        hint, answer = _get(case, "hint"), _get(case, "answer")
        if hint:
            rows.append((cid, "AnswerHintMatched", float(str(hint).casefold() in str(answer or "").casefold())))
    return pd.DataFrame(rows, columns=["qid", "measure", "value"])
