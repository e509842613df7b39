"""The LLM reader ``answer-llama`` (local Qwen2.5-Coder-1.5B, strict prompt) on golden questions. Slow (about
10–15 s per question on 2 cores) and needs the model (`make install-llm`): ``pytest -m slow tests/answer``."""
from __future__ import annotations

import importlib.util
import time

import pytest

from ragbench.eval.answers import answer_config, answer_golden, build_service, build_store, model_config
from ragbench.eval.golden import load_golden
from ragbench.llm.local import installed_models

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def service():
    if importlib.util.find_spec("llama_cpp") is None or "qwen2.5-coder-1.5b" not in installed_models():
        pytest.skip("needs llama-cpp-python and Qwen2.5-Coder-1.5B: make install-llm")
    golden = load_golden()
    cfg = model_config(answer_config(None, "dense"), "llama:qwen")
    store = build_store(golden, cfg)
    return golden, build_service(golden, cfg, "dense", store=store)


def test_answer_llama_answers_refuses_and_leaks_nothing(service):
    golden, svc = service
    start = time.perf_counter()
    answers, prompts = answer_golden(svc, golden, ["g001", "g051", "g059"])
    per_question = (time.perf_counter() - start) / 3
    print(f"answer-llama: {per_question:.1f} s per question")
    a = answers["g001"]  # full-time annual leave: the fact is quoted with a citation of hr-leave
    assert a.prompt_version == "rag.answer.strict@v1" and a.model_id.startswith("llama.cpp:")
    assert not a.refused and "25" in a.answer and "hr-leave" in a.cited_doc_ids
    for qid in ("g051", "g059"):  # the CEO's LTIP award as a guest (ACL), dogs at the office (nowhere)
        assert answers[qid].refused, answers[qid].answer
    secret = golden.question("g051").answer_fact
    assert secret not in answers["g051"].answer and all(secret not in p for p in prompts["g051"])


def test_graded_judge_scores_the_answering_text_above_a_near_topic_one(service):
    from ragbench.answer.judge import AnswerJudge
    from ragbench.answer.prompts import PromptRegistry

    _, svc = service
    judge = AnswerJudge(svc.chat_model, PromptRegistry(svc.store), min_yes=0.5)
    right = judge.judge("How many days of annual leave do full-time staff get?",
                        ["Full-time employees receive 25 days of annual leave per year."], ["HR: Annual leave"])
    near = judge.judge("How often should my ferret be vaccinated?",
                       ["Rabbits can be vaccinated from 5 weeks of age."], ["Vaccinations"])
    assert right.p_yes is not None and near.p_yes is not None
    # rag.judge@v3 gives 0.87 and 0.43 here (v2 gave 0.98 and 0.44).
    assert right.accepted and right.p_yes > 0.85 and not near.accepted and right.p_yes - near.p_yes > 0.3


def test_query_likelihood_reranker_puts_a_paraphrase_answer_first(service):
    """golden g036 ("push code live late on Friday") shares no content word with the deployment freeze; dense
    retrieval ranks that chunk 7th, the Qwen query likelihood ranks it above the policies dense put first."""
    from ragbench.answer.prompts import PromptRegistry
    from ragbench.answer.rerank import QueryLikelihoodReranker
    from ragbench.llm import make_token_scorer
    from ragbench.schema import Hit

    _, svc = service
    texts = ["Everyone working remotely must be reachable between 10:00 and 15:00 local time on their working days.",
             "Production deploys are frozen after 14:00 on Fridays; a hotfix needs two reviewers.",
             "Code reviews are done by a second engineer within one working day."]
    hits = [Hit(f"c{i}", f"d{i}", 0.6 - i / 10, i, t, "", 0, len(t)) for i, t in enumerate(texts)]
    rr = QueryLikelihoodReranker(make_token_scorer("llama"), PromptRegistry(svc.store))
    question = "Can I push code live late on Friday afternoon?"
    out = rr.rank(question, hits)
    assert out[0].chunk_id == "c1" and out[0].score == hits[1].score  # first, with its retrieval score
    right, other = rr.score(question, texts[1]), rr.score(question, texts[0])
    assert other < right < 0  # mean log-probabilities



@pytest.fixture(scope="module")
def profile():
    """The default service and the judge profile's over one store (built at module scope, where the model is
    found: the tests' own cache folder holds no model)."""
    if importlib.util.find_spec("llama_cpp") is None or "qwen2.5-coder-1.5b" not in installed_models():
        pytest.skip("needs llama-cpp-python and Qwen2.5-Coder-1.5B: make install-llm")
    from ragbench.eval.answers import judge_config

    golden = load_golden()
    cfg = answer_config(None, "dense")
    store = build_store(golden, cfg)
    return golden, build_service(golden, cfg, "dense", store=store), \
        build_service(golden, judge_config(cfg, "llama"), "dense", store=store)


def test_the_judge_profile_answers_a_paraphrase_the_text_check_refuses(profile):
    """golden g033 ("the ceiling on an evening meal bill … staying away for work") shares few words with the travel
    policy's dinner limit: the text check refuses it, the judge profile answers with the fact; the guest's
    question about the CEO's award (g051) stays refused under both."""
    golden, plain_service, judged_service = profile
    plain, _ = answer_golden(plain_service, golden, ["g033", "g051"])
    judged, _ = answer_golden(judged_service, golden, ["g033", "g051"])
    assert (plain["g033"].refused, plain["g033"].refusal_reason) == (True, "unanswerable-question")
    assert not judged["g033"].refused and golden.question("g033").answer_fact in judged["g033"].answer
    assert plain["g051"].refused and judged["g051"].refused



@pytest.fixture(scope="module")
def tarnwell():
    """Tarnwell's default service and its rescue profile's over one store (module scope, where the model is found)."""
    if importlib.util.find_spec("llama_cpp") is None or "qwen2.5-coder-1.5b" not in installed_models():
        pytest.skip("needs llama-cpp-python and Qwen2.5-Coder-1.5B: make install-llm")
    from pathlib import Path

    from ragbench.eval.answers import judge_config

    golden = load_golden(Path(__file__).resolve().parents[2] / "data" / "golden_tarnwell")
    cfg = answer_config(None, "dense")
    store = build_store(golden, cfg)
    return golden, build_service(golden, cfg, "dense", store=store), \
        build_service(golden, judge_config(cfg, None, "llama"), "dense", store=store)


def test_the_rescue_profile_answers_a_refused_paraphrase_and_keeps_a_near_topic_refusal(tarnwell):
    """tarnwell t038 ("the pipe under my front garden is leaking … Will you knock anything off?") shares too few
    words with the leak allowance for the text check, which refuses it on its thresholds; the rescue judge reads it
    (P(yes) about 0.6) and the answer holds the fact. t069 (paid time off for moving house, which no policy grants)
    is refused on the thresholds too and the judge keeps it refused (about 0.2)."""
    golden, plain_service, rescue_service = tarnwell
    plain, _ = answer_golden(plain_service, golden, ["t038", "t069"])
    rescued, _ = answer_golden(rescue_service, golden, ["t038", "t069"])
    for qid in ("t038", "t069"):
        check = plain[qid].answerability
        assert plain[qid].refused and check is not None and check.on_thresholds, qid
    assert not rescued["t038"].refused and golden.question("t038").answer_fact in rescued["t038"].answer
    assert rescued["t038"].judge_p_yes is not None and rescued["t038"].judge_p_yes >= 0.5
    assert rescued["t069"].refused and rescued["t069"].judge_p_yes is not None and rescued["t069"].judge_p_yes < 0.35
