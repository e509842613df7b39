"""Token-cost study of EE-RAG on a BEIR dataset: naive RAG (top-k documents injected in full) against EE-RAG
(summary header, then only the elected documents), across the policy elector's threshold.

Per query we measure *evidence recall* (is a relevant document in the injected context?) and context tokens
(header + injected text, counted with the MiniLM tokenizer). The EE-RAG numbers are computed with the pipeline's
own pieces (header, elector, transient context), so they equal what :class:`~ragbench.eerag.EeragPipeline`
would send; a test checks that on a small corpus.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from ..config import RagbenchConfig
from ..eerag.digest import full_context, truncation_digest
from ..eerag.election import build_header, make_candidates
from ..eerag.electors import PolicyElector
from ..eerag.summarize import ExtractiveSummarizer
from ..retrieval.base import Embedder
from ..retrieval.chunking import WholeDocumentChunker
from ..retrieval.embedding import make_embedder
from ..retrieval.retriever import retriever_from_store
from ..schema import Document
from ..store import KnowledgeStore
from ..text import count_tokens
from .beir import beir_documents, default_store_path
from .datasets import load_beir


@dataclass
class TokenStudy:
    curve: pd.DataFrame                 # system, threshold, evidence_recall, context_tokens, elected, ...
    per_query: pd.DataFrame             # qid, system, threshold, hit, tokens, elected
    headline: dict[str, Any] = field(default_factory=dict)

    def save(self, folder: str | Path) -> None:
        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        self.curve.to_csv(out / "curve.csv", index=False)
        self.per_query.to_csv(out / "per_query.csv", index=False)
        (out / "headline.json").write_text(json.dumps(self.headline, indent=2), encoding="utf-8")
        plot_tradeoff(self.curve, out / "tradeoff.png")


def plot_tradeoff(curve: pd.DataFrame, path: str | Path) -> None:
    from .plots import pyplot

    plt = pyplot("the token trade-off plot")

    fig, ax = plt.subplots(figsize=(6, 4))
    for system, style, label in (("eerag-policy", "o-", "EE-RAG, policy elector"),
                                 ("eerag-policy+digest", "o:", "EE-RAG, policy elector + digest")):
        ee = curve[curve.system == system]
        ax.plot(ee.context_tokens, ee.evidence_recall, style, label=label)
        for _, r in ee.iterrows():
            ax.annotate(f"{r.threshold:g}", (r.context_tokens, r.evidence_recall), fontsize=7)
    for suffix, style in (("", "^--"), ("+digest", "v:")):
        top = curve[curve.system.str.match(r"eerag-top\d+" + re.escape(suffix) + "$")].sort_values("context_tokens")
        if len(top):
            ax.plot(top.context_tokens, top.evidence_recall, style, color="gray",
                    label="EE-RAG, first n shown" + (" + digest" if suffix else ""))
    naive = curve[curve.system == "naive"].iloc[0]
    ax.plot([naive.context_tokens], [naive.evidence_recall], "s", color="red", label="naive top-k")
    ax.set_xlabel("context tokens per question")
    ax.set_ylabel("evidence recall")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run_token_study(data_dir: str | Path, split: str = "train", cfg: RagbenchConfig | None = None, k: int = 5,
                    thresholds: Sequence[float] = (0.3, 0.4, 0.5), max_queries: int | None = None, seed: int = 0,
                    store_path: str | Path | None = None, embedder: Embedder | None = None,
                    show_progress: bool = False) -> TokenStudy:
    """The study on a BEIR folder (documents are ``title + " " + text``, as for the BEIR evaluation)."""
    ds = load_beir(data_dir, split)
    store_path = Path(store_path) if store_path is not None else default_store_path(data_dir)
    return token_study(beir_documents(ds.corpus), ds.queries, ds.qrels, cfg, k, thresholds, max_queries, seed,
                       store_path, embedder, show_progress)


def token_study(documents: Sequence[Document], queries: pd.DataFrame, qrels: pd.DataFrame,
                cfg: RagbenchConfig | None = None, k: int = 5, thresholds: Sequence[float] = (0.3, 0.4, 0.5),
                max_queries: int | None = None, seed: int = 0, store_path: str | Path = ":memory:",
                embedder: Embedder | None = None, show_progress: bool = False,
                top_n: Sequence[int] = (1, 2, 3)) -> TokenStudy:
    """Naive top-``k`` injection vs EE-RAG with the policy elector at each threshold, one document per chunk.

    ``queries`` is a ``qid, query`` table and ``qrels`` a ``qid, docno, label`` table; a sample of
    ``max_queries`` queries is drawn with ``seed``."""
    cfg = cfg or RagbenchConfig()
    if max_queries is not None and max_queries < len(queries):
        queries = queries.sample(n=max_queries, random_state=seed).sort_values("qid", kind="stable")
    relevant = qrels[qrels.label > 0].groupby("qid")["docno"].apply(set).to_dict()
    embedder = embedder or make_embedder(cfg.embedding)
    if str(store_path) != ":memory:":
        Path(store_path).parent.mkdir(parents=True, exist_ok=True)
    summarizer = ExtractiveSummarizer(cfg.eerag.summary_tokens)
    rows: list[dict[str, Any]] = []
    with KnowledgeStore.open(store_path) as store:
        store.ingest(documents, WholeDocumentChunker(), embedder, show_progress=show_progress)
        missing = {c.chunk_id: summarizer(c) for c in store.chunks() if not c.summary}
        if missing:
            store.set_summaries(missing)
        retriever = retriever_from_store(store, "dense", cfg, embedder, show_progress=show_progress)
        elector = PolicyElector(embedder, 0.0, cfg.eerag.margin, cfg.eerag.max_expand, cfg.eerag.rank_weight)
        for qid, query in tqdm(zip(queries.qid, queries["query"]), total=len(queries), disable=not show_progress,
                               desc="token study"):
            hits = retriever.search(query, k=k)
            found = {h.chunk_id: store.get_chunk(h.chunk_id) for h in hits}
            chunks = {cid: c for cid, c in found.items() if c is not None}
            cands = make_candidates(hits, {cid: c.summary for cid, c in chunks.items() if c is not None})
            header_tokens = count_tokens(build_header(cands, cfg.eerag.header))
            numbered = [(c.number, chunks[c.hit.chunk_id]) for c in cands]
            gold = relevant.get(qid, set())
            rows.append({"qid": qid, "system": "naive", "threshold": np.nan,
                         "hit": float(any(c.hit.doc_id in gold for c in cands)),
                         "tokens": count_tokens(full_context(numbered)), "elected": len(cands)})
            scores = elector.scores(query, [c.summary for c in cands])
            elections = [("eerag-policy", t, elector.choose(scores, t)) for t in thresholds]
            # Position baselines: elect the first n shown, whatever the summaries say (the retriever's own ranking).
            elections += [(f"eerag-top{n}", np.nan, list(range(min(n, len(cands))))) for n in top_n]
            for system, t, positions in elections:
                chosen = [cands[i] for i in positions]
                numbered_chosen = [(c.number, chunks[c.hit.chunk_id]) for c in chosen]
                hit = float(any(c.hit.doc_id in gold for c in chosen))
                # Standard injection (full chunks) and Layer 5's deterministic digest of the same election.
                for suffix, render in (("", full_context), ("+digest", truncation_digest)):
                    ctx = count_tokens(render(numbered_chosen)) if chosen else 0
                    rows.append({"qid": qid, "system": system + suffix, "threshold": t, "hit": hit,
                                 "tokens": header_tokens + ctx, "elected": len(chosen)})
    per_query = pd.DataFrame(rows)
    curve = (per_query.groupby(["system", "threshold"], dropna=False)
             .agg(evidence_recall=("hit", "mean"), context_tokens=("tokens", "mean"), elected=("elected", "mean"),
                  questions=("qid", "count")).reset_index())
    naive = curve[curve.system == "naive"].iloc[0]
    curve["token_saving"] = 1 - curve.context_tokens / naive.context_tokens
    curve["recall_kept"] = curve.evidence_recall / naive.evidence_recall if naive.evidence_recall else np.nan
    ok = curve[(curve.system != "naive") & (curve.recall_kept >= 0.95)]
    best = ok.sort_values("token_saving", ascending=False).iloc[0] if len(ok) else None
    headline = {"questions": int(naive.questions), "k": k, "naive_evidence_recall": float(naive.evidence_recall),
                "naive_context_tokens": float(naive.context_tokens),
                "best_system_keeping_95pct": None if best is None else str(best.system),
                "best_threshold_keeping_95pct": (None if best is None or pd.isna(best.threshold)
                                                 else float(best.threshold)),
                "token_saving_at_best": None if best is None else float(best.token_saving),
                "evidence_recall_at_best": None if best is None else float(best.evidence_recall)}
    return TokenStudy(curve, per_query, headline)
