"""Versioned prompts and budgets/feedback in a real (in-memory) knowledge store."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from ragbench.answer import AnswerLog, BudgetLedger, PriceBook, PromptConflict, PromptRegistry, prompt_hash
from ragbench.answer.prompts import DEFAULT_BODY
from ragbench.errors import BudgetExceeded, DataError, PermissionDenied
from ragbench.store import KnowledgeStore
from ragbench.text import sha256_text

BODY = "Context:\n{context}\nQ: {question}\n"


@pytest.fixture
def store():
    s = KnowledgeStore.open(":memory:")
    yield s
    s.close()


def test_hash_ignores_crlf():
    assert prompt_hash("a\r\nb") == prompt_hash("a\nb") == sha256_text("a\nb")


def test_default_and_versions(store):
    reg = PromptRegistry(store)
    v1 = reg.ensure_default()
    assert (v1.id, v1.active, v1.sha256) == ("rag.answer@v1", True, prompt_hash(DEFAULT_BODY))
    assert reg.ensure_default() == v1
    v2 = reg.register("rag.answer", "v2", BODY)
    assert reg.active("rag.answer") == v2 and reg.get("rag.answer", "v1").active is False
    assert reg.versions("rag.answer") == ["v1", "v2"]
    assert reg.activate("rag.answer", "v1").active and reg.active("rag.answer").version == "v1"


def test_re_registering_same_body_is_idempotent_and_different_body_conflicts(store):
    reg = PromptRegistry(store)
    first = reg.register("p", "v1", BODY)
    assert reg.register("p", "v1", BODY.replace("\n", "\r\n")) == first  # same content after CRLF→LF
    with pytest.raises(PromptConflict, match="new version"):
        reg.register("p", "v1", BODY + "extra")
    assert reg.get("p", "v1").body == BODY and reg.versions("p") == ["v1"]


@pytest.mark.parametrize("name, version, body, match", [
    ("", "v1", BODY, "name"), ("a@b", "v1", BODY, "name"), ("p", "v 1", BODY, "version"),
    ("p", "v1", "   ", "blank"), ("p", "v1", "no slots {context}", "question"),
])
def test_bad_registrations_write_nothing(store, name, version, body, match):
    reg = PromptRegistry(store)
    with pytest.raises(DataError, match=match):
        reg.register(name, version, body)
    assert store.query("SELECT COUNT(*) FROM prompt_templates")[0][0] == 0


def test_render_is_single_pass(store):
    t = PromptRegistry(store).register("p", "v1", BODY)
    assert t.render("[1] says {question}", "Why?") == "Context:\n[1] says {question}\nQ: Why?\n"


def test_unknown_prompt_name(store):
    with pytest.raises(DataError, match="no active prompt"):
        PromptRegistry(store).ensure_default("other")
    with pytest.raises(DataError, match="not registered"):
        PromptRegistry(store).activate("p", "v9")


class Clock:
    def __init__(self):
        self.now = datetime(2025, 3, 1, 23, 0, tzinfo=timezone.utc)

    def __call__(self):
        return self.now


def test_prices():
    book = PriceBook()
    assert book.cost("gpt-4o-mini", 1000, 500) == pytest.approx((1000 * 0.15 + 500 * 0.60) / 1e6)
    assert book.cost("extractive-v1", 10**6, 10**6) == 0.0 and book.cost("llama.cpp:x", 10**6, 0) == 0.0
    assert book.cost("unknown-hosted", 10**6, 10**6) == 0.0
    with pytest.raises(DataError):
        PriceBook({"m": (-1.0, 0.0)})


def test_request_limit_per_tenant_and_day(store):
    clock = Clock()
    ledger = BudgetLedger(store, daily_limit_usd=0, daily_request_limit=2, clock=clock)
    for _ in range(2):
        ledger.check("acme")
        ledger.record("acme", "gpt-4o-mini", 1000, 500)
    u = ledger.usage("acme")
    assert (u.day, u.requests, u.prompt_tokens, u.completion_tokens, u.tokens) == ("2025-03-01", 2, 2000, 1000, 3000)
    assert u.cost_usd == pytest.approx(0.0009)
    with pytest.raises(BudgetExceeded, match="requests 2 ≥ 2"):
        ledger.check("acme")
    ledger.check("other")  # tenants are separate
    clock.now += timedelta(hours=2)  # next UTC day
    assert ledger.check("acme").requests == 0


def test_cost_and_token_limits(store):
    ledger = BudgetLedger(store, daily_limit_usd=0.001, daily_request_limit=0, daily_token_limit=0, clock=Clock())
    ledger.record("t", "gpt-4o-mini", 0, 2000)  # 0.0012 USD
    with pytest.raises(BudgetExceeded, match="cost"):
        ledger.check("t")
    tokens = BudgetLedger(store, daily_limit_usd=0, daily_request_limit=0, daily_token_limit=100, clock=Clock())
    tokens.record("u", "extractive-v1", 60, 40)
    with pytest.raises(BudgetExceeded, match="tokens 100 ≥ 100"):
        tokens.check("u")


def test_bad_budget_input_writes_nothing(store):
    with pytest.raises(DataError):
        BudgetLedger(store, daily_limit_usd=-1)
    ledger = BudgetLedger(store)
    with pytest.raises(DataError):
        ledger.record("t", "m", -1, 0)
    with pytest.raises(DataError):
        ledger.record(" ", "m", 1, 0)
    assert store.query("SELECT COUNT(*) FROM usage_ledger")[0][0] == 0


def test_feedback(store):
    log = AnswerLog(store)
    aid = log.add("alice", "default", "rag.answer@v1", "extractive-v1", "bm25", False, None, 1.0, ["c1"])
    log.feedback(aid, "alice", 5, "spot on")
    assert log.feedback_for(aid) == [(5, "spot on")]
    assert log.get(aid)["cited_chunk_ids"] == ["c1"] and log.get(aid)["refused"] is False
    with pytest.raises(PermissionDenied):
        log.feedback(aid, "mallory", 1)
    with pytest.raises(DataError, match="unknown answer id"):
        log.feedback("nope", "alice", 3)
    for bad in (0, 6, 4.5, True):
        with pytest.raises(DataError, match="rating"):
            log.feedback(aid, "alice", bad)  # type: ignore[arg-type]
    assert log.feedback_for(aid) == [(5, "spot on")]


def test_the_answer_log_keeps_what_decided_each_answer(store):
    log = AnswerLog(store)
    aid = log.add("alice", "default", "rag.answer@v1", "extractive-v1", "bm25", True, "unanswerable-question", 1.0,
                  [], decided_by="check:thresholds")
    assert log.get(aid)["decided_by"] == "check:thresholds"
    assert log.get(log.add("bob", "default", "v", "m", "bm25", False, None, 1.0, ["c1"]))["decided_by"] is None


def test_a_store_logged_before_decided_by_gains_the_column_once(tmp_path):
    from ragbench.answer.budget import DDL, SCHEMA

    path = str(tmp_path / "old.db")
    old = KnowledgeStore.open(path)
    old.ensure_schema(SCHEMA, DDL, 1)  # the answer log as it was: eleven columns
    with old.transaction() as conn:
        conn.execute("INSERT INTO answer_log VALUES ('a1', 'alice', 't', '2026-01-01', 'v', 'm', 'bm25', 1, "
                     "'insufficient-retrieval', 0.0, '[]')")
    old.close()
    store = KnowledgeStore.open(path)
    log = AnswerLog(store)
    assert log.get("a1")["decided_by"] is None and log.get("a1")["refusal_reason"] == "insufficient-retrieval"
    aid = log.add("alice", "t", "v", "m", "bm25", False, None, 1.0, ["c"], decided_by="check:coverage")
    AnswerLog(store)  # opening it again does not add the column twice
    assert log.get(aid)["decided_by"] == "check:coverage"
    assert [r[1] for r in store.query("PRAGMA table_info(answer_log)")][-1] == "decided_by"
    store.close()


def test_a_column_another_process_added_first_is_taken_as_it_is(tmp_path):
    """Two processes opening an old store: the second's ALTER fails on the column the first added; that is no error."""
    from ragbench.answer.budget import DDL, SCHEMA

    store = KnowledgeStore.open(str(tmp_path / "race.db"))
    store.ensure_schema(SCHEMA, DDL, 1)
    with store.transaction() as conn:  # the other process's ALTER, its schema record not yet seen here
        conn.execute("ALTER TABLE answer_log ADD COLUMN decided_by TEXT")
    log = AnswerLog(store)
    assert log.get(log.add("a", "t", "v", "m", "bm25", False, None, 1.0, [], decided_by="unchecked"))[
        "decided_by"] == "unchecked"
    store.close()
