"""BM25 options: variants (parity with bm25s), stemming and stop-word lists, RM3 feedback, batch-built hits."""
from __future__ import annotations

import math

import numpy as np
import pytest

from ragbench.config import RagbenchConfig, with_overrides
from ragbench.errors import ConfigError
from ragbench.retrieval.bm25 import METHODS, BM25Retriever
from ragbench.retrieval.retriever import make_retriever
from ragbench.retrieval.rm3 import rm3_expand
from ragbench.schema import Acl, Chunk, Hit, Principal
from ragbench.text import LUCENE_STOP_WORDS, Tokenizer


def chunks(texts: dict[str, str]) -> list[Chunk]:
    return [Chunk(f"{d}#0", d, 0, 0, len(t), t) for d, t in texts.items()]


def random_corpus(seed: int = 0, n: int = 60) -> dict[str, str]:
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(40)]
    # w0 is in every document: robertson's floored idf (and atire's ln(N/df)) make it worthless
    return {f"d{i}": "w0 " + " ".join(rng.choice(words, size=rng.integers(1, 30))) for i in range(n)}


@pytest.mark.parametrize("method", METHODS)
def test_every_variant_matches_bm25s(method):
    bm25s = pytest.importorskip("bm25s", reason="bm25s is in the bench extra")
    texts = random_corpus()
    ours = BM25Retriever(method=method, k1=1.2, b=0.7, delta=0.6).index(chunks(texts))
    ref = bm25s.BM25(k1=1.2, b=0.7, delta=0.6, method=method)
    ref.index([t.split() for t in texts.values()], show_progress=False)
    # bm25s leaves out the constant (k1 + 1) factor of robertson and lucene; the source keeps it
    factor = 2.2 if method in ("robertson", "lucene") else 1.0
    for q in ("w1 w2 w3", "w7", "w5 w5 w39", "w0 w9"):
        ref_scores = ref.get_scores(q.split())
        terms = set(q.split())
        if method in ("robertson", "atire"):
            terms.discard("w0")  # zero idf: matches nothing
        sharing = {f"d{i}" for i, t in enumerate(texts.values()) if terms & set(t.split())}
        got = {h.doc_id: h.score for h in ours.search(q, 60)}
        assert set(got) == sharing
        expect = {f"d{i}": s * factor for i, s in enumerate(ref_scores) if f"d{i}" in sharing}
        assert got == pytest.approx(expect, rel=1e-5)


def test_bm25_plus_hand_computed():
    # N = 2, "a b" and "b"; avgdl 1.5; query "a": idf = ln(3/1); tf part (2.5·1)/(1 + 1.5·(0.25 + 0.75·2/1.5)) + δ
    r = BM25Retriever(method="bm25+", delta=1.0).index(chunks({"x": "a b", "y": "b"}))
    [hit] = r.search("a", 5)
    assert hit.doc_id == "x"
    assert hit.score == pytest.approx(math.log(3) * (2.5 / (1 + 1.5 * 1.25) + 1.0), abs=1e-12)


def test_unknown_method_and_bad_rm3_settings_raise():
    with pytest.raises(ConfigError, match="method must be one of"):
        BM25Retriever(method="okapi").index(chunks({"x": "a"}))
    with pytest.raises(ConfigError, match="rm3_docs"):
        BM25Retriever(rm3=True, rm3_docs=0).index(chunks({"x": "a"}))
    with pytest.raises(ConfigError, match="rm3_weight"):
        BM25Retriever(rm3_weight=1.5).index(chunks({"x": "a"}))
    with pytest.raises(ConfigError, match="stemmer"):
        BM25Retriever(stemmer="klingon").index(chunks({"x": "a"}))
    with pytest.raises(ConfigError, match="stop-word list"):
        BM25Retriever(stopwords=True, stopword_list="nope").index(chunks({"x": "a"}))


def test_stemming_joins_word_forms():
    tok = Tokenizer(stemmer="english")
    assert tok("Running runners ran; cells CELL") == ["run", "runner", "ran", "cell", "cell"]
    texts = {"x": "the cells divide", "y": "a dividing line"}
    plain = BM25Retriever().index(chunks(texts))
    stemmed = BM25Retriever(stemmer="english").index(chunks(texts))
    assert [h.doc_id for h in plain.search("cell", 5)] == []
    assert [h.doc_id for h in stemmed.search("cell", 5)] == ["x"]
    assert {h.doc_id for h in stemmed.search("divides", 5)} == {"x", "y"}


def test_stop_word_lists():
    assert Tokenizer(stopwords=True, stopword_list="lucene")("What is not in the box") == ["what", "box"]
    assert Tokenizer(stopwords=True)("What is not in the box") == ["not", "box"]  # the source's list
    assert Tokenizer(stopwords=True, stopword_list="sklearn")("What is not in the box") == ["box"]
    assert len(LUCENE_STOP_WORDS) == 33
    # stop words go before stemming: "this" stays out, "thing" is stemmed
    assert Tokenizer(stopwords=True, stopword_list="lucene", stemmer="english")("this things") == ["thing"]


