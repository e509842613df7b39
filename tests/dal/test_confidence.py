from datetime import date

import numpy as np
import pytest

from ragbench.config import DalConfig
from ragbench.dal.confidence import ConfidenceBreakdown, compute_confidence, parse_date, recency_of
from ragbench.dal.consistency import ConsistencyMeter
from ragbench.dal.decompose import SubTopic
from ragbench.dal.fetch import FetchedPage
from ragbench.dal.research import Researcher, Source
from ragbench.dal.tiers import SourceTier
from ragbench.errors import DataError

from .helpers import TableEmbedder


def test_formula_matches_the_source_values():
    # seed-behaviour 2.1: compute_confidence(5, 0.9, 0.8, 0.95) = 0.74; the simulated passes 0.67/0.66/0.70/0.80
    assert compute_confidence(5, 0.9, 0.8, 0.95) == 0.74
    assert compute_confidence(5, 0.8, 0.65, 0.9) == 0.67
    assert compute_confidence(3, 0.9, 0.8, 0.9) == 0.66
    assert compute_confidence(2, 1.0, 0.95, 0.9) == 0.70
    assert compute_confidence(3, 1.1, 1.1, 0.9) == 0.8
    assert compute_confidence(25, 0, 0, 0) == 0.35   # source count capped at 10


def test_recency_decays_linearly_over_90_days():
    today = date(2025, 6, 1)
    assert recency_of(date(2025, 6, 1), today).value == 1.0
    assert recency_of(date(2025, 5, 23), today).value == pytest.approx(0.9)      # 9 days
    assert recency_of(date(2025, 3, 3), today).value == 0.0                      # 90 days
    assert recency_of(date(2024, 1, 1), today).value == 0.0
    assert recency_of(date(2025, 7, 1), today).value == 1.0                      # future date = today
    r = recency_of(None, today, timeless=True)
    assert (r.value, r.kind) == (1.0, "timeless")
    r = recency_of(None, today)
    assert (r.value, r.kind) == (0.5, "undated")
    assert recency_of(date(2025, 5, 17), today, recency_days=30).value == pytest.approx(0.5)
    with pytest.raises(DataError):
        recency_of(today, today, recency_days=0)


def test_parse_date_forms():
    assert parse_date("2025-05-01T09:00:00Z") == date(2025, 5, 1)
    assert parse_date("2025-05-01") == date(2025, 5, 1)
    assert parse_date("") is None and parse_date(None) is None
    with pytest.raises(DataError, match="ISO 8601"):
        parse_date("yesterday")


def test_seed_worked_example_comes_out_of_the_code():
    """Seed §4 step 3: 4 sources (2 tier 1, 1 tier 2, 1 tier 3), consistency 0.9, recency 0.85 → 0.69.

    Consistency is measured: each source states one fact whose vectors have pairwise cosine 0.9
    (v_i = √0.9·e0 + √0.1·e_i); recency from publication dates 9, 18, 9, 18 days before today."""
    facts = [f"GraphQL mobile fact {w} stated here." for w in ("alpha", "beta", "gamma", "delta")]
    table = {}
    for i, f in enumerate(facts):
        v = np.zeros(5)
        v[0], v[i + 1] = np.sqrt(0.9), np.sqrt(0.1)
        table[f] = v
    today = date(2025, 6, 1)
    tiers = [SourceTier.TIER_1, SourceTier.TIER_1, SourceTier.TIER_2, SourceTier.TIER_3]
    ages = [9, 18, 9, 18]
    topic = SubTopic("GraphQL mobile features", ("mobile",), ("graphql",))
    sources = []
    for i, (f, tier, age) in enumerate(zip(facts, tiers, ages)):
        page = FetchedPage(f"https://h{i}/", "t", f, date.fromordinal(today.toordinal() - age), f"hash{i}")
        sources.append(Source(f"https://h{i}/", tier, page, 1, facts={topic.title: [f]}))
    emb = TableEmbedder(table)
    researcher = Researcher(None, None, emb, DalConfig())
    bd, support = researcher.score(topic, sources, today, ConsistencyMeter(emb))
    assert len(support) == 4
    assert bd.consistency == pytest.approx(0.9, abs=1e-6)
    assert bd.tier_distribution == pytest.approx(0.7875)
    assert bd.recency == pytest.approx(0.85)
    assert bd.confidence == 0.69
    lines = bd.explain()
    assert lines[0] == "source_count: min(4/10, 1) × 0.35 = 0.40 × 0.35 = 0.1400"
    assert lines[1] == "consistency: 0.9000 × 0.30 = 0.2700"
    assert lines[2] == "tier_distribution: 0.7875 × 0.25 = 0.1969"
    assert lines[3] == "recency: 0.8500 × 0.10 = 0.0850"
    assert lines[4] == "confidence = 0.1400 + 0.2700 + 0.1969 + 0.0850 = 0.6919 → 0.69"
    assert any("recency = mean(9 d old → 0.900, 18 d old → 0.800" in n for n in bd.notes)
    assert any(n.startswith("tier_distribution = (1.00 + 1.00 + 0.75 + 0.40) / 4") for n in bd.notes)


def test_breakdown_dict_carries_terms():
    bd = ConfidenceBreakdown(4, 0.9, 0.79, 0.85)
    d = bd.to_dict()
    assert d["terms"] == {"source_count": 0.14, "consistency": 0.27, "tier_distribution": 0.1975, "recency": 0.085}
    assert d["confidence"] == 0.69 and d["raw"] == pytest.approx(0.6925)
