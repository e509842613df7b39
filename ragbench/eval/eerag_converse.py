"""LoCoMo conversations replayed through the EE-RAG + DCS conversation system (``ragbench eerag converse``).

Every turn of a conversation is stored as memory of one :class:`~ragbench.eerag.conversation.Conversation` (DCS
observes it, clock = the session date); then, for each QA question, the context is built four ways:

* ``full-history`` — every turn, in order (``(<date>) <speaker>: <text>`` lines);
* ``top-k`` — the configured retriever's top ``k`` memory turns, injected in full (the naive RAG baseline);
* ``eerag`` — the system without DCS: the ``[ID:n] <summary>`` header of ``eerag.top_k`` candidates, then the
  elected turns injected once;
* ``eerag+dcs`` — the same with the DCS boost (``eerag.candidate_k`` retrieved, DCS-related turns first).

``evidence_recall`` = share of the question's gold evidence turns whose ``<speaker>: <text>`` appears in the context
actually sent (header summaries count when they show the whole turn; 1.0 without evidence, as LoCoMo scores it);
``context_tokens`` = MiniLM tokens of that context, header included; ``model_calls`` per question. Questions are not
stored as memory. Extra EE-RAG variants (``variants``: lists of ``eerag.*`` overrides) run on the same replay and
are named ``eerag[i]`` / ``eerag+dcs[i]``; :func:`loco_select` picks one per held-out conversation.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from functools import partial
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from ..config import EeragConfig, RagbenchConfig, with_overrides
from ..eerag.conversation import Conversation, turn_model
from ..eerag.digest import full_context
from ..eerag.memory import memory_doc_id
from ..eerag.pipeline import EeragPipeline
from ..eerag.summarize import ExtractiveSummarizer
from ..llm.base import ChatModel
from ..retrieval.base import Embedder
from ..store import KnowledgeStore
from ..text import count_tokens
from .datasets import LOCOMO_CATEGORIES, LocomoConversation, load_locomo
from .locomo import TurnText, _turn_times, load_captions, turn_texts

SYSTEMS = ("full-history", "top-k", "eerag", "eerag+dcs")
_WS = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _WS.sub(" ", text).strip()


def _day(date: str) -> str:
    """``"1:56 pm on 8 May, 2023"`` → ``"8 May, 2023"`` (the header shows the day only)."""
    return date.split(" on ", 1)[1] if " on " in date else date


@dataclass
class ConverseResult:
    """``per_question``: one row per (system, conversation, question)."""

    per_question: pd.DataFrame
    settings: dict[str, Any] = field(default_factory=dict)

    def systems(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for name, g in self.per_question.groupby("system", sort=False):
            cats = {LOCOMO_CATEGORIES.get(int(c), str(c)): float(v)
                    for c, v in g.groupby("category")["evidence_recall"].mean().items()}
            out[str(name)] = {"evidence_recall": float(g.evidence_recall.mean()),
                              "context_tokens": float(g.context_tokens.mean()),
                              "model_calls": float(g.model_calls.mean()),
                              "elected_recall": float(g.elected_recall.mean()),
                              "by_category": cats}
        full = out.get("full-history", {}).get("context_tokens")
        for v in out.values():
            v["token_share"] = v["context_tokens"] / full if full else float("nan")
        return out

    def dcs_diagnostics(self) -> dict[str, Any]:
        """Per ``eerag+dcs…`` system: share of questions whose header / elected set differ from the same variant
        without DCS, the mean DCS context size, and the share of evidence turns inside the DCS context against
        the share of all turns it covers (lift 1.0 = DCS knows nothing about where the evidence is)."""
        pq = self.per_question
        out: dict[str, Any] = {}
        for name in [s for s in pq.system.unique() if s.startswith("eerag+dcs") and "LOCO" not in s]:
            plain = name.replace("eerag+dcs", "eerag")
            a = pq[pq.system == name].set_index(["conversation", "qid"])
            b = pq[pq.system == plain].set_index(["conversation", "qid"]).reindex(a.index)
            ev = a.dcs_evidence_share.dropna()
            share = float(a.dcs_turn_share.mean())
            out[name] = {"header_changed": float((a.surfaced != b.surfaced).mean()),
                         "elected_changed": float((a.elected != b.elected).mean()),
                         "dcs_context_turns": float(a.dcs_context.mean()), "dcs_turn_share": share,
                         "evidence_in_dcs_context": float(ev.mean()) if len(ev) else float("nan"),
                         "lift": float(ev.mean()) / share if len(ev) and share else float("nan")}
        return out

    def paired(self, a: str, b: str, seed: int = 0) -> dict[str, Any]:
        """Paired test of ``a`` vs ``b`` on per-question evidence recall (Wilcoxon p, bootstrap CI)."""
        from .stats import compare

        wide = self.per_question.pivot_table(index=["conversation", "qid"], columns="system",
                                             values="evidence_recall")
        c = compare(wide[a].to_numpy(), wide[b].to_numpy(), seed=seed, n_resamples=2000)
        return {"a": a, "b": b, "p_value": c.wilcoxon_p, "test": "wilcoxon signed-rank, paired, two-sided",
                "delta": c.mean_diff, "ci": [c.ci_low, c.ci_high], "permutation_p": c.permutation_p,
                "wins": c.wins, "ties": c.ties, "losses": c.losses, "n": c.n}


def _presence(context: str, markers: Sequence[str]) -> float:
    if not markers:
        return 1.0
    ctx = _norm(context)
    return sum(1 for m in markers if m and m in ctx) / len(markers)


def replay(conv: LocomoConversation, system: Conversation, texts: Sequence[str], summary_tokens: int,
           clock: dict[str, datetime]) -> None:
    """Store every turn of ``conv`` as memory of ``system`` (DCS observes each at its session time)."""
    summarize = ExtractiveSummarizer(summary_tokens).summarize_text
    roles = {conv.speakers[0]: "user"} if conv.speakers else {}
    for i, (t, ts) in enumerate(zip(conv.turns, _turn_times(conv), strict=True)):
        clock["now"] = ts
        own = f"{t.speaker}: {t.text}"
        system.remember(roles.get(t.speaker, "assistant"), t.text, speaker=t.speaker, timestamp=ts,
                        retrieval_text=texts[i], summary=f"({_day(t.date)}) {summarize(own)}", save=False)


def _pipelines(store: Any, system: Conversation, members: Sequence[tuple[str, EeragConfig]],
               chat_model: ChatModel | None, embedder: Embedder) -> dict[str, EeragPipeline]:
    """``eerag<suffix>`` (no selector) and ``eerag+dcs<suffix>`` (the conversation's DCS) per variant, sharing the
    conversation's retriever; no history is sent (each question is scored on its retrieved context alone)."""
    out = {}
    for suffix, ecfg in members:
        for name, selector in ((f"eerag{suffix}", None), (f"eerag+dcs{suffix}", system.selector)):
            p = EeragPipeline(store, system.retriever, turn_model(ecfg, chat_model, embedder), ecfg,
                              embedder=embedder, selector=selector, system_prompt=system.pipeline.session.system_prompt,
                              digester=chat_model, digest_prompt=system.pipeline.digest_prompt, audit=False)
            p.session.history_filter = lambda m, h: []
            out[name] = p
    return out


def run_converse(path: str | Path, cfg: RagbenchConfig | None = None, chat_model: ChatModel | None = None,
                 embedder: Embedder | None = None, k: int | None = None,
                 variants: Sequence[Mapping[str, Any]] = (), conversations: Sequence[str] | None = None,
                 max_questions: int | None = None, show_progress: bool = False) -> ConverseResult:
    """Replay every conversation of a LoCoMo file and score the four systems (plus variants) per question."""
    cfg = cfg or RagbenchConfig()
    convs = load_locomo(path)  # DataError naming the file and field when it is not LoCoMo-shaped
    if conversations:
        convs = [c for c in convs if c.sample_id in set(conversations)]
    if embedder is None:
        from ..retrieval.embedding import make_embedder

        embedder = make_embedder(cfg.embedding)
    k = k or cfg.eerag.top_k
    base = with_overrides(cfg, {"eerag.history_messages": 0, "eerag.dcs": True})
    captions = load_captions(path)
    # Variants that change the summaries need their own replay (summaries are made when a turn is stored).
    groups: dict[int, list[tuple[str, EeragConfig]]] = {}
    for i, over in enumerate([{}, *variants]):
        ecfg = with_overrides(base, dict(over)).eerag
        groups.setdefault(ecfg.summary_tokens, []).append((f"[{i}]" if i else "", ecfg))
    rows: list[dict[str, Any]] = []
    for conv in tqdm(convs, disable=not show_progress, desc="converse"):
        clock = {"now": datetime(2000, 1, 1, tzinfo=UTC)}
        texts = turn_texts(conv, TurnText(), captions)
        qas = list(conv.qa)[:max_questions] if max_questions else list(conv.qa)
        by_id = {t.dia_id: t for t in conv.turns}
        position = {t.dia_id: i for i, t in enumerate(conv.turns)}
        full = "\n".join(f"({_day(t.date)}) {t.speaker}: {t.text}" for t in conv.turns)
        full_tokens = count_tokens(full)
        first = True
        for summary_tokens, members in groups.items():
            with KnowledgeStore.open(":memory:") as store:
                system = Conversation(store, conv.sample_id, base, chat_model, embedder,
                                      clock=partial(clock.__getitem__, "now"), persist_dcs=False)
                replay(conv, system, texts, summary_tokens, clock)
                pipelines = _pipelines(store, system, members, chat_model, embedder)
                memory = system.retriever.memories()
                for qi, qa in enumerate(tqdm(qas, disable=not show_progress, desc=conv.sample_id, leave=False)):
                    markers = [_norm(f"{by_id[e].speaker}: {by_id[e].text}") if e in by_id else ""
                               for e in qa.evidence]
                    common = {"conversation": conv.sample_id, "qid": qi, "category": qa.category,
                              "evidence": len(qa.evidence)}
                    # Why DCS does (not) help: how large its context for the question is and how much of the
                    # evidence falls inside it, against the share of all turns it covers.
                    rel = set(system.selector.relevant_ids(qa.question)) if system.selector is not None else set()
                    ev_docs = [memory_doc_id(conv.sample_id, position[e]) for e in qa.evidence if e in position]
                    dcs = {"dcs_context": len(rel), "dcs_turn_share": len(rel) / max(1, len(conv.turns)),
                           "dcs_evidence_share": (sum(d in rel for d in ev_docs) / len(ev_docs)) if ev_docs
                           else float("nan")}
                    if first:  # the baselines do not depend on summaries
                        rows.append({**common, "system": "full-history", "evidence_recall": _presence(full, markers),
                                     "elected_recall": _presence(full, markers), "context_tokens": full_tokens,
                                     "model_calls": 1, "status": ""})
                        hits = memory.search(qa.question, k) if memory is not None and qa.question.strip() else []
                        chunks = [store.get_chunk(h.chunk_id) for h in hits]
                        topk = full_context([(n + 1, c) for n, c in enumerate(chunks) if c is not None])
                        rows.append({**common, "system": "top-k", "evidence_recall": _presence(topk, markers),
                                     "elected_recall": _presence(topk, markers),
                                     "context_tokens": count_tokens(topk), "model_calls": 1, "status": ""})
                    for name, p in pipelines.items():
                        p.session.history.clear()
                        res = p.run(qa.question, request_id=f"{conv.sample_id}:q{qi}")
                        sent = res.candidate_header + "\n" + res.transient_context
                        rows.append({**common, "system": name, "evidence_recall": _presence(sent, markers),
                                     "elected_recall": _presence(res.transient_context, markers),
                                     "context_tokens": res.context_tokens, "model_calls": res.model_calls,
                                     "status": res.election_status, "surfaced": " ".join(res.surfaced),
                                     "elected": " ".join(res.elected), **dcs})
            first = False
    settings = {"k": k, "retriever": cfg.retrieval.mode, "elector": cfg.eerag.elector,
                "model_id": chat_model.model_id if chat_model is not None else "policy-elector",
                "embedder": embedder.model_id, "variants": [dict(v) for v in variants],
                "conversations": [c.sample_id for c in convs]}
    return ConverseResult(pd.DataFrame(rows), settings)


def loco_select(result: ConverseResult, family: str = "eerag", max_share: float = 0.10) -> pd.DataFrame:
    """Leave-one-conversation-out choice among ``family`` variants (``eerag``, ``eerag[1]``, …): for each held-out
    conversation, the variant with the best mean evidence recall on the *other* conversations among those whose
    mean tokens there are ≤ ``max_share`` of full-history (the cheapest one if none is); its rows on the held-out
    conversation form the system ``<family> (LOCO)``. Returns those rows plus a ``chosen`` column."""
    pq = result.per_question
    pattern = re.compile(re.escape(family) + r"(\[\d+\])?$")
    names = [s for s in pq.system.unique() if pattern.match(s)]
    out = []
    if pq.conversation.nunique() < 2 or not names:
        return pq.iloc[0:0].assign(chosen="")
    for held in pq.conversation.unique():
        train = pq[pq.conversation != held]
        full = train[train.system == "full-history"].context_tokens.mean()
        stats = train[train.system.isin(names)].groupby("system")[["evidence_recall", "context_tokens"]].mean()
        ok = stats[stats.context_tokens <= max_share * full]
        best = (ok.evidence_recall.idxmax() if len(ok) else stats.context_tokens.idxmin())
        rows = pq[(pq.conversation == held) & (pq.system == best)].copy()
        rows["chosen"] = best
        rows["system"] = f"{family} (LOCO)"
        out.append(rows)
    return pd.concat(out, ignore_index=True)


def with_loco(result: ConverseResult, max_share: float = 0.10) -> ConverseResult:
    """The result plus ``eerag (LOCO)`` and ``eerag+dcs (LOCO)`` systems (when variants were run)."""
    extra = [loco_select(result, fam, max_share) for fam in ("eerag", "eerag+dcs")]
    pq = pd.concat([result.per_question, *extra], ignore_index=True)
    return replace(result, per_question=pq)
