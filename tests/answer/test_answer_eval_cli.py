"""Golden-set answer evaluation (leak checker, measures) and the ``ragbench ask`` / ``chat`` commands."""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from ragbench.answer.citations import Citation
from ragbench.answer.service import Answer
from ragbench.config import RagbenchConfig, with_overrides
from ragbench.errors import ConfigError, ModelError
from ragbench.eval.answers import (LEAKED_DOCS, SECRET_IN_ANSWER, LeakChecker, answer_config,
                                   evaluate_golden_answers, golden_answer_systems)
from ragbench.eval.golden import load_golden
from ragbench.eval.metrics import AnswerGold, evaluate_answers

ROOT = Path(__file__).resolve().parents[2]
FAST = {"embedding.model": "hashing", "embedding.cache": False}


@pytest.fixture(scope="module")
def golden():
    return load_golden()


def _answer(text: str, cites=()) -> Answer:
    return Answer("id", "q", "q", text, False, None, 1.0, tuple(cites), "rag.answer@v1", "m", "bm25", 0)


def test_leak_checker_finds_ids_text_and_citations(golden):
    checker = LeakChecker(golden)
    guest = golden.principals["eval-guest"]
    assert "board-exec-comp" in checker.forbidden(guest) and "pub-overview" not in checker.forbidden(guest)
    board_text = golden.document("board-exec-comp").text
    snippet = " ".join(board_text.split()[20:32])
    assert checker.leaks(guest, _answer("Nothing to see.")) == []
    assert checker.leaks(guest, _answer(f"Well: {snippet}")) == ["board-exec-comp"]
    assert checker.leaks(guest, _answer("ok"), prompts=[f"context {snippet}"]) == ["board-exec-comp"]
    # The asker's own question in the prompt is not a leak, even when it repeats the document's words.
    from dataclasses import replace

    assert checker.leaks(guest, replace(_answer("ok"), question=snippet), prompts=[f"QUESTION: {snippet}"]) == []
    assert checker.leaks(guest, _answer("see board-exec-comp")) == ["board-exec-comp"]
    cite = Citation(1, "exec-acquisitions", "t", "c", 0, 1, 1.0)
    assert checker.leaks(guest, _answer("ok", [cite])) == ["exec-acquisitions"]
    # The board member may read the board document: no leak for them.
    assert "board-exec-comp" not in checker.leaks(golden.principals["eval-board"], _answer(f"x {snippet}"))
    # A forbidden id in any prompt counts, not only in the last one.
    assert checker.leaks(guest, _answer("ok"), prompts=["see board-exec-comp", "nothing"]) == ["board-exec-comp"]


def test_leak_checker_ignores_citation_markers():
    """"… the Head of Libraries. [1]" is the permitted sentence and our marker; a forbidden list that reads "Head
    of Libraries 1 April" shares no document text with it."""
    from types import SimpleNamespace

    from ragbench.schema import Acl, Document, Principal

    public = Document("guide", "Bans over a year go to the Head of Libraries.", "Guide", acl=Acl.make([], [], "Public"))
    secret = Document("paper", "Report to the Head of Libraries 1 April.", "Paper",
                      acl=Acl.make(["board"], [], "Restricted"))
    checker = LeakChecker(SimpleNamespace(documents=[public, secret]))
    guest = Principal.make("guest", ["guest"], [], "Public")
    assert checker.leaks(guest, _answer("Bans over a year go to the Head of Libraries. [1]")) == []
    # Nor does a shingle span two passages of a prompt: "[1] … the Head of Libraries. [2] 1 April …" is two texts.
    assert checker.leaks(guest, _answer("ok"), prompts=["[1] Bans go to the Head of Libraries. [2] 1 April."]) == []
    assert checker.leaks(guest, _answer("Report to the Head of Libraries 1 April.")) == ["paper"]


def test_golden_evaluation_bm25_has_no_leaks_and_reports_groups(golden):
    cfg = with_overrides(answer_config(), FAST)
    ev = evaluate_golden_answers(golden, cfg, modes=("bm25",))
    assert len(ev.answers) == len(golden.questions) == 74
    overall = ev.overall().loc["extractive-v1/bm25"]
    assert overall[LEAKED_DOCS] == 0.0
    # The refuse-acl secrets never reach a reply: one SecretInAnswer value per refuse-acl question, all 0.
    secret = ev.per_query[ev.per_query["measure"] == SECRET_IN_ANSWER]
    assert len(secret) == 8 and secret["value"].sum() == 0.0 and set(secret["slice"]) == {"refuse-acl"}
    assert 0.0 <= overall["RefusalAccuracy"] <= 1.0 and 0.0 <= overall["CitationPrecision"] <= 1.0
    groups = set(ev.summary["group"])
    assert {"all", "principal:eval-guest", "slice:paraphrase", "slice:refuse-acl"} <= groups
    refuse = ev.answers[ev.answers.should_refuse]
    # Refused or not, an answer to a refuse-acl question never cites the forbidden document.
    for _, row in refuse.iterrows():
        assert not set(filter(None, row["cited"].split(", "))) & set(row["expected"].split(", "))


