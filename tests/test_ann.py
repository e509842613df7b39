"""faiss ANN retriever: agrees with exact search, ACL filtering never returns a forbidden chunk, exact fallback,
sidecar persistence keyed by the vectors, wiring through the config and the store."""
from __future__ import annotations

import numpy as np
import pytest

from ragbench.config import RagbenchConfig, with_overrides
from ragbench.errors import ConfigError
from ragbench.retrieval.dense import DenseRetriever, normalize_rows
from ragbench.retrieval.embedding import HashingEmbedder
from ragbench.schema import Acl, Chunk, Document, Principal

faiss = pytest.importorskip("faiss", reason="faiss-cpu is in the ann / bench extras")

from ragbench.retrieval.ann import AnnRetriever, attach_sidecar, sidecar_path  # noqa: E402


def data(n: int = 2000, dim: int = 32, seed: int = 0) -> tuple[list[Chunk], np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((20, dim))
    x = normalize_rows(centres[rng.integers(0, 20, n)] + 0.5 * rng.standard_normal((n, dim)))
    q = normalize_rows(centres[rng.integers(0, 20, 30)] + 0.5 * rng.standard_normal((30, dim)))
    return [Chunk(f"c{i}", f"d{i}", 0, 0, 1, "x") for i in range(n)], x, q


EMB = HashingEmbedder(hashing_dim=32)


@pytest.mark.parametrize("kind", ["hnsw", "ivf"])
def test_ann_finds_the_exact_neighbours(kind):
    chunks, x, q = data()
    exact = DenseRetriever(EMB).index(chunks, vectors=x)
    ann = AnnRetriever(EMB, kind=kind, ef_search=128, nprobe=32).index(chunks, vectors=x)
    recall = []
    for v in q:
        truth = [h.chunk_id for h in exact.search_vector(v, 10)]
        got = ann.search_vector(v, 10)
        assert [h.rank for h in got] == list(range(10))
        # scores are exact cosines of the returned rows
        assert [h.score for h in got] == pytest.approx([float(x[int(h.chunk_id[1:])] @ v) for h in got], abs=1e-5)
        recall.append(len(set(truth) & {h.chunk_id for h in got}) / 10)
    assert np.mean(recall) >= 0.95


def acl_setup(n: int = 2000):
    chunks, x, q = data(n)
    staff, board = Acl.make(["staff"], [], "Public"), Acl.make(["board"], [], "Restricted")
    # every third document is the board's; the staff cannot read it
    acls = {c.doc_id: (board if i % 3 == 0 else staff) for i, c in enumerate(chunks)}
    return chunks, x, q, acls, Principal.make("s", ["staff"], [], "Internal")


@pytest.mark.parametrize("kind", ["hnsw", "ivf"])
def test_acl_filter_never_returns_a_forbidden_chunk(kind):
    chunks, x, q, acls, staff = acl_setup()
    ann = AnnRetriever(EMB, kind=kind, ef_search=128, nprobe=32).index(chunks, acls, vectors=x)
    exact = DenseRetriever(EMB).index(chunks, acls, vectors=x)
    for v in q:
        hits = ann.search_vector(v, 10, principal=staff)
        assert not ann.last_exact and len(hits) == 10
        assert all(int(h.chunk_id[1:]) % 3 != 0 for h in hits)
        truth = {h.chunk_id for h in exact.search_vector(v, 10, principal=staff)}
        assert len(truth & {h.chunk_id for h in hits}) >= 8
    # unrestricted callers see the board's chunks too
    assert any(int(h.chunk_id[1:]) % 3 == 0 for v in q for h in ann.search_vector(v, 10))


def test_selective_acl_falls_back_to_exact_search_over_readable_rows():
    chunks, x, q = data()
    staff = Acl.make(["staff"], [], "Public")
    acls = {c.doc_id: staff for c in chunks[:40]}  # 2 % readable; the rest has no ACL
    p = Principal.make("s", ["staff"], [], "Internal")
    ann = AnnRetriever(EMB, exact_below=0.05).index(chunks, acls, vectors=x)
    exact = DenseRetriever(EMB).index(chunks, acls, vectors=x)
    for v in q[:5]:
        got = ann.search_vector(v, 10, principal=p)
        assert ann.last_exact
        assert [h.chunk_id for h in got] == [h.chunk_id for h in exact.search_vector(v, 10, principal=p)]
    nobody = Principal.make("n", ["none"], [], "Public")
    assert ann.search_vector(q[0], 10, principal=nobody) == []


def test_incremental_add_is_searchable():
    chunks, x, q = data(600)
    ann = AnnRetriever(EMB).index(chunks[:300], vectors=x[:300])
    ann.search_vector(q[0], 5)  # builds the index
    ann.add(chunks[300:], vectors=x[300:])
    assert ann.faiss_index.ntotal == 600
    target = x[450]
    assert ann.search_vector(target, 1)[0].chunk_id == "c450"


def test_sidecar_is_reused_when_fresh_and_rebuilt_when_stale(tmp_path):
    chunks, x, _ = data(500)
    store = tmp_path / "s.sqlite"
    a = AnnRetriever(EMB).index(chunks, vectors=x)
    path, loaded = attach_sidecar(a, store)
    assert not loaded and path == sidecar_path(store, a.signature()) and path.exists()
    b = AnnRetriever(EMB).index(chunks, vectors=x)
    assert attach_sidecar(b, store) == (path, True) and b.faiss_index.ntotal == 500
    # other vectors → another signature: the old sidecar is replaced
    x2 = x.copy()
    x2[0] = x[1]
    c = AnnRetriever(EMB).index(chunks, vectors=x2)
    path2, loaded2 = attach_sidecar(c, store)
    assert not loaded2 and path2 != path and path2.exists() and not path.exists()
    # other index parameters → another signature too
    assert AnnRetriever(EMB, m=16).index(chunks, vectors=x2).signature() != c.signature()


def test_config_and_store_wiring(tmp_path):
    from ragbench.retrieval.factory import make_chunker
    from ragbench.retrieval.retriever import make_retriever, retriever_from_store
    from ragbench.store import KnowledgeStore

    cfg = with_overrides(RagbenchConfig(), {"embedding.model": "hashing", "embedding.cache": False,
                                            "ann.kind": "ivf", "ann.nprobe": 4, "fusion.dense_part": "ann"})
    r = make_retriever("ann", cfg)
    assert isinstance(r, AnnRetriever) and (r.kind, r.nprobe) == ("ivf", 4)
    assert isinstance(make_retriever("hybrid", cfg).dense, AnnRetriever)
    docs = [Document(f"d{i}", f"text number {i} about topic {i % 7}", title=f"T{i}") for i in range(50)]
    with KnowledgeStore.open(tmp_path / "k.sqlite") as store:
        store.ingest(docs, make_chunker(cfg.chunking), make_retriever("ann", cfg).embedder)
        r1 = retriever_from_store(store, "ann", cfg)
        assert len(list(tmp_path.glob("k.sqlite.ann-*.faiss"))) == 1
        assert r1.search("topic 3", 3)[0].doc_id in {f"d{i}" for i in range(3, 50, 7)}
    with pytest.raises(ConfigError, match="ann kind"):
        AnnRetriever(EMB, kind="lsh").index([])
