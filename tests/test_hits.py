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
