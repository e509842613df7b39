"""AnsweringService and ChatSession end to end over a real store, BM25 and the extractive model."""
from __future__ import annotations

import pytest

from ragbench.answer import AnsweringService, BudgetLedger, ChatSession, PrincipalRegistry, PromptRegistry
from ragbench.config import AnswerConfig, RagbenchConfig
from ragbench.errors import (BudgetExceeded, ConfigError, DataError, ModelError, NetworkError, PermissionDenied)
from ragbench.llm import REFUSAL_MESSAGE, ExtractiveChatModel
from ragbench.llm.recording import RecordingChatModel
from ragbench.schema import Acl, Document, Principal
from ragbench.text import count_tokens

from .helpers import BOARD_MEMBER, CONDUCT, GUEST, HR, PRINCIPALS, PTO, FixedModel, LeakyRetriever, bm25_for, make_store

Q = "How many days of paid time off do employees get?"


@pytest.fixture
def store():
    s = make_store()
    yield s
    s.close()


def service(store, model=None, retriever=None, **kw):
    return AnsweringService(store, retriever or bm25_for(store), model or ExtractiveChatModel(),
                            kw.pop("cfg", AnswerConfig()), principals=PrincipalRegistry(PRINCIPALS), **kw)


def test_answer_records_everything(store):
    a = service(store).answer(Q, "hr-user")
    # The second sentence sits in the same section ("paid time off" is its title) and clears the 0.7 floor.
    assert a.answer == ("Full-time employees receive 25 days of paid time off per year. [1] "
                        "Up to 5 unused days carry over. [1]")
    assert (a.refused, a.refusal_reason, a.support_ratio) == (False, None, 1.0)
    assert (a.prompt_version, a.model_id, a.retrieval_mode) == ("rag.answer@v1", "extractive-v1", "bm25")
    assert [(c.doc_id, c.title, c.start, c.end) for c in a.citations] == \
        [("pto", "HR Policy: Paid time off", 0, len(PTO))]
    # Context = the numbered lines of the post-filtered hits (HR may read pto and conduct).
    context_lines = [f"[{i + 1}] {store.get_chunk(cid).text}" for i, cid in enumerate(a.context_chunk_ids)]
    assert a.context_tokens == count_tokens("\n".join(context_lines))
    assert {store.get_chunk(c).doc_id for c in a.context_chunk_ids} <= {"pto", "conduct"}
    assert a.prompt_tokens > 0 and a.completion_tokens == count_tokens(a.answer)
    j = a.to_json()
    assert list(j)[:7] == ["answer", "refused", "refusal_reason", "citations", "support_ratio", "prompt_version",
                           "model_id"]
    logged = service(store).answer_log.get(a.answer_id)
    assert (logged["user_id"], logged["decided_by"]) == ("hr-user", "check:coverage")
    assert a.decided_by == "check:coverage" and "decided_by" not in j


def test_prompt_carries_question_and_only_allowed_context(store):
    rec = RecordingChatModel(ExtractiveChatModel())
    # The restricted-gap refusal is off so the prompt is built (the board passage is the index's best).
    svc = service(store, rec, LeakyRetriever(store), cfg=AnswerConfig(restricted_gap=0.0))
    a = svc.answer("What is the CEO incentive pool?", GUEST)
    sent = " ".join(rec.prompt_texts())
    assert "incentive pool is 3.5 million" not in sent and "zebraquartz" not in sent
    assert CONDUCT in sent and "QUESTION:\nWhat is the CEO incentive pool?" in sent
    assert all(c.doc_id == "conduct" for c in a.citations)
    assert rec.calls[0][-1].meta["rag"]["question"] == "What is the CEO incentive pool?"


def test_insufficient_retrieval(store):
    model = FixedModel("never called")
    a = service(store, model).answer("Quantum chromodynamics lattice?", HR)
    assert (a.refused, a.refusal_reason, a.support_ratio, a.answer, a.citations) == \
        (True, "insufficient-retrieval", 0.0, REFUSAL_MESSAGE, ())
    assert model.calls == []
    high = service(store, cfg=AnswerConfig(min_retrieval_score=1e9)).answer(Q, HR)
    assert high.refusal_reason == "insufficient-retrieval"


