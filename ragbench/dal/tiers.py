"""Three-tier source credibility, decided by the URL's host name only.

The source system matched its patterns as substrings of the whole lower-cased URL, so ``x.education.com``
counted as ``.edu`` and ``evil.com/arxiv.org`` as arXiv. Here a pattern matches the *host*: ``arxiv.org`` matches
``arxiv.org`` and any subdomain (``www.arxiv.org``, ``export.arxiv.org``); a pattern starting with a dot
(``.gov``) matches a host ending with it (``nasa.gov``, ``data.nasa.gov``).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Iterable
from urllib.parse import urlsplit

from ..config import DalConfig
from ..errors import ConfigError


class SourceTier(enum.IntEnum):
    """Tier number; :attr:`credibility` is the seed's score (1.0 / 0.75 / 0.40)."""

    TIER_1 = 1
    TIER_2 = 2
    TIER_3 = 3

    @property
    def credibility(self) -> float:
        return CREDIBILITY[self]

    @property
    def label(self) -> str:
        return ("academic / official", "editorial", "community")[self - 1]


CREDIBILITY: dict[SourceTier, float] = {SourceTier.TIER_1: 1.0, SourceTier.TIER_2: 0.75, SourceTier.TIER_3: 0.40}


def host_of(url: str) -> str:
    """Lower-cased host name of ``url`` without port, userinfo or a trailing dot; ``""`` when there is none.

    A URL without a scheme (``arxiv.org/abs/1``) is read as if it had one."""
    text = (url or "").strip()
    if "://" not in text and not text.startswith("//"):
        text = "//" + text
    try:
        host = urlsplit(text).hostname or ""
    except ValueError:
        return ""
    return host.rstrip(".").lower()


def _check_pattern(p: str) -> str:
    q = p.strip().lower()
    if not q or "/" in q or " " in q or q == ".":
        raise ConfigError(f"tier domain pattern {p!r} is not a host name or suffix. "
                          "Fix: use names like 'arxiv.org' or suffixes like '.gov'.")
    return q


def host_matches(host: str, pattern: str) -> bool:
    """``.gov`` matches hosts ending in ``.gov``; ``nature.com`` matches it and its subdomains."""
    if pattern.startswith("."):
        return host.endswith(pattern)
    return host == pattern or host.endswith("." + pattern)


@dataclass(frozen=True)
class TierPolicy:
    """The domain lists of tiers 1 and 2; everything else is tier 3."""

    tier1: tuple[str, ...] = DalConfig.tier1_domains
    tier2: tuple[str, ...] = DalConfig.tier2_domains

    def __post_init__(self) -> None:
        object.__setattr__(self, "tier1", tuple(_check_pattern(p) for p in self.tier1))
        object.__setattr__(self, "tier2", tuple(_check_pattern(p) for p in self.tier2))

    @classmethod
    def from_config(cls, cfg: DalConfig) -> "TierPolicy":
        return cls(tuple(cfg.tier1_domains), tuple(cfg.tier2_domains))

    def classify(self, url: str) -> SourceTier:
        """Tier of ``url`` from its host name (tier 1 is checked first)."""
        host = host_of(url)
        if not host:
            return SourceTier.TIER_3
        if any(host_matches(host, p) for p in self.tier1):
            return SourceTier.TIER_1
        if any(host_matches(host, p) for p in self.tier2):
            return SourceTier.TIER_2
        return SourceTier.TIER_3

    def tier1_sites(self) -> list[str]:
        """The tier-1 patterns as ``site:`` operands (``.gov`` → ``gov``)."""
        return [p.lstrip(".") for p in self.tier1]


DEFAULT_POLICY = TierPolicy()


def classify_tier(url: str, policy: TierPolicy | None = None) -> SourceTier:
    """Tier of ``url`` under ``policy`` (default: the seed's lists)."""
    return (policy or DEFAULT_POLICY).classify(url)


def tier_distribution(tiers: Iterable[SourceTier]) -> float:
    """Mean credibility of the sources' tiers (the seed's "weighted avg of source tiers"); 0 with no sources."""
    values = [t.credibility for t in tiers]
    return sum(values) / len(values) if values else 0.0
