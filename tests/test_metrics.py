"""Retrieval and RAG metrics: hand-computed values, edge cases, and agreement with trec_eval (pytrec_eval)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import pytrec_eval

from ragbench.errors import ConfigError, SchemaError
from ragbench.eval.metrics import Measure, aggregate, evaluate, parse_measure


def _run(rows):
    return pd.DataFrame([(q, d, s, i) for i, (q, d, s) in enumerate(rows)], columns=["qid", "docno", "score", "rank"])


def _qrels(rows):
    return pd.DataFrame(rows, columns=["qid", "docno", "label"])


def _values(df):
    return {(r.qid, r.measure): r.value for r in df.itertuples()}


def test_parse_measure_names_and_aliases():
    assert parse_measure("nDCG@10") == Measure("nDCG", 10)
    assert parse_measure("ndcg_cut.5") == Measure("nDCG", 5)
    assert parse_measure("MRR@10") == Measure("RR", 10)
    assert parse_measure("recip_rank") == Measure("RR", None)
    assert parse_measure("map") == Measure("AP", None)
    assert parse_measure("P(rel=2)@5") == Measure("P", 5, rel=2)
    assert str(parse_measure("recall@100")) == "R@100"
    assert str(Measure("P", 5, rel=2)) == "P(rel=2)@5"


@pytest.mark.parametrize("bad", ["nDCG@0", "foo@10", "R", "P", "nDCG@x", ""])
def test_parse_measure_rejects(bad):
    with pytest.raises(ConfigError):
        parse_measure(bad)


def test_hand_computed_single_query():
    # Ranking d1 (rel) d2 (non) d3 (rel); 3 relevant judged in total (d4 never retrieved).
    run = _run([("q", "d1", 3.0), ("q", "d2", 2.0), ("q", "d3", 1.0)])
    qrels = _qrels([("q", "d1", 1), ("q", "d3", 1), ("q", "d4", 1), ("q", "d2", 0)])
    v = _values(evaluate(run, qrels, ["R@2", "P@2", "RR@10", "AP", "nDCG@3", "P@5"]))
    assert v[("q", "R@2")] == pytest.approx(1 / 3)
    assert v[("q", "P@2")] == pytest.approx(1 / 2)
    assert v[("q", "RR@10")] == pytest.approx(1.0)
    assert v[("q", "AP")] == pytest.approx((1 / 1 + 2 / 3) / 3)
    dcg = 1 + 1 / math.log2(4)
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert v[("q", "nDCG@3")] == pytest.approx(dcg / idcg)
    # k larger than the run: the denominator of P@k stays k.
    assert v[("q", "P@5")] == pytest.approx(2 / 5)


def test_edge_cases_no_relevant_all_relevant_missing_query():
    run = _run([("a", "x", 1.0), ("a", "y", 0.5), ("b", "x", 1.0), ("b", "y", 0.5)])
    qrels = _qrels([("a", "x", 0), ("b", "x", 1), ("b", "y", 1), ("c", "x", 1)])
    v = _values(evaluate(run, qrels, ["nDCG@10", "R@10", "RR@10", "AP", "P@2"]))
    for m in ("nDCG@10", "R@10", "RR@10", "AP", "P@2"):
        assert v[("a", m)] == 0.0        # no relevant document
        assert v[("c", m)] == 0.0        # judged query missing from the run counts 0
        assert v[("b", m)] == pytest.approx(1.0)  # everything retrieved is relevant


def test_ties_broken_by_docno_descending():
    # Equal scores: trec_eval puts "b" before "a" (docno descending), whatever the rank column says.
    run = pd.DataFrame([("q", "a", 1.0, 0), ("q", "b", 1.0, 1)], columns=["qid", "docno", "score", "rank"])
    qrels = _qrels([("q", "a", 1)])
    v = _values(evaluate(run, qrels, ["RR@10", "P@1"]))
    assert v[("q", "RR@10")] == pytest.approx(0.5)
    assert v[("q", "P@1")] == 0.0


def test_graded_ndcg_and_rel_level():
    run = _run([("q", "a", 3.0), ("q", "b", 2.0), ("q", "c", 1.0)])
    qrels = _qrels([("q", "a", 1), ("q", "b", 2), ("q", "c", 0)])
    v = _values(evaluate(run, qrels, ["nDCG@2", "P(rel=2)@2"]))
    assert v[("q", "nDCG@2")] == pytest.approx((1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3)))
    assert v[("q", "P(rel=2)@2")] == pytest.approx(0.5)


def test_aggregate_means_and_rejects_mixed_systems():
    per = pd.DataFrame({"qid": ["1", "2", "1", "2"], "measure": ["R@5", "R@5", "P@5", "P@5"],
                        "value": [1.0, 0.0, 0.4, 0.2]})
    assert aggregate(per) == {"R@5": 0.5, "P@5": pytest.approx(0.3)}
    per["system"] = ["x", "y", "x", "y"]
    with pytest.raises(SchemaError):
        aggregate(per)


TREC_NAMES = {"nDCG@10": "ndcg_cut_10", "nDCG@3": "ndcg_cut_3", "P@5": "P_5", "R@10": "recall_10",
              "R@3": "recall_3", "AP": "map", "AP@5": "map_cut_5", "nDCG": "ndcg"}


def test_agrees_with_trec_eval_on_random_run_with_ties():
    rng = np.random.default_rng(7)
    run_rows, qrel_rows = [], []
    docs = [f"d{i:02d}" for i in range(30)]
    for q in range(25):
        qid = f"q{q}"
        picked = rng.choice(docs, size=int(rng.integers(1, 20)), replace=False)
        for d in picked:
            # Scores rounded to one decimal so that many ties occur.
            run_rows.append((qid, str(d), float(np.round(rng.random(), 1))))
        for d in rng.choice(docs, size=int(rng.integers(1, 8)), replace=False):
            qrel_rows.append((qid, str(d), int(rng.integers(0, 3))))
    run, qrels = _run(run_rows), _qrels(qrel_rows)
    ours = _values(evaluate(run, qrels, list(TREC_NAMES) + ["RR@10"]))
    qd: dict = {}
    for q, d, lab in qrel_rows:
        qd.setdefault(q, {})[d] = lab
    rd: dict = {}
    for q, d, s in run_rows:
        rd.setdefault(q, {})[d] = s
    ref = pytrec_eval.RelevanceEvaluator(qd, {"ndcg_cut.3,10", "P.5", "recall.3,10", "map", "map_cut.5", "ndcg",
                                              "recip_rank"}).evaluate(rd)
    checked = 0
    for qid, vals in ref.items():
        for ours_name, trec_name in TREC_NAMES.items():
            assert ours[(qid, ours_name)] == pytest.approx(vals[trec_name], abs=1e-9), (qid, ours_name)
            checked += 1
        if all(r <= 10 for r in [len(rd[qid])]):
            # recip_rank has no cutoff in trec_eval; with ≤ 10 retrieved documents RR@10 must equal it.
            assert ours[(qid, "RR@10")] == pytest.approx(vals["recip_rank"], abs=1e-9)
    assert checked == 25 * len(TREC_NAMES)


# ------------------------------------------------------------------------------------------ RAG measures
from ragbench.errors import DataError  # noqa: E402
from ragbench.eval.metrics import (  # noqa: E402
    AnswerGold, any_correct_citation, candidate_recall, citation_precision, citation_recall, election_f1,
    election_precision, election_recall, evaluate_answers, evaluate_election, evidence_recall,
    evidence_recall_at_k, normalize_dia_id, refusal_correct, split_evidence)


def test_citation_measures_hand_computed():
    # cited {a, b, z}: a expected, b an alternate, z wrong; expected {a, c}.
    cited, expected, alts = ["A", "b", "z", "a"], ["a", "c"], ["B"]
    assert citation_precision(cited, expected, alts) == pytest.approx(2 / 3)
    assert citation_recall(cited, expected) == pytest.approx(1 / 2)  # alternates do not count for recall
    assert any_correct_citation(cited, expected, alts) == 1.0
    assert any_correct_citation(["z"], expected, alts) == 0.0
    assert math.isnan(citation_precision([], expected))
    assert math.isnan(citation_recall(["a"], []))
    assert refusal_correct(True, True) == refusal_correct(False, False) == 1.0
    assert refusal_correct(True, False) == refusal_correct(False, True) == 0.0


def test_evaluate_answers_applies_seed_rules():
    gold = [AnswerGold("q1", ("d1",), ("d2",)), AnswerGold("q2", ("d3", "d4")), AnswerGold("q3", ("d9",), (), True),
            AnswerGold("q4", ("d5",))]
    answers = pd.DataFrame([
        {"qid": "q1", "refused": False, "citations": [{"doc_id": "d2"}, {"doc_id": "d7"}], "support_ratio": 0.5,
         "context_tokens": 100},
        {"qid": "q2", "refused": False, "citations": ["d3"], "support_ratio": 1.0, "context_tokens": 50},
        {"qid": "q3", "refused": True, "citations": [], "support_ratio": None, "context_tokens": 0},
        {"qid": "q4", "refused": True, "citations": [], "support_ratio": None, "context_tokens": 20},  # wrong refusal
    ])
    per = evaluate_answers(answers, gold)
    agg = aggregate(per)
    # Citation measures over q1, q2 only (answered with citations, not should-refuse).
    assert agg["CitationPrecision"] == pytest.approx((1 / 2 + 1) / 2)
    assert agg["CitationRecall"] == pytest.approx((0 + 1 / 2) / 2)
    assert agg["AnyCorrectCitation"] == pytest.approx(1.0)
    assert agg["RefusalAccuracy"] == pytest.approx(3 / 4)
    assert agg["SupportRatio"] == pytest.approx(0.75)
    assert agg["ContextTokens"] == pytest.approx(170 / 4)
    assert math.isnan(agg["ModelCalls"])  # not reported by these records


def test_evaluate_answers_requires_matching_questions():
    with pytest.raises(DataError, match="without an answer"):
        evaluate_answers([{"qid": "q1", "refused": False}], [AnswerGold("q1"), AnswerGold("q2")])


def test_election_measures_seed_definitions():
    assert candidate_recall([], ["x"]) == 1.0
    assert candidate_recall(["a", "b"], ["a", "x"]) == 0.5
    assert election_precision([], []) == 1.0
    assert election_precision(["a"], []) == 0.0
    assert election_precision(["a"], ["a", "b", "c"]) == pytest.approx(1 / 3)
    assert election_recall([], ["a"]) == 1.0
    assert election_recall(["a", "b"], ["a"]) == 0.5
    assert election_f1(["a"], ["a", "b", "c"]) == pytest.approx(2 * (1 / 3) / (1 / 3 + 1))
    assert election_f1(["a"], ["b"]) == 0.0
    per = evaluate_election([
        {"case_id": "c1", "expected": ["a"], "surfaced": ["a", "b"], "elected": ["a"], "answer": "Use REBASE",
         "hint": "rebase"},
        {"case_id": "c2", "expected": [], "surfaced": ["b"], "elected": [], "expect_retrieval": False},
        {"case_id": "c3", "expected": ["c"], "surfaced": ["b"], "elected": ["b"]},
    ])
    agg = aggregate(per)
    assert agg["CandidateRecall"] == pytest.approx(2 / 3)
    assert agg["ElectionPrecision"] == pytest.approx(2 / 3)
    assert agg["ElectionF1"] == pytest.approx(2 / 3)
    assert agg["RetrievalRate"] == pytest.approx(2 / 3)
    assert agg["RetrievalExpected"] == pytest.approx(2 / 3)
    assert agg["AnswerHintMatched"] == 1.0


def test_locomo_evidence_normalisation_and_recall():
    assert normalize_dia_id("D:11:26") == "D11:26"
    assert normalize_dia_id("D30:05") == "D30:5"
    assert normalize_dia_id("D") is None
    assert split_evidence(["D8:6; D9:17", "D9:1 D4:4", "D", "D8:6"]) == ["D8:6", "D9:17", "D9:1", "D4:4"]
    assert evidence_recall([], ["D1:1"]) == 1.0
    assert evidence_recall(["D1:3", "D2:05"], ["D2:5", "D7:1"]) == 0.5
    assert evidence_recall(["D1:3", "D2:5"], ["D1:9"], level="session") == 0.5
    assert evidence_recall_at_k(["D1:3"], ["D5:1", "D1:3"], k=1) == 0.0
    assert evidence_recall_at_k(["D1:3"], ["D5:1", "D1:3"], k=2) == 1.0
    with pytest.raises(ConfigError):
        evidence_recall(["D1:1"], [], level="word")