def test_insufficient_grounding_keeps_the_ratio(store):
    reply = "Employees receive 25 days [1]. The moon is cheese [1]. Mars is red [1]. Venus glows [1]. Pluto hides."
    a = service(store, FixedModel(reply)).answer(Q, HR)
    assert (a.refused, a.refusal_reason, a.citations) == (True, "insufficient-grounding", ())
    assert a.support_ratio == pytest.approx(1 / 5)  # < 0.25
    ok = service(store, FixedModel("Employees receive 25 days [1]. The moon is cheese [1]."),
                 cfg=AnswerConfig(min_support_ratio=0.5)).answer(Q, HR)
    assert not ok.refused and ok.support_ratio == 0.5


@pytest.mark.parametrize("model, reason", [
    (FixedModel(REFUSAL_MESSAGE), "model-refused"),
    (FixedModel("   "), "empty-answer"),
    (FixedModel(error=ModelError("garbage JSON")), "model-error"),
    (FixedModel(error=NetworkError("server down")), "model-error"),
])
def test_model_failures_become_refusals(store, model, reason):
    a = service(store, model).answer(Q, HR)
    assert (a.refused, a.refusal_reason, a.citations, a.answer) == (True, reason, (), REFUSAL_MESSAGE)
    if reason == "model-error":
        assert a.error.startswith(type(model.error).__name__)


def test_principal_checks(store):
    svc = service(store)
    with pytest.raises(PermissionDenied, match="unknown principal"):
        svc.answer(Q, "nobody")
    with pytest.raises(PermissionDenied):
        svc.answer(Q, None)
    with pytest.raises(PermissionDenied, match="not registered"):  # same id, more rights than registered
        svc.answer(Q, Principal.make("guest", ["board"], [], "Restricted"))
    unregistered = AnsweringService(store, bm25_for(store), ExtractiveChatModel())
    with pytest.raises(PermissionDenied, match="no principal registry"):
        unregistered.answer(Q, "hr-user")
    assert not unregistered.answer(Q, HR).refused
    with pytest.raises(DataError):
        svc.answer("  ", HR)


def test_config_checks(store):
    with pytest.raises(ConfigError):
        service(store, cfg=AnswerConfig(top_k=0)).answer(Q, HR)
    with pytest.raises(ConfigError, match="embedder"):
        service(store, cfg=AnswerConfig(grounding="embedding")).answer(Q, HR)
    svc = AnsweringService(store, bm25_for(store), ExtractiveChatModel(), RagbenchConfig())
    assert svc.cfg == AnswerConfig()


def test_new_prompt_version_is_recorded(store):
    svc = service(store)
    PromptRegistry(store).register("rag.answer", "v2", "Q={question}\nC={context}")
    a = svc.answer(Q, HR)
    assert a.prompt_version == "rag.answer@v2" and not a.refused


def test_budget_is_checked_and_charged(store):
    ledger = BudgetLedger(store, daily_limit_usd=0, daily_request_limit=1)
    svc = service(store, budget=ledger, tenant="acme")
    svc.answer(Q, HR)
    assert ledger.usage("acme").requests == 1
    with pytest.raises(BudgetExceeded):
        svc.answer(Q, HR)


def test_feedback_through_the_service(store):
    svc = service(store)
    a = svc.answer(Q, HR)
    svc.feedback(a.answer_id, "hr-user", 4, "good")
    assert svc.answer_log.feedback_for(a.answer_id) == [(4, "good")]
    with pytest.raises(PermissionDenied):
        svc.feedback(a.answer_id, "guest", 1)


def test_chat_session_rewrites_and_keeps_the_original(store):
    rec = RecordingChatModel(ExtractiveChatModel())
    svc = service(store, rec)
    chat = ChatSession(svc, "hr-user")
    first = chat.ask("Tell me about paid time off")
    second = chat.ask("How many days carry over for it?")
    # "off" is a question-form word ("days off"), so the subject rewriter carries "paid time" (the seed's rewriter:
    # the text after " about ")
    assert not first.refused and second.query == "How many days carry over for it? (referring to paid time)"
    assert second.question == "How many days carry over for it?"
    assert rec.calls[1][-1].meta["rag"]["question"] == second.query
    assert [m.content for m in chat.history if m.role == "user"] == \
        ["Tell me about paid time off", "How many days carry over for it?"]
    again = ChatSession(svc, "hr-user", session_id=chat.session_id)
    assert [m.content for m in again.history] == [m.content for m in chat.history]
    with pytest.raises(PermissionDenied):
        ChatSession(svc, "guest", session_id=chat.session_id)
    with pytest.raises(DataError):
        ChatSession(svc, "hr-user", session_id="missing")
    with pytest.raises(DataError):
        chat.ask(" ")
    assert len(chat.history) == 4


