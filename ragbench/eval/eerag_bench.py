"""The EE-RAG benchmark (``eedag_benchmark_v1.json``): seed a fresh store with the knowledge entries, run every
case in a fresh session, and score election against the expected entries (seed-behaviour 1.11), with the context
tokens of naive RAG (the same top-k chunks injected in full) measured on the same candidates.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from ..config import RagbenchConfig
from ..eerag.digest import full_context
from ..eerag.electors import PolicyElector
from ..eerag.pipeline import EeragPipeline
from ..eerag.prompts import resolve_prompt
from ..eerag.summarize import ExtractiveSummarizer
from ..errors import ConfigError
from ..llm.base import ChatModel
from ..retrieval.base import Embedder
from ..retrieval.chunking import WholeDocumentChunker
from ..retrieval.embedding import make_embedder
from ..retrieval.retriever import retriever_from_store
from ..schema import Document
from ..store import KnowledgeStore
from ..text import count_tokens
from .datasets import EeragBench, load_eerag_bench
from .metrics import evaluate_election

#: Keys of the benchmark's JSON summary, in order.
SUMMARY_KEYS = ("candidate_recall", "precision", "recall", "f1", "retrieval_rate", "expected_retrieval_rate",
                "context_tokens", "naive_context_tokens", "model_calls", "failed_elections", "seconds_per_election",
                "seconds_per_case")


@dataclass(frozen=True)
class BenchReport:
    summary: dict[str, float]
    cases: pd.DataFrame        # one row per case
    per_query: pd.DataFrame    # long qid, measure, value
    info: dict[str, str] = field(default_factory=dict)  # elector, model_id, prompt id


def entry_documents(bench: EeragBench) -> list[Document]:
    """One document per knowledge entry: the request as title, request + response as text."""
    return [Document(e.slug, f"{e.request}\n\n{e.text_response}", title=e.request, source="eerag-bench")
            for e in bench.entries]


def seed_store(store: KnowledgeStore, bench: EeragBench, embedder: Embedder | None, summary_tokens: int = 25) -> None:
    """Index the entries; the entry's own summary is used when it has one, else the extractive summary."""
    given = {e.slug: e.summary for e in bench.entries}
    extractive = ExtractiveSummarizer(summary_tokens)
    store.ingest(entry_documents(bench), WholeDocumentChunker(), embedder,
                 summarizer=lambda c: given.get(c.doc_id) or extractive(c))


def make_elector(name: str, cfg: RagbenchConfig, embedder: Embedder | None,
                 chat_model: ChatModel | None = None, store: Any = None) -> tuple[ChatModel, str | None]:
    """(model, system prompt) for ``policy`` or ``llm``; the llm elector's system prompt is the registered
    ``eerag.elect_prompt`` version (in ``store`` when given)."""
    if name == "policy":
        e = cfg.eerag
        return PolicyElector(embedder, e.elect_threshold, e.margin, e.max_expand, e.rank_weight), None
    if name == "llm":
        if chat_model is None:
            raise ConfigError("the llm elector needs a chat model. Fix: pass --model openai (with OPENAI_BASE_URL) "
                              "or --model llama, or use --elector policy.")
        return chat_model, resolve_prompt(store, cfg.eerag.elect_prompt).body
    raise ConfigError(f"unknown elector {name!r}; expected policy or llm.")


def run_bench(path: str | Path, elector: str | None = None, cfg: RagbenchConfig | None = None,
              mode: str = "dense", chat_model: ChatModel | None = None, embedder: Embedder | None = None,
              show_progress: bool = False, answer: bool = True) -> BenchReport:
    """Run every case of the benchmark file and return per-case rows and the summary. ``elector`` defaults to
    ``eerag.elector``; with ``eerag.silent`` and ``eerag.digest=llm`` the chat model digests. ``answer=False``
    scores the election only (no answer call; ``model_calls`` then counts the election call alone)."""
    cfg = cfg or RagbenchConfig()
    elector = elector or cfg.eerag.elector
    bench = load_eerag_bench(path)
    embedder = embedder or make_embedder(cfg.embedding)
    with KnowledgeStore.open(":memory:") as store:
        seed_store(store, bench, embedder, cfg.eerag.summary_tokens)
        retriever = retriever_from_store(store, mode, cfg, embedder)
        model, system_prompt = make_elector(elector, cfg, embedder, chat_model, store)
        prompt_id = cfg.eerag.elect_prompt if elector == "llm" else model.model_id
        digest_prompt = resolve_prompt(store, cfg.eerag.digest_prompt)
        rows: list[dict[str, Any]] = []
        for case in tqdm(bench.cases, disable=not show_progress, desc="eerag bench"):
            pipe = EeragPipeline(store, retriever, model, cfg.eerag, embedder=embedder, system_prompt=system_prompt,
                                 digester=chat_model, digest_prompt=digest_prompt.body)
            started = time.perf_counter()
            res = pipe.run(case.query, request_id=f"bench-run:{case.case_id}", answer=answer)
            seconds = time.perf_counter() - started
            top = [store.get_chunk(c) for c in res.surfaced]
            naive = full_context([(i + 1, c) for i, c in enumerate(top) if c is not None])
            rows.append({"case_id": case.case_id, "query": case.query, "expected": list(case.expected_slugs),
                         "expect_retrieval": case.expect_retrieval, "surfaced": res.surfaced_docs,
                         "elected": res.elected_docs, "rejected": res.rejected_ids, "answer": res.final_response,
                         "hint": case.expected_answer_hint, "context_tokens": res.context_tokens,
                         "naive_context_tokens": count_tokens(naive), "model_calls": res.model_calls,
                         "election_status": res.election_status, "failure": res.failure,
                         "election_seconds": float(res.meta.get("election_seconds", 0.0)), "seconds": seconds})
    cases = pd.DataFrame(rows)
    per_query = evaluate_election(rows)
    means = per_query.groupby("measure")["value"].mean()
    summary = {
        "candidate_recall": float(means.get("CandidateRecall", float("nan"))),
        "precision": float(means.get("ElectionPrecision", float("nan"))),
        "recall": float(means.get("ElectionRecall", float("nan"))),
        "f1": float(means.get("ElectionF1", float("nan"))),
        "retrieval_rate": float(means.get("RetrievalRate", float("nan"))),
        "expected_retrieval_rate": float(means.get("RetrievalExpected", float("nan"))),
        "context_tokens": float(cases["context_tokens"].mean()),
        "naive_context_tokens": float(cases["naive_context_tokens"].mean()),
        "model_calls": float(cases["model_calls"].mean()),
        "failed_elections": int((cases["election_status"] == "failed").sum()),
        "seconds_per_election": float(cases["election_seconds"].mean()),
        "seconds_per_case": float(cases["seconds"].mean()),
    }
    info = {"elector": elector, "model_id": model.model_id, "prompt": prompt_id,
            "mode": "full" if answer else "elect-only"}
    if "AnswerHintMatched" in means and answer:
        summary["answer_hint_rate"] = float(means["AnswerHintMatched"])
    return BenchReport(summary, cases, per_query, info)
