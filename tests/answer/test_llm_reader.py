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
