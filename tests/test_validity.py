"""Run validity checks: each problem is detected, warned about, or raised in strict mode."""
from __future__ import annotations

import warnings

import pandas as pd
import pytest

from ragbench.errors import DataError
from ragbench.eval.validity import RunValidityWarning, canonical_order, check_run


def _run(rows):
    return pd.DataFrame(rows, columns=["qid", "docno", "score", "rank"])


QRELS = pd.DataFrame([("1", "a", 1), ("2", "b", 1)], columns=["qid", "docno", "label"])


def test_clean_run_has_no_issues():
    run = _run([("1", "a", 2.0, 0), ("1", "c", 1.0, 1), ("2", "b", 1.0, 0)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_run(run, QRELS, queries=["1", "2"], doc_ids=["a", "b", "c"]) == []


@pytest.mark.parametrize("rows, kwargs, kind, qids", [
    ([("1", "a", 2.0, 0), ("1", "a", 1.0, 1), ("2", "b", 1.0, 0)], {}, "duplicate_docno", ("1",)),
    ([("1", "a", 2.0, 0)], {}, "missing_query", ("2",)),
    ([("1", "a", 2.0, 0), ("2", "b", 1.0, 0), ("3", "b", 1.0, 0)], {}, "unjudged_query", ("3",)),
    ([("1", "a", 2.0, 0), ("2", "b", 1.0, 0)], {"queries": ["1"]}, "unknown_qid", ("2",)),
    ([("1", "a", 2.0, 0), ("2", "b", 1.0, 0)], {"doc_ids": ["a"]}, "unknown_docno", ("2",)),
    ([("1", "1", 2.0, 0), ("1", "a", 1.0, 1), ("2", "b", 1.0, 0)], {}, "self_retrieval", ("1",)),
    ([("1", "a", float("nan"), 0), ("2", "b", 1.0, 0)], {}, "nonfinite_score", ("1",)),
    # Tied scores, rank says a before c, but scoring order (docno desc) puts c first.
    ([("1", "a", 1.0, 0), ("1", "c", 1.0, 1), ("2", "b", 1.0, 0)], {}, "tie_order", ("1",)),
])
def test_each_issue_is_warned_and_raised_in_strict_mode(rows, kwargs, kind, qids):
    run = _run(rows)
    with pytest.warns(RunValidityWarning, match=kind):
        issues = check_run(run, QRELS, **kwargs)
    assert [(i.kind, i.qids) for i in issues] == [(kind, qids)]
    with pytest.raises(DataError, match=kind):
        check_run(run, QRELS, strict=True, **kwargs)


def test_canonical_order_breaks_ties_by_docno_descending():
    run = _run([("1", "a", 1.0, 0), ("1", "c", 1.0, 1), ("1", "b", 3.0, 2)])
    out = canonical_order(run)
    assert out[["docno", "rank"]].values.tolist() == [["b", 0], ["c", 1], ["a", 2]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_run(out, pd.DataFrame([("1", "a", 1)], columns=["qid", "docno", "label"])) == []
