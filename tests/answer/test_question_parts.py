"""Multi-part questions: split into their parts, each part retrieved, the lists interleaved."""
from __future__ import annotations

from ragbench.answer import AnsweringService, PrincipalRegistry
from ragbench.answer.parts import interleave, question_parts
from ragbench.llm.parts import split_setting
from ragbench.config import AnswerConfig
from ragbench.llm import ExtractiveChatModel
from ragbench.schema import Hit

from .helpers import HR, PRINCIPALS, make_store


def hit(cid: str, rank: int = 0) -> Hit:
    return Hit(cid, "pto", 1.0 - rank / 10, rank, f"text {cid}", "", 0, 1)


def test_question_parts():
    assert question_parts("How many days of leave do I get?") == ["How many days of leave do I get?"]
    assert question_parts("A locum starts on Monday. How far ahead must the manager ask for an account, and may "
                          "the locum sign for the drugs?") == \
        ["A locum starts on Monday. How far ahead must the manager ask for an account",
         "A locum starts on Monday. may the locum sign for the drugs?"]
    # A rewritten follow-up keeps its carried subject on every part.
    assert question_parts("And who decides whether the regulator is told, and how fast does that happen? "
                          "(referring to data breach)") == \
        ["And who decides whether the regulator is told (referring to data breach)",
         "how fast does that happen? (referring to data breach)"]
    # "and" between nouns, or without a question word after it, does not split.
    assert question_parts("What are the rules for salt and pepper?") == ["What are the rules for salt and pepper?"]
    assert question_parts("Can I work from home and travel abroad?") == ["Can I work from home and travel abroad?"]
    assert question_parts("") == [""]
    # An elliptical second clause borrows the first one's predicate: one question, not two.
    for tail in ("how many days?", "for how long?", "when?", "how much"):
        q = f"Is there paid time off for moving house, and {tail}"
        assert question_parts(q) == [q]
    assert question_parts("Is there paid leave for jury service, and how many days does it last?") == \
        ["Is there paid leave for jury service", "how many days does it last?"]
    # A lead-in before the first question word sets the scene for every part; "a.m." ends no sentence.
    assert question_parts("I'm on standby. If a burst comes in at 2 a.m. on Sunday, how quickly must I be there, "
                          "and what rate am I paid?") == \
        ["I'm on standby. If a burst comes in at 2 a.m. on Sunday, how quickly must I be there",
         "I'm on standby. If a burst comes in at 2 a.m. on Sunday, what rate am I paid?"]


def test_interleave_takes_rank_by_rank_without_repeats():
    whole, first, second = [hit("a"), hit("b"), hit("c")], [hit("d"), hit("a")], [hit("e"), hit("f")]
    assert [h.chunk_id for h in interleave([whole, first, second], 10)] == ["a", "d", "e", "b", "f", "c"]
    assert [h.chunk_id for h in interleave([whole, first, second], 4)] == ["a", "d", "e", "b"]
    assert interleave([], 3) == [] and interleave([[], []], 3) == []


class Recorder:
    """A retriever that records each query and answers with two fixed hits named after it."""

    def __init__(self) -> None:
        self.queries: list[str] = []

    def search(self, query, k=10, principal=None):
        self.queries.append(query)
        n = len(self.queries)
        return [hit(f"q{n}-1", 0), hit(f"q{n}-2", 1)][:k]


def test_service_retrieves_every_part_as_the_principal():
    store = make_store()
    rec = Recorder()
    svc = AnsweringService(store, rec, ExtractiveChatModel(), AnswerConfig(top_k=5, candidate_k=5),
                           principals=PrincipalRegistry(PRINCIPALS))
    q = "How many days off do I get, and who approves them?"
    assert [h.chunk_id for h in svc.retrieve(q, HR)] == ["q1-1", "q2-1", "q3-1", "q1-2", "q2-2", "q3-2"]
    assert rec.queries == [q, "How many days off do I get", "who approves them?"]
    rec.queries.clear()
    one = AnsweringService(store, rec, ExtractiveChatModel(), AnswerConfig(top_k=2, candidate_k=2),
                           principals=PrincipalRegistry(PRINCIPALS))
    # Two parts, so a budget of 2 × top_k: the third list's second hit is the fifth taken, the cut is at four.
    assert one.passage_budget(q) == 4 and one.passage_budget("How many days off do I get?") == 2
    assert [h.chunk_id for h in one.retrieve(q, HR)] == ["q1-1", "q2-1", "q3-1", "q1-2"]
    rec.queries.clear()
    off = AnsweringService(store, rec, ExtractiveChatModel(), AnswerConfig(decompose=False),
                           principals=PrincipalRegistry(PRINCIPALS))
    assert [h.chunk_id for h in off.retrieve(q, HR)] == ["q1-1", "q1-2"] and rec.queries == [q]
    assert off.passage_budget(q) == 5
    store.close()


def test_split_setting():
    assert split_setting("I'm 19 and at college. Is there a cheaper ticket? Or a pass?") == \
        ("I'm 19 and at college.", "Is there a cheaper ticket? Or a pass?")
    assert split_setting("How many days of leave do I get?") == ("", "How many days of leave do I get?")
    # Without a question mark the last sentence asks; a follow-up's carried subject is not part of it.
    assert split_setting("The printer died. Tell me who fixes it. (referring to label printer)") == \
        ("The printer died.", "Tell me who fixes it.")
    assert split_setting("") == ("", "")
    # A lead-in set off by a spaced dash before a question word is a sentence of its own, as after a full stop
    # (scarrowby V012 at first contact: "grandson" was read as asked, and refused as a rare word).
    assert split_setting("My grandson wants to apply - what's the starting rate for a security officer?") == \
        ("My grandson wants to apply", "what's the starting rate for a security officer?")
    assert split_setting("I'm feeling rotten – Whats the latest I can ring in?") == \
        ("I'm feeling rotten", "Whats the latest I can ring in?")
    # a dash inside a clause, or one not followed by a question word, splits nothing
    for q in ("Is a 2-3 day pass £5?", "Is the Tuesday - Friday rate lower?", "A pass - or a ticket?"):
        assert split_setting(q) == ("", q)
    assert question_parts("A missed collection - what priority is it and how fast must it be returned?") == \
        ["A missed collection what priority is it", "A missed collection how fast must it be returned?"]


def test_the_reader_gets_top_k_passages_for_each_part():
    from ragbench.llm import read_rag_meta
    from ragbench.schema import Acl, Document

    from .helpers import FixedModel, bm25_for

    docs = [Document(f"d{i}", text, f"Doc {i}", acl=Acl.make([], [], "Public")) for i, text in enumerate([
        "Staff get 25 days off a year.", "Days off are booked in the portal.", "Managers approve days off.",
        "Expenses are paid monthly.", "The canteen opens at eight."])]
    store = make_store(docs)
    model = FixedModel("Staff get 25 days off a year. [1]")
    svc = AnsweringService(store, bm25_for(store), model, AnswerConfig(top_k=1, min_retrieval_score=0.0,
                                                                       answerability=False),
                           principals=PrincipalRegistry(PRINCIPALS))
    svc.answer("How many days off do I get?", HR)
    svc.answer("How many days off do I get, and when are expenses paid?", HR)
    seen = [[p.text for p in read_rag_meta(call)[1]] for call in model.calls]
    assert seen[0] == ["Staff get 25 days off a year."]
    assert sorted(seen[1]) == ["Expenses are paid monthly.", "Staff get 25 days off a year."]  # one per part
    store.close()