def test_changing_the_tokenizer_after_index_refuses_add():
    r = BM25Retriever().index(chunks({"x": "cats"}))
    r.stemmer = "english"
    with pytest.raises(ConfigError, match="tokenizer settings changed"):
        r.add(chunks({"y": "dogs"}))


RM3_TEXTS = {"a": "apple banana cherry", "b": "apple banana", "c": "banana durian", "d": "elder fig"}


def test_rm3_expansion_weights_exact():
    r = BM25Retriever(rm3=True, rm3_docs=2, rm3_terms=2, rm3_weight=0.5).index(chunks(RM3_TEXTS))
    terms = r.query_terms("apple")
    first = r.score_terms(terms)
    sa, sb = first[0], first[1]  # a (3 tokens) and b (2 tokens) contain apple
    assert sb > sa > 0 and first[2] == first[3] == 0
    # P(w|R): apple and banana = wa/3 + wb/2 each, cherry = wa/3; top 2 = apple, banana (ties keep vocab order)
    ids, weights = rm3_expand(r, terms)
    vocab = {t: i for t, i in r.vocab.items()}
    assert sorted(ids.tolist()) == sorted([vocab["apple"], vocab["banana"]])
    got = dict(zip(ids.tolist(), weights.tolist()))
    assert got[vocab["apple"]] == pytest.approx(0.5 * 1 + 0.5 * 0.5)
    assert got[vocab["banana"]] == pytest.approx(0.5 * 0.5)
    # the second pass finds c through banana, which the plain query cannot
    assert [h.doc_id for h in BM25Retriever().index(chunks(RM3_TEXTS)).search("apple", 5)] == ["b", "a"]
    assert [h.doc_id for h in r.search("apple", 5)] == ["b", "a", "c"]


def test_rm3_weight_one_is_the_plain_ranking():
    plain = BM25Retriever().index(chunks(RM3_TEXTS))
    r = BM25Retriever(rm3=True, rm3_weight=1.0).index(chunks(RM3_TEXTS))
    assert [h.doc_id for h in r.search("apple banana", 5)] == [h.doc_id for h in plain.search("apple banana", 5)]


def test_rm3_feedback_comes_only_from_readable_chunks():
    texts = {"pub": "merger plan", "secret": "merger codename falcon", "other": "falcon birds"}
    acls = {"pub": Acl.make(["staff"], [], "Public"), "secret": Acl.make(["board"], [], "Restricted"),
            "other": Acl.make(["staff"], [], "Public")}
    r = BM25Retriever(rm3=True, rm3_docs=5, rm3_terms=5, rm3_weight=0.5).index(chunks(texts), acls=acls)
    staff = Principal.make("s", ["staff"], [], "Internal")
    # unrestricted: "falcon" comes from the secret chunk and pulls in "other"
    assert [h.doc_id for h in r.search("merger", 5)][-1] == "other"
    # as staff the secret chunk is never a feedback document, so "falcon" is not an expansion term
    assert [h.doc_id for h in r.search("merger", 5, principal=staff)] == ["pub"]


def test_batch_built_hits_equal_ordinary_hits():
    r = BM25Retriever().index(chunks({"x": "cat dog", "y": "dog"}), titles={"x": "Pets"})
    hits = r.search("dog", 5)
    rows, scores = r.topk("dog", 5)
    expect = [Hit(f"{d}#0", d, float(s), i, t, ti, 0, len(t))
              for i, (d, t, ti, s) in enumerate(zip(["y", "x"], ["dog", "cat dog"], ["", "Pets"], scores))]
    assert hits == expect and [repr(h) for h in hits] == [repr(h) for h in expect]
    assert hash(hits[0]) == hash(expect[0])
    with pytest.raises(AttributeError):
        hits[0].score = 1.0  # still frozen


def test_config_fields_reach_the_retriever():
    cfg = with_overrides(RagbenchConfig(), {"bm25.stemmer": "english", "bm25.method": "bm25l", "bm25.rm3": True,
                                            "bm25.rm3_terms": 7, "bm25.stopwords": True,
                                            "bm25.stopword_list": "lucene"})
    r = make_retriever("bm25", cfg)
    assert (r.stemmer, r.method, r.rm3, r.rm3_terms, r.stopwords, r.stopword_list) == (
        "english", "bm25l", True, 7, True, "lucene")


def test_changing_scoring_parameters_after_index_rescores_exactly():
    texts = random_corpus(1)
    r = BM25Retriever(method="robertson").index(chunks(texts))
    r.search("w0 w3", 10)
    for method, k1, b in (("lucene", 1.2, 0.5), ("bm25l", 0.9, 0.75), ("atire", 1.5, 0.75)):
        r.method, r.k1, r.b = method, k1, b
        fresh = BM25Retriever(method=method, k1=k1, b=b).index(chunks(texts))
        got, want = r.search("w0 w3 w3", 20), fresh.search("w0 w3 w3", 20)
        assert [h.doc_id for h in got] == [h.doc_id for h in want]
        assert [h.score for h in got] == pytest.approx([h.score for h in want], abs=1e-12)