def test_eval_golden_hook_returns_answer_records(golden):
    cfg = with_overrides(RagbenchConfig(), FAST)
    systems = golden_answer_systems(golden, cfg, {})
    import pandas as pd

    assert list(systems) == ["answer"]
    assert list(golden_answer_systems(golden, cfg, {}, ["llama"])) == ["answer", "answer-llama"]
    recs = systems["answer"](pd.DataFrame({"qid": ["g001", "g051"], "query": ["x", "y"]}))
    assert [r["qid"] for r in recs] == ["g001", "g051"]
    assert set(recs[0]) >= {"qid", "answer", "refused", "citations", "support_ratio", "context_tokens",
                            "cited_docnos", "model_calls", "LeakedDocs", "FactInAnswer", "SecretInAnswer",
                            "InjectionQuoted", "HandledRight"}
    assert "board-exec-comp" not in recs[1]["cited_docnos"]
    # g001 is answered with its fact ("25 days") and g051 refused: both handled right.
    assert (recs[0]["refused"], recs[0]["FactInAnswer"], recs[0]["HandledRight"]) == (False, 1.0, 1.0)
    assert (recs[1]["refused"], recs[1]["HandledRight"]) == (True, 1.0)
    # g051 is a refuse-acl question: no fact measure, a secret measure; g001 the other way round.
    assert (recs[0]["LeakedDocs"], recs[0]["InjectionQuoted"], recs[1]["LeakedDocs"], recs[1]["SecretInAnswer"]) \
        == (0.0, 0.0, 0.0, 0.0)
    assert math.isnan(recs[0]["SecretInAnswer"]) and math.isnan(recs[1]["FactInAnswer"])
    per = evaluate_answers(pd.DataFrame(recs), [AnswerGold.from_golden(golden.question(q)) for q in ("g001", "g051")])
    assert set(per["measure"]) >= {"LeakedDocs", "FactInAnswer", "SecretInAnswer", "InjectionQuoted", "HandledRight"}


def test_answer_records_say_why_a_question_was_refused(golden):
    """Session 57: a record carries the check's own reason, its coverage and similarity, and for a refusal the draft
    the check withheld, so a run can be read afterwards without replaying it."""
    import pandas as pd

    cfg = with_overrides(RagbenchConfig(), FAST)
    recs = golden_answer_systems(golden, cfg, {})["answer"](pd.DataFrame({"qid": ["g001", "g025", "g051"],
                                                                           "query": ["x", "y", "z"]}))
    answered, named, floor = recs
    assert (answered["check_reason"], answered["coverage"], answered["withheld"]) == (None, 1.0, None)
    assert (named["refused"], named["decided_by"]) == (True, "check:absent-name")
    assert named["check_reason"] == "names CCTV, which the answer's documents never mention"
    assert (named["coverage"], named["similarity"]) == (0.529, 0.3286)
    assert named["withheld"].startswith("Closed case files are kept for 6 years after the employee leaves")
    # refused before any draft was read: nothing to say beyond decided_by
    assert (floor["decided_by"], floor["check_reason"], floor["coverage"], floor["withheld"]) == (
        "retrieval-floor", None, None, None)


def _ragbench(args, cwd, stdin=None):
    cfg = cwd / "fast.yaml"
    cfg.write_text("embedding:\n  model: hashing\n  cache: false\n", encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "ragbench", *args, "--config", str(cfg)], cwd=cwd, input=stdin,
                          capture_output=True, text=True, timeout=300)


def test_cli_ask_json(tmp_path):
    r = _ragbench(["ask", "How many days of annual leave do full-time employees get?", "--as", "eval-staff",
                   "--json", "--retriever", "bm25"], tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert list(out)[:7] == ["answer", "refused", "refusal_reason", "citations", "support_ratio",
                             "prompt_version", "model_id"]
    assert out["refused"] is False and "25 days" in out["answer"]
    assert out["citations"][0]["doc_id"] == "hr-leave" and out["prompt_version"] == "rag.answer@v1"
    assert set(out["citations"][0]) == {"doc_id", "title", "chunk_id", "start", "end"}
    assert len(list((tmp_path / ".ragbench").glob("golden-answers-*.db"))) == 1


def test_cli_unknown_principal_fails_before_indexing(tmp_path):
    r = _ragbench(["ask", "Anything?", "--as", "mallory", "--json"], tmp_path)
    assert r.returncode == 2 and "unknown principal 'mallory'" in r.stderr
    assert not (tmp_path / ".ragbench").exists()


def test_cli_chat_follow_up(tmp_path):
    r = _ragbench(["chat", "--as", "eval-staff", "--json", "--retriever", "bm25"], tmp_path,
                  stdin="What is the nightly hotel cap in London?\nWhat about elsewhere in the UK?\n")
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in r.stdout.strip().splitlines()]
    assert len(lines) == 2
    assert "£180" in lines[0]["answer"] and "£130" in lines[1]["answer"]
    assert {c["doc_id"] for c in lines[1]["citations"]} == {"fin-travel"}


