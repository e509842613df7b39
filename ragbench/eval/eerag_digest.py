"""Layer 5 measured: LLM digestion against the source's truncation digest on a slice of a BEIR dataset.

For a seeded sample of queries: dense top-``k`` abstracts, the policy elector (``eerag.elect_threshold``) elects,
and the elected abstracts are injected three ways — in full, as the truncation digest (``summary | text[:200]``)
and as one LLM distillation (the registered ``eerag.digest`` prompt). Per way: context tokens (MiniLM), and for
queries whose relevant abstract was elected, how much of its evidence survives:

* ``abstract_terms_kept`` — share of the relevant abstract's content words present in the injected text;
* ``claim_terms_kept`` — the same restricted to the words the abstract shares with the query (the part that
  matches the claim); full injection keeps 1.0 of both.

Plus seconds per LLM call (wall clock, shared machine).
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from ..config import RagbenchConfig
from ..eerag.digest import full_context, llm_digest, truncation_digest
from ..eerag.electors import PolicyElector
from ..eerag.prompts import builtin_prompt
from ..eerag.summarize import ExtractiveSummarizer
from ..llm.base import ChatModel
from ..retrieval.chunking import WholeDocumentChunker
from ..retrieval.embedding import make_embedder
from ..retrieval.retriever import retriever_from_store
from ..store import KnowledgeStore
from ..text import count_tokens, tokenize
from .beir import beir_documents, default_store_path
from .datasets import load_beir


def _kept(text: str, source: str, query: str) -> tuple[float, float]:
    got = set(tokenize(text, stopwords=True))
    src = set(tokenize(source, stopwords=True))
    claim = src & set(tokenize(query, stopwords=True))
    return (len(got & src) / len(src) if src else 1.0, len(got & claim) / len(claim) if claim else 1.0)


def digest_study(data_dir: str | Path, chat_model: ChatModel, cfg: RagbenchConfig | None = None,
                 split: str = "train", n: int = 60, k: int = 5, seed: int = 0, store_path: str | Path | None = None,
                 show_progress: bool = False) -> tuple[pd.DataFrame, dict[str, Any]]:
    """``(per_query, summary)``; only queries where the policy elects something are digested."""
    cfg = cfg or RagbenchConfig()
    ds = load_beir(data_dir, split)
    relevant = ds.qrels[ds.qrels.label > 0].groupby("qid")["docno"].apply(set).to_dict()
    queries = ds.queries.sample(frac=1.0, random_state=seed)
    embedder = make_embedder(cfg.embedding)
    prompt = builtin_prompt(cfg.eerag.digest_prompt)
    e = cfg.eerag
    elector = PolicyElector(embedder, e.elect_threshold, e.margin, e.max_expand, e.rank_weight)
    rows: list[dict[str, Any]] = []
    path = Path(store_path) if store_path else default_store_path(data_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    with KnowledgeStore.open(path) as store:
        store.ingest(beir_documents(ds.corpus), WholeDocumentChunker(), embedder, show_progress=show_progress)
        summarizer = ExtractiveSummarizer(e.summary_tokens)
        missing = {c.chunk_id: summarizer(c) for c in store.chunks() if not c.summary}
        if missing:
            store.set_summaries(missing)
        retriever = retriever_from_store(store, "dense", cfg, embedder)
        bar = tqdm(total=n, disable=not show_progress, desc="digest study")
        for qid, query in zip(queries.qid, queries["query"], strict=True):
            if len(rows) >= n:
                break
            hits = retriever.search(query, k=k)
            found = [store.get_chunk(h.chunk_id) for h in hits]
            chunks = {i + 1: c for i, c in enumerate(found) if c is not None}  # numbered from 1, as shown
            shown = [(num, c.summary) for num, c in chunks.items()]
            elected = [(num, chunks[num]) for num in elector.elect(query, shown)]
            if not elected:
                continue
            gold = [c for _, c in elected if c.doc_id in relevant.get(qid, set())]
            started = time.perf_counter()
            digest = llm_digest(elected, query, chat_model, prompt=prompt.body)
            seconds = time.perf_counter() - started
            row: dict[str, Any] = {"qid": qid, "elected": len(elected), "relevant_elected": bool(gold),
                                   "llm_seconds": seconds, "llm_digest": digest}
            for way, text in (("full", full_context(elected)), ("truncate", truncation_digest(elected)),
                              ("llm", digest)):
                row[f"{way}_tokens"] = count_tokens(text)
                if gold:
                    row[f"{way}_abstract_kept"], row[f"{way}_claim_kept"] = _kept(text, gold[0].text, query)
            rows.append(row)
            bar.update(1)
        bar.close()
    pq = pd.DataFrame(rows)
    g = pq[pq.relevant_elected]
    summary: dict[str, Any] = {"queries": len(pq), "with_relevant_elected": len(g),
                               "model_id": chat_model.model_id, "prompt": prompt.id,
                               "seconds_per_call": float(pq.llm_seconds.mean()) if len(pq) else float("nan")}
    for way in ("full", "truncate", "llm"):
        summary[f"{way}_tokens"] = float(pq[f"{way}_tokens"].mean()) if len(pq) else float("nan")
        summary[f"{way}_saving"] = 1 - summary[f"{way}_tokens"] / summary["full_tokens"] if len(pq) else float("nan")
        for m in ("abstract_kept", "claim_kept"):
            summary[f"{way}_{m}"] = float(g[f"{way}_{m}"].mean()) if len(g) else float("nan")
    return pq, summary


__all__: Sequence[str] = ["digest_study"]
