"""RRF, weighted RRF, lexical re-rank and HybridRetriever with exact fusion values."""
from __future__ import annotations

import pytest

from ragbench.errors import ConfigError
from ragbench.retrieval.base import Retriever
from ragbench.retrieval.fusion import HybridRetriever, lexical_rerank, rrf, weighted_rrf
from ragbench.schema import Acl, Hit, Principal


def test_rrf_exact_values_and_order():
    fused = rrf([["a", "b", "c"], ["b", "d"]], k=60)
    assert list(fused) == ["b", "a", "d", "c"]
    assert fused == pytest.approx({"b": 1 / 62 + 1 / 61, "a": 1 / 61, "d": 1 / 62, "c": 1 / 63}, abs=1e-15)


def test_rrf_k_zero_ties_and_repeats():
    assert rrf([["x", "y"]], k=0) == {"x": 1.0, "y": 0.5}
    assert list(rrf([["a"], ["b"]])) == ["a", "b"]  # equal scores keep first appearance
    assert list(rrf([["b"], ["a"]])) == ["b", "a"]
    assert rrf([["a", "a", "b"]]) == pytest.approx({"a": 1 / 61, "b": 1 / 63})  # a repeat counts once
    assert rrf([]) == {} and rrf([[], []]) == {}


def test_weighted_rrf_exact_values():
    fused = weighted_rrf([["a", "b"], ["b", "a"]], [2.0, 0.5], k=10)
    assert fused == pytest.approx({"a": 2 / 11 + 0.5 / 12, "b": 2 / 12 + 0.5 / 11}, abs=1e-15)
    assert list(fused) == ["a", "b"]
    with pytest.raises(ConfigError, match="one weight per ranking"):
        weighted_rrf([["a"]], [1.0, 1.0])
    with pytest.raises(ConfigError, match="k must be"):
        rrf([["a"]], k=-1)


def test_lexical_rerank_exact_values():
    fused = {"x": 1 / 62, "y": 1 / 61}
    texts = {"x": "Paid leave is 25 days a year.", "y": "Badges are blue."}
    # Tok(q) without stop words = {many, paid, leave, days}; x shares paid, leave, days → 3/4
    out = lexical_rerank("How many paid leave days?", fused, texts, weight=0.1)
    assert list(out) == ["x", "y"]
    assert out == pytest.approx({"x": 1 / 62 + 0.075, "y": 1 / 61}, abs=1e-15)
    assert lexical_rerank("the and of", fused, texts) == pytest.approx(fused)  # no query tokens → + 0


class StaticRetriever(Retriever):
    """Returns a fixed ranking, dropping what the principal may not read; records every call."""

    def __init__(self, ranking: list[str], acls: dict[str, Acl] | None = None) -> None:
        self.ranking, self.acls, self.calls = ranking, acls or {}, []

    def index(self, chunks, acls=None, titles=None, show_progress=False):
        self.indexed = [c.chunk_id for c in chunks]
        return self

    def search(self, query, k=10, principal=None):
        self.calls.append((query, k, principal))
        ok = [c for c in self.ranking if principal is None or self.acls.get(c, Acl()).allows(principal)]
        return [Hit(c, "doc-" + c, 1.0 / (i + 1), i, text=f"text of {c}") for i, c in enumerate(ok[:k])]


def test_hybrid_fuses_both_rankings_with_principal():
    acls = {"s": Acl.make([], [], "Restricted")}
    kw = StaticRetriever(["a", "s", "b"], acls)
    dn = StaticRetriever(["s", "c", "a"], acls)
    h = HybridRetriever(kw, dn, rrf_k=60, candidate_k=24)
    guest = Principal.make("guest", max_classification="Internal")
    hits = h.search("q", k=3, principal=guest)
    assert kw.calls == [("q", 24, guest)] and dn.calls == [("q", 24, guest)]
    # keyword [a, b], dense [c, a] (s removed by both parts): a = 1/61 + 1/62, b = 1/62, c = 1/61
    assert [x.chunk_id for x in hits] == ["a", "c", "b"]
    assert [x.score for x in hits] == pytest.approx([1 / 61 + 1 / 62, 1 / 61, 1 / 62], abs=1e-15)
    assert [x.rank for x in hits] == [0, 1, 2] and hits[0].doc_id == "doc-a"
    assert h.last_candidates == 3
    assert "s" in [x.chunk_id for x in h.search("q", 10)]  # unrestricted caller sees it
    h.search("q", k=50)
    assert kw.calls[-1][1] == 50  # candidate_k = max(candidate_k, k)


def test_hybrid_rerank_and_weights():
    kw = StaticRetriever(["a", "b"])
    dn = StaticRetriever(["b", "a"])
    hits = HybridRetriever(kw, dn, keyword_weight=1.0, dense_weight=0.0).search("q", 2)
    assert [x.chunk_id for x in hits] == ["a", "b"]
    assert [x.score for x in hits] == pytest.approx([1 / 61, 1 / 62], abs=1e-15)
    # texts are "text of a"/"text of b": Tok(q)={b} overlaps only b → b gets + 0.5
    hits = HybridRetriever(kw, dn, rerank=True, rerank_weight=0.5).search("b", 2)
    assert [x.chunk_id for x in hits] == ["b", "a"]
    assert [x.score for x in hits] == pytest.approx([1 / 61 + 1 / 62 + 0.5, 1 / 61 + 1 / 62], abs=1e-15)


