"""Fast Hit building (issue 17, item 5): search() returns exactly the Hits a plain construction gives.

The reference side is written the straightforward way: BM25 sums by one ``np.bincount`` over every query term's
postings (the algorithm before dense columns), ranking by sorting ``(-score, row)``, and ``Hit(...)`` built with
the dataclass constructor and the titles mapping.
"""
from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pytest

from ragbench.retrieval.bm25 import BM25Retriever
from ragbench.retrieval.chunk_table import rescored, top_k
from ragbench.retrieval.dense import DenseRetriever
from ragbench.retrieval.fusion import HybridRetriever
from ragbench.retrieval.hashing_embedder import HashingEmbedder
from ragbench.retrieval.hits import Hits
from ragbench.retrieval.rm3 import rm3_expand
from ragbench.schema import Acl, Chunk, Hit, Principal

COMMON = ["alpha", "beta", "gamma", "delta"]  # in most chunks: stored as dense columns
RARE = [f"r{i}" for i in range(120)]


def corpus(seed: int = 3, n: int = 90) -> tuple[list[Chunk], dict[str, Acl], dict[str, str]]:
    """Chunks (two per document, spans into the document), document ACLs (a third public, a third restricted, a
    third without ACL) and titles for half of the documents."""
    rng = np.random.default_rng(seed)
    chunks: list[Chunk] = []
    acls: dict[str, Acl] = {}
    titles: dict[str, str] = {}
    for d in range(n // 2):
        doc = f"doc{d}"
        start = 0
        for part in range(2):
            words = list(rng.choice(COMMON, size=rng.integers(1, 4))) + list(rng.choice(RARE, size=rng.integers(1, 6)))
            text = " ".join(rng.permutation(words))
            chunks.append(Chunk(f"{doc}#{part}", doc, part, start, start + len(text), text))
            start += len(text) + 1
        if d % 3 == 0:
            acls[doc] = Acl.make(["staff"], [], "Internal")
        elif d % 3 == 1:
            acls[doc] = Acl.make(["board"], [], "Restricted")
        if d % 2 == 0:
            titles[doc] = f"Title {d}"
    return chunks, acls, titles


STAFF = Principal.make("ann", ["staff"], [], "Internal")


def reference_sums(r: BM25Retriever, terms: np.ndarray, weights: np.ndarray | None,
                   principal: Principal | None) -> np.ndarray:
    w = r.weights
    spans = [(w.indptr[t], w.indptr[t + 1]) for t in terms.tolist()]
    idx = np.concatenate([w.indices[a:b] for a, b in spans] + [np.zeros(0, dtype=w.indices.dtype)])
    val = np.concatenate([w.data[a:b] for a, b in spans] + [np.zeros(0)])
    if weights is not None:
        val = val * np.repeat(weights, [b - a for a, b in spans])
    mask = r.table.mask(principal)
    if mask is not None:
        idx, val = idx[mask[idx]], val[mask[idx]]
    return np.bincount(idx, weights=val, minlength=w.shape[0])


def reference_hits(r: BM25Retriever, query: str, k: int, principal: Principal | None,
                   chunks: list[Chunk], titles: dict[str, str]) -> list[Hit]:
    terms = r.query_terms(query)
    weights = None
    if r.rm3 and len(terms):
        terms, weights = rm3_expand(r, terms, principal)
    sums = reference_sums(r, terms, weights, principal)
    ranked = sorted(np.flatnonzero(sums).tolist(), key=lambda i: (-sums[i], i))[:k]
    return [Hit(chunks[i].chunk_id, chunks[i].doc_id, float(sums[i]), rank, chunks[i].text,
                titles.get(chunks[i].doc_id, ""), chunks[i].start, chunks[i].end)
            for rank, i in enumerate(ranked)]


@pytest.mark.parametrize("rm3", [False, True])
@pytest.mark.parametrize("principal", [None, STAFF])
@pytest.mark.parametrize("k", [1, 7, 500])
def test_search_equals_plain_reference(rm3, principal, k):
    chunks, acls, titles = corpus()
    r = BM25Retriever(rm3=rm3, rm3_docs=3, rm3_terms=4).index(chunks, acls, titles)
    r.weights  # noqa: B018 - builds the weights and the dense columns
    # the most common terms take the dense path (as many as the memory budget allows), the rest the sparse one
    common = {r.vocab[t] for t in COMMON}
    assert 0 < len(r._dense_slot) < len(common) and set(r._dense_slot) < common
    queries = ["alpha r3 r17", "r5 beta r5 gamma r99", "delta", "r0 r1 r2", "alpha beta gamma delta r50", "zzz"]
    readable = 0
    for q in queries:
        got = r.search(q, k, principal)
        expect = reference_hits(r, q, k, principal, chunks, titles)
        assert got == expect, q
        assert [repr(h) for h in got] == [repr(h) for h in expect]  # same field values, types included
        assert all(type(h) is Hit for h in got)
        readable += len(got)
    if principal is not None:  # some hits, but only readable ones (public staff documents)
        assert readable > 0
        assert all(acls.get(h.doc_id) == Acl.make(["staff"], [], "Internal") for q in queries
                   for h in r.search(q, k, principal))
    if k == 500:  # k beyond the candidates: every matching readable chunk (the reference's count), no filler
        assert 0 < len(r.search("delta", k, principal)) < len(chunks) // (1 if principal is None else 2)


def test_score_sums_are_bit_identical_to_one_bincount():
    chunks, acls, titles = corpus(seed=11, n=200)
    r = BM25Retriever().index(chunks, acls, titles)
    rng = np.random.default_rng(0)
    for _ in range(30):
        terms = rng.choice(len(r.vocab), size=rng.integers(1, 9))  # duplicates included
        weights = rng.uniform(0.1, 2.0, size=len(terms))
        for tw in (None, weights):
            for principal in (None, STAFF):
                assert np.array_equal(r.score_terms(terms, tw, principal), reference_sums(r, terms, tw, principal))


def test_hits_are_ordinary_frozen_hits():
    chunks, acls, titles = corpus()
    r = BM25Retriever().index(chunks, acls, titles)
    h = r.search("alpha r3", 3)[0]
    plain = Hit(h.chunk_id, h.doc_id, h.score, h.rank, h.text, h.title, h.start, h.end)
    assert h == plain and hash(h) == hash(plain) and type(h) is Hit
    with pytest.raises(dataclasses.FrozenInstanceError):
        h.score = 1.0  # type: ignore[misc]
    assert dataclasses.replace(h, rank=5) == dataclasses.replace(plain, rank=5)
    assert pickle.loads(pickle.dumps(h)) == plain
    assert dataclasses.asdict(h) == dataclasses.asdict(plain)


def test_retitled_document_updates_its_rows():
    chunks, acls, titles = corpus()
    r = BM25Retriever().index(chunks[:10], acls, {"doc0": "Old", "doc1": "One"})
    r.add(chunks[10:12], acls, {"doc0": "New", "doc5": "Five"})
    hits = {h.chunk_id: h.title for h in r.search("alpha beta gamma delta", 20)}
    titled = {c.chunk_id: {"doc0": "New", "doc1": "One", "doc5": "Five"}.get(c.doc_id, "") for c in chunks[:12]}
    assert hits == {cid: titled[cid] for cid in hits} and len(hits) >= 6
    assert hits["doc0#0"] == "New"


@pytest.mark.parametrize("positive", [False, True])
def test_top_k_equals_sorting_with_ties(positive):
    rng = np.random.default_rng(5)
    for _ in range(200):
        n = int(rng.integers(1, 40))
        scores = rng.integers(0, 4, size=n).astype(np.float64)  # many ties, zeros included
        rows = None if rng.random() < 0.5 else np.sort(rng.choice(1000, size=n, replace=False))
        k = int(rng.integers(1, 45))
        pos = np.arange(n) if rows is None else rows
        keep = [i for i in range(n) if scores[i] > 0 or not positive]
        order = sorted(keep, key=lambda i: (-scores[i], pos[i]))[:k]
        got_rows, got_scores = top_k(rows, scores, k, positive=positive)
        assert got_rows.tolist() == [int(pos[i]) for i in order]
        assert got_scores.tolist() == [float(scores[i]) for i in order]


def test_dense_and_hybrid_hits_equal_plain_construction():
    chunks, acls, titles = corpus()
    dense = DenseRetriever(HashingEmbedder(hashing_dim=64)).index(chunks, acls, titles)
    by_id = {c.chunk_id: c for c in chunks}
    for principal in (None, STAFF):
        got = dense.search("alpha r3", 100, principal)
        assert len(got) == (len(chunks) if principal is None else sum(
            1 for c in chunks if acls.get(c.doc_id) == Acl.make(["staff"], [], "Internal")))
        assert got == [Hit(h.chunk_id, h.doc_id, h.score, i, by_id[h.chunk_id].text,
                           titles.get(h.doc_id, ""), by_id[h.chunk_id].start, by_id[h.chunk_id].end)
                       for i, h in enumerate(got)]
    hybrid = HybridRetriever(BM25Retriever(), DenseRetriever(HashingEmbedder(hashing_dim=64)))
    hybrid.index(chunks, acls, titles)
    fused = hybrid.search("alpha r3", 10, STAFF)
    assert len(fused) == 10 and [h.rank for h in fused] == list(range(10))
    assert all(type(h) is Hit and h.text == by_id[h.chunk_id].text and h.title == titles.get(h.doc_id, "")
               for h in fused)
    assert rescored([(fused[1], 2.5), (fused[0], 1)]) == [dataclasses.replace(fused[1], score=2.5, rank=0),
                                                         dataclasses.replace(fused[0], score=1.0, rank=1)]


# ------------------------------------------------------------------------------------------- lazy Hits (item 5)

def eager(r: BM25Retriever, query: str, k: int, principal: Principal | None = None) -> list[Hit]:
    """The eager reference: every Hit through the dataclass constructor, from topk()'s arrays."""
    rows, scores = r.topk(query, k, principal)
    chunks, titles = r.table.chunks, r.table.titles
    return [Hit(chunks[i].chunk_id, chunks[i].doc_id, s, rank, chunks[i].text, titles.get(chunks[i].doc_id, ""),
                chunks[i].start, chunks[i].end) for rank, (i, s) in enumerate(zip(rows.tolist(), scores.tolist()))]


def same_bits(got, expect) -> bool:
    return [repr(h) for h in got] == [repr(h) for h in expect] and all(type(h) is Hit for h in got)


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("principal", [None, STAFF])
def test_lazy_hits_equal_the_eager_reference_read_in_any_order(seed, principal):
    chunks, acls, titles = corpus(seed=seed, n=160)
    r = BM25Retriever().index(chunks, acls, titles)
    rng = np.random.default_rng(seed)
    for q in ["alpha r3 r17", "r5 beta r5 gamma r99", "delta", "alpha beta gamma delta r50"]:
        for k in (1, 10, 100):
            expect = eager(r, q, k, principal)
            assert same_bits(reference_hits(r, q, k, principal, chunks, titles), expect)  # the two references
            got = r.search(q, k, principal)
            assert isinstance(got, Hits) and len(got) == len(expect) > 0
            order = rng.permutation(len(expect)).tolist()  # some hits read one by one first, then the rest
            picked = {i: got[i] for i in order[: len(order) // 2]}
            assert all(picked[i] == expect[i] and picked[i] is got[i] for i in picked)
            assert same_bits(list(got), expect) and same_bits(got.tolist(), expect)
            assert got == expect and expect == got and not (got != expect)
            assert all(got[i] is h for i, h in enumerate(got))  # one object per position, whichever read first


def test_lazy_hits_equal_the_eager_reference_on_scifact(shared_data):
    from ragbench.eval.beir import beir_documents
    from ragbench.eval.datasets import load_beir

    ds = load_beir(shared_data / "beir_scifact", "train")
    docs = beir_documents(ds.corpus)[:600]
    chunks = [Chunk(d.doc_id, d.doc_id, 0, 0, len(d.text), d.text) for d in docs]
    acls = {d.doc_id: Acl.make(["staff"], [], "Internal") for d in docs[::3]}
    r = BM25Retriever(stemmer="english").index(chunks, acls, {d.doc_id: d.title for d in docs})
    queries = ds.queries["query"].tolist()[:40]
    read = 0
    for q in queries:
        for principal in (None, STAFF):
            got, expect = r.search(q, 100, principal), eager(r, q, 100, principal)
            assert same_bits(list(got), expect) and got == expect
            assert all(h.title == next(d.title for d in docs if d.doc_id == h.doc_id) for h in got[:3])
            read += len(got)
    assert read > 40 * 100  # most unrestricted queries fill k = 100 (the ACL'd ones far fewer)


def test_hits_indexing_slicing_and_ranks():
    chunks, acls, titles = corpus()
    r = BM25Retriever().index(chunks, acls, titles)
    hits, expect = r.search("alpha beta r3", 12), eager(r, "alpha beta r3", 12)
    assert len(hits) == 12 and len(expect) == 12
    assert hits[0] is hits[0] and hits[-1] is hits[11] and hits[-12] is hits[0]
    assert hits[-1] == expect[-1] and hits[np.int64(3)] == expect[3]
    for bad in (12, -13, 100):
        with pytest.raises(IndexError):
            hits[bad]
    with pytest.raises(TypeError):
        hits["0"]  # type: ignore[call-overload]
    part = hits[2:5]
    assert isinstance(part, Hits) and [h.rank for h in part] == [2, 3, 4] and part == expect[2:5]
    assert part[0] is hits[2] and hits[3] is part[1]  # a slice shares the hits of its result
    assert [h.rank for h in hits[::-3]] == [11, 8, 5, 2] and hits[::-3] == expect[::-3]
    assert [h.rank for h in hits[1:][2:6:2]] == [3, 5] and hits[1:][2:6:2][1] is hits[5]
    assert hits[1:][-1] is hits[11] and hits[8:][5:] == [] and len(hits[20:]) == 0
    assert hits[4:7].rows.tolist() == r.topk("alpha beta r3", 12)[0][4:7].tolist()
    assert hits[4:7].chunk_ids() == [h.chunk_id for h in expect[4:7]]
    assert list(reversed(hits)) == expect[::-1] and list(iter(hits)) == expect
    assert expect[5] in hits and hits.index(expect[5]) == 5 and hits.count(expect[5]) == 1
    assert hits.chunk_ids() == [h.chunk_id for h in expect]
    first = list(hits)
    assert all(a is b for a, b in zip(first, hits)) and first is not list(hits)  # a new list, the same hits
    first.append(expect[0])  # the caller's list: the result is unchanged
    assert len(hits) == 12


def test_hits_equality_both_ways():
    chunks, acls, titles = corpus()
    r = BM25Retriever().index(chunks, acls, titles)
    hits, expect = r.search("alpha r3", 6), eager(r, "alpha r3", 6)
    again = r.search("alpha r3", 6)
    assert hits == expect and expect == hits and hits == tuple(expect) and tuple(expect) == hits
    assert hits == again and again is not hits and hits != r.search("alpha r3", 5)
    assert hits != expect[:-1] and expect[:-1] != hits
    changed = expect[:2] + [dataclasses.replace(expect[2], score=expect[2].score + 1e-12)] + expect[3:]
    assert hits != changed and changed != hits
    assert hits != "alpha" and hits != 6 and hits != None  # noqa: E711
    with pytest.raises(TypeError):
        hash(hits)
    assert repr(hits) == f"Hits({expect!r})"


def test_hits_pickle_copy_and_arrays():
    import copy

    chunks, acls, titles = corpus()
    r = BM25Retriever().index(chunks, acls, titles)
    hits = r.search("alpha r3", 8, STAFF)
    expect = eager(r, "alpha r3", 8, STAFF)
    back = pickle.loads(pickle.dumps(hits))
    assert type(back) is list and back == expect and same_bits(back, expect)
    assert pickle.loads(pickle.dumps(hits[3:])) == expect[3:]  # a slice pickles with its ranks
    assert [h.rank for h in pickle.loads(pickle.dumps(hits[3:]))] == [3, 4, 5, 6, 7]
    assert copy.copy(hits) is hits and copy.deepcopy(hits) == expect
    rows, scores = r.topk("alpha r3", 8, STAFF)
    assert hits.rows.tolist() == rows.tolist() and hits.scores.tolist() == scores.tolist()
    assert hits.scores.tolist() == [h.score for h in expect] and list(hits.ranks) == list(range(8))
    with pytest.raises(ValueError):
        hits.rows[0] = 1  # read-only views: a result never changes under its caller
    with pytest.raises(ValueError):
        hits.scores[0] = 1.0
    assert hits[0].chunk_id == chunks[rows[0]].chunk_id


def test_empty_results_are_empty_hits():
    chunks, acls, titles = corpus()
    r = BM25Retriever().index(chunks, acls, titles)
    none = r.search("zzz", 10)
    assert isinstance(none, Hits) and len(none) == 0 and not none and none == [] and [] == none
    assert list(none) == [] and none.rows.shape == (0,) and none.scores.shape == (0,) and repr(none) == "Hits([])"
    with pytest.raises(IndexError):
        none[0]
    assert pickle.loads(pickle.dumps(none)) == []
    dense = DenseRetriever(HashingEmbedder(hashing_dim=64)).index(chunks, acls, titles)
    assert dense.search("   ", 5) == [] and isinstance(dense.search("   ", 5), Hits)
    assert DenseRetriever(HashingEmbedder(hashing_dim=64)).search("alpha", 5) == []
    with pytest.raises(ValueError):
        Hits([], np.zeros(2, dtype=np.int64), np.zeros(1))


class EagerLists:
    """A retriever's results as plain lists (what search() returned before Hits)."""

    def __init__(self, inner) -> None:
        self.inner = inner

    def index(self, *args, **kwargs):
        self.inner.index(*args, **kwargs)
        return self

    def search(self, query, k=10, principal=None):
        return list(self.inner.search(query, k, principal))


@pytest.mark.parametrize("options", [{}, {"method": "convex"}, {"rerank": True}, {"adaptive": 1.0},
                                     {"candidate_k": 5, "keyword_weight": 0.7}])
def test_fusion_over_lazy_hits_equals_fusion_over_lists(options):
    chunks, acls, titles = corpus(seed=7, n=120)
    kw, dn = BM25Retriever(), DenseRetriever(HashingEmbedder(hashing_dim=64))
    lazy = HybridRetriever(kw, dn, **options)
    lazy.index(chunks, acls, titles)
    lists = HybridRetriever(EagerLists(kw), EagerLists(dn), **options)  # type: ignore[arg-type]
    for q in ["alpha r3 r17", "r5 beta r5 gamma r99", "delta r1"]:
        for principal in (None, STAFF):
            got, expect = lazy.search(q, 10, principal), lists.search(q, 10, principal)
            assert same_bits(got, expect) and len(got) == 10
            assert lazy.last_candidates == lists.last_candidates


def test_whole_slice_is_the_result_itself():
    chunks, acls, titles = corpus()
    r = BM25Retriever().index(chunks, acls, titles)
    hits = r.search("alpha r3", 5)
    assert len(hits) == 5 and hits[:5] is hits and hits[:50] is hits and hits[0:] is hits
    assert hits[::-1] is not hits and hits[:4] is not hits and hits[:4][:4] == hits[:4]
