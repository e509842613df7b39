"""The DCS context assembler: message registration, identifier index, influence, DCN lifecycle, assembly.

Restates the source's ``DcsContextAssembler`` (seed-behaviour 1.4). With ``DcsConfig(faithful=True)`` it
reproduces the source, flaws included; the default fixes them so both can be measured:

1. **Decay.** The source scores ``similarity × max(1.0, recency of each hard-linked DCN)``, which is always
   ``similarity`` (recency ≤ 1). Fixed: ``× max(recency of the message's live DCNs)`` (1.0 with no DCN).
2. **Influence propagation.** The source propagates a prior message's DCNs only when ``influence ≥ 0.6``, but a
   message with no DCN cannot earn the +0.6 "shared DCN" term, so the rest (≤ 0.5) never reaches it. Fixed: the
   DCN term is ``0.6 × max Jaccard(message topics, topics of the prior's DCNs)`` (how well the message fits that
   line of work); when it fires the message is linked into the DCN and its key and index entries updated. The
   neighbours are the two messages *before it in time* (the source takes the two latest overall, which for an
   out-of-order message are later ones).
3. **Stale merges.** The source's merge rewrites hard links only; keys and the index keep the absorbed id.
   Fixed: keys, hard links and index buckets all move to the keeper.
4. **Shared integer space.** Intent, domain and DCN ids share index buckets and topic sets in the source
   (QUERY=1 = BACKEND=1 = DCN 1). Fixed: identifiers are ``(level, id)`` pairs.

Bad input (checked before anything is written): a blank or duplicate message id, a timestamp later than the
clock, or a hard link to an unknown DCN raise :class:`DataError` — except with ``faithful=True``, which does what
the source does (overwrite, accept, log "orphaned reference"). Out-of-order timestamps are accepted and placed
by time. Naive datetimes are taken as UTC. Unknown DCN ids in a *query* key simply match nothing.

Assembly is O(candidates · log candidates): candidates come from the index buckets of the query's identifiers;
the two neighbours of a new message come from a time-sorted list (bisect), never a scan.
"""
from __future__ import annotations

import bisect
import logging
from dataclasses import dataclass, field, replace
from datetime import datetime
from itertools import islice
from typing import Callable, Hashable, Iterable, Mapping, cast

from ..config import DcsConfig
from ..errors import ConfigError, DataError
from ..logs import decision_logger, log_decision
from .classifier import is_escalation as source_escalation
from .key import DCN, DcsKey, jaccard
from .nodes import Clock, DcnNode, DcnStore, as_utc, utc_now

#: Influence terms (seed-behaviour 1.4).
SHARED_DCN, SHARED_DOMAIN, ESCALATION = 0.6, 0.2, 0.3


@dataclass(frozen=True)
class DcsMessage:
    """A registered message: its key, hard-linked DCNs and timestamp (``None`` → the clock at registration)."""

    message_id: str
    key: DcsKey = field(default_factory=DcsKey)
    content: str = ""
    timestamp: datetime | None = None
    hard_linked_dcns: tuple[int, ...] = ()


@dataclass(frozen=True)
class ScoredMessage:
    message: DcsMessage
    score: float
    similarity: float
    decay: float


@dataclass(frozen=True)
class DcsLogEntry:
    """One selection decision, printed in the source's format."""

    time: datetime
    selected_dcn: int | None
    candidates: int
    filtered: int
    strategy: str
    top_scores: tuple[tuple[str, float], ...]

    def __str__(self) -> str:
        t = self.time
        scores = ", ".join(f"{m}={s:.3f}" for m, s in self.top_scores) if self.top_scores else "none"
        dcn = self.selected_dcn if self.selected_dcn is not None else "null"
        return (f"[DCS {t:%H:%M:%S}.{t.microsecond // 1000:03d}] DCN={dcn} "
                f"Candidates={self.candidates} Filtered={self.filtered} Strategy={self.strategy} TopScores=[{scores}]")


def _check_config(cfg: DcsConfig) -> None:
    w = cfg.weights
    if min(w.intent, w.dcn, w.domain) < 0:
        raise ConfigError(f"dcs.weights: expected non-negative weights, found {w}.")
    if cfg.max_per_dcn < 1 or cfg.max_total < 0 or cfg.influence_neighbours < 0:
        raise ConfigError(f"dcs: expected max_per_dcn ≥ 1, max_total ≥ 0, influence_neighbours ≥ 0; found "
                          f"{cfg.max_per_dcn}, {cfg.max_total}, {cfg.influence_neighbours}.")


