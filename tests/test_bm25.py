"""BM25Retriever: exact hand-computed scores on a 4-document corpus, incremental add, ACL before scoring."""
from __future__ import annotations

import math

import numpy as np
import pytest

from ragbench.errors import ConfigError, DataError
from ragbench.retrieval.bm25 import BM25Retriever, bm25_idf
from ragbench.schema import Acl, Chunk, Principal

# N = 4 chunks, lengths 3, 6, 3, 2 → avgdl = 14 / 4 = 3.5.  k1 = 1.5, b = 0.75.
TEXTS = {"d1": "The cat sat.", "d2": "the dog sat on the mat", "d3": "cat, cat & dog", "d4": "a bird"}


def chunks(texts: dict[str, str] = TEXTS) -> list[Chunk]:
    return [Chunk(f"{d}#0", d, 0, 0, len(t), t) for d, t in texts.items()]


def ids(hits) -> list[str]:
    return [h.doc_id for h in hits]


# Hand computation. df(cat) = df(dog) = 2 → idf = ln(1 + 2.5/2.5) = ln 2.
LN2 = 0.6931471805599453
# length normaliser K(len) = 1.5 · (0.25 + 0.75·len/3.5):
#   K(3) = 1.5·0.892857… = 1.3392857…,  K(6) = 1.5·1.535714… = 2.3035714…
CAT_D1 = LN2 * 1 * 2.5 / (1 + 1.3392857142857142)   # tf 1, len 3 → 0.7407679792…
CAT_D3 = LN2 * 2 * 2.5 / (2 + 1.3392857142857142)   # tf 2, len 3 → 1.0378674361…
DOG_D2 = LN2 * 1 * 2.5 / (1 + 2.3035714285714284)   # tf 1, len 6 → 0.5245438123…
DOG_D3 = CAT_D1                                      # tf 1, len 3


def test_hand_computed_constants():
    assert CAT_D1 == pytest.approx(0.740767979224369, abs=1e-12)
    assert CAT_D3 == pytest.approx(1.0378674361325384, abs=1e-12)
    assert DOG_D2 == pytest.approx(0.5245438123156343, abs=1e-12)
    assert bm25_idf(4, np.array([2, 1]))[1] == pytest.approx(math.log(1 + 3.5 / 1.5))


def test_single_term_scores_exact():
    r = BM25Retriever().index(chunks())
    hits = r.search("cat", k=10)
    assert ids(hits) == ["d3", "d1"]  # only chunks sharing a term are ranked
    assert [h.score for h in hits] == pytest.approx([CAT_D3, CAT_D1], abs=1e-12)
    assert [h.rank for h in hits] == [0, 1]
    assert hits[0].text == "cat, cat & dog" and hits[0].chunk_id == "d3#0"


def test_two_terms_sum_and_ranking():
    hits = BM25Retriever().index(chunks()).search("Cat DOG?", k=10)
    assert ids(hits) == ["d3", "d1", "d2"]
    assert [h.score for h in hits] == pytest.approx([CAT_D3 + DOG_D3, CAT_D1, DOG_D2], abs=1e-12)


def test_duplicate_query_terms_count_again_like_the_source():
    r = BM25Retriever().index(chunks())
    once = {h.doc_id: h.score for h in r.search("cat", 10)}
    twice = {h.doc_id: h.score for h in r.search("cat cat", 10)}
    assert twice == pytest.approx({d: 2 * s for d, s in once.items()}, abs=1e-12)


def test_rare_term_idf_and_k_limit():
    r = BM25Retriever().index(chunks())
    # df(mat) = 1 → idf = ln(1 + 3.5/1.5); tf 1, len 6
    hits = r.search("mat", k=1)
    assert ids(hits) == ["d2"]
    assert hits[0].score == pytest.approx(math.log(1 + 3.5 / 1.5) * 2.5 / (1 + 2.3035714285714284), abs=1e-12)
    # d1: the + cat + sat, each tf 1 in a 3-token chunk; d2: "the" twice (tf 2, len 6) + dog + sat;
    # d3: cat (tf 2) + dog = 1.7786… is third, cut by k = 2.
    hits = r.search("the cat dog sat", k=2)
    assert ids(hits) == ["d1", "d2"]
    assert [h.score for h in hits] == pytest.approx(
        [3 * CAT_D1, LN2 * 2 * 2.5 / (2 + 2.3035714285714284) + 2 * DOG_D2], abs=1e-12)


def test_unknown_terms_and_empty_queries_return_nothing():
    r = BM25Retriever().index(chunks())
    assert r.search("zebra", 5) == []
    assert r.search("   ", 5) == []
    assert BM25Retriever().index([]).search("cat", 5) == []


def test_parameters_change_scores_exactly():
    r = BM25Retriever(k1=1.2, b=0.0).index(chunks())  # b = 0: no length normalisation
    [hit] = [h for h in r.search("dog", 10) if h.doc_id == "d2"]
    assert hit.score == pytest.approx(LN2 * 2.2 / (1 + 1.2), abs=1e-12)