def test_chat_focus_documents_survive_a_reload_from_the_answer_log(store):
    """The documents a conversation's answers cited (latest first) come back from the answer log when a session is
    reopened; a refused turn cites none, and without an answer log there is nothing to recover."""
    svc = service(store)
    chat = ChatSession(svc, "hr-user")
    assert chat.ask("How many days of paid time off do employees get?").cited_doc_ids == ["pto"]
    assert chat.ask("Who do I report conduct concerns to?").cited_doc_ids == ["conduct"]
    assert chat.ask("What is the zebraquartz vesting year?").refused
    assert chat.focus_docs() == ["conduct", "pto"]
    assert ChatSession(svc, "hr-user", session_id=chat.session_id).focus_docs() == ["conduct", "pto"]
    unlogged = service(store, log_answers=False)
    assert ChatSession(unlogged, "hr-user", session_id=chat.session_id).focus_docs() == []
    # A follow-up refused again with the focus passages keeps its first refusal (reason and passages).
    calls = []
    inner = svc._respond

    def spy(*args):
        calls.append(args)
        return inner(*args)

    svc._respond = spy
    unfiltered = []  # the refusal checks' searches without a principal (restricted gap and passages)
    search = svc.retriever.search

    def counted(query, k=10, principal=None):
        if principal is None:
            unfiltered.append((query, k))
        return search(query, k=k, principal=principal)

    svc.retriever.search = counted
    q, query = "And the zebraquartz days?", "And the zebraquartz days? (referring to paid time off)"
    a = svc.answer(q, "hr-user", query=query, focus_docs=["conduct", "pto"])
    assert len(calls) == 2 and [h.doc_id for h in calls[1][5]] == ["pto"]
    assert calls[1][4] is calls[0][4]  # both readings use the one retrieval
    # ... and the one set of searches without a principal: the gap's and the restricted passages'
    assert [k for _, k in unfiltered] == [1, svc.passage_budget(query)]
    del svc.retriever.search
    assert (a.refused, a.refusal_reason) == (True, "unanswerable-question")
    assert a.answerability.reason == "asks about the rare word zebraquartz, which no readable document contains"
    first = inner(*calls[0])
    assert a.context_chunk_ids == first.context_chunk_ids and a.answer == first.answer
    # A question asked as typed (no rewrite) is no follow-up: refused, it is not read again.
    calls.clear()
    assert svc.answer(q, "hr-user", focus_docs=["conduct", "pto"]).refused and len(calls) == 1
    with pytest.raises(ConfigError, match="followup_focus must be ≥ 0 passages, found -1"):
        service(store, cfg=AnswerConfig(followup_focus=-1)).answer(Q, "hr-user")


class KeywordJudge:
    """A graded judge: P(yes) 0.9 when the judged TEXT holds ``word``, else 0.1; records what it was shown."""

    model_id = "keyword-judge"

    def __init__(self, word):
        self.word, self.prompts = word, []

    def yes_probability(self, messages):
        self.prompts.append(messages[-1].content)
        text = messages[-1].content.split("QUESTION:")[0]
        return 0.9 if self.word in text else 0.1


def test_rerank_judge_keeps_only_accepted_passages_and_refuses_when_none(store):
    import dataclasses

    rec = RecordingChatModel(ExtractiveChatModel())
    cfg = dataclasses.replace(AnswerConfig(), judge_mode="rerank", judge_min_yes=0.5)
    judge = KeywordJudge("colleagues")
    a = service(store, rec, cfg=cfg, judge=judge).answer("Who do I report conduct concerns to?", "hr-user")
    # every retrieved passage was judged on its own, with its title; only the accepted one reached the reader
    assert len(judge.prompts) >= 2 and all(p.startswith("TEXT (from ") for p in judge.prompts)
    passages = rec.calls[-1][-1].meta["rag"]["passages"]
    assert [(p["n"], p["score"]) for p in passages] == [(1, 0.9)]
    assert "colleagues" in passages[0]["text"] and [c.doc_id for c in a.citations] == ["conduct"]
    assert not a.refused
    # no passage accepted: refused before the reader is called
    calls = len(rec.calls)
    none = service(store, rec, cfg=cfg, judge=KeywordJudge("zebra")).answer("Who do I report conduct to?", "hr-user")
    assert (none.refused, none.refusal_reason, len(rec.calls)) == (True, "judge-rejected", calls)
    # verdict mode (the default) judges the finished answer once instead
    vj = KeywordJudge("to HR")
    v = service(store, cfg=dataclasses.replace(cfg, judge_mode="verdict"), judge=vj).answer(
        "Who do I report conduct concerns to?", "hr-user")
    assert len(vj.prompts) == 1 and not v.refused



