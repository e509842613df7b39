"""Evaluation measures, each defined once, as small named value objects (in the spirit of ir_measures).

Retrieval measures are parsed from strings such as ``"nDCG@10"`` and compute exactly what trec_eval computes
(``tests/test_metrics.py`` checks agreement with pytrec_eval to 1e-9). Ranking rule, identical to trec_eval:
documents of a query are ordered by **score descending, then docno descending** (string comparison); the
``rank`` column of a run is ignored. A judged label ``>= rel`` (default 1) counts as relevant for the binary
measures; nDCG uses the label itself as the gain (negative labels count 0).

Queries in the qrels but absent from the run score 0 on every measure (trec_eval ``-c``); queries in the run but
not in the qrels are ignored (as trec_eval does). Answer, election, memory and cost metrics follow below.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

import pandas as pd

from ..errors import DataError, SchemaError
from ..schema import validate

# ------------------------------------------------------------------------------------ retrieval measures


def _ranked(docnos: Sequence[str], scores: Sequence[float]) -> list[str]:
    """trec_eval order: score descending, ties broken by docno descending."""
    pairs = sorted(zip(scores, docnos), key=lambda p: (p[0], p[1]), reverse=True)
    return [d for _, d in pairs]


def _recall(ranking: Sequence[str], labels: Mapping[str, int], k: int | None, rel: int) -> float:
    """R@k = |relevant ∩ top-k| / |relevant|  (0 when the query has no relevant document)."""
    n_rel = sum(1 for v in labels.values() if v >= rel)
    if n_rel == 0:
        return 0.0
    top = ranking if k is None else ranking[:k]
    return sum(1 for d in top if labels.get(d, 0) >= rel) / n_rel


def _precision(ranking: Sequence[str], labels: Mapping[str, int], k: int | None, rel: int) -> float:
    """P@k = |relevant ∩ top-k| / k  (the denominator stays k when fewer than k documents were returned)."""
    top = ranking if k is None else ranking[:k]
    denom = len(top) if k is None else k
    if denom == 0:
        return 0.0
    return sum(1 for d in top if labels.get(d, 0) >= rel) / denom


def _rr(ranking: Sequence[str], labels: Mapping[str, int], k: int | None, rel: int) -> float:
    """RR@k = 1 / rank of the first relevant document within the top k (ranks from 1), else 0. Mean = MRR."""
    top = ranking if k is None else ranking[:k]
    for i, d in enumerate(top):
        if labels.get(d, 0) >= rel:
            return 1.0 / (i + 1)
    return 0.0


def _ap(ranking: Sequence[str], labels: Mapping[str, int], k: int | None, rel: int) -> float:
    """AP@k = Σ_{i ≤ k, doc_i relevant} P@i / |relevant|  (trec_eval map / map_cut: divided by all relevant)."""
    n_rel = sum(1 for v in labels.values() if v >= rel)
    if n_rel == 0:
        return 0.0
    top = ranking if k is None else ranking[:k]
    hits, total = 0, 0.0
    for i, d in enumerate(top):
        if labels.get(d, 0) >= rel:
            hits += 1
            total += hits / (i + 1)
    return total / n_rel


def _ndcg(ranking: Sequence[str], labels: Mapping[str, int], k: int | None, rel: int) -> float:
    """nDCG@k = DCG@k / IDCG@k with DCG@k = Σ_{i=1..k} gain_i / log2(i + 1), gain = max(label, 0);
    IDCG sorts all judged gains descending (trec_eval ndcg_cut). 0 when no judged gain is positive."""
    top = ranking if k is None else ranking[:k]
    dcg = sum(max(labels.get(d, 0), 0) / math.log2(i + 2) for i, d in enumerate(top))
    ideal = sorted((max(v, 0) for v in labels.values()), reverse=True)
    if k is not None:
        ideal = ideal[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


_IMPLS: dict[str, Callable[[Sequence[str], Mapping[str, int], int | None, int], float]] = {
    "nDCG": _ndcg, "R": _recall, "P": _precision, "RR": _rr, "AP": _ap,
}
_ALIASES = {
    "ndcg": "nDCG", "ndcg_cut": "nDCG", "r": "R", "recall": "R", "p": "P", "precision": "P",
    "rr": "RR", "mrr": "RR", "recip_rank": "RR", "ap": "AP", "map": "AP", "map_cut": "AP",
}
_NEEDS_CUTOFF = {"R", "P"}
_PATTERN = re.compile(r"^\s*([A-Za-z_]+)\s*(?:\(\s*rel\s*=\s*(\d+)\s*\))?\s*(?:[@.]\s*(\d+))?\s*$")


@dataclass(frozen=True)
class Measure:
    """A retrieval measure: ``name`` in nDCG | R | P | RR | AP, optional rank ``cutoff``, relevance level ``rel``.

    ``str(Measure("nDCG", 10)) == "nDCG@10"``; :func:`parse_measure` is the inverse.
    """

    name: str
    cutoff: int | None = None
    rel: int = 1

    def __post_init__(self) -> None:
        if self.name not in _IMPLS:
            raise SchemaError(f"unknown measure {self.name!r}; expected one of {sorted(_IMPLS)}.")
        if self.cutoff is not None and self.cutoff < 1:
            raise SchemaError(f"measure {self.name}: cutoff must be ≥ 1, found {self.cutoff}.")
        if self.name in _NEEDS_CUTOFF and self.cutoff is None:
            raise SchemaError(f"measure {self.name} needs a cutoff, e.g. {self.name}@10. Fix: add @k.")

    def __str__(self) -> str:
        rel = f"(rel={self.rel})" if self.rel != 1 else ""
        cut = f"@{self.cutoff}" if self.cutoff is not None else ""
        return f"{self.name}{rel}{cut}"

    def compute(self, ranking: Sequence[str], labels: Mapping[str, int]) -> float:
        """Value for one query: ``ranking`` in trec_eval order, ``labels`` docno → judged label."""
        return _IMPLS[self.name](ranking, labels, self.cutoff, self.rel)


def parse_measure(measure: "str | Measure") -> Measure:
    """``"nDCG@10"``, ``"R@100"``, ``"RR@10"`` / ``"MRR@10"``, ``"P@5"``, ``"AP"``, ``"nDCG(rel=2)@10"``, also
    trec_eval spellings (``"ndcg_cut.10"``, ``"recip_rank"``, ``"map"``)."""
    if isinstance(measure, Measure):
        return measure
    m = _PATTERN.match(str(measure))
    name = _ALIASES.get(m.group(1).lower()) if m else None
    if m is None or name is None:
        raise SchemaError(
            f"cannot parse measure {measure!r}; expected NAME[(rel=N)][@k] with NAME in "
            f"{sorted(_IMPLS)} (e.g. 'nDCG@10', 'R@100', 'RR@10', 'AP'). Fix: correct the spelling.")
    return Measure(name, int(m.group(3)) if m.group(3) else None, int(m.group(2)) if m.group(2) else 1)


def qrels_dict(qrels: pd.DataFrame) -> dict[str, dict[str, int]]:
    """``{qid: {docno: label}}`` from a ``qid, docno, label`` table (ids as strings)."""
    validate(qrels, "qrels")
    out: dict[str, dict[str, int]] = {}
    for qid, docno, label in zip(qrels["qid"].astype(str), qrels["docno"].astype(str), qrels["label"]):
        out.setdefault(qid, {})[docno] = int(label)
    return out


def rankings(run: pd.DataFrame) -> dict[str, list[str]]:
    """``{qid: [docno, …]}`` in trec_eval order (score desc, docno desc); repeated docnos keep the best score."""
    cols = [c for c in run.columns if c in ("qid", "docno", "score", "rank", "text", "chunk_id", "doc_id")]
    validate(run[cols], "run")
    best: dict[str, dict[str, float]] = {}
    for qid, docno, score in zip(run["qid"].astype(str), run["docno"].astype(str), run["score"].astype(float)):
        per = best.setdefault(qid, {})
        if docno not in per or score > per[docno]:
            per[docno] = score
    return {q: _ranked(list(d.keys()), list(d.values())) for q, d in best.items()}


def evaluate(run: pd.DataFrame, qrels: pd.DataFrame,
             measures: Sequence["str | Measure"] = ("nDCG@10", "R@100", "RR@10")) -> pd.DataFrame:
    """Per-query values, long format ``qid, measure, value`` (measure = canonical name such as ``"nDCG@10"``).

    Rows are sorted by qid then by the order of ``measures``. Values equal trec_eval's (see module doc for the
    tie-breaking rule and the treatment of missing queries).
    """
    parsed = [parse_measure(m) for m in measures]
    if not parsed:
        raise SchemaError("evaluate: no measures given. Fix: pass e.g. ['nDCG@10', 'R@100'].")
    judged = qrels_dict(qrels)
    ranked = rankings(run)
    rows: list[tuple[str, str, float]] = []
    for qid in sorted(judged):
        ranking = ranked.get(qid, [])
        for m in parsed:
            rows.append((qid, str(m), float(m.compute(ranking, judged[qid]))))
    return pd.DataFrame(rows, columns=["qid", "measure", "value"])


def aggregate(per_query: pd.DataFrame) -> dict[str, float]:
    """Mean of each measure over queries, in first-seen measure order: ``{"nDCG@10": 0.53, …}``.

    A table holding several systems must be split first (``df.groupby("system")``)."""
    for col in ("measure", "value"):
        if col not in per_query.columns:
            raise SchemaError(f"aggregate: expected columns measure, value; found {list(per_query.columns)}.")
    if "system" in per_query.columns and per_query["system"].nunique() > 1:
        raise SchemaError("aggregate: the table holds several systems "
                          f"{sorted(per_query['system'].unique())}. Fix: aggregate each system's rows separately.")
    order = list(dict.fromkeys(per_query["measure"]))
    means = per_query.groupby("measure", sort=False)["value"].mean()
    return {m: float(means[m]) for m in order}


# ------------------------------------------------------------------------------------------ RAG measures


@dataclass(frozen=True)
class RagMeasure:
    """A named per-question RAG measure; ``formula`` is the definition shown in docs and reports.

    Per-question values may be NaN where a measure does not apply (e.g. citation precision of a refused answer);
    :func:`aggregate` then averages over the questions where it applies (pandas skips NaN)."""

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
        raise SchemaError(f"evidence_recall: level must be 'turn' or 'session', found {level!r}.")
    if not g:
        return 1.0
    return sum(1 for x in g if x in s) / len(g)


def evidence_recall_at_k(gold: Iterable[str], ranked: Sequence[str], k: int, level: str = "turn") -> float:
    """:func:`evidence_recall` of the first ``k`` selected ids."""
    if k < 1:
        raise SchemaError(f"evidence_recall_at_k: k must be ≥ 1, found {k}.")
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
        exp, sur, el = list(_get(case, "expected") or ()), list(_get(case, "surfaced") or ()), list(_get(case, "elected") or ())
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