def test_cli_ask_explain_says_which_rule_decided_and_what_the_check_read(tmp_path):
    q = "How many days of annual leave do full-time employees get?"
    r = _ragbench(["ask", q, "--as", "eval-staff", "--json", "--explain", "--retriever", "bm25"], tmp_path)
    assert r.returncode == 0, r.stderr
    why = json.loads(r.stdout.strip().splitlines()[-1])["explain"]
    assert (why["decided_by"], why["query"], why["restricted_gap"], why["judge_p_yes"]) == \
        ("check:coverage", q, 0.0, None)
    assert {k: why["check"][k] for k in ("answerable", "reason", "rule", "coverage", "expected_type", "type_found")} \
        == {"answerable": True, "reason": None, "rule": None, "coverage": 1.0, "expected_type": "number",
            "type_found": True}
    assert why["sentences"][0]["text"].startswith("Full-time employees receive 25 days of annual leave")
    assert why["sentences"][0]["supported"] is True
    # The text form: the rule, the check's signals and the sentences read, after the answer.
    r = _ragbench(["ask", q, "--as", "eval-guest", "--explain", "--retriever", "bm25", "--no-mlflow"], tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[1] == "(refused: insufficient-retrieval)"
    assert f"  decided by restricted-gap · query: {q}" in lines
    assert not any(line.startswith("  check:") or line.startswith("  read [") for line in lines)
    # Without the flag, no explain object: an asker's reply never says which rule decided.
    r = _ragbench(["ask", q, "--as", "eval-guest", "--json", "--retriever", "bm25", "--no-mlflow"], tmp_path)
    assert "explain" not in json.loads(r.stdout.strip().splitlines()[-1])


def test_explain_carries_a_named_rules_reason_and_a_floors_gap(golden):
    from ragbench.eval.answers import build_service, build_store

    cfg = with_overrides(answer_config(None, "bm25"), FAST)
    svc = build_service(golden, cfg, "bm25", None, store=build_store(golden, cfg, None))
    q = golden.question("g037")  # a paraphrase refused for "username", a word no readable document has
    why = svc.answer(q.question, q.asked_by).explain()
    assert why["decided_by"] == "check:rare-word"
    assert (why["check"]["answerable"], why["check"]["rule"], why["check"]["reason"]) == \
        (False, "rare-word", "asks about the rare word username, which no readable document contains")
    assert [w for w, _ in why["check"]["unknown"]] == ["outsourced", "username"]
    assert why["sentences"][1]["text"].startswith("Vendors must never share accounts or passwords")
    guest = svc.answer(golden.question("g056").question, "eval-guest").explain()
    assert (guest["decided_by"], guest["check"], guest["sentences"]) == ("restricted-gap", None, [])
    assert guest["restricted_gap"] > 0.3


def test_handled_right_counts_a_wrong_answer_as_a_miss(golden):
    from dataclasses import replace

    from ragbench.eval.answers import HANDLED_RIGHT, score_answers
    from ragbench.llm import REFUSAL_MESSAGE

    refusal = replace(_answer(REFUSAL_MESSAGE), refused=True, refusal_reason="insufficient-retrieval")
    answers = {"g001": _answer("Employees get 25 days of annual leave."),  # answerable, fact present
               "g002": _answer("Leave is booked in the HR portal."),  # answerable, fact missing
               "g003": refusal,  # answerable but refused
               "g059": refusal,  # should refuse, refused
               "g060": _answer("The password is on the fridge.")}  # should refuse, answered
    per = score_answers("answer", golden, answers, {})
    got = per[per["measure"] == HANDLED_RIGHT].set_index("qid")["value"].to_dict()
    assert got == {"g001": 1.0, "g002": 0.0, "g003": 0.0, "g059": 1.0, "g060": 0.0}
    # Refusal accuracy counts g002's wrong answer as right.
    acc = per[per["measure"] == "RefusalAccuracy"].set_index("qid")["value"].to_dict()
    assert acc == {"g001": 1.0, "g002": 1.0, "g003": 0.0, "g059": 1.0, "g060": 0.0}


def test_a_guest_asking_for_an_internal_policy_fact_is_refused_on_the_restricted_gap(golden, caplog):
    """g056 (bundled set, BM25): the leave policy is internal; the guest is refused before any reading, the staff
    member who may read it is answered from it, and nothing about the policy reaches the guest's reply or a log."""
    import logging

    from ragbench.eval.answers import build_service, build_store

    cfg = with_overrides(answer_config(None, "bm25"), FAST)
    svc = build_service(golden, cfg, "bm25", None, store=build_store(golden, cfg, None))
    q = golden.question("g056").question
    best = svc.retriever.search(q, k=1)[0]
    mine = svc.retriever.search(q, k=1, principal=golden.principals["eval-guest"])[0]
    assert best.doc_id == "hr-leave" and mine.doc_id != "hr-leave"
    with caplog.at_level(logging.DEBUG, logger="ragbench"):
        guest = svc.answer(q, "eval-guest")
    assert (guest.refused, guest.refusal_reason, guest.citations, guest.context_tokens) == \
        (True, "insufficient-retrieval", (), 0)
    assert guest.restricted_gap == pytest.approx(1 - mine.score / best.score)
    assert guest.restricted_gap > 0.3
    assert "hr-leave" not in caplog.text and "25 days" not in caplog.text
    assert "hr-leave" not in json.dumps(guest.to_json()) and "restricted_gap" not in guest.to_json()
    # The evaluation is told the gap decided it; the asker is not (its reply reads like a weak retrieval's).
    assert guest.decided_by == "restricted-gap" and "decided_by" not in guest.to_json()
    staff = svc.answer(q, "eval-staff")
    assert not staff.refused and staff.cited_doc_ids == ["hr-leave"] and "25 days" in staff.answer
    assert staff.decided_by == "check:coverage"
    assert staff.restricted_gap == 0.0


def test_a_hybrid_retriever_measures_the_restricted_gap_on_its_dense_half(golden):
    """RRF scores are ranks; the gap of a hybrid service is the dense half's cosines (g056 as the guest)."""
    from ragbench.eval.answers import build_service, build_store
    from ragbench.retrieval.embedding import make_embedder
    from ragbench.retrieval.retriever import vector_part

    cfg = with_overrides(answer_config(None, "hybrid"), FAST)
    emb = make_embedder(cfg.embedding)
    svc = build_service(golden, cfg, "hybrid", emb, store=build_store(golden, cfg, emb))
    dense = vector_part(svc.retriever)
    assert dense is not None and dense is not svc.retriever
    q = golden.question("g056").question
    best = dense.search(q, k=1)[0]
    mine = dense.search(q, k=1, principal=golden.principals["eval-guest"])[0]
    assert best.doc_id == "hr-leave" and mine.doc_id != "hr-leave"
    fused = svc.retriever.search(q, k=1, principal=golden.principals["eval-guest"])[0]
    # The fused score passed in is ignored: both sides come from the dense half.
    gap = svc.restricted_gap(q, golden.principals["eval-guest"], fused.score)
    assert gap == pytest.approx(1 - mine.score / best.score)
    assert svc.restricted_gap(q, golden.principals["eval-staff"], fused.score) == 0.0


def test_a_contract_amount_is_answered_from_the_band_that_holds_it(golden):
    """g030 (bundled set, BM25): "worth £400,000" — the "Up to £25,000" and "Up to £250,000" rows state bands that
    exclude it (range conflicts); the "Up to £1 million" row holds it, and counts as answering the amount."""
    from ragbench.eval.answers import build_service, build_store

    cfg = with_overrides(answer_config(None, "bm25"), FAST)
    svc = build_service(golden, cfg, "bm25", None, store=build_store(golden, cfg, None))
    q = golden.question("g030")
    a = svc.answer(q.question, q.asked_by)
    assert not a.refused and a.cited_doc_ids == ["legal-signature-authority"]
    assert "Up to £1 million: the Chief Financial Officer or the Chief Executive Officer. [1]" in a.answer
    assert "£250,000" not in a.answer and "£25,000" not in a.answer
    assert a.answerability is not None and a.answerability.answerable
    # 400 and 000 (the amount) count as covered: sign, contract, ferrowick and the amount of the six terms.
    assert a.answerability.coverage == pytest.approx(0.6933, abs=1e-4)


class ConstantJudge:
    """A graded judge with a fixed P(yes) that records the prompts it was shown."""

    model_id = "constant-judge"

    def __init__(self, p: float) -> None:
        self.p, self.prompts = p, []

    def yes_probability(self, messages) -> float:
        self.prompts.append(messages[-1].content)
        return self.p


def _stub_judge(monkeypatch, p: float) -> ConstantJudge:
    """``make_chat_model("stub")`` returns a :class:`ConstantJudge`; other names and configs build as usual."""
    import ragbench.llm as llm

    judge, real = ConstantJudge(p), llm.make_chat_model

    def make(spec, **kw):
        return judge if spec == "stub" else real(spec, **kw)

    monkeypatch.setattr(llm, "make_chat_model", make)
    return judge


def test_the_judge_profile_lets_the_judge_decide():
    from ragbench.answer.judge import JUDGE_MIN_YES, judge_overrides
    from ragbench.eval.answers import judge_config, system_name

    cfg = judge_config(RagbenchConfig(), "llama").answer
    assert (cfg.judge, cfg.judge_mode, cfg.judge_min_yes, cfg.judge_min_yes_restricted) == \
        ("llama", "verdict", JUDGE_MIN_YES, 0.45)
    assert (cfg.answerability_min_coverage, cfg.answerability_min_similarity) == (0.0, 0.0)
    # the answer type anywhere in the answer, as the profile was measured (the default reads it per sentence)
    assert (cfg.answerability_type_coverage, RagbenchConfig().answer.answerability_type_coverage) == (0.0, 0.2)
    # the sibling-word and change-date rules as in the default (measured under the judge too)
    assert (cfg.answerability_sibling_zipf, cfg.answerability_change_dates) == (4.0, True)
    assert judge_config(RagbenchConfig(), None) == RagbenchConfig()
    assert judge_overrides("x")["answer.judge"] == "x" and JUDGE_MIN_YES == 0.35
    assert (system_name(), system_name("llama"), system_name(judge="llama")) == \
        ("answer", "answer-llama", "answer-judge-llama")


@pytest.mark.parametrize("p_yes", [0.0, 1.0])
def test_eval_golden_scores_the_judge_profile_as_its_own_system(golden, monkeypatch, p_yes):
    import pandas as pd

    judge = _stub_judge(monkeypatch, p_yes)
    cfg = with_overrides(RagbenchConfig(), FAST)
    systems = golden_answer_systems(golden, cfg, {}, judges=["stub"])
    assert list(systems) == ["answer", "answer-judge-stub"]
    recs = systems["answer-judge-stub"](pd.DataFrame({"qid": ["g001"], "query": ["x"]}))
    # g001 ("How many days of annual leave …") reaches the judge once, shown the answer and the question.
    assert len(judge.prompts) == 1 and judge.prompts[0].startswith("TEXT (from ")
    assert "annual leave" in judge.prompts[0]
    if p_yes == 0.0:
        assert (recs[0]["refused"], recs[0]["refusal_reason"]) == (True, "judge-rejected")
    else:
        assert (recs[0]["refused"], recs[0]["FactInAnswer"]) == (False, 1.0)
    assert recs[0]["decided_by"] == "judge-verdict"  # the judge decides either way


def test_the_rescue_profile_keeps_the_text_check_and_its_thresholds():
    from ragbench.answer.judge import rescue_overrides
    from ragbench.eval.answers import judge_config, system_name

    cfg = judge_config(RagbenchConfig(), None, "llama").answer
    assert (cfg.judge, cfg.judge_mode, cfg.judge_min_yes, cfg.judge_min_yes_restricted) == \
        ("llama", "rescue", 0.35, 0.40)
    plain = RagbenchConfig().answer
    assert (cfg.answerability_min_coverage, cfg.answerability_min_similarity, cfg.answerability_type_coverage) == \
        (plain.answerability_min_coverage, plain.answerability_min_similarity, 0.2)
    assert set(rescue_overrides("x")) == {"answer.judge", "answer.judge_mode", "answer.judge_min_yes",
                                          "answer.judge_min_yes_restricted", "answer.judge_rescue_rules"}
    assert (cfg.judge_rescue_rules, cfg.judge_rules_min_yes) == ("type-off-topic", 0.5)
    # a field the user set (--set) keeps the user's value under the profile; the profile sets the others
    mine = with_overrides(RagbenchConfig(), {"answer.judge_rescue_rules": "all", "answer.judge_min_yes": 0.6})
    kept = judge_config(mine, None, "llama", ["answer.judge_rescue_rules", "answer.judge_min_yes"]).answer
    assert (kept.judge_rescue_rules, kept.judge_min_yes, kept.judge_min_yes_restricted, kept.judge_mode) == \
        ("all", 0.6, 0.40, "rescue")
    assert judge_config(mine, None, "llama").answer.judge_min_yes == 0.35  # not named: the profile's value
    assert system_name(rescue="llama") == "answer-rescue-llama"
    with pytest.raises(ConfigError, match="--judge .* or --rescue"):
        judge_config(RagbenchConfig(), "llama", "llama")


class FailingJudge(ConstantJudge):
    def yes_probability(self, messages) -> float:
        self.prompts.append(messages[-1].content)
        raise ModelError("the judge model crashed")


@pytest.mark.parametrize("judge_kind", ["yes", "no", "failing"])
def test_the_rescue_judge_reads_only_what_the_text_check_refused_on_its_thresholds(golden, monkeypatch, judge_kind):
    """With the hashing embedder: g001 (annual leave) is answered by the text check, g008 is refused for a named
    reason (no number in a sentence on its topic: type-off-topic, a rule the profile lets the judge read), g025 names
    CCTV, which its documents never mention, and g064 ("What is the name of Ferrowick's chief executive?") is refused
    on coverage alone: g008 and g064 reach the judge, and only an accepting verdict answers them."""
    import pandas as pd

    import ragbench.llm as llm

    judge = FailingJudge(1.0) if judge_kind == "failing" else ConstantJudge(1.0 if judge_kind == "yes" else 0.0)
    real = llm.make_chat_model
    monkeypatch.setattr(llm, "make_chat_model", lambda spec, **kw: judge if spec == "stub" else real(spec, **kw))
    systems = golden_answer_systems(golden, with_overrides(RagbenchConfig(), FAST), {}, rescues=["stub"])
    assert list(systems) == ["answer", "answer-rescue-stub"]
    qids = ["g001", "g008", "g025", "g064"]
    recs = {r["qid"]: r for r in systems["answer-rescue-stub"](pd.DataFrame({"qid": qids, "query": ["x"] * 4}))}
    assert len(judge.prompts) == 2 and "QUESTION: What is the name of Ferrowick's chief executive?" in judge.prompts[1]
    assert "QUESTION: " + golden.question("g008").question in judge.prompts[0]
    assert (recs["g001"]["refused"], recs["g001"]["FactInAnswer"]) == (False, 1.0)
    assert recs["g025"]["refusal_reason"] == "unanswerable-question"
    for qid in ("g008", "g064"):
        if judge_kind == "yes":
            assert (recs[qid]["refused"], recs[qid]["refusal_reason"]) == (False, None)
        else:
            assert (recs[qid]["refused"], recs[qid]["refusal_reason"]) == (True, "unanswerable-question")
        # the judge's P(yes) is kept where it read the answer (none from a failing judge), and only there
        assert recs[qid]["judge_p_yes"] == {"yes": 1.0, "no": 0.0, "failing": None}[judge_kind]
    # what decided each: the route g001 passed by, the named rules, and the judge where it answered
    assert [recs[q]["decided_by"] for q in qids] == [
        "check:coverage", "judge-rescue" if judge_kind == "yes" else "check:type-off-topic", "check:absent-name",
        "judge-rescue" if judge_kind == "yes" else "check:thresholds"]
    assert [recs[q]["judge_p_yes"] for q in ("g001", "g025")] == [None] * 2


@pytest.mark.parametrize("judge_kind", ["low", "high", "failing"])
def test_the_stacked_judge_vetoes_a_text_answer_below_its_bar_and_rescues_above_the_other(golden, monkeypatch,
                                                                                          judge_kind):
    """The rescue profile with ``answer.judge_veto_min_yes`` = 0.3 (the stacked judge) and no named rule read (the
    user's ``--set answer.judge_rescue_rules=`` wins over the profile's): g001, which the text check answers, is now
    read by the judge too and refused below 0.3; g064, refused on the thresholds, is answered at the profile's 0.35;
    g008 (a named refusal) is never read. A failing judge vetoes nothing and rescues nothing."""
    import pandas as pd

    import ragbench.llm as llm

    judge = FailingJudge(1.0) if judge_kind == "failing" else ConstantJudge(0.2 if judge_kind == "low" else 0.5)
    real = llm.make_chat_model
    monkeypatch.setattr(llm, "make_chat_model", lambda spec, **kw: judge if spec == "stub" else real(spec, **kw))
    cfg = with_overrides(RagbenchConfig(), {**FAST, "answer.judge_veto_min_yes": 0.3, "answer.judge_rescue_rules": ""})
    systems = golden_answer_systems(golden, cfg, {}, rescues=["stub"], user_set=["answer.judge_rescue_rules"])
    qids = ["g001", "g008", "g064"]
    recs = {r["qid"]: r for r in systems["answer-rescue-stub"](pd.DataFrame({"qid": qids, "query": ["x"] * 3}))}
    assert len(judge.prompts) == 2 and "annual leave" in judge.prompts[0]
    assert "QUESTION: What is the name of Ferrowick's chief executive?" in judge.prompts[1]
    assert recs["g008"]["decided_by"] == "check:type-off-topic" and recs["g008"]["judge_p_yes"] is None
    got = [(recs[q]["refused"], recs[q]["decided_by"], recs[q]["judge_p_yes"]) for q in ("g001", "g064")]
    assert got == {"low": [(True, "judge-veto", 0.2), (True, "check:thresholds", 0.2)],
                   "high": [(False, "check:coverage", 0.5), (False, "judge-rescue", 0.5)],
                   "failing": [(False, "check:coverage", None), (True, "check:thresholds", None)]}[judge_kind]
    if judge_kind == "low":
        assert recs["g001"]["refusal_reason"] == "judge-rejected"


@pytest.mark.parametrize("rules, read", [("type-off-topic", ["g008", "g064"]), ("all", ["g008", "g025", "g064"]),
                                         ("", ["g064"])])
def test_the_rescue_judge_reads_the_refusals_of_the_named_rules_it_is_given(golden, monkeypatch, rules, read):
    """``answer.judge_rescue_rules``, set by the user (it wins over the rescue profile's type-off-topic): g008
    (type-off-topic) and g025 (absent-name) are refused by named rules; the rescue judge reads them only when their
    rule is listed, and answers what it accepts; the threshold refusal g064 is read either way; g001 is answered by
    the text check and never read."""
    import pandas as pd

    import ragbench.llm as llm

    judge = ConstantJudge(1.0)
    real = llm.make_chat_model
    monkeypatch.setattr(llm, "make_chat_model", lambda spec, **kw: judge if spec == "stub" else real(spec, **kw))
    cfg = with_overrides(RagbenchConfig(), {**FAST, "answer.judge_rescue_rules": rules})
    systems = golden_answer_systems(golden, cfg, {}, rescues=["stub"], user_set=["answer.judge_rescue_rules"])
    qids = ["g001", "g008", "g025", "g064"]
    recs = {r["qid"]: r for r in systems["answer-rescue-stub"](pd.DataFrame({"qid": qids, "query": ["x"] * 4}))}
    assert len(judge.prompts) == len(read)
    assert [q for q in qids if recs[q]["decided_by"] == "judge-rescue"] == read
    assert [q for q in qids if recs[q]["refused"]] == [q for q in ("g008", "g025") if q not in read]


@pytest.mark.parametrize("p_yes", [0.4, 0.6])
def test_the_judge_profile_reads_a_listed_rules_refusals_at_its_own_bar(golden, monkeypatch, p_yes):
    """The judge profile (verdict mode) with ``answer.judge_rescue_rules`` = absent-name: g025's absent-name refusal
    is read at ``answer.judge_rules_min_yes`` (0.5); g008 and g064 pass the check there (the profile drops the
    thresholds and the type bar) and are judged at the profile's 0.35."""
    import pandas as pd

    import ragbench.llm as llm

    judge = ConstantJudge(p_yes)
    real = llm.make_chat_model
    monkeypatch.setattr(llm, "make_chat_model", lambda spec, **kw: judge if spec == "stub" else real(spec, **kw))
    cfg = with_overrides(RagbenchConfig(), {**FAST, "answer.judge_rescue_rules": "absent-name"})
    systems = golden_answer_systems(golden, cfg, {}, judges=["stub"])
    qids = ["g008", "g025", "g064"]
    recs = {r["qid"]: r for r in systems["answer-judge-stub"](pd.DataFrame({"qid": qids, "query": ["x"] * 3}))}
    assert len(judge.prompts) == 3
    got = [(recs[q]["refused"], recs[q]["decided_by"]) for q in qids]
    assert got == [(False, "judge-verdict"),
                   (p_yes < 0.5, "judge-rescue" if p_yes >= 0.5 else "check:absent-name"),
                   (False, "judge-verdict")]


def test_an_unknown_rule_in_judge_rescue_rules_is_a_config_error_naming_it(golden, monkeypatch):
    import pandas as pd

    import ragbench.llm as llm

    real = llm.make_chat_model
    monkeypatch.setattr(llm, "make_chat_model",
                        lambda spec, **kw: ConstantJudge(1.0) if spec == "stub" else real(spec, **kw))
    cfg = with_overrides(RagbenchConfig(), {**FAST, "answer.judge_rescue_rules": "rare-word,typo-rule"})
    with pytest.raises(ConfigError, match=r"unknown rule\(s\) \['typo-rule'\].*Fix: use 'all'"):
        systems = golden_answer_systems(golden, cfg, {}, rescues=["stub"], user_set=["answer.judge_rescue_rules"])
        systems["answer-rescue-stub"](pd.DataFrame({"qid": ["g008"], "query": ["x"]}))


class SentenceJudge(ConstantJudge):
    """A graded judge whose P(yes) is the largest of ``words``' values found in the TEXT (0.1 when none is)."""

    def __init__(self, words: dict[str, float]) -> None:
        super().__init__(0.1)
        self.words = words

    def yes_probability(self, messages) -> float:
        text = messages[-1].content.split("QUESTION:")[0]
        self.prompts.append(text)
        return max([p for w, p in self.words.items() if w in text], default=self.p)


BOARD = "The Executive team reports to a Board of seven directors, three of whom are independent non-executives. [2]"


@pytest.mark.parametrize("words, answer, p_yes", [
    # the press sentence scores higher, but no person is in it (the check's named rule): the board sentence answers
    ({"press enquiries": 0.95, "seven directors": 0.9}, BOARD, 0.9),
    ({"seven directors": 0.9}, BOARD, 0.9),
    # the only sentence accepted is refused by the named rule: the refusal stands, with the best P(yes) kept
    ({"Sensor readings": 0.9}, None, 0.9),
    ({}, None, 0.1),
    (None, None, None),  # a failing judge: the refusal stands
])
def test_the_rescue_judge_reading_sentence_by_sentence_quotes_the_sentence_it_accepts(golden, monkeypatch, words,
                                                                                       answer, p_yes):
    """``answer.rescue_sentences`` = 4: g064's threshold refusal is read as the reader's four best-ranked sentences,
    one prompt each with its title and headings; the answer quotes the accepted one of highest P(yes) that no named
    rule refuses. g001 (answered by the text check) and g008 (a named refusal; the user's empty
    ``answer.judge_rescue_rules`` wins over the profile's) never reach the judge."""
    import pandas as pd

    import ragbench.llm as llm

    judge = FailingJudge(1.0) if words is None else SentenceJudge(words)
    real = llm.make_chat_model
    monkeypatch.setattr(llm, "make_chat_model", lambda spec, **kw: judge if spec == "stub" else real(spec, **kw))
    cfg = with_overrides(RagbenchConfig(), {**FAST, "answer.rescue_sentences": 4, "answer.judge_rescue_rules": ""})
    systems = golden_answer_systems(golden, cfg, {}, rescues=["stub"], user_set=["answer.judge_rescue_rules"])
    qids = ["g001", "g008", "g064"]
    recs = {r["qid"]: r for r in systems["answer-rescue-stub"](pd.DataFrame({"qid": qids, "query": ["x"] * 3}))}
    heads = "TEXT (from Ferrowick Instruments - Fictional company overview . Ferrowick Instruments at a glance):\n"
    assert [p.split("\n")[0] + "\n" for p in judge.prompts][:1] == [heads] and len(judge.prompts) == 4
    assert [p.split("\n")[1][:30] for p in judge.prompts] == [
        "The Executive team reports to ", "Sensor readings themselves are", "For press enquiries, contact t",
        "This notice explains what pers"]
    assert (recs["g001"]["refused"], recs["g008"]["refusal_reason"]) == (False, "unanswerable-question")
    g064 = recs["g064"]
    assert g064["judge_p_yes"] == p_yes
    if answer is None:
        assert (g064["refused"], g064["refusal_reason"], g064["cited_docnos"]) == (True, "unanswerable-question", [])
    else:
        assert (g064["refused"], g064["answer"], g064["cited_docnos"]) == (False, answer, ["pub-overview"])


def test_rescue_sentences_is_off_in_the_rescue_profile_and_must_not_be_negative():
    from ragbench.eval.answers import judge_config

    assert judge_config(RagbenchConfig(), None, "llama").answer.rescue_sentences == 0
    with pytest.raises(ConfigError, match=r"answer.rescue_sentences: -1 is outside its range \[0, inf\)"):
        with_overrides(RagbenchConfig(), {"answer.rescue_sentences": -1})


def test_ask_takes_the_judge_profile(golden, monkeypatch, tmp_path):
    from ragbench.eval.assistant import open_service

    monkeypatch.chdir(tmp_path)
    judge = _stub_judge(monkeypatch, 0.0)
    cfg = with_overrides(RagbenchConfig(), FAST)
    svc, who, used = open_service(cfg, "eval-staff", mode="bm25", judge="stub")
    try:
        assert svc.judge is not None and svc.judge.model is judge and svc.judge.min_yes == 0.35
        assert used.answer.answerability_min_coverage == 0.0
        a = svc.answer("How many days of annual leave do full-time employees get?", who)
        assert (a.refused, a.refusal_reason, len(judge.prompts)) == (True, "judge-rejected", 1)
        assert (a.judge_p_yes, a.to_json()["judge_p_yes"]) == (0.0, 0.0)
    finally:
        svc.store.close()
    plain, _, _ = open_service(cfg, "eval-staff", mode="bm25")
    try:
        assert plain.judge is None
    finally:
        plain.store.close()


def test_ask_and_chat_take_the_rescue_profile(golden, monkeypatch, tmp_path):
    from ragbench.cli import build_parser
    from ragbench.eval.assistant import open_service

    monkeypatch.chdir(tmp_path)
    judge = _stub_judge(monkeypatch, 0.0)
    svc, who, used = open_service(with_overrides(RagbenchConfig(), FAST), "eval-staff", mode="bm25", rescue="stub")
    try:
        assert svc.judge is not None and svc.judge.model is judge and used.answer.judge_mode == "rescue"
        assert used.answer.answerability_min_coverage == RagbenchConfig().answer.answerability_min_coverage
        # answered by the text check: the rescue judge is not asked
        a = svc.answer("How many days of annual leave do full-time employees get?", who)
        assert (a.refused, judge.prompts) == (False, [])
    finally:
        svc.store.close()
    for command in ("ask", "chat"):
        args = build_parser().parse_args([command, *(["Q"] if command == "ask" else []), "--as", "x",
                                          "--rescue", "llama"])
        assert (args.rescue, args.judge) == ("llama", None)
    # ask's own path: the profile reads type-off-topic refusals unless --set names other rules (--set wins)
    from ragbench.commands.ask import service_for

    fast = [x for k, v in FAST.items() for x in ("--set", f"{k}={v}")]
    for extra, rules in (([], "type-off-topic"), (["--set", "answer.judge_rescue_rules=all"], "all")):
        args = build_parser().parse_args(["ask", "Q", "--as", "eval-staff", "--retriever", "bm25", "--rescue", "stub",
                                          *fast, *extra])
        svc, _, used = service_for(args)
        svc.store.close()
        assert (used.answer.judge_mode, used.answer.judge_rescue_rules) == ("rescue", rules)


def test_golden_run_params_name_the_answer_systems_and_the_judge_template():
    from ragbench.eval.golden_run import golden_params
    from ragbench.tracking import flatten_params

    plain = flatten_params(golden_params(["dense"], 5, 13, "data/golden", ["answer"]))
    assert plain == {"eval.modes": "dense", "eval.k": "5", "eval.seed": "13", "eval.data": "data/golden",
                     "eval.answer_systems": "answer"}
    judged = flatten_params(golden_params(["bm25", "dense"], 5, 13, "d", ["answer", "answer-judge-llama"], ["llama"]))
    assert {k: v for k, v in judged.items() if k.startswith("judge_profile.")} == {
        "judge_profile.judges": "llama", "judge_profile.template": "rag.judge@v3",
        "judge_profile.min_yes": "0.35", "judge_profile.min_yes_restricted": "0.45", "judge_profile.rules": "",
        "judge_profile.rules_min_yes": "0.5"}
    assert judged["eval.answer_systems"] == "answer,answer-judge-llama" and judged["eval.modes"] == "bm25,dense"
    rescued = flatten_params(golden_params(["dense"], 5, 13, "d", ["answer", "answer-rescue-llama"], (), ["llama"]))
    assert {k: v for k, v in rescued.items() if "_profile." in k} == {
        "rescue_profile.judges": "llama", "rescue_profile.template": "rag.judge@v3",
        "rescue_profile.min_yes": "0.35", "rescue_profile.min_yes_restricted": "0.4",
        "rescue_profile.rules": "type-off-topic", "rescue_profile.rules_min_yes": "0.5"}
    # what the profile ran with: a --set value the profile left alone is what is logged
    mine = with_overrides(RagbenchConfig(), {"answer.judge_min_yes": 0.5, "answer.judge_rescue_rules": ""})
    own = flatten_params(golden_params(["dense"], 5, 13, "d", ["answer", "answer-rescue-llama"], (), ["llama"], mine,
                                       ["answer.judge_min_yes", "answer.judge_rescue_rules"]))
    assert (own["rescue_profile.min_yes"], own["rescue_profile.rules"]) == ("0.5", "")


def test_a_refused_followup_is_read_again_in_the_documents_the_chat_cited():
    """Marrowgate m082 → m083 (dense, MiniLM): "And on a Saturday night?" after a Garden double's price. The
    retrieved passages hold no weekend price, so the turn alone is refused; read again with the passages of the
    price list the first answer cited that share its own words, it quotes the weekend supplement."""

    from ragbench.answer import ChatSession
    from ragbench.eval.answers import build_service, build_store
    from ragbench.retrieval.embedding import make_embedder

    golden = load_golden(Path(__file__).resolve().parents[2] / "data" / "golden_marrowgate")
    cfg = answer_config(None, "dense")
    emb = make_embedder(cfg.embedding)
    store = build_store(golden, cfg, emb)
    first, second = golden.question("m082"), golden.question("m083")
    replies = {}
    for focus in (3, 0):
        svc = build_service(golden, with_overrides(cfg, {"answer.followup_focus": focus}), "dense", emb, store=store)
        chat = ChatSession(svc, first.asked_by)
        assert not chat.ask(first.question).refused
        assert chat.focus_docs() == ["pub-room-rates"]
        replies[focus] = chat.ask(second.question)
    assert replies[0].refused and replies[0].refusal_reason == "unanswerable-question"
    on = replies[3]
    assert not on.refused and on.cited_doc_ids == ["pub-room-rates"]
    assert "Weekends at Kelderby Manor: add £30 per night on Friday and Saturday nights all year." in on.answer
    assert on.query == "And on a Saturday night? (referring to garden double kelderby manor season)"


def test_a_chat_turn_not_worded_as_a_follow_up_is_read_again_as_one_when_refused():
    """Brindlecote P074 → P076 (dense, MiniLM): "Is there a minimum?" after the on-call pay and the call-in rate. No
    pronoun and no "and": the rewriter leaves it as typed and nothing is retrieved above the floor. Read again as a
    follow-up (``answer.followup_context``), it quotes the call-in minimum; the history keeps the turn as typed."""
    from ragbench.answer import ChatSession
    from ragbench.answer.rewriter import QUERY_META
    from ragbench.eval.answers import build_service, build_store
    from ragbench.retrieval.embedding import make_embedder

    golden = load_golden(Path(__file__).resolve().parents[2] / "data" / "golden_brindlecote")
    cfg = answer_config(None, "dense")
    emb = make_embedder(cfg.embedding)
    store = build_store(golden, cfg, emb)
    chain = [golden.question(q) for q in ("P074", "P075", "P076")]
    last = {}
    for context in (True, False):
        svc = build_service(golden, with_overrides(cfg, {"answer.followup_context": context}), "dense", emb,
                            store=store)
        chat = ChatSession(svc, chain[0].asked_by)
        for q in chain:
            last[context] = chat.ask(q.question)
        assert chat.history[-2].meta[QUERY_META] == "Is there a minimum?"
    off, on = last[False], last[True]
    assert (off.refused, off.refusal_reason, off.query) == (True, "insufficient-retrieval", "Is there a minimum?")
    assert not on.refused and on.cited_doc_ids == ["ops-oncall-rota"]
    assert on.query == "Is there a minimum? (referring to actually called keepers friday night)"
    assert "When called in, a keeper is also paid £28 an hour on site, with a minimum of two hours." in on.answer


def test_a_price_quoted_beside_the_answer_does_not_answer_an_unanswerable_question():
    """Marrowgate m071 (dense, MiniLM): "How much is afternoon tea at The Quayside?" — no document prices it. The
    reply quoted prices only in sentences off the question's topic; with the type read per sentence it is refused,
    and with ``answer.answerability_type_coverage=0`` (the type anywhere) it was answered."""
    from ragbench.eval.answers import build_service, build_store
    from ragbench.retrieval.embedding import make_embedder

    golden = load_golden(Path(__file__).resolve().parents[2] / "data" / "golden_marrowgate")
    cfg = answer_config(None, "dense")
    emb = make_embedder(cfg.embedding)
    store = build_store(golden, cfg, emb)
    q = golden.question("m071")
    assert q.should_refuse and q.tag == "refuse-unanswerable"
    on = build_service(golden, cfg, "dense", emb, store=store).answer(q.question, q.asked_by)
    assert on.refused and on.refusal_reason == "unanswerable-question"
    assert on.answerability.reason == "no money in an answer sentence on the question's topic (coverage < 0.2)"
    off = build_service(golden, with_overrides(cfg, {"answer.answerability_type_coverage": 0.0}), "dense", emb,
                        store=store).answer(q.question, q.asked_by)
    assert not off.refused and off.cited_doc_ids == ["pub-weddings-events", "pub-room-rates"]
    assert "At The Quayside, the Harbour package costs £89 per guest" in off.answer  # a wedding price, not tea
