"""Dynamic Context Nodes (DCNs): continuity anchors that absorb messages, merge, and lose weight with age.

Restates the source's ``DcnNode`` and the DCN half of ``DcsContextAssembler`` (seed-behaviour 1.3–1.4):

* recency weight ``exp(−age_hours / decay_hours)``. ``decay_hours`` is an **e-folding time**, not a half-life
  (the source's comment says "24h half-life"; at 24 h the weight is 1/e ≈ 0.368, not 0.5). ``decay_hours=inf``
  switches decay off. A last reference in the future counts as age 0.
* ``find_or_create(topics)``: best node by Jaccard(topics) × recency, strictly greater wins (first on ties),
  accepted when ≥ ``match_threshold``; a match is touched, its topics are not updated; otherwise a new node.
* ``merge_similar()``: one pass over node pairs in insertion order; plain Jaccard of topics ≥ ``merge_threshold``
  → the lower id absorbs the other (its grown topic set is used for later pairs in the same pass).

Time comes from an injectable ``clock`` (a callable returning an aware UTC datetime) so tests are exact.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable, Hashable, Iterator, Sequence

from ..errors import ConfigError, DataError
from ..logs import log_decision
from .key import jaccard

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def as_utc(ts: datetime, what: str = "timestamp") -> datetime:
    """Aware UTC datetime; a naive one is taken to be UTC already (documented handling, not an error)."""
    if not isinstance(ts, datetime):
        raise DataError(f"{what}: expected a datetime, found {type(ts).__name__}.")
    return ts.replace(tzinfo=timezone.utc) if ts.tzinfo is None else ts.astimezone(timezone.utc)


def recency(last: datetime, now: datetime, decay_hours: float) -> float:
    """``exp(−max(0, now − last) [h] / decay_hours)``."""
    if math.isinf(decay_hours):
        return 1.0
    age_h = max(0.0, (now - last).total_seconds() / 3600.0)
    return math.exp(-age_h / decay_hours)


@dataclass
class DcnNode:
    """One continuity node: topic identifiers (intents ∪ domains), timestamps and linked message ids."""

    dcn_id: int
    topics: list[Hashable]
    created_at: datetime
    last_referenced_at: datetime
    linked_message_ids: list[str] = field(default_factory=list)
    # Membership set beside the ordered list, so linking stays O(1) in a long conversation.
    _linked: set[str] = field(default_factory=set, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._linked = set(self.linked_message_ids)

    def recency_weight(self, now: datetime, decay_hours: float = 24.0) -> float:
        return recency(self.last_referenced_at, now, decay_hours)

    def touch(self, now: datetime) -> None:
        self.last_referenced_at = now
        log_decision("DCN", f"Touched DCN {self.dcn_id}", dcn=self.dcn_id)

    def link(self, message_id: str) -> None:
        if len(self._linked) != len(self.linked_message_ids):  # the list was edited directly
            self._linked = set(self.linked_message_ids)
        if message_id not in self._linked:
            self._linked.add(message_id)
            self.linked_message_ids.append(message_id)

    def absorb(self, other: "DcnNode") -> None:
        """Ordered topic union (own first), other's messages appended, created = min, last referenced = max."""
        self.topics = list(dict.fromkeys([*self.topics, *other.topics]))
        for m in other.linked_message_ids:
            self.link(m)
        self.created_at = min(self.created_at, other.created_at)
        self.last_referenced_at = max(self.last_referenced_at, other.last_referenced_at)


class DcnStore:
    """The DCNs of one conversation, in insertion order, with the source's ids counting from 1."""

    def __init__(self, clock: Clock = utc_now, decay_hours: float = 24.0, match_threshold: float = 0.1,
                 merge_threshold: float = 0.75) -> None:
        if not decay_hours > 0:
            raise ConfigError(f"dcs.decay_hours: expected a positive number of hours, found {decay_hours!r}.")
        self.clock = clock
        self.decay_hours = decay_hours
        self.match_threshold = match_threshold
        self.merge_threshold = merge_threshold
        self.nodes: dict[int, DcnNode] = {}
        self.next_id = 1

    def now(self) -> datetime:
        return as_utc(self.clock(), "clock()")

    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self) -> Iterator[DcnNode]:
        return iter(list(self.nodes.values()))

    def __contains__(self, dcn_id: object) -> bool:
        return dcn_id in self.nodes

    def get(self, dcn_id: int) -> DcnNode | None:
        return self.nodes.get(dcn_id)

    def best_match(self, topics: Sequence[Hashable]) -> tuple[DcnNode | None, float]:
        """The node a message with ``topics`` would join, and its score; no side effects."""
        now = self.now()
        best: DcnNode | None = None
        best_score = 0.0
        for node in self.nodes.values():
            score = jaccard(node.topics, topics) * node.recency_weight(now, self.decay_hours)
            if score > best_score and score >= self.match_threshold:
                best, best_score = node, score
        return best, best_score

    def find_or_create(self, topics: Sequence[Hashable]) -> DcnNode:
        """Touch and return the best match, or create a node with these topics."""
        topics = list(dict.fromkeys(topics))
        node, score = self.best_match(topics)
        if node is not None:
            node.touch(self.now())
            log_decision("DCN", f"Matched DCN {node.dcn_id} (score={score:.3f})", dcn=node.dcn_id, score=score)
            return node
        return self.create(topics)

    def create(self, topics: Sequence[Hashable]) -> DcnNode:
        now = self.now()
        node = DcnNode(self.next_id, list(dict.fromkeys(topics)), now, now)
        self.nodes[node.dcn_id] = node
        self.next_id += 1
        log_decision("DCN", f"Created DCN {node.dcn_id} topics={node.topics}", dcn=node.dcn_id)
        return node

    def add(self, node: DcnNode) -> None:
        """Insert a node as it is (used when reloading a saved conversation)."""
        self.nodes[node.dcn_id] = node
        self.next_id = max(self.next_id, node.dcn_id + 1)

    def merge_similar(self) -> dict[int, int]:
        """One merge pass; returns ``{absorbed_id: final_keeper_id}`` (chains resolved)."""
        snapshot = list(self.nodes.values())
        merged: dict[int, int] = {}
        for i, a in enumerate(snapshot):
            for b in snapshot[i + 1:]:
                if a.dcn_id in merged or b.dcn_id in merged:
                    continue
                sim = jaccard(a.topics, b.topics)
                if sim < self.merge_threshold:
                    continue
                keeper, absorbed = (a, b) if a.dcn_id < b.dcn_id else (b, a)
                keeper.absorb(absorbed)
                merged[absorbed.dcn_id] = keeper.dcn_id
                log_decision("Merge", f"Merged DCN {absorbed.dcn_id} into {keeper.dcn_id} (sim={sim:.3f})",
                             keeper=keeper.dcn_id, absorbed=absorbed.dcn_id, similarity=sim)
        for absorbed_id in merged:
            del self.nodes[absorbed_id]
        final: dict[int, int] = {}
        for absorbed_id, keeper_id in merged.items():
            while keeper_id in merged:
                keeper_id = merged[keeper_id]
            final[absorbed_id] = keeper_id
        log_decision("Merge", f"Merge pass: {len(final)} merges, {len(self.nodes)} DCNs left", merges=len(final))
        return final
