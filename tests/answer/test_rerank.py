"""Query-likelihood reranking (answer.rerank): the scored text, the order, the cache, failures and the service."""
from __future__ import annotations

import dataclasses

import pytest

from ragbench.answer import AnsweringService, PrincipalRegistry, PromptRegistry
from ragbench.answer.rerank import RERANK_BODY, QueryLikelihoodReranker
from ragbench.config import AnswerConfig
from ragbench.errors import ConfigError, ModelError
from ragbench.llm import ExtractiveChatModel, make_token_scorer
from ragbench.llm.recording import RecordingChatModel
from ragbench.schema import Hit

from .helpers import PRINCIPALS, FixedOrder, make_store


class WordScorer:
    """Scores each target word -1 when the prefix contains it, else -5 (a stand-in for log P(token | prefix))."""

    model_id = "word-scorer"

    def __init__(self, error: Exception | None = None) -> None:
        self.calls: list[tuple[str, str]] = []
        self.error = error

    def token_logprobs(self, prefix: str, target: str) -> list[float]:
        self.calls.append((prefix, target))
        if self.error is not None:
            raise self.error
        return [-1.0 if w.lower().strip("?") in prefix.lower() else -5.0 for w in target.split()]


def hit(i: int, text: str) -> Hit:
    return Hit(f"c{i}", f"d{i}", 1.0 - i / 10, i, text, f"T{i}", 0, len(text))


@pytest.fixture
def store():
    s = make_store()
    yield s
    s.close()


def test_scores_the_question_after_the_passage_and_reorders(store):
    model = WordScorer()
    rr = QueryLikelihoodReranker(model, PromptRegistry(store))
    hits = [hit(0, "Parking is free."), hit(1, "Annual leave is 25 days."), hit(2, "Leave requests go to HR.")]
    out = rr.rank("annual leave days?", hits)
    # The template's text before {question} is the prefix; the space before the question belongs to the target.
    assert model.calls[0] == ("Passage: Parking is free.\nQuestion answered by the passage:", " annual leave days?")
    assert [h.chunk_id for h in out] == ["c1", "c2", "c0"]
    assert [h.rank for h in out] == [0, 1, 2]
    assert [h.score for h in out] == [0.9, 0.8, 1.0]  # the retrieval scores travel with their passages
    assert rr.score("annual leave days?", "Annual leave is 25 days.") == -1.0  # every word in it: mean log p -1
    assert rr.score("annual leave days?", "Leave requests go to HR.") == pytest.approx((-5 - 1 - 5) / 3)
    assert PromptRegistry(store).active("rag.rerank").body == RERANK_BODY  # registered, so versioned in the store


def test_ties_keep_the_retrieval_order_and_the_cache_skips_repeats(store):
    model = WordScorer()
    cache: dict[str, float] = {}
    rr = QueryLikelihoodReranker(model, PromptRegistry(store), cache)
    hits = [hit(0, "Nothing here."), hit(1, "Nothing there.")]
    assert [h.chunk_id for h in rr.rank("What about leave?", hits)] == ["c0", "c1"]
    assert len(model.calls) == 2 and len(cache) == 2
    rr.rank("What about leave?", hits)
    assert len(model.calls) == 2  # both scores came from the cache


def test_a_failing_model_keeps_the_retrieval_order(store):
    rr = QueryLikelihoodReranker(WordScorer(ModelError("boom")), PromptRegistry(store))
    hits = [hit(0, "a b"), hit(1, "c d")]
    assert rr.rank("c d?", hits) == hits


def test_bad_models_and_templates_are_config_errors(store):
    with pytest.raises(ConfigError, match="scores tokens"):
        QueryLikelihoodReranker(ExtractiveChatModel(), PromptRegistry(store))
    reg = PromptRegistry(store)
    reg.register("rag.rerank", "v9", "{question} is asked of {context}")
    with pytest.raises(ConfigError, match="must end with"):
        QueryLikelihoodReranker(WordScorer(), reg).score("q", "p")
    assert make_token_scorer("") is None
    with pytest.raises(ConfigError, match="only a local llama model"):
        make_token_scorer("openai")


def test_the_service_reranks_permitted_passages_before_the_top_k_cut(store):
    rec = RecordingChatModel(ExtractiveChatModel())
    cfg = dataclasses.replace(AnswerConfig(), top_k=1, rerank_depth=5, answerability=False, restricted_gap=0.0)
    retriever = FixedOrder(store, ["conduct", "board", "eng", "pto"])
    question = "How many days of paid time off?"
    registry = PrincipalRegistry(PRINCIPALS)
    plain = AnsweringService(store, retriever, rec, cfg, principals=registry).answer(question, "hr-user")
    # Without the reranker the reader sees only the retriever's first permitted passage, which does not answer.
    assert plain.refused and [store.get_chunk(c).doc_id for c in plain.context_chunk_ids] == ["conduct"]
    model = WordScorer()
    a = AnsweringService(store, retriever, rec, cfg, principals=registry, reranker=model).answer(question, "hr-user")
    # Only what hr-user may read was scored: the code of conduct (no question word: mean -5) and the PTO policy
    # ("days", "of", "paid", "time", "off" in it: mean -15/7); the board and engineering documents never were.
    assert [p for p, _ in model.calls] == [f"Passage: {store.get_document(d).text}\nQuestion answered by the passage:"
                                           for d in ("conduct", "pto")]
    assert [c.doc_id for c in a.citations] == ["pto"]
    assert a.answer.startswith("Full-time employees receive 25 days of paid time off per year. [1]")
    passages = rec.calls[-1][-1].meta["rag"]["passages"]
    assert [p["score"] for p in passages] == [pytest.approx(0.6)]  # the PTO chunk's retrieval score
    with pytest.raises(ConfigError, match="rerank_depth"):
        AnsweringService(store, retriever, rec, dataclasses.replace(cfg, rerank_depth=0), principals=registry,
                         reranker=model).answer(question, "hr-user")
