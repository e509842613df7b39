import math

import pytest

from ragbench.dal.consistency import (ConsistencyMeter, SourceFacts, contradiction_reason, is_negated, key_facts,
                                      numbers_in)

from .helpers import TableEmbedder

A1 = "Cache hits rose 40 percent in mobile tests."
A2 = "Teams also rewrote their build scripts."
B1 = "Teams saw faster mobile screens overall."
C1 = "Cache hits rose 10 percent in mobile tests."
TABLE = {A1: (1, 0, 0), B1: (0.8, 0.6, 0), C1: (0.9, -0.2, math.sqrt(0.15)), A2: (0, 1 / 3, math.sqrt(8 / 9))}


def test_key_facts_pick_statements_with_subject_and_terms_in_order():
    text = ("GraphQL features overview\n"                       # heading: no closing punctuation
            "GraphQL has many features for mobile clients. "
            "REST has features too. "                           # no subject word
            "GraphQL fundamentals and features are covered here. "
            "Short GraphQL features. "                          # 3 words only... 3 tokens + 'short' = 4 → kept
            "Nothing relevant is said in this sentence.")
    facts = key_facts(text, ("fundamentals", "features"), k=2, subject=("graphql",), min_share=0.5)
    # best two by share of all words {graphql, fundamentals, features}: the 3/3 sentence, then the first 2/3 one
    assert facts == ["GraphQL has many features for mobile clients.",
                     "GraphQL fundamentals and features are covered here."]
    assert key_facts(text, ("fundamentals", "features"), 3, ("graphql",), min_share=1.0) == [
        "GraphQL fundamentals and features are covered here."]
    assert key_facts(text, (), 3) == []


def test_numbers_and_negation():
    assert numbers_in("up 40% from 1,200 to 3.5") == frozenset({40.0, 1200.0, 3.5})
    assert is_negated("It doesn't scale.") and is_negated("It does not scale.") and not is_negated("It scales.")


def test_contradiction_rules():
    assert contradiction_reason(A1, C1) == "conflicting numbers"
    # subject words {rest, caching, works, cdns} vs {rest, caching, does, work, cdns}: Jaccard 3/6 = 0.5
    x, y = "REST caching works with CDNs.", "REST caching does not work with CDNs."
    assert contradiction_reason(x, y, subject_overlap=0.5) == "negation"
    assert contradiction_reason(x, y, subject_overlap=0.51) is None
    assert contradiction_reason("REST caching works with CDNs.", "REST caching never works with CDNs.") == "negation"
    assert contradiction_reason(A1, A1) is None
    assert contradiction_reason(A1, "Cache hits rose 40 percent in mobile tests in 2024.") is None  # adds, no conflict
    assert contradiction_reason(A1, "Bandwidth fell 10 percent for desktop users.") is None        # other subject


def test_consistency_measured_and_lowered_by_a_contradiction():
    meter = ConsistencyMeter(TableEmbedder(TABLE))
    a, b, c = SourceFacts("a", "a.org", (A1,)), SourceFacts("b", "b.org", (B1,)), SourceFacts("c", "c.org", (C1,))
    assert meter.agreement(a, b) == pytest.approx(0.8)
    assert meter.agreement(a, c) == pytest.approx(0.9)
    assert meter.agreement(b, c) == pytest.approx(0.6)
    agreeing = meter.measure([a, b])
    assert agreeing.value == pytest.approx(0.8) and agreeing.contradictions == ()
    result = meter.measure([a, b, c])
    assert result.value == pytest.approx((0.8 + 0.0 + 0.6) / 3)      # a–c contradict → 0 instead of 0.9
    assert result.mean_similarity == pytest.approx((0.8 + 0.9 + 0.6) / 3)
    assert [(x.source_a, x.source_b, x.reason) for x in result.contradictions] == [("a.org", "c.org",
                                                                                     "conflicting numbers")]
    assert "1 contradicting pair(s)" in result.notes[0]


def test_agreement_is_symmetric_best_match():
    meter = ConsistencyMeter(TableEmbedder(TABLE))
    a2 = SourceFacts("a", "a.org", (A1, A2))
    b = SourceFacts("b", "b.org", (B1,))
    # a→b: mean(0.8, 0.2) = 0.5; b→a: 0.8 → (0.5 + 0.8) / 2
    assert meter.agreement(a2, b) == pytest.approx(0.65)
    assert meter.agreement(b, a2) == pytest.approx(0.65)


def test_one_and_no_source():
    meter = ConsistencyMeter(TableEmbedder(TABLE), single_source=0.5)
    assert meter.measure([SourceFacts("a", "a", (A1,))]).value == 0.5
    assert meter.measure([]).value == 0.0


def test_fact_vectors_are_cached():
    emb = TableEmbedder(TABLE)
    meter = ConsistencyMeter(emb)
    a, b = SourceFacts("a", "a", (A1,)), SourceFacts("b", "b", (B1,))
    meter.measure([a, b])
    first = emb.calls
    meter.measure([a, b])
    assert first == 2 and emb.calls == 2      # one call per source the first time, none after
