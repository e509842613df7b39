"""An answer quoting a replaced edition beside the edition that replaced it states the one in force (session 47)."""
from __future__ import annotations

from dataclasses import replace

import pytest

from ragbench.answer import AnsweringService, PrincipalRegistry
from ragbench.answer.editions import asks_about_past, current_sentences, successors
from ragbench.config import AnswerConfig
from ragbench.llm import ExtractiveChatModel
from ragbench.retrieval.chunking import SentenceChunker
from ragbench.schema import Acl, Document, Hit, Principal
from ragbench.store import KnowledgeStore

from .helpers import FixedOrder, make_store

OLD = ("Lesson prices for 2025-26.\n\n| Lesson length | Manual car | Automatic car |\n|---|---|---|\n"
       "| 1 hour | £40 | £44 |\n| 1.5 hours | £58 | £64 |\n")
NEW = ("Lesson prices for 2026-27.\n\n| Lesson length | Manual car | Automatic car |\n|---|---|---|\n"
       "| 1 hour | £42 | £46 |\n| 1.5 hours | £62 | £68 |\n")
GIFT = "Gift vouchers come in £42 and £100 amounts and last 12 months."
PUPIL = Principal.make("pupil", [], [], "Public")
STAFF = Principal.make("staff", [], ["staff"], "Internal")


def test_a_question_speaks_of_the_past_by_a_word_or_a_year_no_current_title_carries():
    assert asks_about_past("What was a 1.5 hour lesson?")
    assert asks_about_past("and on last year's list?")
    assert asks_about_past("What did it cost under the old policy")
    assert asks_about_past("How much is a lesson on the 2025 price list?", ["Lesson prices 2026-27"])
    assert not asks_about_past("How much is a lesson on the 2026 price list?", ["Lesson prices 2026-27"])
    assert not asks_about_past("How much is a 1.5 hour lesson in a manual?", ["Lesson prices 2026-27"])
    assert not asks_about_past("Is the wash bay open?")  # "was" is a word, not a prefix
    # "old" of an age is not the past (westerby w083 lost its current price to last year's on it).
    assert not asks_about_past("And one for my eight-year-old?")
    assert not asks_about_past("how old do you have to be to hire one, 21 years old?")


def test_successors_are_read_from_the_metadata_top_level_or_front_matter():
    assert successors({"superseded_by": "prices-2026"}) == ["prices-2026"]
    assert successors({"front_matter": {"superseded_by": "a, b ,a"}}) == ["a", "b"]
    assert successors({"superseded_by": ["x", "y"]}) == ["x", "y"]
    assert successors({"status": "superseded"}) == [] and successors(None) == []
    assert successors({"supersedes": "prices-2025"}) == []  # the new edition names its predecessor, not a successor


def test_the_answer_leaves_out_sentences_citing_only_a_replaced_edition_beside_its_successor():
    hits = [Hit("n2", "new", 0.9, 0), Hit("o2", "old", 0.9, 1), Hit("g", "gift", 0.8, 2)]
    replaced = {"old": {"new"}}
    text = "A 1.5 hour lesson is £58. [2] It is £62 now. [1] Vouchers last a year. [3, 2]"
    assert current_sentences(text, hits, replaced) == "It is £62 now. [1] Vouchers last a year. [3] [2]"
    # Without a sentence citing the successor, the old edition's sentence is the answer's and stays.
    assert current_sentences("It was £58. [2] Vouchers last a year. [3]", hits, replaced) is None
    assert current_sentences("It is £62 now. [1] Or £58. [1, 2]", hits, replaced) is None  # cites both
    assert current_sentences("It is £62 now. [1]", hits, replaced) is None  # nothing to leave out
    assert current_sentences(text, hits, {}) is None


def editions_store(successor="prices-2026"):
    public = Acl.make([], [], "Public")
    return make_store([Document("prices-2025", OLD, "Lesson prices 2025-26", acl=public,
                                metadata={"status": "superseded", "superseded_by": successor}),
                       Document("prices-2026", NEW, "Lesson prices 2026-27", acl=public,
                                metadata={"status": "current", "supersedes": "prices-2025"}),
                       Document("staff-prices", NEW.replace("2026-27", "2027-28"), "Lesson prices 2027-28 (draft)",
                                acl=Acl.make([], ["staff"], "Internal")),
                       Document("gift", GIFT, "Gift vouchers", acl=public)])


@pytest.fixture
def editions():
    s = editions_store()
    yield s
    s.close()


def answer(store, question, who=PUPIL, cfg=None, docs=("prices-2025", "prices-2026", "gift")):
    svc = AnsweringService(store, FixedOrder(store, docs), ExtractiveChatModel(),
                           cfg or AnswerConfig(restricted_gap=0.0), principals=PrincipalRegistry([PUPIL, STAFF]))
    return svc.answer(question, who)


Q = "How much is a 1.5 hour lesson in a manual?"
#: Session 47's reading alone: without the edition in force read beside an old one (``answer.current_passages``).
OFF = AnswerConfig(restricted_gap=0.0, current_passages=False)
BOTH = "1.5 hours | £58 | £64 |. [1] 1.5 hours | £62 | £68 |. [2]"


def test_both_editions_quoted_the_answer_states_the_one_in_force(editions):
    off = answer(editions, Q, cfg=AnswerConfig(restricted_gap=0.0, current_editions=False))
    assert off.answer == BOTH
    now = answer(editions, Q)
    assert (now.answer, [c.doc_id for c in now.citations]) == ("1.5 hours | £62 | £68 |. [2]", ["prices-2026"])
    assert (now.refused, now.decided_by) == (off.refused, off.decided_by)
    # Asked about the past, both editions stay; the old edition read alone stays too.
    then = answer(editions, "What was a 1.5 hour lesson in a manual on the old list?")
    assert [c.doc_id for c in then.citations] == ["prices-2025", "prices-2026"]
    alone = answer(editions, Q, cfg=OFF, docs=("prices-2025", "gift"))
    assert [c.doc_id for c in alone.citations] == ["prices-2025"]


