"""Family words matched by their family relation (``answer.kinship``: on since session 52, off in session 42)."""
from __future__ import annotations

from ragbench.answer.answerability import TermWeights, WordMatcher, assess, names
from ragbench.answer.kinship import ADDRESS_FORMS, relation, relation_stems, same_relation_in
from ragbench.llm import ExtractiveChatModel, Passage, rag_meta
from ragbench.schema import Message

from .test_answerability import OFFICE, PETS, NoCosine

def ask(model: ExtractiveChatModel, question: str, passages: list[Passage]) -> str:
    return model.complete([Message("user", "prompt", rag_meta(question, passages))]).text


LEAVE = "Bereavement leave: a grandparent or grandchild | 2 days. A spouse, partner or parent | 5 days."


def test_relations():
    assert relation("Grandad") == relation("grandparents") == relation("nan") == relation("grandmother")
    assert relation("wife") == relation("partner") != relation("mum") == relation("Parents")
    assert relation("grandson") != relation("son") and relation("cousin") is None and relation("leave") is None
    assert same_relation_in("grandad", ["Leave", "grandparent"]) and not same_relation_in("grandad", ["parent"])
    assert not same_relation_in("cousin", ["cousin"])  # outside the relations: an exact match is the check's job
    assert {"grandparent", "nan", "grandad"} <= relation_stems("gran") and "parent" not in relation_stems("gran")
    assert relation_stems("ferret") == frozenset()
    # the forms of address names() skips are kinship words of the relations
    assert all(relation(w) is not None for w in ADDRESS_FORMS)
    assert names("Can Grandad and Uncle Ruari visit?") == ["Ruari"]


def test_a_family_word_is_covered_by_its_relation_in_the_check():
    """"grandad" (Zipf 2.9, in no document) is refused as a rare word with the switch off; on, the leave table's
    "grandparent" meets it. "godmother" (2.92) belongs to no relation and is still refused."""
    w = TermWeights.from_texts([OFFICE, PETS, LEAVE])
    on, off = WordMatcher(NoCosine(), kinship=True), WordMatcher(NoCosine())
    assert (on.synonym_in("grandad", ["leave", "grandparent"]), on.best("grandad", ["grandparent"])) == (True, 1.0)
    assert (off.synonym_in("grandad", ["grandparent"]), off.best("grandad", ["grandparent"])) == (False, 0.0)
    q = "How much bereavement leave for my grandad?"
    refused = assess(q, q, [LEAVE], [], w, None, 0.0, 0.0, matcher=off, rare_zipf=4.0)
    assert (refused.answerable, refused.reason) == \
        (False, "asks about the rare word grandad, which no readable document contains")
    answered = assess(q, q, [LEAVE], [], w, None, 0.0, 0.0, matcher=on, rare_zipf=4.0)
    assert answered.answerable and answered.soft_coverage == 1.0
    other = "How much bereavement leave for my godmother?"
    assert assess(other, other, [LEAVE], [], w, None, 0.0, 0.0, matcher=on, rare_zipf=4.0).reason == \
        "asks about the rare word godmother, which no readable document contains"


def test_a_family_word_steers_the_reader_to_its_relations_sentence():
    """Off, the two sentences tie on "paid", "leave" and "dies" and the first is quoted; on, "nan" is met by
    "grandparent" in the second."""
    text = "Paid leave when a parent dies is 5 days. Paid leave when a grandparent dies is 2 days."
    q = "How much paid leave when my nan dies?"
    assert ask(ExtractiveChatModel(max_sentences=1), q, [Passage(1, text, 1.0)]) == \
        "Paid leave when a parent dies is 5 days. [1]"
    assert ask(ExtractiveChatModel(max_sentences=1, kinship=True), q, [Passage(1, text, 1.0)]) == \
        "Paid leave when a grandparent dies is 2 days. [1]"
    assert ExtractiveChatModel(kinship=True)._synonyms(q) == {"nan": relation_stems("nan")}
    assert ExtractiveChatModel()._synonyms(q) == {}
