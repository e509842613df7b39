"""Chunkers: exact boundaries on hand-made texts, span properties, stable ids, bad input."""
from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench.config import ChunkingConfig
from ragbench.errors import ConfigError, DataError
from ragbench.retrieval.chunking import SentenceChunker, WholeDocumentChunker, WordWindowChunker, chunk_id
from ragbench.retrieval.factory import make_chunker
from ragbench.schema import Document


def words(n: int, sep: str = " ") -> str:
    return sep.join(f"w{i}" for i in range(n))


def spans(chunks) -> list[tuple[int, int, str]]:
    return [(c.start, c.end, c.text) for c in chunks]


# ------------------------------------------------------------------------------------------ word windows

def test_word_windows_of_100_words_start_at_0_30_60() -> None:
    text = words(100)
    chunks = WordWindowChunker().chunk(Document("d", text))
    assert [c.seq for c in chunks] == [0, 1, 2]
    assert [c.text for c in chunks] == [" ".join(f"w{i}" for i in range(a, b)) for a, b in
                                        [(0, 40), (30, 70), (60, 100)]]
    assert [c.start for c in chunks] == [0, text.index("w30"), text.index("w60")]
    assert chunks[-1].end == len(text)
    assert WordWindowChunker().step == 30


def test_word_windows_stop_after_the_window_that_reaches_the_end() -> None:
    chunks = WordWindowChunker().chunk(Document("d", words(41)))
    assert [c.text.split()[0] for c in chunks] == ["w0", "w30"]
    assert chunks[1].text == " ".join(f"w{i}" for i in range(30, 41))
    small = WordWindowChunker(words=4, overlap=0.5).chunk(Document("d", "a b c d e f g"))
    assert spans(small) == [(0, 7, "a b c d"), (4, 11, "c d e f"), (8, 13, "e f g")]


def test_a_text_of_at_most_40_words_stays_one_unchanged_chunk() -> None:
    text = "  " + words(40, sep=" \n") + "\n\n"
    (chunk,) = WordWindowChunker().chunk(Document("d", text))
    assert (chunk.start, chunk.end, chunk.text, chunk.seq) == (0, len(text), text, 0)


def test_word_window_text_is_the_original_span_including_newlines() -> None:
    text = "one two\nthree  four\tfive six"
    chunks = WordWindowChunker(words=3, overlap=0.34).chunk(Document("d", text))  # overlap floor(1.02) = 1
    assert spans(chunks) == [(0, 13, "one two\nthree"), (8, 24, "three  four\tfive"), (20, 28, "five six")]


@pytest.mark.parametrize("kwargs", [dict(words=0), dict(words=-3), dict(words=2.5), dict(words=True),
                                    dict(overlap=1.0), dict(overlap=-0.1), dict(overlap="0.25")])
def test_word_chunker_rejects_bad_parameters(kwargs) -> None:
    with pytest.raises(ConfigError):
        WordWindowChunker(**kwargs).chunk(Document("d", "some text"))


# ------------------------------------------------------------------------------------------ sentences

def test_sentence_packing_with_overlap_matches_the_source_rule() -> None:
    # sentences: "Aaaa bbbb." (0,10) " Cccc dddd." (10,21) " Eeee ffff." (21,32) " Gg." (32,36)
    text = "Aaaa bbbb. Cccc dddd. Eeee ffff. Gg."
    chunks = SentenceChunker(max_chars=20, char_overlap=5).chunk(Document("d", text))
    assert spans(chunks) == [(0, 10, "Aaaa bbbb."), (5, 21, "bbbb. Cccc dddd."), (16, 36, "dddd. Eeee ffff. Gg.")]
    assert SentenceChunker(20, 5).spans(text) == [(0, 10), (5, 21), (16, 36)]


def test_sentence_packing_without_overlap_trims_the_emitted_spans() -> None:
    text = "Aaaa bbbb. Cccc dddd. Eeee ffff. Gg."
    chunker = SentenceChunker(max_chars=20, char_overlap=0)
    assert chunker.spans(text) == [(0, 10), (10, 21), (21, 36)]  # the source's untrimmed spans
    assert spans(chunker.chunk(Document("d", text))) == [(0, 10, "Aaaa bbbb."), (11, 21, "Cccc dddd."),
                                                         (22, 36, "Eeee ffff. Gg.")]


def test_short_buffer_is_not_carried_over_and_long_sentence_stays_whole() -> None:
    # buffer "Abc." (4 chars) is not longer than the overlap (5): cleared, not carried.
    chunks = SentenceChunker(max_chars=10, char_overlap=5).chunk(Document("d", "Abc. Defghijk."))
    assert spans(chunks) == [(0, 4, "Abc."), (5, 14, "Defghijk.")]
    chunks = SentenceChunker(max_chars=10, char_overlap=0).chunk(Document("d", "This sentence is long. Hi."))
    assert spans(chunks) == [(0, 22, "This sentence is long."), (23, 26, "Hi.")]


def test_whitespace_only_buffers_are_not_emitted() -> None:
    chunks = SentenceChunker(max_chars=3, char_overlap=0).chunk(Document("d", "A.\n\n\n\nB."))
    assert spans(chunks) == [(0, 2, "A."), (6, 8, "B.")]
    assert [c.seq for c in chunks] == [0, 1]


def test_default_sentence_chunker_keeps_a_short_document_whole() -> None:
    text = "First sentence. Second one!\nThird?"
    assert spans(SentenceChunker().chunk(Document("d", text))) == [(0, len(text), text)]


