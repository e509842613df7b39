"""The ``retrieval`` objective: retrieval measures, latency and context size over golden or BEIR queries."""
from __future__ import annotations

import time
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ...config import RagbenchConfig, config_hash
from ...errors import ConfigError, DataError, SchemaError
from .base import COLUMNS, DatasetRef, Objective, _Memo, _require, embedder_for, register_objective


class RetrievalObjective(Objective):
    """Retrieval quality, latency and context size over a judged query set."""

    name = "retrieval"
    EXTRA = ("latency_ms", "context_tokens")

    def __init__(self, documents: Sequence[Any], queries: pd.DataFrame, qrels: pd.DataFrame,
                 principals: Mapping[str, Any] | None = None, data_hash: str = "") -> None:
        self.documents = list(documents)
        judged = set(qrels["qid"].astype(str))
        q = queries.assign(qid=queries["qid"].astype(str))
        self.queries = dict(zip(q["qid"], q["query"].astype(str)))
        self.qids = sorted(qid for qid in self.queries if qid in judged)
        if not self.qids:
            raise DataError("retrieval objective: no query has relevance judgements. Fix: check the qrels.")
        self.qrels = qrels.assign(qid=qrels["qid"].astype(str), docno=qrels["docno"].astype(str))
        self.principals = dict(principals or {})
        self.data_hash = data_hash
        self.acls = {d.doc_id: d.acl for d in self.documents}
        self.titles = {d.doc_id: d.title for d in self.documents}
        self._chunks, self._vectors, self._parts = _Memo(3), _Memo(3), _Memo(6)

    def units(self) -> list[str]:
        return list(self.qids)

    def check_measure(self, measure: str) -> str:
        if measure in self.EXTRA:
            return measure
        from ...eval.metrics import parse_measure

        try:
            return str(parse_measure(measure))
        except SchemaError as exc:
            raise ConfigError(f"metric {measure!r} cannot be produced by the retrieval objective: {exc} "
                              f"It also offers {', '.join(self.EXTRA)}.") from None

    def model_sha256(self, cfg: RagbenchConfig) -> str | None:
        from ...retrieval.retriever import needs_embedder

        return embedder_for(cfg).sha256 if needs_embedder(cfg.retrieval.mode) else None

    # -- building (memoised) -------------------------------------------------------------------------------
    def chunks(self, cfg: RagbenchConfig) -> list[Any]:
        from ...retrieval.chunking import make_chunker

        def make() -> list[Any]:
            chunker = make_chunker(cfg.chunking)
            return [c for d in self.documents for c in chunker.chunk(d)]

        return self._chunks.get(config_hash(cfg.chunking), make)

    def vectors(self, cfg: RagbenchConfig) -> np.ndarray:
        key = (config_hash(cfg.chunking), config_hash(cfg.embedding))
        return self._vectors.get(key, lambda: embedder_for(cfg).embed([c.text for c in self.chunks(cfg)]))

    def _keyword(self, cfg: RagbenchConfig) -> Any:
        from ...retrieval.bm25 import BM25Retriever

        def make() -> Any:
            b = BM25Retriever(k1=cfg.bm25.k1, b=cfg.bm25.b, stopwords=cfg.bm25.stopwords)
            return b.index(self.chunks(cfg), self.acls, self.titles)

        return self._parts.get(("bm25", config_hash(cfg.chunking), config_hash(cfg.bm25)), make)

    def _vector(self, cfg: RagbenchConfig, kind: str) -> Any:
        from ...retrieval.dense import DenseRetriever
        from ...retrieval.lsh import LshRetriever

        def make() -> Any:
            emb = embedder_for(cfg)
            r = DenseRetriever(emb) if kind == "dense" else LshRetriever(
                emb, tables=cfg.lsh.tables, bits=cfg.lsh.bits, multiprobe=cfg.lsh.multiprobe, seed=cfg.lsh.seed)
            return r.index(self.chunks(cfg), self.acls, self.titles, vectors=self.vectors(cfg))

        extra = config_hash(cfg.lsh) if kind == "lsh" else ""
        return self._parts.get((kind, config_hash(cfg.chunking), config_hash(cfg.embedding), extra), make)

    def system(self, cfg: RagbenchConfig) -> Any:
        """An indexed retriever for ``cfg`` (parts shared between configurations that agree on them)."""
        from ...retrieval.fusion import HybridRetriever
        from ...retrieval.retriever import normalize_mode

        mode = normalize_mode(cfg.retrieval.mode)
        if mode == "bm25":
            return self._keyword(cfg)
        if mode in ("dense", "lsh"):
            return self._vector(cfg, mode)
        part = cfg.fusion.dense_part.strip().lower()
        if part not in ("dense", "lsh"):
            raise ConfigError(f"fusion.dense_part must be dense or lsh, found {cfg.fusion.dense_part!r}.")
        f = cfg.fusion
        return HybridRetriever(self._keyword(cfg), self._vector(cfg, part), rrf_k=f.rrf_k, candidate_k=f.candidate_k,
                               rerank=f.rerank, rerank_weight=f.rerank_weight,
                               weights=(f.keyword_weight, f.dense_weight))

    # -- evaluating ----------------------------------------------------------------------------------------
    def __call__(self, cfg: RagbenchConfig, units: Sequence[str], measures: Sequence[str]) -> pd.DataFrame:
        from ...eval.metrics import evaluate, parse_measure
        from ...schema import hits_to_run
        from ...text import count_tokens

        ir = [m for m in measures if m not in self.EXTRA]
        depth = max([cfg.retrieval.k] + [parse_measure(m).cutoff or 100 for m in ir])
        system = self.system(cfg)
        rows: list[dict[str, Any]] = []
        extra: list[tuple[str, str, float]] = []
        for qid in units:
            if qid not in self.queries:
                raise DataError(f"retrieval objective: unknown query id {qid!r}.")
            t0 = time.perf_counter()
            hits = system.search(self.queries[qid], k=depth * 4, principal=self.principals.get(qid))
            ms = (time.perf_counter() - t0) * 1000.0
            rows.extend(hits_to_run(qid, hits)[:depth])
            if "latency_ms" in measures:
                extra.append((qid, "latency_ms", ms))
            if "context_tokens" in measures:
                extra.append((qid, "context_tokens", float(sum(count_tokens(h.text) for h in hits[:cfg.retrieval.k]))))
        parts = []
        if ir:
            run = pd.DataFrame(rows, columns=["qid", "docno", "score", "rank"])
            qrels = self.qrels[self.qrels["qid"].isin(set(units))]
            parts.append(evaluate(run, qrels, ir))
        if extra:
            parts.append(pd.DataFrame(extra, columns=COLUMNS))
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=COLUMNS)



@register_objective("retrieval", kinds=("golden", "beir"))
def _retrieval(ds: DatasetRef, options: Mapping[str, Any]) -> Objective:
    if ds.kind == "golden":
        from ...eval.golden import DEFAULT_FOLDER, load_golden

        golden = load_golden(_require(ds.path, "golden folder") if ds.path is not None else DEFAULT_FOLDER)
        principals = {q.qid: golden.principals[q.asked_by] for q in golden.questions}
        return RetrievalObjective(golden.documents, golden.queries_df(), golden.qrels_df(), principals,
                                  golden.data_hash)
    from ...eval.beir import beir_documents
    from ...eval.datasets import load_beir
    from ...provenance import data_hash

    folder = _require(ds.path, "BEIR folder")
    bd = load_beir(folder, ds.split or "test")
    return RetrievalObjective(beir_documents(bd.corpus), bd.queries, bd.qrels, None, data_hash(folder))

