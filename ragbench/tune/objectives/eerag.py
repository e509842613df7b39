"""The ``eerag`` objective: the EE-RAG benchmark, case by case."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from ...config import RagbenchConfig, config_hash
from ...errors import ConfigError
from ...retrieval.factory import Memo
from .base import COLUMNS, DatasetRef, Objective, _require, embedder_for, register_objective


class EeragObjective(Objective):
    """The EE-RAG benchmark, case by case (election scores, context tokens, model calls)."""

    name = "eerag"
    MEASURES = ("CandidateRecall", "ElectionPrecision", "ElectionRecall", "ElectionF1", "RetrievalRate",
                "AnswerHintMatched", "context_tokens", "model_calls")

    def __init__(self, path: Path, mode: str = "dense", elector: str = "policy") -> None:
        from ...eval.datasets import load_eerag_bench
        from ...provenance import data_hash

        self.bench = load_eerag_bench(path)
        self.cases = {str(c.case_id): c for c in self.bench.cases}
        self.mode, self.elector = mode, elector
        self.data_hash = data_hash(path)
        self._stores = Memo(2)

    def units(self) -> list[str]:
        return sorted(self.cases)

    def check_measure(self, measure: str) -> str:
        if measure not in self.MEASURES:
            raise ConfigError(f"metric {measure!r} cannot be produced by the eerag objective; expected one of "
                              f"{', '.join(self.MEASURES)}.")
        return measure

    def model_sha256(self, cfg: RagbenchConfig) -> str | None:
        return embedder_for(cfg).sha256

    def _store(self, cfg: RagbenchConfig) -> Any:
        from ...eval.eerag_bench import seed_store
        from ...store import KnowledgeStore

        def make() -> Any:
            store = KnowledgeStore.open(":memory:")
            seed_store(store, self.bench, embedder_for(cfg), cfg.eerag.summary_tokens)
            return store

        return self._stores.get((config_hash(cfg.embedding), cfg.eerag.summary_tokens), make)

    def __call__(self, cfg: RagbenchConfig, units: Sequence[str], measures: Sequence[str]) -> pd.DataFrame:
        from ...eerag.pipeline import EeragPipeline
        from ...eval.eerag_bench import make_elector
        from ...eval.metrics import evaluate_election
        from ...retrieval.retriever import retriever_from_store

        emb = embedder_for(cfg)
        store = self._store(cfg)
        retriever = retriever_from_store(store, self.mode, cfg, emb)
        model, prompt = make_elector(self.elector, cfg, emb)
        rows, extra = [], []
        for cid in units:
            case = self.cases[cid]
            res = EeragPipeline(store, retriever, model, cfg.eerag, embedder=emb, system_prompt=prompt,
                                audit=False).run(case.query, request_id=f"tune:{cid}")
            rows.append({"case_id": cid, "expected": list(case.expected_slugs), "surfaced": res.surfaced_docs,
                         "elected": res.elected_docs, "expect_retrieval": case.expect_retrieval,
                         "answer": res.final_response, "hint": case.expected_answer_hint})
            extra += [(cid, "context_tokens", float(res.context_tokens)), (cid, "model_calls", float(res.model_calls))]
        per = pd.concat([evaluate_election(rows), pd.DataFrame(extra, columns=COLUMNS)], ignore_index=True)
        return per[per["measure"].isin(set(measures))].reset_index(drop=True)



@register_objective("eerag", kinds=("eerag",))
def _eerag(ds: DatasetRef, options: Mapping[str, Any]) -> Objective:
    return EeragObjective(_require(ds.path, "EE-RAG benchmark file"), mode=str(options.get("mode", "dense")),
                          elector=str(options.get("elector", "policy")))

