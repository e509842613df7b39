"""The seed's confidence formula, with every term kept so a report can show how a number came about.

``confidence = round(min(n / 10, 1) × 0.35 + consistency × 0.30 + tier_distribution × 0.25 + recency × 0.10, 2)``
(Python ``round``, as in the source). Recency of one source decays linearly from 1.0 on its publication day to 0.0
after ``recency_days`` (90); a *timeless* source (an undated tier-1 reference such as a standard or an official
specification, "verified timeless" in the seed) scores ``timeless_recency``; any other undated source scores
``undated_recency``. A topic's recency is the mean over its sources.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Iterable, Sequence

from ..errors import DataError

W_COUNT, W_CONSISTENCY, W_TIER, W_RECENCY = 0.35, 0.30, 0.25, 0.10
SOURCE_CAP = 10


def compute_confidence(source_count: float, consistency: float, tier_distribution: float, recency: float) -> float:
    """The seed's formula, rounded to 2 decimals (inputs are not clamped, as in the source)."""
    return round(min(source_count / SOURCE_CAP, 1.0) * W_COUNT + consistency * W_CONSISTENCY
                 + tier_distribution * W_TIER + recency * W_RECENCY, 2)


def parse_date(value: str | date | None) -> date | None:
    """An ISO-8601 date or date-time (``Z`` allowed) → :class:`date`; ``None``/blank → ``None``."""
    if value is None or isinstance(value, date):
        return value.date() if isinstance(value, datetime) else value
    text = str(value).strip()
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).date()
    except ValueError:
        try:
            return date.fromisoformat(text[:10])
        except ValueError:
            raise DataError(f"published date {value!r} is not ISO 8601. Fix: use YYYY-MM-DD.") from None


@dataclass(frozen=True)
class Recency:
    """One source's freshness: ``kind`` is ``dated``, ``timeless`` or ``undated``."""

    value: float
    kind: str
    age_days: int | None = None

    def describe(self) -> str:
        if self.kind == "dated":
            return f"{self.age_days} d old → {self.value:.3f}"
        return f"{self.kind} → {self.value:.3f}"


def recency_of(published: date | None, as_of: date, timeless: bool = False, recency_days: float = 90.0,
               timeless_recency: float = 1.0, undated_recency: float = 0.5) -> Recency:
    """Linear decay over ``recency_days``; a future date counts as today."""
    if recency_days <= 0:
        raise DataError(f"recency_days must be positive, found {recency_days}. Fix: use e.g. 90.")
    if published is None:
        return Recency(timeless_recency, "timeless") if timeless else Recency(undated_recency, "undated")
    age = max(0, (as_of - published).days)
    return Recency(max(0.0, 1.0 - age / recency_days), "dated", age)


@dataclass(frozen=True)
class ConfidenceBreakdown:
    """The four inputs, their weighted terms and the rounded result, plus notes on how inputs were measured."""

    source_count: int
    consistency: float
    tier_distribution: float
    recency: float
    notes: tuple[str, ...] = field(default=())

    @property
    def count_term(self) -> float:
        return min(self.source_count / SOURCE_CAP, 1.0) * W_COUNT

    @property
    def consistency_term(self) -> float:
        return self.consistency * W_CONSISTENCY

    @property
    def tier_term(self) -> float:
        return self.tier_distribution * W_TIER

    @property
    def recency_term(self) -> float:
        return self.recency * W_RECENCY

    @property
    def raw(self) -> float:
        return self.count_term + self.consistency_term + self.tier_term + self.recency_term

    @property
    def confidence(self) -> float:
        return compute_confidence(self.source_count, self.consistency, self.tier_distribution, self.recency)

    def explain(self) -> list[str]:
        """Step-by-step lines: the four terms, their sum and the rounding, then the measurement notes."""
        n = self.source_count
        lines = [
            f"source_count: min({n}/10, 1) × 0.35 = {min(n / SOURCE_CAP, 1.0):.2f} × 0.35 = {self.count_term:.4f}",
            f"consistency: {self.consistency:.4f} × 0.30 = {self.consistency_term:.4f}",
            f"tier_distribution: {self.tier_distribution:.4f} × 0.25 = {self.tier_term:.4f}",
            f"recency: {self.recency:.4f} × 0.10 = {self.recency_term:.4f}",
            f"confidence = {self.count_term:.4f} + {self.consistency_term:.4f} + {self.tier_term:.4f} + "
            f"{self.recency_term:.4f} = {self.raw:.4f} → {self.confidence:.2f}",
        ]
        return lines + [f"  {note}" for note in self.notes]

    def to_dict(self) -> dict:
        return {"source_count": self.source_count, "consistency": round(self.consistency, 4),
                "tier_distribution": round(self.tier_distribution, 4), "recency": round(self.recency, 4),
                "terms": {"source_count": round(self.count_term, 4), "consistency": round(self.consistency_term, 4),
                          "tier_distribution": round(self.tier_term, 4), "recency": round(self.recency_term, 4)},
                "raw": round(self.raw, 6), "confidence": self.confidence, "explanation": self.explain()}


def mean(values: Iterable[float]) -> float:
    vals: Sequence[float] = list(values)
    return sum(vals) / len(vals) if vals else 0.0