def test_hybrid_blank_query_and_bad_params():
    kw, dn = StaticRetriever(["a"]), StaticRetriever(["a"])
    assert HybridRetriever(kw, dn).search("  ", 3) == [] and kw.calls == []
    with pytest.raises(ConfigError, match="candidate_k"):
        HybridRetriever(kw, dn, candidate_k=0).search("q", 3)
    with pytest.raises(ConfigError, match="rrf_k"):
        HybridRetriever(kw, dn, rrf_k=-5).index([])
    assert not hasattr(kw, "indexed") and not hasattr(dn, "indexed")  # nothing indexed on bad parameters
    with pytest.raises(ConfigError, match="k must be"):
        HybridRetriever(kw, dn).search("q", 0)


def test_keyword_coverage_and_adaptive_weight():
    from ragbench.retrieval.fusion import HybridRetriever, keyword_coverage
    from ragbench.schema import Hit

    # Content words of the query: {annual, leave, days, staff}; the hit holds 2 of them. "do", "many" and "get"
    # are not stop words, so the longer question has 7 content words, 2 of them covered.
    hit = Hit("c1", "d1", 1.0, 0, "Staff receive leave as set out below.")
    assert keyword_coverage("annual leave days for staff", [hit]) == 0.5
    assert keyword_coverage("How many annual leave days do staff get?", [hit]) == 2 / 7
    assert keyword_coverage("the of and", [hit]) == 0.0
    assert keyword_coverage("annual leave", []) == 0.0

    class Fixed:
        name = "fixed"

        def __init__(self, hits):
            self.hits = hits

        def index(self, *a, **k):
            return self

        def search(self, query, k=10, principal=None):
            return self.hits[:k]

    kw = Fixed([Hit("a", "da", 5.0, 0, "leave policy"), Hit("b", "db", 4.0, 1, "other text")])
    dn = Fixed([Hit("b", "db", 0.9, 0, "other text"), Hit("a", "da", 0.8, 1, "leave policy")])
    # Plain RRF (k=0): a = 1/1 + 1/2 = b → tie kept in first-seen order (a first).
    plain = HybridRetriever(kw, dn, rrf_k=0).search("annual leave", 2)
    assert [h.chunk_id for h in plain] == ["a", "b"] and plain[0].score == 1.5
    # Coverage of "annual leave" by "leave policy" = 1/2; adaptive=1 halves the keyword weight:
    # a = 0.5/1 + 1/2 = 1.0, b = 0.5/2 + 1/1 = 1.25 → the dense order wins.
    adapt = HybridRetriever(kw, dn, rrf_k=0, adaptive=1.0).search("annual leave", 2)
    assert [(h.chunk_id, h.score) for h in adapt] == [("b", 1.25), ("a", 1.0)]


def test_convex_fusion_min_max_normalises_each_list():
    from ragbench.retrieval.fusion import convex

    kw = [("a", 10.0), ("b", 6.0), ("c", 2.0)]  # → 1, 0.5, 0
    dn = [("c", 0.9), ("d", 0.5), ("a", 0.4)]  # → 1, 0.2, 0
    fused = convex([kw, dn], [1.0, 2.0])
    assert list(fused) == ["c", "a", "b", "d"]
    assert fused == pytest.approx({"c": 0 + 2.0, "a": 1.0 + 0.0, "b": 0.5, "d": 2 * 0.2})
    assert convex([[("x", 3.0), ("y", 3.0)], []], [0.5, 1.0]) == {"x": 0.5, "y": 0.5}  # equal scores: full weight
    with pytest.raises(ConfigError, match="one weight per list"):
        convex([kw], [1.0, 1.0])


def test_hybrid_convex_method_uses_scores_not_ranks():
    from ragbench.retrieval.fusion import HybridRetriever

    class Fixed(Retriever):
        def __init__(self, hits):
            self.hits = hits

        def index(self, chunks, acls=None, titles=None, show_progress=False):
            return self

        def search(self, query, k=10, principal=None):
            return [Hit(c, c, s, i) for i, (c, s) in enumerate(self.hits[:k])]

    kw = Fixed([("a", 10.0), ("b", 9.9), ("x", 5.0), ("c", 1.0)])
    dn = Fixed([("c", 0.9), ("b", 0.89), ("y", 0.5), ("a", 0.1)])
    rrf_order = [h.chunk_id for h in HybridRetriever(kw, dn).search("q", 5)]
    convex_hits = HybridRetriever(kw, dn, method="convex").search("q", 5)
    # RRF k = 60: b 2/62; a and c 1/61 + 1/64 (a first: keyword list first on ties); x and y 1/63
    assert rrf_order == ["b", "a", "c", "x", "y"]
    # convex: b 0.98889 + 0.9875; a 1 + 0; c 0 + 1; y 0.5; x 4/9 — y's score is nearer its list's best
    assert [h.chunk_id for h in convex_hits] == ["b", "a", "c", "y", "x"]
    assert [h.score for h in convex_hits] == pytest.approx([8.9 / 9 + 0.79 / 0.8, 1.0, 1.0, 0.5, 4 / 9])
    with pytest.raises(ConfigError, match="fusion method"):
        HybridRetriever(kw, dn, method="max").search("q", 3)