def test_the_verdict_judge_reads_each_sentence_with_its_headings_and_table_header():
    """The judge is shown what the text check reads: the title, the headings and a table row's header line, which
    says what the row's cells are ("£19.00" is the Long Stay drive-up price for up to 24 hours)."""
    import dataclasses

    parking = ("# Car parks\n\n## Long Stay car park\n\n| Stay | Drive-up price |\n|---|---|\n"
               "| Up to 24 hours | £19.00 |\n| 2 days | £34.00 |\n")
    s = make_store([Document("parking", parking, "Parking tariffs", acl=Acl.make([], [], "Public"))])
    judge = KeywordJudge("Drive-up price")
    cfg = dataclasses.replace(AnswerConfig(), judge_mode="verdict", judge_min_yes=0.5,
                              answerability_min_coverage=0.0, answerability_min_similarity=0.0)
    a = service(s, cfg=cfg, judge=judge).answer("How much is the Long Stay car park for up to 24 hours?", "guest")
    assert not a.refused and "£19.00" in a.answer
    assert judge.prompts[0].startswith("TEXT (from Parking tariffs . Car parks . Long Stay car park . "
                                       "| Stay | Drive-up price |):\nUp to 24 hours | £19.00 |")
    s.close()


class ConstantJudge:
    """A graded judge with a fixed P(yes)."""

    model_id = "constant-judge"

    def __init__(self, p):
        self.p, self.calls = p, 0

    def yes_probability(self, messages):
        self.calls += 1
        return self.p


@pytest.mark.parametrize("gap, accepted", [(0.0, True), (0.1, False), (0.3, False)])
def test_a_restricted_best_chunk_asks_the_judge_for_a_surer_verdict(store, gap, accepted):
    """P(yes) 0.4 passes judge_min_yes 0.35, but not judge_min_yes_restricted 0.5 when the index's best chunk is
    restricted for the asker (gap above 0); at the restricted gap itself the question is refused before the judge."""
    import dataclasses

    cfg = dataclasses.replace(AnswerConfig(), judge_min_yes=0.35, judge_min_yes_restricted=0.5, restricted_gap=0.3)
    judge = ConstantJudge(0.4)
    svc = service(store, cfg=cfg, judge=judge)
    svc.restricted_gap = lambda query, who, best: gap
    a = svc.answer(Q, "hr-user")
    assert a.restricted_gap == gap and judge.calls == (0 if gap >= 0.3 else 1)
    assert (a.refused, a.refusal_reason) == ((False, None) if accepted else
                                             (True, "insufficient-retrieval" if gap >= 0.3 else "judge-rejected"))

def test_a_chunk_cut_mid_sentence_is_extended_to_the_sentence_start(store):
    from ragbench.schema import Hit

    svc = service(store)
    cut = PTO.index("nused days")  # "…per year. Up to 5 u|nused days carry over."
    hit = Hit("c1", "pto", 1.0, 0, PTO[cut:], "HR Policy: Paid time off", cut, len(PTO))
    whole = svc._whole_sentence_start(hit, PTO)
    assert (whole.text, whole.start, whole.end) == ("Up to 5 unused days carry over.", PTO.index("Up to"), len(PTO))
    # Already at a sentence start, at the document start, or not a slice of its document: unchanged.
    at_start = Hit("c1", "pto", 1.0, 0, PTO[PTO.index("Up to"):], "", PTO.index("Up to"), len(PTO))
    assert svc._whole_sentence_start(at_start, PTO) is at_start
    first = Hit("c0", "pto", 1.0, 0, PTO[:20], "", 0, 20)
    assert svc._whole_sentence_start(first, PTO) is first
    stale = Hit("c1", "pto", 1.0, 0, "something else", "", cut, len(PTO))
    assert svc._whole_sentence_start(stale, PTO) is stale
    # A sentence that starts further back than answer.whole_sentences is left as retrieved; 0 switches it off.
    short = service(store, cfg=AnswerConfig(whole_sentences=5))
    assert short._whole_sentence_start(hit, PTO) is hit
    assert service(store, cfg=AnswerConfig(whole_sentences=0))._whole_sentence_start(hit, PTO) is hit
    with pytest.raises(ConfigError, match="whole_sentences"):
        service(store, cfg=AnswerConfig(whole_sentences=-1)).answer(Q, "hr-user")
    # Within the first sentence of the document, the start is the document start.
    early = Hit("c0", "pto", 1.0, 0, PTO[5:30], "", 5, 30)
    assert svc._whole_sentence_start(early, PTO).text == PTO[:30]