def test_a_successor_the_asker_may_not_read_does_not_count():
    s = editions_store(successor="staff-prices")
    try:
        a = answer(s, Q, docs=("prices-2025", "staff-prices", "gift"))
        assert [c.doc_id for c in a.citations] == ["prices-2025"]
        staff = answer(s, Q, who=STAFF, docs=("prices-2025", "staff-prices", "gift"))
        assert [c.doc_id for c in staff.citations] == ["staff-prices"]
    finally:
        s.close()


# Session 62: the edition in force read beside the one it replaced (``answer.current_passages``).
ON = AnswerConfig(restricted_gap=0.0, current_passages=True)


def test_an_old_edition_retrieved_alone_is_read_beside_its_successor(editions):
    # brockensall X070: last year's list alone among the passages, its price quoted (£58 for £62).
    off = answer(editions, Q, cfg=OFF, docs=("prices-2025", "gift"))
    assert [c.doc_id for c in off.citations] == ["prices-2025"] and "£58" in off.answer
    now = answer(editions, Q, docs=("prices-2025", "gift"))  # on by default
    assert (now.refused, now.answer) == (False, "1.5 hours | £62 | £68 |. [2]")
    assert [c.doc_id for c in now.citations] == ["prices-2026"]
    assert (now.decided_by, now.context_chunk_ids[1]) == (off.decided_by, editions.chunks(["prices-2026"])[0].chunk_id)
    # Asked about the past, last year's list is read as it was retrieved.
    then = answer(editions, "What was a 1.5 hour lesson in a manual last year?", cfg=ON,
                  docs=("prices-2025", "gift"))
    assert "prices-2026" not in [c.doc_id for c in then.citations] and "£58" in then.answer


def test_the_counterpart_follows_the_old_passage_at_its_reading_weight(editions):
    svc = AnsweringService(editions, FixedOrder(editions, ("gift",)), ExtractiveChatModel(), ON,
                           principals=PrincipalRegistry([PUPIL, STAFF]))
    old = editions.chunks(["prices-2025"])[0]
    new = editions.chunks(["prices-2026"])[0]
    gift = editions.chunks(["gift"])[0]
    hits = [Hit(gift.chunk_id, "gift", 0.9, 0), Hit(old.chunk_id, "prices-2025", 0.8, 1)]
    got = svc.current_passages(Q, hits, PUPIL)
    assert [(h.chunk_id, h.doc_id, h.score, h.rank) for h in got] == [
        (gift.chunk_id, "gift", 0.9, 0), (old.chunk_id, "prices-2025", 0.8, 1), (new.chunk_id, "prices-2026", 0.4, 2)]
    assert got[2].title == "Lesson prices 2026-27" and got[2].text == NEW  # read as a retrieved passage is
    # Its counterpart already among the passages, or none sharing a term, or asked of the past: nothing is added.
    both = [Hit(new.chunk_id, "prices-2026", 0.7, 0), replace(hits[0], rank=1), replace(hits[1], rank=2)]
    assert svc.current_passages(Q, both, PUPIL) == both
    lone = [hits[0], Hit("x", "prices-2025", 0.8, 1, "Open daily.")]
    assert svc.current_passages(Q, lone, PUPIL) == lone
    assert svc.current_passages("What did a lesson cost last year?", hits, PUPIL) == hits


def test_a_successor_the_asker_may_not_read_adds_nothing():
    s = editions_store(successor="staff-prices")
    try:
        a = answer(s, Q, cfg=ON, docs=("prices-2025", "gift"))
        assert [c.doc_id for c in a.citations] == ["prices-2025"] and "£58" in a.answer
        staff = answer(s, Q, who=STAFF, cfg=ON, docs=("prices-2025", "gift"))
        assert [c.doc_id for c in staff.citations] == ["staff-prices"] and "£62" in staff.answer
    finally:
        s.close()


def test_the_counterpart_is_the_successor_section_sharing_most_of_the_old_passage_terms():
    # The counterpart of the old block-booking section is the new one, whatever the question's words cover: the
    # new "single lessons" section covers this question's words more.
    public = Acl.make([], [], "Public")
    single = "Single lessons in a manual or automatic car are paid on the day by card."
    blocks = "Block bookings of ten hours cost {} in a manual car and {} in an automatic car."
    store = KnowledgeStore.open(":memory:")
    store.ingest([Document("old", single + " " + blocks.format("£400", "£440"), "Prices 2025-26", acl=public,
                           metadata={"superseded_by": "new"}),
                  Document("new", single + " " + blocks.format("£420", "£460"), "Prices 2026-27", acl=public)],
                 SentenceChunker(max_chars=80, char_overlap=0))
    try:
        old = [c for c in store.chunks(["old"]) if "ten hours" in c.text]
        new = {c.chunk_id: c.text for c in store.chunks(["new"])}
        assert len(old) == 1 and len(new) == 2
        svc = AnsweringService(store, FixedOrder(store, ("old",)), ExtractiveChatModel(), ON,
                               principals=PrincipalRegistry([PUPIL]))
        asked = "What do single lessons in a manual cost, paid by card?"
        got = svc.current_passages(asked, [Hit(old[0].chunk_id, "old", 0.6, 0, old[0].text)], PUPIL)
        assert [(h.doc_id, h.text, h.score) for h in got] == [("old", old[0].text, 0.6),
                                                              ("new", blocks.format("£420", "£460"), 0.3)]
    finally:
        store.close()
