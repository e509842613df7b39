"""The experiment harness: hand-computed tables, principals, answer systems, saving, caching, bad input."""
from __future__ import annotations

import json
import math
import warnings

import pandas as pd
import pytest

from ragbench.errors import ConfigError, DataError
from ragbench.eval.harness import experiment
from ragbench.eval.metrics import AnswerGold
from ragbench.eval.validity import RunValidityWarning
from ragbench.retrieval.base import Retriever
from ragbench.retrieval.trec import read_trec_run
from ragbench.schema import Hit, Principal

QUERIES = pd.DataFrame({"qid": ["q1", "q2", "q3", "q4"], "query": ["one", "two", "three", "four"]})
QRELS = pd.DataFrame({"qid": ["q1", "q2", "q3", "q4"], "docno": ["a", "b", "c", "d"], "label": [1, 1, 1, 1]})
SLICES = {"q1": "p", "q2": "p", "q3": "d", "q4": "d"}
RANKED_A = {"q1": ["a", "x"], "q2": ["x", "b"], "q3": ["c"], "q4": ["x", "y"]}
RANKED_B = {"q1": ["x", "a"], "q2": ["x", "y"], "q3": ["c"], "q4": ["x", "y"]}


def fixed_system(ranked, calls=None):
    def run(queries: pd.DataFrame) -> pd.DataFrame:
        if calls is not None:
            calls.append(len(queries))
        rows = [(q, d, float(10 - i), i) for q in queries["qid"] for i, d in enumerate(ranked[q])]
        return pd.DataFrame(rows, columns=["qid", "docno", "score", "rank"])
    return run


class RecordingRetriever(Retriever):
    """Returns the principal's user id as the only document, so ACL routing is visible in the run."""

    name = "recording"

    def index(self, chunks, acls=None, titles=None, show_progress=False):
        return self

    def search(self, query, k=10, principal=None):
        doc = principal.user_id if principal else "anon"
        return [Hit(chunk_id=f"{doc}#0", doc_id=doc, score=1.0, rank=0)]


def test_hand_computed_tables_and_significance():
    res = experiment({"A": fixed_system(RANKED_A), "B": fixed_system(RANKED_B)}, QUERIES, QRELS,
                     ["RR@2", "R@2"], baseline="B", slices=SLICES, k=2)
    assert res.aggregate.loc["A"].to_dict() == {"RR@2": 0.625, "R@2": 0.75}
    assert res.aggregate.loc["B"].to_dict() == {"RR@2": 0.375, "R@2": 0.5}
    assert len(res.per_query) == 2 * 4 * 2 and set(res.per_query.columns) == {"system", "qid", "measure", "value",
                                                                              "slice"}
    ps = res.per_slice.set_index(["system", "slice"])
    assert ps.loc[("A", "p"), ["n", "RR@2", "R@2"]].tolist() == [2, 0.75, 1.0]
    assert ps.loc[("A", "d"), ["RR@2", "R@2"]].tolist() == [0.5, 0.5]
    sig = res.significance.set_index(["slice", "measure"])
    rr = sig.loc[("all", "RR@2")]
    assert (rr["system"], rr["baseline"], rr["n"]) == ("A", "B", 4)
    assert rr["mean_diff"] == pytest.approx(0.25)
    assert (rr["wins"], rr["ties"], rr["losses"]) == (2, 2, 0)
    assert rr["permutation_p"] == pytest.approx(0.5)  # flips of (.5, .5): |mean| ≥ .25 in 2 of 4
    assert sig.loc[("all", "R@2"), "permutation_p"] == pytest.approx(1.0)
    assert rr["p_corrected"] == pytest.approx(1.0)  # Holm over {0.5, 1.0}: 2 × 0.5
    assert sig.loc[("p", "RR@2"), "mean_diff"] == pytest.approx(0.5)
    assert set(res.significance["slice"]) == {"all", "p", "d"}


