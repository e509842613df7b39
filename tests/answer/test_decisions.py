"""What decided each answer: the check's rule names, the service's ``Answer.decided_by`` on the bundled golden set,
and the decision table ``ragbench eval golden`` prints, saves and returns in ``--json``."""
from __future__ import annotations

import json
from types import SimpleNamespace

import pandas as pd
import pytest

from ragbench.answer.answerability import AnswerabilityReport, rule_of
from ragbench.config import with_overrides
from ragbench.errors import DataError
from ragbench.eval.answers import answer_config, answer_golden, build_service, build_store, score_answers
from ragbench.eval.decisions import OUTCOMES, UNRECORDED, decision_table, decisions, decisions_json, outcome
from ragbench.eval.golden import load_golden

FAST = {"embedding.model": "hashing", "embedding.cache": False}


@pytest.fixture(scope="module")
def golden():
    return load_golden()


@pytest.fixture(scope="module")
def bm25_answers(golden):
    """Every bundled question answered by the default service over BM25 (hashing embedder: no model files)."""
    cfg = with_overrides(answer_config(None, "bm25"), FAST)
    svc = build_service(golden, cfg, "bm25", None, store=build_store(golden, cfg, None))
    answers, prompts = answer_golden(svc, golden)
    return svc, answers, prompts


@pytest.mark.parametrize("reason, rule", [
    ("coverage 0.31 < 0.55 and similarity 0.40 < 0.62", "thresholds"),
    ("coverage 0.31 < 0.55 (coverage decides) (whole question); parts: 'a': coverage 0.1 < 0.55", "thresholds"),
    ("no answer sentences", "no-sentences"),
    ("no money in the answer", "answer-type"),
    ("no number in an answer sentence on the question's topic (coverage < 0.2)", "type-off-topic"),
    ("answers another grade (V2, not V3)", "conflict"),
    ("the answer does not mention 'ferret', the question's most specific term", "rarest-term"),
    ("asks about V3, which no readable document mentions", "unknown-word"),
    ("names Thimble, which the answer's documents never mention", "absent-name"),
    ("asks about the rare word motorbike, which no readable document contains", "rare-word"),
    ("asks about the word surveyor, which the answer's documents never mention", "sibling-word"),
    ("asks what holds from April 2026, which the answer never states", "undated"),
    ("asks about the year 2023, which the answer never states", "unstated-year"),
    ("asks for the date of a closure, which the answer never states", "closure-date"),
    ("asks for a period ending March 2026, which the answer never states", "period-end"),
    ("asks for the top of a band, which the answer never states", "band-top"),
    ("asks about the month August 2026, which the answer never states", "unstated-month"),
    ("asks about the financial year 2025-26, which the answer never states", "year-label"),
    ("asks about abroad, which the answer never mentions", "abroad"),
    ("asks for an interest rate, which the answer never states as a percentage", "interest-rate"),
    ("asks about the vehicle van, which the answer never names", "vehicle"),
    ("asks about the relation cousin, which the answer's relations leave out", "relation"),
    ("asks for a profit, which the answer never states", "profit"),
    ("asks about the count 15 radiators, which every count the answer states leaves out (up to 10 radiators)",
     "count-band"),
    ("something no rule says", "other"),
    (None, "other"),
    ("", "other"),
])
def test_rule_of_names_the_rule_behind_each_reason(reason, rule):
    assert rule_of(reason) == rule


def test_the_service_records_what_decided_each_golden_answer(golden, bm25_answers):
    svc, answers, _ = bm25_answers
    expected = {"g001": "check:coverage", "g031": "check:thresholds", "g033": "check:type-off-topic",
                "g037": "check:rare-word", "g043": "check:answer-type", "g044": "check:parts",
                "g051": "restricted-gap", "g060": "check:unknown-word"}
    assert {q: answers[q].decided_by for q in expected} == expected
    # Refused exactly when the rule is a refusing one; an answered question says how it passed.
    passed = {"check:coverage", "check:similarity", "check:parts"}
    for a in answers.values():
        assert a.decided_by and (a.decided_by in passed) == (not a.refused), (a.question, a.decided_by)
    # g044 is a two-part question the whole check refused and a part answered.
    assert answers["g044"].unanswered_parts
    # The asker never sees it (a restricted gap reads like a weak retrieval there); the evaluation row has it.
    assert "decided_by" not in answers["g051"].to_json()
    assert answers["g051"].to_row("g051")["decided_by"] == "restricted-gap"


def test_the_route_of_an_accepted_answer():
    svc = SimpleNamespace(cfg=SimpleNamespace(answerability_min_coverage=0.55))
    from ragbench.answer.service import AnsweringService

    def report(soft: float, parts=()) -> AnswerabilityReport:
        return AnswerabilityReport(soft, 0.7, None, True, True, soft_coverage=soft, parts=parts)

    route = AnsweringService.route
    assert route(svc, report(0.55)) == "check:coverage"  # the bar itself passes on coverage
    assert route(svc, report(0.549)) == "check:similarity"
    assert route(svc, report(0.2, parts=(("a", report(0.9)),))) == "check:parts"
    assert route(svc, None) == "unchecked"


