import pytest

from ragbench.config import DalConfig, load_config
from ragbench.dal.tiers import SourceTier, TierPolicy, classify_tier, host_of, tier_distribution
from ragbench.errors import ConfigError


@pytest.mark.parametrize("url,tier", [
    ("https://arxiv.org/abs/2401.12345", 1),
    ("https://export.arxiv.org/abs/1", 1),
    ("https://www.nature.com/articles/x", 1),
    ("http://data.nasa.gov/report", 1),
    ("https://cs.stanford.edu/~x", 1),
    ("https://pubmed.ncbi.nlm.nih.gov/123/", 1),
    ("arxiv.org/abs/1", 1),
    ("https://www.reuters.com/tech/a", 2),
    ("https://techcrunch.com/2024/graphql", 2),
    ("https://myblog.com/post", 3),
    ("https://x.education.com/page", 3),          # the source's substring match said tier 1
    ("https://evil.com/arxiv.org/abs/1", 3),       # path, not host
    ("https://arxiv.org.evil.com/abs/1", 3),       # suffix of another host
    ("https://notnature.com/a", 3),
    ("https://evil.com/?u=reuters.com", 3),
    ("https://user:pw@ARXIV.ORG:8443/x", 1),
    ("", 3),
    ("not a url at all", 3),
])
def test_classify_by_host(url, tier):
    assert classify_tier(url) == SourceTier(tier)


def test_credibility_scores_are_the_seeds():
    assert [t.credibility for t in SourceTier] == [1.0, 0.75, 0.40]


def test_host_of_strips_port_userinfo_and_trailing_dot():
    assert host_of("https://u:p@WWW.Nature.com.:443/x?y") == "www.nature.com"


def test_lists_are_configurable():
    cfg = load_config(overrides={"dal.tier1_domains": ["example.org"], "dal.tier2_domains": [".io"]})
    policy = TierPolicy.from_config(cfg.dal)
    assert policy.classify("https://docs.example.org/a") == SourceTier.TIER_1
    assert policy.classify("https://arxiv.org/abs/1") == SourceTier.TIER_3
    assert policy.classify("https://devforum.io/t/1") == SourceTier.TIER_2
    assert TierPolicy.from_config(DalConfig()).classify("https://arxiv.org") == SourceTier.TIER_1


@pytest.mark.parametrize("bad", ["", "arxiv.org/abs", "a b", "."])
def test_bad_pattern_is_a_config_error(bad):
    with pytest.raises(ConfigError, match="not a host name"):
        TierPolicy(tier1=(bad,))


def test_tier_distribution_is_the_mean_credibility():
    tiers = [SourceTier.TIER_1, SourceTier.TIER_1, SourceTier.TIER_2, SourceTier.TIER_3]
    assert tier_distribution(tiers) == pytest.approx((2 * 1.0 + 0.75 + 0.4) / 4)   # 0.7875, the seed's "0.79"
    assert tier_distribution([]) == 0.0
