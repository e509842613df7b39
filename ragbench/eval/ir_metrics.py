"""Retrieval (IR) measures, each defined once, as small named value objects (in the spirit of ir_measures).

Retrieval measures are parsed from strings such as ``"nDCG@10"`` and compute exactly what trec_eval computes
(``tests/test_metrics.py`` checks agreement with pytrec_eval to 1e-9). Ranking rule, identical to trec_eval:
documents of a query are ordered by **score descending, then docno descending** (string comparison); the
``rank`` column of a run is ignored. A judged label ``>= rel`` (default 1) counts as relevant for the binary
measures; nDCG uses the label itself as the gain (negative labels count 0).

Queries in the qrels but absent from the run score 0 on every measure (trec_eval ``-c``); queries in the run but
not in the qrels are ignored (as trec_eval does). Answer, election, memory and cost measures are
:mod:`ragbench.eval.rag_metrics`; :mod:`ragbench.eval.metrics` offers both.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import pandas as pd

from ..errors import ConfigError, SchemaError
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
            raise ConfigError(f"unknown measure {self.name!r}; expected one of {sorted(_IMPLS)}.")
        if self.cutoff is not None and self.cutoff < 1:
            raise ConfigError(f"measure {self.name}: cutoff must be ≥ 1, found {self.cutoff}.")
        if self.name in _NEEDS_CUTOFF and self.cutoff is None:
            raise ConfigError(f"measure {self.name} needs a cutoff, e.g. {self.name}@10. Fix: add @k.")

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
        raise ConfigError(
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
        raise ConfigError("evaluate: no measures given. Fix: pass e.g. ['nDCG@10', 'R@100'].")
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