class DcsContextAssembler:
    """Registers messages and assembles the context of a query key. ``clock`` returns "now" (UTC)."""

    def __init__(self, config: DcsConfig | None = None, clock: Clock = utc_now,
                 escalation: Callable[[Iterable[int], Iterable[int]], bool] = source_escalation) -> None:
        self.config = cfg = config or DcsConfig()
        _check_config(cfg)
        self.faithful = cfg.faithful
        self.namespaced = not cfg.faithful
        self.escalation = escalation
        self.nodes = DcnStore(clock, cfg.decay_hours, cfg.match_threshold, cfg.merge_threshold)
        self.log: list[DcsLogEntry] = []
        self._messages: dict[str, DcsMessage] = {}
        self._seq: dict[str, int] = {}
        self._next_seq = 0
        # identifier → message ids; faithful: a list with repeats (as the source), else an ordered set.
        self._index: dict[Hashable, list[str] | dict[str, None]] = {}
        self._timeline: list[tuple[datetime, int, str]] = []

    # ------------------------------------------------------------------------------------------- views
    @property
    def messages(self) -> Mapping[str, DcsMessage]:
        return dict(self._messages)

    def __len__(self) -> int:
        return len(self._messages)

    def __contains__(self, message_id: object) -> bool:
        return message_id in self._messages

    def get(self, message_id: str) -> DcsMessage | None:
        return self._messages.get(message_id)

    def bucket(self, identifier: Hashable) -> list[str]:
        """The message ids indexed under one identifier (an int, or ``(level, id)`` when namespaced)."""
        return list(self._index.get(identifier, ()))

    def index_items(self) -> list[tuple[Hashable, list[str]]]:
        return [(k, list(v)) for k, v in self._index.items()]

    def now(self) -> datetime:
        return self.nodes.now()

    # ---------------------------------------------------------------------------------------- registration
    def _validated(self, message: DcsMessage) -> DcsMessage:
        if not isinstance(message, DcsMessage):
            raise DataError(f"register: expected a DcsMessage, found {type(message).__name__}.")
        if not isinstance(message.message_id, str) or not message.message_id.strip():
            raise DataError(f"register: expected a non-blank message id, found {message.message_id!r}.")
        if not isinstance(message.key, DcsKey):
            raise DataError(f"register: expected a DcsKey, found {type(message.key).__name__}.")
        now = self.now()
        ts = now if message.timestamp is None else as_utc(message.timestamp, f"message {message.message_id} timestamp")
        if not self.faithful:
            if message.message_id in self._messages:
                raise DataError(f"message id {message.message_id!r} is already registered. Fix: give each message "
                                "a unique id (faithful=True overwrites, as the source does).")
            if ts > now:
                raise DataError(f"message {message.message_id!r} has timestamp {ts.isoformat()} later than the "
                                f"clock ({now.isoformat()}). Fix: register messages once they have happened.")
            unknown = [d for d in message.hard_linked_dcns if d not in self.nodes]
            if unknown:
                raise DataError(f"message {message.message_id!r} links unknown DCN id(s) {unknown}; known: "
                                f"{sorted(self.nodes.nodes)}. Fix: create the DCN first (find_or_create_dcn).")
        return replace(message, timestamp=ts, hard_linked_dcns=tuple(message.hard_linked_dcns))

    def register(self, message: DcsMessage) -> DcsMessage:
        """Store, index and link a message, then let its prior neighbours propagate their DCNs.
        Returns the stored record (with its timestamp and any propagated DCNs)."""
        msg = self._validated(message)
        mid = msg.message_id
        if mid in self._messages:  # faithful overwrite: drop the old timeline entry (the index keeps its repeats)
            old = self._messages[mid]
            self._timeline.remove((cast(datetime, old.timestamp), self._seq[mid], mid))
        self._seq[mid] = self._next_seq
        self._next_seq += 1
        self._messages[mid] = msg
        self._add_to_index(mid, msg.key.identifiers(self.namespaced))
        now = self.now()
        for d in msg.hard_linked_dcns:
            node = self.nodes.get(d)
            if node is None:
                log_decision("Register", f"{mid}: orphaned reference to DCN {d}", message_id=mid, dcn=d)
                continue
            node.touch(now)
            node.link(mid)
        entry = (cast(datetime, msg.timestamp), self._seq[mid], mid)  # _validated() set it
        pos = bisect.bisect(self._timeline, entry)
        self._timeline.insert(pos, entry)
        log_decision("Register", f"{mid}: key={msg.key} dcns={list(msg.hard_linked_dcns)} "
                                 f"({len(self._messages)} messages)", message_id=mid)
        self._propagate(mid, pos)
        return self._messages[mid]

    def observe(self, message_id: str, key: DcsKey, content: str = "",
                timestamp: datetime | None = None) -> DcsMessage:
        """Classify-and-route convenience: find or create the message's DCN, then register it linked to that
        DCN (in both its key and its hard links). Validates before the DCN is touched or created."""
        probe = DcsMessage(message_id, key.with_dcns(()), content, timestamp)
        self._validated(probe)
        node = self.find_or_create_dcn(key)
        return self.register(replace(probe, key=key.with_dcns((node.dcn_id,)), hard_linked_dcns=(node.dcn_id,)))

    def _add_to_index(self, mid: str, identifiers: Iterable[Hashable]) -> None:
        for ident in identifiers:
            bucket = self._index.setdefault(ident, [] if self.faithful else {})
            if isinstance(bucket, list):
                bucket.append(mid)
            else:
                bucket[mid] = None

    def _neighbours(self, mid: str, pos: int) -> list[DcsMessage]:
        n = self.config.influence_neighbours
        if self.faithful:  # the latest others overall, whatever the message's own time
            ids = list(islice((e[2] for e in reversed(self._timeline) if e[2] != mid), n))
        else:
            ids = [e[2] for e in reversed(self._timeline[max(0, pos - n):pos])]
        return [self._messages[i] for i in ids]

    def _propagate(self, mid: str, pos: int) -> None:
        for prior in self._neighbours(mid, pos):
            msg = self._messages[mid]
            if self.faithful:
                influence = self.compute_influence(prior, msg)
                new = [d for d in prior.hard_linked_dcns if d not in msg.hard_linked_dcns]
                if influence >= self.config.influence_threshold and not msg.hard_linked_dcns and new:
                    self._messages[mid] = replace(msg, hard_linked_dcns=tuple(prior.hard_linked_dcns))
                    log_decision("Influence", f"{prior.message_id} -> {mid}: influence={influence:.3f}, "
                                              f"propagated DCNs {list(prior.hard_linked_dcns)}")
                continue
            if msg.hard_linked_dcns:
                return
            live = [self.nodes.nodes[d] for d in prior.hard_linked_dcns if d in self.nodes]
            if not live:
                continue
            topics = msg.key.topics(True)
            fit = max(jaccard(node.topics, topics) for node in live)
            influence = min(1.0, SHARED_DCN * fit + self._domain_and_escalation(prior, msg))
            log_decision("Influence", f"{prior.message_id} -> {mid}: influence={influence:.3f} (DCN fit {fit:.3f})")
            if influence >= self.config.influence_threshold:
                self._link(mid, [n.dcn_id for n in live])

    def _link(self, mid: str, dcns: list[int]) -> None:
        msg = self._messages[mid]
        now = self.now()
        for d in dcns:
            self.nodes.nodes[d].link(mid)
            self.nodes.nodes[d].touch(now)
        key = msg.key.with_dcns(tuple(dict.fromkeys([*msg.key.dcns, *dcns])))
        linked = tuple(dict.fromkeys([*msg.hard_linked_dcns, *dcns]))
        self._messages[mid] = replace(msg, key=key, hard_linked_dcns=linked)
        self._add_to_index(mid, [(DCN, d) for d in dcns])
        log_decision("Influence", f"{mid}: linked into DCN(s) {dcns}", message_id=mid, dcns=dcns)

    def _domain_and_escalation(self, current: DcsMessage, nxt: DcsMessage) -> float:
        score = SHARED_DOMAIN if set(current.key.domains) & set(nxt.key.domains) else 0.0
        if self.escalation(current.key.intents, nxt.key.intents):
            score += ESCALATION
        return score

    def compute_influence(self, current: DcsMessage, nxt: DcsMessage) -> float:
        """+0.6 shared hard-linked DCN, +0.2 shared domain, +0.3 intent escalation; capped at 1.0."""
        score = SHARED_DCN if set(current.hard_linked_dcns) & set(nxt.hard_linked_dcns) else 0.0
        score = min(1.0, score + self._domain_and_escalation(current, nxt))
        log_decision("Influence", f"{current.message_id} -> {nxt.message_id}: {score:.3f}")
        return score

    # ------------------------------------------------------------------------------------------------ DCNs
    def find_or_create_dcn(self, key: DcsKey) -> DcnNode:
        return self.nodes.find_or_create(key.topics(self.namespaced))

    def match_dcn(self, key: DcsKey) -> DcnNode | None:
        """The DCN ``key`` would join, without touching or creating anything."""
        return self.nodes.best_match(key.topics(self.namespaced))[0]

    def merge_similar_dcns(self) -> dict[int, int]:
        """Merge pass; messages of an absorbed DCN are re-assigned to the keeper (see the module notes)."""
        mapping = self.nodes.merge_similar()
        if not mapping:
            return mapping
        affected: dict[str, None] = {}
        for keeper in set(mapping.values()):
            affected.update(dict.fromkeys(self.nodes.nodes[keeper].linked_message_ids))
        if not self.faithful:
            for absorbed in mapping:
                affected.update(dict.fromkeys(self._index.get((DCN, absorbed), ())))
        for mid in affected:
            msg = self._messages.get(mid)
            if msg is None:
                continue
            hard = tuple(dict.fromkeys(mapping.get(d, d) for d in msg.hard_linked_dcns))
            key = msg.key if self.faithful else msg.key.with_dcns(
                tuple(dict.fromkeys(mapping.get(d, d) for d in msg.key.dcns)))
            self._messages[mid] = replace(msg, hard_linked_dcns=hard, key=key)
        if not self.faithful:
            for absorbed, keeper in mapping.items():
                moved = self._index.pop((DCN, absorbed), {})
                bucket = {**self._index.get((DCN, keeper), {}), **moved}  # type: ignore[dict-item]
                self._index[(DCN, keeper)] = dict.fromkeys(sorted(bucket, key=self._seq.__getitem__))
        return mapping

    # -------------------------------------------------------------------------------------------- assembly
    def _decay(self, msg: DcsMessage, now: datetime, cache: dict[int, float]) -> float:
        weights = []
        for d in msg.hard_linked_dcns:
            if d not in cache:
                node = self.nodes.get(d)
                cache[d] = node.recency_weight(now, self.nodes.decay_hours) if node is not None else -1.0
            if cache[d] >= 0:
                weights.append(cache[d])
        if self.faithful:
            return max([1.0, *weights])  # the source's max(1.0, …): never below 1
        return max(weights) if weights else 1.0

    def assemble(self, query_key: DcsKey, max_total: int | None = None) -> list[ScoredMessage]:
        """The selected messages, best first: index candidates with similarity ≥ eligibility, scored
        ``similarity × decay``, at most ``max_per_dcn`` per DCN and ``max_total`` overall."""
        cfg = self.config
        limit = cfg.max_total if max_total is None else max_total
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise DataError(f"assemble: expected max_total to be an integer ≥ 0, found {max_total!r}.")
        if not isinstance(query_key, DcsKey):
            raise DataError(f"assemble: expected a DcsKey, found {type(query_key).__name__}.")
        identifiers = query_key.identifiers(self.namespaced)
        candidates: dict[str, None] = {}
        for ident in identifiers:
            for mid in self._index.get(ident, ()):
                if mid in self._messages:
                    candidates[mid] = None
        now = self.now()
        debug = decision_logger("Assemble").isEnabledFor(logging.DEBUG)
        cache: dict[int, float] = {}
        scored: list[ScoredMessage] = []
        for mid in candidates:
            msg = self._messages[mid]
            sim = msg.key.similarity(query_key, cfg.weights)
            if sim < cfg.eligibility_threshold:
                if debug:
                    log_decision("Assemble", f"  {mid}: similarity={sim:.3f} < threshold "
                                             f"{cfg.eligibility_threshold:.3f}, skipped")
                continue
            decay = self._decay(msg, now, cache)
            scored.append(ScoredMessage(msg, sim * decay, sim, decay))
            if debug:
                log_decision("Assemble",
                             f"  {mid}: similarity={sim:.3f} x decay={decay:.3f} -> score={sim * decay:.3f}")
        scored.sort(key=lambda s: -s.score)  # stable: ties keep candidate order
        result: list[ScoredMessage] = []
        per_dcn: dict[int, int] = {}
        for s in scored:
            if len(result) >= limit:
                break
            dcns = s.message.hard_linked_dcns
            if any(per_dcn.get(d, 0) >= cfg.max_per_dcn for d in dcns):
                continue
            result.append(s)
            for d in dcns:
                per_dcn[d] = per_dcn.get(d, 0) + 1
        entry = DcsLogEntry(now, query_key.dcns[0] if query_key.dcns else None, len(candidates), len(result),
                            "Selective" if identifiers else "Full",
                            tuple((s.message.message_id, s.score) for s in scored[:5]))
        self.log.append(entry)
        log_decision("Assemble", str(entry), candidates=len(candidates), filtered=len(result))
        return result
