"""Run validity checks, made before scoring so that a broken run is never silently reported as a weak one.

Checks (``kind`` of each :class:`ValidityIssue`):

* ``duplicate_docno`` — a docno appears more than once for a query (scoring keeps its best score);
* ``missing_query`` — a judged (or listed) query has no rows in the run (it scores 0 on every measure);
* ``unjudged_query`` — the run has a query the qrels do not judge (it is ignored by scoring);
* ``unknown_qid`` / ``unknown_docno`` — the qrels name a query not in ``queries`` or a document not in ``doc_ids``;
* ``self_retrieval`` — a query retrieves a document with its own id (qid == docno), a known BEIR pitfall;
* ``nonfinite_score`` — NaN or infinite scores;
* ``tie_order`` — tied scores whose ``rank`` order differs from the deterministic tie-break used for scoring.

Tie-breaking is deterministic and equal to trec_eval's: score descending, then docno descending (string order).
The ``rank`` column never influences metric values; :func:`canonical_order` rewrites it to match.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Iterable

import pandas as pd

from ..errors import DataError


class RunValidityWarning(UserWarning):
    """A run has a validity problem that scoring tolerates (see :mod:`ragbench.eval.validity`)."""


@dataclass(frozen=True)
class ValidityIssue:
    kind: str
    qids: tuple[str, ...]
    detail: str

    def __str__(self) -> str:
        shown = ", ".join(self.qids[:5]) + (f" … (+{len(self.qids) - 5})" if len(self.qids) > 5 else "")
        return f"{self.kind}: {self.detail} [queries: {shown}]"


def canonical_order(run: pd.DataFrame) -> pd.DataFrame:
    """The run sorted by qid, score descending, docno descending, with ``rank`` rewritten from 0."""
    out = run.copy()
    out["qid"] = out["qid"].astype(str)
    out["docno"] = out["docno"].astype(str)
    out = out.sort_values(["qid", "score", "docno"], ascending=[True, False, False], kind="stable")
    out["rank"] = out.groupby("qid").cumcount()
    return out.reset_index(drop=True)


def check_run(run: pd.DataFrame, qrels: pd.DataFrame, queries: Iterable[str] | None = None,
              doc_ids: Iterable[str] | None = None, strict: bool = False, name: str = "run") -> list[ValidityIssue]:
    """Check ``run`` against ``qrels`` (and optionally the query ids and corpus doc ids).

    Emits one :class:`RunValidityWarning` per kind of problem, or with ``strict=True`` raises :class:`DataError`
    listing them all. Returns the issues found (empty when the run is clean)."""
    r = run.assign(qid=run["qid"].astype(str), docno=run["docno"].astype(str))
    q = qrels.assign(qid=qrels["qid"].astype(str), docno=qrels["docno"].astype(str))
    issues: list[ValidityIssue] = []
    dup = r[r.duplicated(["qid", "docno"], keep=False)]
    if len(dup):
        issues.append(ValidityIssue("duplicate_docno", tuple(sorted(dup["qid"].unique())),
                                    f"{len(dup)} rows repeat a docno within a query; the best score is kept. "
                                    "Fix: aggregate chunks to documents before scoring."))
    run_qids = set(r["qid"])
    wanted = set(q["qid"]) | ({str(x) for x in queries} if queries is not None else set())
    missing = sorted(wanted - run_qids)
    if missing:
        issues.append(ValidityIssue("missing_query", tuple(missing),
                                    f"{len(missing)} queries have no results and score 0. Fix: check the "
                                    "retriever returned results for every query."))
    unjudged = sorted(run_qids - set(q["qid"]))
    if unjudged:
        issues.append(ValidityIssue("unjudged_query", tuple(unjudged),
                                    f"{len(unjudged)} run queries have no judgements and are ignored."))
    if queries is not None:
        unknown = sorted(set(q["qid"]) - {str(x) for x in queries})
        if unknown:
            issues.append(ValidityIssue("unknown_qid", tuple(unknown),
                                        "qrels name queries that are not in the query set. Fix: use the qrels "
                                        "of the same split as the queries."))
    if doc_ids is not None:
        known = {str(x) for x in doc_ids}
        bad = q[~q["docno"].isin(known)]
        if len(bad):
            issues.append(ValidityIssue("unknown_docno", tuple(sorted(bad["qid"].unique())),
                                        f"qrels name {bad['docno'].nunique()} documents not in the corpus "
                                        f"(e.g. {bad['docno'].iloc[0]!r}). Fix: index the full corpus."))
    selfs = r[r["qid"] == r["docno"]]
    if len(selfs):
        issues.append(ValidityIssue("self_retrieval", tuple(sorted(selfs["qid"].unique())),
                                    "queries retrieve a document with their own id. Fix: drop qid == docno rows "
                                    "if queries are also corpus documents (BEIR ArguAna/Quora)."))
    scores = r["score"].astype(float)
    if not all(math.isfinite(s) for s in scores):
        bad_q = r.loc[~scores.map(math.isfinite), "qid"]
        issues.append(ValidityIssue("nonfinite_score", tuple(sorted(bad_q.unique())),
                                    "NaN or infinite scores. Fix: the retriever must return finite scores."))
    if "rank" in r.columns:
        canon = canonical_order(r.drop_duplicates(["qid", "docno"]))
        given = r.drop_duplicates(["qid", "docno"]).sort_values(["qid", "rank"], kind="stable")
        differs = [qid for qid, g in given.groupby("qid")
                   if list(g["docno"]) != list(canon.loc[canon["qid"] == qid, "docno"])
                   and g["score"].duplicated().any()]
        if differs:
            issues.append(ValidityIssue("tie_order", tuple(sorted(differs)),
                                        "tied scores are ranked differently from the scoring order (score desc, "
                                        "docno desc). Fix: use canonical_order(run), or break ties in the scores."))
    if issues:
        text = "; ".join(str(i) for i in issues)
        if strict:
            raise DataError(f"{name} failed validity checks: {text}")
        for issue in issues:
            warnings.warn(f"{name}: {issue}", RunValidityWarning, stacklevel=2)
    return issues