def test_retriever_runs_as_each_querys_principal():
    alice, bob = Principal.make("alice"), Principal.make("bob")
    qrels = pd.DataFrame({"qid": ["q1", "q2"], "docno": ["alice", "alice"], "label": [1, 1]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # q3 has no judgements: not run, so no unjudged-query warning
        res = experiment({"r": RecordingRetriever()}, QUERIES.iloc[:3], qrels, ["P@1"],
                         principals={"q1": alice, "q2": bob, "q3": bob}, k=1)
    assert res.runs["r"].set_index("qid")["docno"].to_dict() == {"q1": "alice", "q2": "bob"}
    assert res.aggregate.loc["r", "P@1"] == 0.5


def test_answer_system_scored_with_gold_answers_and_needs_gold():
    gold = [AnswerGold("q1", ("a",)), AnswerGold("q2", ("b",), ("z",)), AnswerGold("q3", (), (), True),
            AnswerGold("q4", ("d",))]

    def answers(queries):
        return [{"qid": "q1", "answer": "x", "refused": False, "cited_docnos": ["a", "y"], "context_tokens": 10},
                {"qid": "q2", "answer": "x", "refused": False, "cited_docnos": ["z"], "context_tokens": 20},
                {"qid": "q3", "answer": "", "refused": True, "cited_docnos": [], "context_tokens": 0},
                {"qid": "q4", "answer": "", "refused": True, "cited_docnos": [], "context_tokens": 30}]

    res = experiment({"ret": fixed_system(RANKED_A), "ans": answers}, QUERIES, QRELS, ["RR@2"],
                     gold_answers=gold, k=2)
    agg = res.aggregate
    assert agg.loc["ans", "CitationPrecision"] == pytest.approx((0.5 + 1.0) / 2)
    assert agg.loc["ans", "CitationRecall"] == pytest.approx(0.5)
    assert agg.loc["ans", "RefusalAccuracy"] == pytest.approx(0.75)
    assert agg.loc["ans", "ContextTokens"] == pytest.approx(15.0)
    assert math.isnan(agg.loc["ans", "RR@2"]) and math.isnan(agg.loc["ret", "RefusalAccuracy"])
    assert list(res.answers) == ["ans"] and list(res.runs) == ["ret"]
    with pytest.raises(DataError, match="gold_answers"):
        experiment({"ans": answers}, QUERIES, QRELS, ["RR@2"])


def test_save_dir_contents_and_cache_reuse_by_content_hash(tmp_path):
    calls: list[int] = []
    systems = {"A": fixed_system(RANKED_A, calls), "B": fixed_system(RANKED_B, calls)}
    out = tmp_path / "run"
    cfg = {"retrieval": {"k": 2}}
    res = experiment(systems, QUERIES, QRELS, ["RR@2"], baseline="B", slices=SLICES, k=2, save_dir=out, config=cfg)
    assert not res.cached and calls == [4, 4]
    for f in ("aggregate.csv", "per_query.csv", "per_slice.csv", "significance.csv", "config.yaml", "meta.json",
              "runs/A.trec", "runs/B.trec"):
        assert (out / f).is_file(), f
    assert read_trec_run(out / "runs" / "A.trec").values.tolist()[:2] == [["q1", "a", 10.0, 0], ["q1", "x", 9.0, 1]]
    meta = json.loads((out / "meta.json").read_text())
    for key in ("config_hash", "data_hash", "model_sha256", "package_version", "git_commit", "cache_key"):
        assert key in meta
    again = experiment(systems, QUERIES, QRELS, ["RR@2"], baseline="B", slices=SLICES, k=2, save_dir=out,
                       config=cfg)
    assert again.cached and calls == [4, 4]  # nothing re-run
    pd.testing.assert_frame_equal(again.per_query, res.per_query)
    assert again.aggregate.loc["A", "RR@2"] == res.aggregate.loc["A", "RR@2"]
    # Same folder, different config content or different data → recomputed.
    experiment(systems, QUERIES, QRELS, ["RR@2"], baseline="B", slices=SLICES, k=2, save_dir=out,
               config={"retrieval": {"k": 3}})
    assert calls == [4, 4, 4, 4]
    experiment(systems, QUERIES, QRELS.assign(label=[1, 1, 1, 0]), ["RR@2"], baseline="B", slices=SLICES, k=2,
               save_dir=out, config={"retrieval": {"k": 3}})
    assert calls == [4, 4, 4, 4, 4, 4]
    # Without a config there is nothing to vouch for the systems: never reused.
    experiment(systems, QUERIES, QRELS, ["RR@2"], k=2, save_dir=tmp_path / "nocfg")
    experiment(systems, QUERIES, QRELS, ["RR@2"], k=2, save_dir=tmp_path / "nocfg")
    assert len(calls) == 10


def test_validity_warn_and_strict_leaves_nothing_written(tmp_path):
    dup = {"q1": ["a", "a"], "q2": ["b"], "q3": ["c"], "q4": ["d"]}
    with pytest.warns(RunValidityWarning, match="duplicate_docno"):
        res = experiment({"d": fixed_system(dup)}, QUERIES, QRELS, ["RR@2"], k=2)
    assert res.aggregate.loc["d", "RR@2"] == 1.0
    out = tmp_path / "strict"
    with pytest.raises(DataError, match="duplicate_docno"):
        experiment({"d": fixed_system(dup)}, QUERIES, QRELS, ["RR@2"], k=2, validity="strict", save_dir=out,
                   config={"x": 1})
    assert not out.exists()


@pytest.mark.parametrize("kwargs, match", [
    ({"baseline": "nope"}, "baseline"),
    ({"k": 0}, "k must be"),
    ({"validity": "maybe"}, "validity"),
    ({"measures": ["foo@3"]}, "cannot parse measure"),
])
def test_bad_arguments(kwargs, match):
    args = {"measures": ["RR@2"], **kwargs}
    with pytest.raises(ConfigError, match=match):
        experiment({"A": fixed_system(RANKED_A)}, QUERIES, QRELS, **args)
    with pytest.raises(ConfigError, match="no systems"):
        experiment({}, QUERIES, QRELS)


def test_cache_not_reused_after_the_code_changes(tmp_path, monkeypatch):
    """An edited package re-run into the same folder recomputes: the source hash is part of the cache key."""
    from ragbench.eval import harness

    calls: list[int] = []
    systems = {"A": fixed_system(RANKED_A, calls)}
    out, cfg = tmp_path / "run", {"retrieval": {"k": 2}}
    first = experiment(systems, QUERIES, QRELS, ["RR@2"], k=2, save_dir=out, config=cfg)
    assert json.loads((out / "meta.json").read_text())["code_hash"] == harness.code_hash()
    assert experiment(systems, QUERIES, QRELS, ["RR@2"], k=2, save_dir=out, config=cfg).cached and calls == [4]
    monkeypatch.setattr(harness, "code_hash", lambda: "0" * 16)
    again = experiment(systems, QUERIES, QRELS, ["RR@2"], k=2, save_dir=out, config=cfg)
    assert not again.cached and calls == [4, 4]
    assert json.loads((out / "meta.json").read_text())["cache_key"] != first.meta["cache_key"]


def test_code_hash_changes_with_any_source_file_and_only_with_sources(tmp_path):
    from ragbench.provenance import code_hash

    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "a.py").write_text("x = 1\n")
    (pkg / "sub" / "b.py").write_text("y = 2\n")
    base = code_hash(pkg)
    assert len(base) == 16 and base == code_hash(pkg)
    code_hash.cache_clear()  # the hash is cached per process; files edited under a running process are not seen
    (pkg / "notes.txt").write_text("not code")
    assert code_hash(pkg) == base
    code_hash.cache_clear()
    (pkg / "sub" / "b.py").write_text("y = 3\n")
    assert code_hash(pkg) != base
    code_hash.cache_clear()
    (pkg / "sub" / "b.py").write_text("y = 2\n")
    (pkg / "sub" / "b.py").rename(pkg / "b2.py")  # same bytes under another name is other code
    assert code_hash(pkg) != base
