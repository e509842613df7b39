"""DenseRetriever: exact cosine on hand-made vectors, ACL before scoring, precomputed vectors, bad input."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pytest

from ragbench.errors import ConfigError, DataError, ModelError
from ragbench.retrieval.base import Embedder
from ragbench.retrieval.dense import DenseRetriever, normalize_rows
from ragbench.schema import Acl, Chunk, Principal


class TableEmbedder(Embedder):
    """Looks texts up in a fixed table of vectors (not normalised: the retriever must normalise)."""

    model_id = "table-v1"
    sha256 = "0" * 64

    def __init__(self, table: dict[str, Sequence[float]]) -> None:
        self.table = table
        self.dim = len(next(iter(table.values())))
        self.calls: list[list[str]] = []

    def embed(self, texts, show_progress=False):
        self.calls.append(list(texts))
        return np.array([self.table[t] for t in texts], dtype=np.float32).reshape(len(texts), self.dim)


VECS = {"a": [1, 0, 0], "b": [3, 4, 0], "c": [0, 0, 2], "d": [-1, 0, 0], "q": [1, 1, 0]}


def chunks(names="abcd") -> list[Chunk]:
    return [Chunk(f"{n}#0", n, 0, 0, 1, n) for n in names]


def test_exact_cosine_scores_and_order():
    r = DenseRetriever(TableEmbedder(VECS)).index(chunks())
    hits = r.search("q", k=4)
    # cos(q, a) = 1/√2; cos(q, b) = (3 + 4)/(5·√2) = 7/(5√2); cos(q, c) = 0; cos(q, d) = −1/√2
    assert [h.doc_id for h in hits] == ["b", "a", "c", "d"]
    assert [h.score for h in hits] == pytest.approx([7 / (5 * 2 ** 0.5), 2 ** -0.5, 0.0, -(2 ** -0.5)], abs=1e-6)
    assert [h.rank for h in hits] == [0, 1, 2, 3]
    assert [h.doc_id for h in r.search("q", k=1)] == ["b"]


def test_normalize_rows_keeps_zero_rows():
    out = normalize_rows(np.array([[3, 4], [0, 0]]))
    assert out.dtype == np.float32
    assert out.tolist() == [[0.6000000238418579, 0.800000011920929], [0.0, 0.0]]


def test_acl_mask_applied_before_scoring():
    acls = {"a": Acl.make([], [], "Public"), "b": Acl.make([], [], "Confidential"), "c": Acl.make([], [], "Public")}
    r = DenseRetriever(TableEmbedder(VECS)).index(chunks(), acls=acls)
    guest = Principal.make("guest")
    assert [h.doc_id for h in r.search("q", 10, guest)] == ["a", "c"]  # b too high, d has no ACL
    rows, scores = r.score_rows(np.array([1, 0, 0], dtype=np.float32), guest)
    assert rows.tolist() == [0, 2] and scores.tolist() == [1.0, 0.0]
    assert len(r.search("q", 10)) == 4


def test_precomputed_vectors_skip_embedding_and_add_appends():
    emb = TableEmbedder(VECS)
    r = DenseRetriever(emb).index(chunks("ab"), vectors=np.array([[1, 0, 0], [3, 4, 0]], dtype=np.float32))
    assert emb.calls == []
    r.add(chunks("c"))
    assert emb.calls == [["c"]]
    assert [h.doc_id for h in r.search("q", 3)] == ["b", "a", "c"]


def test_blank_query_and_empty_index():
    emb = TableEmbedder(VECS)
    assert DenseRetriever(emb).index([]).search("q", 3) == []
    assert DenseRetriever(emb).index(chunks()).search("  ", 3) == []


def test_bad_input_raises_and_keeps_index():
    emb = TableEmbedder(VECS)
    r = DenseRetriever(emb).index(chunks("ab"))
    with pytest.raises(DataError, match="one vector per chunk"):
        r.index(chunks("cd"), vectors=np.zeros((1, 3)))
    with pytest.raises(DataError, match="dimension"):
        r.add(chunks("c"), vectors=np.zeros((1, 5)))
    with pytest.raises(ModelError, match="NaN"):
        r.add(chunks("c"), vectors=np.array([[np.nan, 0, 0]]))
    with pytest.raises(DataError, match="duplicate"):
        r.add(chunks("a"))
    with pytest.raises(ConfigError):
        r.search("q", -1)
    assert [h.doc_id for h in r.search("q", 5)] == ["b", "a"]
    wrong = DenseRetriever(TableEmbedder({"q": [1, 0]}))
    wrong.index(chunks("a"), vectors=np.ones((1, 3)))
    with pytest.raises(ModelError, match="dimension"):
        wrong.search("q", 1)
