"""The ``retrieval`` objective: retrieval measures, latency and context size over golden or BEIR queries."""
from __future__ import annotations

import time
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ...config import RagbenchConfig
from ...errors import ConfigError, DataError
from .base import COLUMNS, DatasetRef, Objective, _require, embedder_for, register_objective


class RetrievalObjective(Objective):
    """Retrieval quality, latency and context size over a judged query set."""

    name = "retrieval"
    EXTRA = ("latency_ms", "context_tokens")
    report_measures = ("nDCG@10", "R@10", "RR@10", "P@10", "AP", "context_tokens")

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
        self._parts: Any = None  # IndexedParts, built on first use (keeps importing the tuner light)

    def units(self) -> list[str]:
        return list(self.qids)

    def check_measure(self, measure: str) -> str:
        if measure in self.EXTRA:
            return measure
        from ...eval.metrics import parse_measure

        try:
            return str(parse_measure(measure))
        except ConfigError as exc:
            raise ConfigError(f"metric {measure!r} cannot be produced by the retrieval objective: {exc} "
                              f"It also offers {', '.join(self.EXTRA)}.") from None

    def model_sha256(self, cfg: RagbenchConfig) -> str | None:
        from ...retrieval.factory import needs_embedder

        return embedder_for(cfg).sha256 if needs_embedder(cfg.retrieval.mode) else None

    # -- building (the factory's cached parts) ---------------------------------------------------------------
    @property
    def parts(self) -> Any:
        """The :class:`~ragbench.retrieval.factory.IndexedParts` of this corpus (chunks, vectors, indexed parts)."""
        if self._parts is None:
            from ...retrieval.factory import IndexedParts

            self._parts = IndexedParts(self.documents)
        return self._parts

    def chunks(self, cfg: RagbenchConfig) -> list[Any]:
        return self.parts.chunks(cfg)

    def vectors(self, cfg: RagbenchConfig) -> np.ndarray:
        return self.parts.vectors(cfg)

    def system(self, cfg: RagbenchConfig) -> Any:
        """An indexed retriever for ``cfg`` (parts shared between configurations that agree on them)."""
        return self.parts.system(cfg)

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