def test_the_decision_table_agrees_with_the_measures(golden, bm25_answers):
    _, answers, prompts = bm25_answers
    rows = pd.DataFrame([a.to_row(q) for q, a in answers.items()])
    table = decision_table(rows, golden.questions)
    assert list(table.columns) == ["decided_by", *OUTCOMES, "right", "n"]
    assert int(table["n"].sum()) == len(golden.questions) == 74
    assert (table["n"] == table[list(OUTCOMES)].sum(axis=1)).all()
    assert list(table["n"]) == sorted(table["n"], reverse=True)
    per_q = score_answers("answer", golden, answers, prompts)
    mean = per_q.groupby("measure")["value"].mean()
    # right = HandledRight's count; refused-when-should + answered-when-answerable = RefusalAccuracy's
    assert int(table["right"].sum()) == round(mean["HandledRight"] * 74)
    decided_right = table["refused_should_refuse"].sum() + table[["answered_fact", "answered_no_fact"]].sum().sum()
    assert int(decided_right) == round(mean["RefusalAccuracy"] * 74)
    # Every question that should be refused and was, was refused by some rule, never answered by a route.
    by_rule = table.set_index("decided_by")
    assert by_rule.loc["check:coverage", "refused_should_refuse"] == 0
    assert by_rule.loc["restricted-gap", "answered_fact"] == 0


def test_decision_table_counts_outcomes_exactly():
    qs = [SimpleNamespace(qid="a", should_refuse=True, answer_fact=None),
          SimpleNamespace(qid="b", should_refuse=True, answer_fact="secret"),
          SimpleNamespace(qid="c", should_refuse=False, answer_fact="25 days"),
          SimpleNamespace(qid="d", should_refuse=False, answer_fact="25 days"),
          SimpleNamespace(qid="e", should_refuse=False, answer_fact=None),
          SimpleNamespace(qid="f", should_refuse=False, answer_fact="£90")]
    rows = pd.DataFrame({"qid": list("abcdef"),
                         "refused": [True, False, False, False, False, True],
                         "answer": ["", "It is secret.", "You get 25 DAYS.", "You get 20 days.", "Yes.", ""],
                         "decided_by": ["check:thresholds", "check:similarity", "check:coverage", "check:coverage",
                                        "check:similarity", "check:thresholds"]})
    table = decision_table(rows, qs).set_index("decided_by")
    assert table.loc["check:thresholds"].to_dict() == {
        "refused_should_refuse": 1, "answered_should_refuse": 0, "refused_answerable": 1, "answered_fact": 0,
        "answered_no_fact": 0, "right": 1, "n": 2}
    assert table.loc["check:coverage"].to_dict() == {
        "refused_should_refuse": 0, "answered_should_refuse": 0, "refused_answerable": 0, "answered_fact": 1,
        "answered_no_fact": 1, "right": 1, "n": 2}
    assert table.loc["check:similarity"].to_dict() == {
        "refused_should_refuse": 0, "answered_should_refuse": 1, "refused_answerable": 0, "answered_fact": 1,
        "answered_no_fact": 0, "right": 1, "n": 2}
    # a run saved before the column existed, and two systems stacked
    both = decisions({"old": rows.drop(columns="decided_by"), "new": rows}, qs)
    assert list(both.columns) == ["system", "decided_by", *OUTCOMES, "right", "n"]
    assert both[both["system"] == "old"]["decided_by"].tolist() == [UNRECORDED]
    record = decisions_json(both)
    assert record["old"][UNRECORDED] == {"refused_should_refuse": 1, "answered_should_refuse": 1,
                                         "refused_answerable": 1, "answered_fact": 2, "answered_no_fact": 1,
                                         "right": 3, "n": 6}
    assert json.loads(json.dumps(record)) == record  # plain ints, JSON as it is
    assert decisions({}, qs).empty


def test_outcome_of_one_question():
    assert outcome(True, True, None, "") == "refused_should_refuse"
    assert outcome(True, False, "x", "x") == "answered_should_refuse"
    assert outcome(False, True, "x", "") == "refused_answerable"
    assert outcome(False, False, "Full Pay", "on full pay.") == "answered_fact"
    assert outcome(False, False, None, "anything") == "answered_fact"
    assert outcome(False, False, "x", "y") == "answered_no_fact"


def test_rows_of_another_set_are_an_error(golden):
    rows = pd.DataFrame({"qid": ["g001", "zz9"], "refused": [False, True], "answer": ["", ""],
                         "decided_by": ["check:coverage", "check:thresholds"]})
    with pytest.raises(DataError, match=r"zz9.*Fix: score a run against the golden set it was made on"):
        decision_table(rows, golden.questions)


def test_eval_golden_prints_saves_and_returns_the_decisions(tmp_path, capsys):
    pytest.importorskip("matplotlib")  # eval golden draws its result chart (the track extra)
    from ragbench import cli

    out = tmp_path / "run"
    code = cli.main(["eval", "golden", "--json", "--no-mlflow", "--retriever", "bm25", "--out", str(out),
                     "--set", "embedding.model=hashing", "--set", "embedding.cache=false"])
    captured = capsys.readouterr()
    assert code == 0
    summary = json.loads(captured.out)
    assert list(summary["decisions"]) == ["answer"]  # answer systems only, not the retrievers
    record = summary["decisions"]["answer"]
    assert sum(v["n"] for v in record.values()) == 74
    # The saved answers say the same, and so does the saved table.
    saved = pd.read_json(out / "answers" / "answer.jsonl", lines=True, dtype={"qid": str})
    again = decisions_json(decisions({"answer": saved}, load_golden().questions))
    assert again == summary["decisions"]
    csv = pd.read_csv(out / "decisions.csv")
    assert decisions_json(csv) == summary["decisions"]
    # HandledRight of the aggregate is the table's right count over the questions.
    right = sum(v["right"] for v in record.values())
    assert right / 74 == pytest.approx(summary["systems"]["answer"]["HandledRight"])
    assert "Answers: what decided each question" in captured.err and "check:coverage" in captured.err