@pytest.mark.parametrize("kwargs", [dict(max_chars=0), dict(max_chars=-1), dict(char_overlap=-1),
                                    dict(max_chars=100, char_overlap=100), dict(char_overlap=1.5)])
def test_sentence_chunker_rejects_bad_parameters(kwargs) -> None:
    with pytest.raises(ConfigError):
        SentenceChunker(**kwargs).chunk(Document("d", "Some text."))


# ------------------------------------------------------------------------------------------ all chunkers

@pytest.mark.parametrize("chunker", [WordWindowChunker(), SentenceChunker(), WholeDocumentChunker()])
@pytest.mark.parametrize("text", ["", "   \n\t "])
def test_blank_documents_raise_data_error_naming_the_doc(chunker, text) -> None:
    with pytest.raises(DataError, match="'doc-7'"):
        chunker.chunk(Document("doc-7", text))


def test_whole_document_chunker_returns_the_text_unchanged() -> None:
    text = " A whole doc.\n"
    assert spans(WholeDocumentChunker().chunk(Document("d", text))) == [(0, len(text), text)]


def test_chunk_ids_are_stable_and_derived_from_doc_seq_and_text() -> None:
    assert chunk_id("d1", 0, "hello") == hashlib.sha256(b"d1\x000\x00hello").hexdigest()[:24]
    doc = Document("d1", words(100))
    first = [c.chunk_id for c in WordWindowChunker().chunk(doc)]
    assert first == [c.chunk_id for c in WordWindowChunker().chunk(doc)]
    assert len(set(first)) == 3
    other = [c.chunk_id for c in WordWindowChunker().chunk(Document("d2", words(100)))]
    assert not set(first) & set(other)


def test_make_chunker_builds_each_strategy_and_validates() -> None:
    assert repr(make_chunker(ChunkingConfig())) == "WordWindowChunker(words=40, overlap=0.25)"
    assert repr(make_chunker(ChunkingConfig(strategy="sentences", max_chars=300, char_overlap=50))) == \
        "SentenceChunker(max_chars=300, char_overlap=50)"
    assert isinstance(make_chunker(ChunkingConfig(strategy="none")), WholeDocumentChunker)
    with pytest.raises(ConfigError, match="strategy"):
        make_chunker(ChunkingConfig(strategy="paragraphs"))
    with pytest.raises(ConfigError, match="overlap"):
        make_chunker(ChunkingConfig(overlap=1.5))
    with pytest.raises(ConfigError, match="char_overlap"):
        make_chunker(ChunkingConfig(strategy="sentences", max_chars=50, char_overlap=60))


# ------------------------------------------------------------------------------------------ properties

TEXT = st.text(alphabet=st.sampled_from(list("ab cZ9.!?\n\t,é  ")), min_size=1, max_size=400).filter(
    lambda t: t.strip())


def _check_spans(text: str, chunks) -> None:
    assert chunks and [c.seq for c in chunks] == list(range(len(chunks)))
    assert len({c.chunk_id for c in chunks}) == len(chunks)
    covered = set()
    for c in chunks:
        assert text[c.start:c.end] == c.text
        assert c.end > c.start
        covered.update(range(c.start, c.end))
    assert [c.start for c in chunks] == sorted(c.start for c in chunks)
    # every non-whitespace character of the document is in some chunk
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())


@settings(max_examples=150, deadline=None)
@given(text=TEXT, n=st.integers(1, 12), overlap=st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.9]))
def test_word_chunk_spans_reconstruct_the_text(text: str, n: int, overlap: float) -> None:
    chunks = WordWindowChunker(n, overlap).chunk(Document("d", text))
    _check_spans(text, chunks)
    assert all(len(c.text.split()) <= max(n, len(text.split())) for c in chunks)


@settings(max_examples=150, deadline=None)
@given(text=TEXT, max_chars=st.integers(1, 80), overlap_share=st.floats(0, 0.95))
def test_sentence_chunk_spans_reconstruct_the_text(text: str, max_chars: int, overlap_share: float) -> None:
    overlap = int(max_chars * overlap_share)
    chunker = SentenceChunker(max_chars, overlap)
    chunks = chunker.chunk(Document("d", text))
    _check_spans(text, chunks)
    assert all(c.text == c.text.strip() for c in chunks)
    raw = chunker.spans(text)
    assert raw[0][0] == 0 and raw[-1][1] == len(text)


def test_fixed_size_windows_step_max_minus_overlap() -> None:
    from ragbench.retrieval.chunking import FixedSizeChunker

    text = "abcdefghij" * 2 + "  "   # 22 characters
    ch = FixedSizeChunker(max_chars=10, char_overlap=3)
    assert ch.spans(text) == [(0, 10), (7, 17), (14, 22)]  # step 7; stop after the window reaching the end
    chunks = ch.chunk(Document("d", text))
    assert [c.text for c in chunks] == ["abcdefghij", "hijabcdefg", "efghij  "]  # untrimmed, exact offsets
    assert [(c.start, c.end) for c in chunks] == [(0, 10), (7, 17), (14, 22)]
    assert FixedSizeChunker(5, 0).spans("abcde") == [(0, 5)] and FixedSizeChunker(5, 0).spans("") == []
    blank_tail = FixedSizeChunker(4, 2).chunk(Document("w", "ab      "))
    assert [c.text for c in blank_tail] == ["ab  "]  # blank windows skipped
    assert isinstance(make_chunker(ChunkingConfig(strategy="chars", max_chars=10, char_overlap=3)), FixedSizeChunker)
    with pytest.raises(ConfigError, match="char_overlap"):
        make_chunker(ChunkingConfig(strategy="chars", max_chars=10, char_overlap=10))
