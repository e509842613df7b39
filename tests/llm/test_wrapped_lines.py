"""A hard-wrapped paragraph's line breaks read as spaces (``answer.extractive_join_wrapped``, session 63)."""
from __future__ import annotations

from ragbench.config import AnswerConfig
from ragbench.llm import ExtractiveChatModel, Passage, make_chat_model, rag_meta
from ragbench.llm.signals import join_wrapped_lines
from ragbench.schema import Message

WRAPPED = ("After a burial the earth sinks for months. We will not fix an upright headstone on a new grave until at "
           "least\n**six months** have passed, and in clay soils we prefer **nine months**.\nCremation tablets can be "
           "laid sooner, usually after **six weeks**.")


def ask(model: ExtractiveChatModel, question: str, passages: list[Passage]) -> str:
    return model.complete([Message("system", "sys"), Message("user", "prompt", rag_meta(question, passages))]).text


def test_a_line_broken_inside_a_sentence_is_joined_and_a_sentence_end_keeps_its_break():
    assert join_wrapped_lines(WRAPPED) == (
        "After a burial the earth sinks for months. We will not fix an upright headstone on a new grave until at "
        "least **six months** have passed, and in clay soils we prefer **nine months**.\nCremation tablets can be "
        "laid sooner, usually after **six weeks**.")
    # a wrapped list item's second line joins it; the next item, a table and a heading stay apart
    assert join_wrapped_lines("- Call-out pay is £40 for\n  each attendance\n- Standby is £25 a day") == (
        "- Call-out pay is £40 for each attendance\n- Standby is £25 a day")
    table = "Prices for\n| Size | Price |\n|---|---|\n| Small | £5 |\n## Notes\nsee the list"
    assert join_wrapped_lines(table) == table
    assert join_wrapped_lines("Two spaces end the line  \nhere") == "Two spaces end the line  \nhere"
    assert join_wrapped_lines("") == ""


def test_fields_and_bylines_are_not_wrapped_lines():
    fields = "Complaints desk, 14 Corn Exchange Lane\nEmail: desk@example.org\n**Reviewed by:** the board, May"
    assert join_wrapped_lines(fields) == fields
    post = "**reelgriselda** (posted 3 November 2026)\nGoing to the Starlight in January"
    assert join_wrapped_lines(post) == post
    assert join_wrapped_lines("**popcornpedant**\nThey sent an email") == "**popcornpedant**\nThey sent an email"


def test_the_reader_quotes_a_wrapped_sentence_whole_only_with_the_switch():
    passage = [Passage(1, WRAPPED, 1.0)]
    question = "how long before a headstone can go on a new grave"
    assert ask(ExtractiveChatModel(), question, passage) == (
        "We will not fix an upright headstone on a new grave until at least. [1]")
    assert ask(ExtractiveChatModel(join_wrapped=True), question, passage) == (
        "We will not fix an upright headstone on a new grave until at least six months have passed, and in clay "
        "soils we prefer nine months. [1]")
    assert make_chat_model(AnswerConfig()).join_wrapped is False  # measured and left off (session 63)
    assert make_chat_model(AnswerConfig(extractive_join_wrapped=True)).join_wrapped is True