TABLE = ("Report faults to the helpdesk.\n\n| Priority | Attendance target |\n|---|---|\n| P1 | within 2 hours |\n"
         "| P2 | within 1 working day |\n| P3 | within 10 working days |\n\nAfter the table, prose.")


def test_a_chunk_cut_between_table_rows_is_extended_by_the_rows_that_follow(store):
    from ragbench.schema import Hit

    svc = service(store)
    cut = TABLE.index("| P2 |") - 1  # the chunk ends after the P1 row
    hit = Hit("c1", "pto", 1.0, 0, TABLE[:cut], "", 0, cut)
    whole = svc._whole_table_end(hit, TABLE)
    assert whole.text == TABLE[:TABLE.index("\n\nAfter")] and whole.end == TABLE.index("\n\nAfter")
    assert whole.text.endswith("| P3 | within 10 working days |")
    # Whole rows only, within answer.whole_sentences characters: room for one row takes one row.
    one = service(store, cfg=AnswerConfig(whole_sentences=30))._whole_table_end(hit, TABLE)
    assert one.text.endswith("| P2 | within 1 working day |")
    assert service(store, cfg=AnswerConfig(whole_sentences=10))._whole_table_end(hit, TABLE) is hit
    # A chunk that does not end on a row, ends the table, is off, or is not a slice of its document: unchanged.
    prose = Hit("c0", "pto", 1.0, 0, TABLE[:30], "", 0, 30)
    assert svc._whole_table_end(prose, TABLE) is prose
    done = Hit("c2", "pto", 1.0, 0, TABLE[:TABLE.index("\n\nAfter")], "", 0, TABLE.index("\n\nAfter"))
    assert svc._whole_table_end(done, TABLE) is done
    assert service(store, cfg=AnswerConfig(whole_sentences=0))._whole_table_end(hit, TABLE) is hit
    stale = Hit("c1", "pto", 1.0, 0, "something else", "", 0, cut)
    assert svc._whole_table_end(stale, TABLE) is stale


def test_a_chunk_that_starts_between_table_rows_is_extended_by_the_rows_before(store):
    from ragbench.schema import Hit

    svc = service(store)
    start, end = TABLE.index("| P3 |"), len(TABLE)
    hit = Hit("c3", "pto", 1.0, 0, TABLE[start:], "", start, end)
    whole = svc._whole_table_start(hit, TABLE)
    # Up to the header line, whole rows; the prose paragraph above the table stays out.
    assert (whole.start, whole.text) == (TABLE.index("| Priority"), TABLE[TABLE.index("| Priority"):])
    # Whole rows only, within answer.whole_sentences characters: room for one row takes one row.
    one = service(store, cfg=AnswerConfig(whole_sentences=30))._whole_table_start(hit, TABLE)
    assert one.text.startswith("| P2 | within 1 working day |\n| P3 |") and one.start == TABLE.index("| P2 |")
    assert service(store, cfg=AnswerConfig(whole_sentences=10))._whole_table_start(hit, TABLE) is hit
    # A chunk that opens on prose, mid-row, at the table's top, is off, or is stale: unchanged.
    prose = Hit("c4", "pto", 1.0, 0, TABLE[TABLE.index("After"):], "", TABLE.index("After"), end)
    assert svc._whole_table_start(prose, TABLE) is prose
    mid = Hit("c5", "pto", 1.0, 0, TABLE[start + 2:], "", start + 2, end)
    assert svc._whole_table_start(mid, TABLE) is mid
    top = svc._whole_table_start(whole, TABLE)
    assert top is whole
    assert service(store, cfg=AnswerConfig(whole_sentences=0))._whole_table_start(hit, TABLE) is hit
    stale = Hit("c3", "pto", 1.0, 0, "something else", "", start, end)
    assert svc._whole_table_start(stale, TABLE) is stale


