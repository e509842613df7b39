"""BEIR retrieval evaluation: index a BEIR folder into a knowledge store, retrieve the top 100 per query, write a
TREC run file (with a ``.meta.json`` provenance sidecar) and score nDCG@10, R@100 and RR@10 (trec_eval-equal).

Reruns reuse the store (unchanged documents are not re-chunked or re-embedded) and the embedding cache.

Default chunking for BEIR is ``none``: one chunk per document whose text is ``title + " " + text``, embedded with
``max_length`` 256 word pieces — the way the published all-MiniLM-L6-v2 BEIR/MTEB figures were measured
(sentence-transformers encodes title and text joined by a space, truncated at the model's 256-token limit).
A YAML config that sets ``chunking.strategy`` explicitly overrides this default.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Sequence

from ..config import RagbenchConfig, load_config, read_yaml_mapping
from ..errors import ConfigError, DataError
from ..retrieval.base import Embedder
from ..schema import Document
from .datasets import load_beir
from .metrics import aggregate, evaluate

MEASURES = ("nDCG@10", "R@100", "RR@10")


@dataclass(frozen=True)
class BeirResult:
    dataset: str
    split: str
    mode: str
    metrics: dict[str, float]
    queries: int
    run_path: Path
    store_path: Path
    ingest: dict[str, Any] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)   # provenance (data hash, model sha256, …)


def beir_config(path: str | Path | None = None) -> RagbenchConfig:
    """:func:`load_config`, with ``chunking.strategy = "none"`` unless the YAML file sets a strategy."""
    cfg = load_config(path)
    explicit = False
    if path is not None:
        raw = read_yaml_mapping(path, "config")
        explicit = isinstance(raw.get("chunking"), dict) and "strategy" in raw["chunking"]
    if not explicit:
        cfg = replace(cfg, chunking=replace(cfg.chunking, strategy="none"))
    return cfg


def default_store_path(data_dir: str | Path) -> Path:
    """``.ragbench/beir-<folder name>.sqlite`` under the current directory."""
    return Path(".ragbench") / f"beir-{Path(data_dir).resolve().name}.sqlite"


def beir_documents(corpus: Sequence[Document]) -> list[Document]:
    """Documents whose text is ``title + " " + text`` (title kept as the title too)."""
    return [replace(d, text=f"{d.title} {d.text}" if d.title.strip() else d.text) for d in corpus]


def run_beir(data_dir: str | Path, split: str = "test", mode: str = "bm25", cfg: RagbenchConfig | None = None,
             store_path: str | Path | None = None, run_path: str | Path | None = None, k: int = 100,
             embedder: Embedder | None = None, show_progress: bool = False) -> BeirResult:
    """Index, retrieve, write the run and score one BEIR split with one retriever mode."""
    from ..provenance import data_hash, provenance
    from ..retrieval.factory import make_chunker
    from ..retrieval.retriever import needs_embedder, normalize_mode, retriever_from_store
    from ..retrieval.trec import write_trec_run
    from ..store import KnowledgeStore

    cfg = cfg or beir_config()
    mode = normalize_mode(mode)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(f"k must be a positive integer, found {k!r}. Fix: use 100 for BEIR.")
    data_dir = Path(data_dir)
    t0 = time.perf_counter()
    ds = load_beir(data_dir, split)
    docs = beir_documents(ds.corpus)
    store_path = Path(store_path) if store_path is not None else default_store_path(data_dir)
    if str(store_path) != ":memory:":
        store_path.parent.mkdir(parents=True, exist_ok=True)
    run_path = Path(run_path) if run_path is not None else (
        store_path.parent / "runs" / f"beir-{ds.name}-{split}-{mode}.run")
    chunker = make_chunker(cfg.chunking)
    if embedder is None and needs_embedder(mode):
        from ..retrieval.embedding import make_embedder

        embedder = make_embedder(cfg.embedding)
    seconds: dict[str, float] = {"load": time.perf_counter() - t0}
    with KnowledgeStore.open(store_path) as store:
        extra = set(store.doc_ids()) - {d.doc_id for d in docs}
        if extra:
            raise DataError(f"store {store_path} holds {len(extra)} documents that are not in {data_dir} "
                            f"(e.g. {sorted(extra)[:3]}); scores would be polluted. Fix: pass another --store.")
        t = time.perf_counter()
        report = store.ingest(docs, chunker, embedder if needs_embedder(mode) else None,
                              show_progress=show_progress)
        seconds["ingest"] = time.perf_counter() - t
        t = time.perf_counter()
        retriever = retriever_from_store(store, mode, cfg, embedder, show_progress=show_progress)
        seconds["index"] = time.perf_counter() - t
    t = time.perf_counter()
    run = retriever.run(ds.queries, k=k, show_progress=show_progress)
    seconds["retrieve"] = time.perf_counter() - t
    write_trec_run(run, run_path, tag=f"ragbench-{mode}")
    metrics = aggregate(evaluate(run, ds.qrels, MEASURES))
    meta = provenance(cfg, data_hash(data_dir), getattr(embedder, "sha256", None))
    meta.update({"dataset": ds.name, "split": split, "mode": mode, "k": k, "metrics": metrics,
                 "queries": int(len(ds.queries)), "store": str(store_path), "seconds": seconds})
    Path(str(run_path) + ".meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True), encoding="utf-8")
    ingest = {"added": report.added, "updated": report.updated, "unchanged": report.unchanged,
              "chunks": report.chunks}
    return BeirResult(ds.name, split, mode, metrics, int(len(ds.queries)), run_path, store_path, ingest, seconds,
                      meta)