def test_stopword_option_removes_stop_words_from_documents_and_queries():
    plain = BM25Retriever().index(chunks())
    assert "d2" in ids(plain.search("the", 10))
    r = BM25Retriever(stopwords=True).index(chunks())
    assert r.search("the on a", 10) == []
    # d2 has 6 tokens with stop words, 3 without ("dog sat mat"); lengths 2,3,3,1 → avgdl 2.25
    [hit] = [h for h in r.search("dog", 10) if h.doc_id == "d2"]
    assert hit.score == pytest.approx(LN2 * 2.5 / (1 + 1.5 * (0.25 + 0.75 * 3 / 2.25)), abs=1e-12)


def test_incremental_add_equals_index_from_scratch():
    all_chunks = chunks()
    inc = BM25Retriever().index(all_chunks[:2])
    assert ids(inc.search("cat", 10)) == ["d1"]
    inc.add(all_chunks[2:])
    full = BM25Retriever().index(all_chunks)
    for q in ("cat", "cat dog", "the mat bird"):
        a, b = inc.search(q, 10), full.search(q, 10)
        assert ids(a) == ids(b)
        assert [h.score for h in a] == pytest.approx([h.score for h in b], abs=1e-12)


def test_ties_break_by_index_order():
    r = BM25Retriever().index(chunks({"x": "alpha beta", "y": "beta alpha", "z": "alpha beta"}))
    assert ids(r.search("alpha", 10)) == ["x", "y", "z"]
    assert ids(r.search("alpha", 2)) == ["x", "y"]


ACLS = {"d1": Acl.make(["employee"], [], "Public"), "d2": Acl.make(["employee"], [], "Public"),
        "d3": Acl.make(["board"], [], "Restricted")}  # d4 has no ACL → unrestricted callers only


def test_acl_is_enforced_before_scoring():
    r = BM25Retriever().index(chunks(), acls=ACLS)
    bob = Principal.make("bob", ["employee"], [], "Internal")
    hits = r.search("cat dog bird", 10, principal=bob)
    assert ids(hits) == ["d1", "d2"]  # d3 forbidden, d4 has no ACL
    # the readable chunks keep exactly their unrestricted scores and ranks start from 0
    assert [h.score for h in hits] == pytest.approx([CAT_D1, DOG_D2], abs=1e-12)
    assert [h.rank for h in hits] == [0, 1]
    rows, _ = r.score_rows("cat dog bird", bob)
    assert sorted(rows.tolist()) == [0, 1]  # forbidden rows never receive a score
    boss = Principal.make("ceo", ["board", "employee"], [], "Restricted")
    assert ids(r.search("cat", 10, principal=boss)) == ["d3", "d1"]
    assert set(ids(r.search("cat dog bird", 10))) == {"d1", "d2", "d3", "d4"}  # None = unrestricted


def test_titles_are_attached_to_hits():
    r = BM25Retriever().index(chunks(), titles={"d3": "Cats"})
    assert r.search("cat", 1)[0].title == "Cats"


def test_bad_input_raises_and_keeps_the_index():
    r = BM25Retriever().index(chunks())
    with pytest.raises(DataError, match="duplicate chunk id"):
        r.add([Chunk("new#0", "new", 0, 0, 5, "zebra"), Chunk("d1#0", "d1", 0, 0, 3, "cat")])
    assert len(r.table) == 4 and "zebra" not in r.vocab and r.search("zebra", 3) == []
    with pytest.raises(DataError):
        r.index([Chunk("a", "a", 0, 0, 1, "x"), Chunk("a", "a", 1, 0, 1, "y")])
    assert len(r.table) == 4 and ids(r.search("cat", 10)) == ["d3", "d1"]
    with pytest.raises(ConfigError, match="k must be"):
        r.search("cat", 0)
    with pytest.raises(ConfigError, match="b must be"):
        BM25Retriever(b=1.5).index(chunks())
    with pytest.raises(ConfigError, match="k1"):
        BM25Retriever(k1=-1).index(chunks())


def test_parity_with_bm25s_lucene():
    bm25s = pytest.importorskip("bm25s")
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(40)]
    texts = {f"d{i}": " ".join(rng.choice(words, size=rng.integers(1, 30))) for i in range(60)}
    ours = BM25Retriever().index(chunks(texts))
    ref = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    ref.index([t.split() for t in texts.values()], show_progress=False)
    for q in ("w1 w2 w3", "w7", "w5 w5 w39"):
        ref_scores = ref.get_scores(q.split())
        got = dict((h.doc_id, h.score) for h in ours.search(q, 60))
        # bm25s's Lucene variant omits the constant (k1 + 1) factor.
        expect = {f"d{i}": s * 2.5 for i, s in enumerate(ref_scores) if s > 0}
        assert got == pytest.approx(expect, rel=1e-5)