def test_a_superseded_document_weighs_less_in_the_reader(store):
    from ragbench.schema import Hit

    svc = service(store)
    old = Hit("c9", "pto", 0.8, 0, PTO, "Paid time off, version 2 — SUPERSEDED", 0, len(PTO))
    new = Hit("c1", "pto", 0.8, 1, PTO, "Paid time off", 0, len(PTO))
    assert (svc.passage_weight(old), svc.passage_weight(new)) == (0.5, 1.0)
    template = svc.prompts.ensure_default(svc.cfg.prompt_name)
    messages, _ = svc.build_messages(Q, [old, new], template)
    assert [p["score"] for p in messages[-1].meta["rag"]["passages"]] == [0.4, 0.8]
    off = service(store, cfg=AnswerConfig(superseded_weight=1.0))
    assert off.passage_weight(old) == 1.0
    with pytest.raises(ConfigError, match="superseded_weight"):
        service(store, cfg=AnswerConfig(superseded_weight=1.5)).answer(Q, "hr-user")


def test_a_document_whose_metadata_says_it_is_superseded_weighs_less():
    """Kelverton F001's shape: the old price list's title does not say it is superseded, its front matter does
    (``status: superseded``, ``superseded_by``); read by the title alone the two lists weighed the same."""
    from ragbench.answer.service import out_of_force
    from ragbench.schema import Hit

    assert out_of_force("Lesson prices 2025-26", {"status": "superseded", "superseded_by": "prices-2026"})
    assert out_of_force("Lesson prices 2025-26", {"superseded_by": "prices-2026"})
    assert out_of_force("Lesson prices 2025-26", {"front_matter": {"status": "Archived"}})
    assert out_of_force("Lesson prices 2025-26 (superseded)")
    assert not out_of_force("Lesson prices 2026-27", {"status": "current", "supersedes": "prices-2025"})
    assert not out_of_force("Lesson prices 2026-27", {"front_matter": "status: superseded"})
    old_text = "A 1.5 hour lesson in a manual car costs £58."
    new_text = "A 1.5 hour lesson in a manual car costs £62."
    public = Acl.make([], [], "Public")
    s = make_store([Document("prices-2025", old_text, "Lesson prices 2025-26", acl=public,
                             metadata={"status": "superseded", "superseded_by": "prices-2026"}),
                    Document("prices-2026", new_text, "Lesson prices 2026-27", acl=public,
                             metadata={"status": "current", "supersedes": "prices-2025"})])
    try:
        svc = service(s)
        old = Hit("o1", "prices-2025", 0.9, 0, old_text, "Lesson prices 2025-26", 0, len(old_text))
        new = Hit("n1", "prices-2026", 0.8, 1, new_text, "Lesson prices 2026-27", 0, len(new_text))
        assert (svc.passage_weight(old), svc.passage_weight(new)) == (0.5, 1.0)
        template = svc.prompts.ensure_default(svc.cfg.prompt_name)
        messages, _ = svc.build_messages("How much is a 1.5 hour lesson in a manual?", [old, new], template)
        assert [p["score"] for p in messages[-1].meta["rag"]["passages"]] == [0.45, 0.8]
        assert service(s, cfg=AnswerConfig(superseded_weight=1.0)).passage_weight(old) == 1.0
    finally:
        s.close()


def test_a_fact_only_a_restricted_document_holds_is_refused(store):
    """The index's best chunk is the board's, which HR may not read; HR's best (PTO) falls far short of it."""
    q = "What is the CEO long-term incentive pool per year?"
    bm25 = bm25_for(store)
    top = bm25.search(q, k=1)[0]
    mine = bm25.search(q, k=1, principal=HR)[0]
    assert (top.doc_id, mine.doc_id) == ("board", "pto")
    expected = 1 - mine.score / top.score
    assert 0.3 <= expected < 1
    model = RecordingChatModel(ExtractiveChatModel())
    a = service(store, model).answer(q, "hr-user")  # default answer.restricted_gap = 0.25
    assert (a.refused, a.refusal_reason, a.answer, a.citations) == (True, "insufficient-retrieval", REFUSAL_MESSAGE, ())
    assert a.restricted_gap == pytest.approx(expected)
    assert model.calls == [] and "restricted_gap" not in a.to_json()
    assert "3.5 million" not in repr(a) and "incentive pool is" not in str(a.to_json())
    # Off, or a larger gap required: HR gets its own best passage (the PTO sentence).
    for cfg, recorded in ((AnswerConfig(restricted_gap=0.0), 0.0),
                          (AnswerConfig(restricted_gap=min(1.0, expected + 0.01)), expected)):
        kept = service(store, cfg=cfg).answer(q, "hr-user")
        assert kept.refusal_reason != "insufficient-retrieval"
        assert kept.restricted_gap == pytest.approx(recorded)
    # The board member may read the best chunk: no gap.
    assert service(store).restricted_gap(q, BOARD_MEMBER, top.score) == 0.0
    # HR asking about its own document: the index's best chunk is readable.
    assert service(store).restricted_gap(Q, HR, 1.0) == 0.0
    with pytest.raises(ConfigError, match="restricted_gap"):
        service(store, cfg=AnswerConfig(restricted_gap=1.5)).answer(Q, "hr-user")


def test_a_chunk_cut_mid_sentence_is_extended_to_the_sentence_end(store):
    from ragbench.schema import Hit

    svc = service(store)
    # "…receive 25|" cut inside a number would read as a false, shorter sentence.
    cut = PTO.index("25") + 1
    hit = Hit("c0", "pto", 1.0, 0, PTO[:cut], "HR Policy: Paid time off", 0, cut)
    whole = svc._whole_sentence_end(hit, PTO)
    first = PTO.index("per year.") + len("per year.")
    assert (whole.text, whole.start, whole.end) == (PTO[:first], 0, first)
    # Cut right after a sentence end, at the document end, or not a slice of its document: unchanged.
    done = Hit("c0", "pto", 1.0, 0, PTO[:first], "", 0, first)
    assert svc._whole_sentence_end(done, PTO) is done
    tail = Hit("c1", "pto", 1.0, 0, PTO[first + 1:], "", first + 1, len(PTO))
    assert svc._whole_sentence_end(tail, PTO) is tail
    stale = Hit("c0", "pto", 1.0, 0, "something else", "", 0, cut)
    assert svc._whole_sentence_end(stale, PTO) is stale
    # A sentence that ends further on than answer.whole_sentences is left as retrieved; 0 switches it off.
    assert service(store, cfg=AnswerConfig(whole_sentences=5))._whole_sentence_end(hit, PTO) is hit
    assert service(store, cfg=AnswerConfig(whole_sentences=0))._whole_sentence_end(hit, PTO) is hit
    # A decimal point is no sentence end: "3.|5 million" is extended past it.
    board = "The CEO pool is 3.5 million pounds. It vests in 2027."
    num = Hit("b0", "board", 1.0, 0, board[:18], "", 0, 18)
    assert svc._whole_sentence_end(num, board).text == "The CEO pool is 3.5 million pounds."


def test_a_restricted_passage_that_covers_more_of_the_question_closes_the_similarity_route():
    """The guest's hours page is on topic (the similarity route would answer it: min_similarity −1 here), but the
    board's decision covers more of the question's terms, so the guest's answer must pass on coverage, and fails."""
    import dataclasses

    from ragbench.answer.answerability import PermittedTermWeights, coverage
    from ragbench.llm.signals import salient_terms, term_set

    hours = "Apprentices work Monday to Friday, 37 hours a week, and train at college one day a week."
    plan = "The board agreed that apprentices move to a four-day week from April."
    s = make_store([Document("hours", hours, "Working hours", acl=Acl.make([], [], "Public")),
                    Document("plan", plan, "Board decisions", acl=Acl.make(["board"], [], "Restricted")),
                    Document("conduct", CONDUCT, "Code of conduct", acl=Acl.make([], [], "Public"))])
    q = "Are apprentices moving to a four-day week?"
    weights = PermittedTermWeights(s).for_principal(GUEST)  # IDF over what the guest may read (hours, conduct)
    terms = salient_terms(q)
    expected = (coverage(terms, term_set(f"{plan} . Board decisions"), weights)
                - coverage(terms, term_set(f"{hours} . Working hours"), weights))
    assert expected == pytest.approx(0.3164, abs=1e-4)
    open_route = AnswerConfig(restricted_gap=0.0, answerability_min_similarity=-1.0)
    model = RecordingChatModel(ExtractiveChatModel())
    a = service(s, model, cfg=open_route).answer(q, GUEST)
    assert (a.refused, a.refusal_reason, a.answer) == (True, "unanswerable-question", REFUSAL_MESSAGE)
    assert a.restricted_lead == pytest.approx(expected)
    # "moving" (the plan says "move") is an everyday word no document holds: it weighs nothing in coverage.
    assert a.answerability.reason == "coverage 0.54 < 0.55 (coverage decides)"
    assert service(s, cfg=dataclasses.replace(open_route, answerability_everyday_zipf=0.0)).answer(
        q, GUEST).answerability.reason == "coverage 0.37 < 0.55 (coverage decides)"
    # The board's text never reaches the model or the reply; the lead is kept for evaluation only.
    assert "four-day week from April" not in " ".join(model.prompt_texts())
    assert "restricted_lead" not in a.to_json() and "four-day" not in str(a.to_json())
    # Off: the similarity route answers with the guest's own (on-topic, not answering) sentence.
    off = service(s, cfg=dataclasses.replace(open_route, restricted_coverage=False)).answer(q, GUEST)
    assert (off.refused, off.restricted_lead) == (False, 0.0)
    assert off.answer == f"{hours} [1]"
    # The board member may read the decision: no lead, and the decision is quoted.
    board = service(s, cfg=open_route).answer(q, BOARD_MEMBER)
    assert board.restricted_lead == 0.0 and board.answer.startswith(f"{plan} [1]")
    s.close()


def test_a_context_query_is_read_only_when_the_turn_is_refused_on_its_own(store):
    """``context_query``: a turn refused on its own query is read once more on the context form and answered from it
    if it passes; a turn answered alone is not read again, and a context form refused too leaves the first refusal."""
    svc = service(store)
    calls = []
    inner = svc._respond

    def spy(*args):
        calls.append(args[1])  # the query each reading retrieved with
        return inner(*args)

    svc._respond = spy
    alone = "Is there a maximum?"
    context = "Is there a maximum? (referring to unused days carry over)"
    first = svc.answer(alone, "hr-user")
    assert (first.refused, first.refusal_reason, calls) == (True, "insufficient-retrieval", [alone])
    calls.clear()
    a = svc.answer(alone, "hr-user", context_query=context)
    assert calls == [alone, context] and not a.refused and a.query == context
    assert a.answer == "Up to 5 unused days carry over. [1]"
    calls.clear()
    assert not svc.answer(Q, "hr-user", context_query=context).refused and calls == [Q]
    calls.clear()
    b = svc.answer("What is the zebraquartz vesting year?", "hr-user", context_query="zebraquartz paid time off?")
    assert b.refused and b.query == "What is the zebraquartz vesting year?"
    assert calls == ["What is the zebraquartz vesting year?", "zebraquartz paid time off?"]


@pytest.mark.parametrize("cfg, question, context", [
    (AnswerConfig(), "Is there a maximum?", "Is there a maximum? (referring to days paid time employees)"),
    # four terms of its own (zebraquartz, vesting, limit, staff): it names its topic and stands alone
    (AnswerConfig(), "Is there a zebraquartz vesting limit for staff?", None),
    (AnswerConfig(followup_context_max_terms=4), "Is there a zebraquartz vesting limit for staff?",
     "Is there a zebraquartz vesting limit for staff? (referring to days paid time employees)"),
    (AnswerConfig(followup_context=False), "Is there a maximum?", None),
    # worded as a follow-up: its rewrite is already the context form
    (AnswerConfig(), "And is it capped?", None),
])
def test_a_chat_reads_a_turn_again_in_context_only_when_it_says_too_little_to_stand_alone(store, cfg, question,
                                                                                         context):
    svc = service(store, cfg=cfg)
    chat = ChatSession(svc, "hr-user")
    chat.ask(Q)
    seen = []
    inner = svc.answer

    def spy(*args, **kw):
        seen.append(kw.get("context_query"))
        return inner(*args, **kw)

    svc.answer = spy
    chat.ask(question)
    assert seen == [context]
    with pytest.raises(ConfigError, match="followup_context_max_terms must be ≥ 0 terms, found -1"):
        service(store, cfg=AnswerConfig(followup_context_max_terms=-1)).answer(Q, "hr-user")
