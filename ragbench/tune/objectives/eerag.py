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
    report_measures = MEASURES

    def __init__(self, path: Path, mode: str = "dense", elector: str | None = None,
                 model: str | None = None) -> None:
        from ...eval.datasets import load_eerag_bench
        from ...provenance import data_hash

        self.bench = load_eerag_bench(path)
        self.cases = {str(c.case_id): c for c in self.bench.cases}
        # elector None: the config's eerag.elector (tunable); model None: llm.model / answer.chat_model.
        self.mode, self.elector, self.model = mode, elector, model
        self._models = Memo(2)
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
        sha = embedder_for(cfg).sha256
        if (self.elector or cfg.eerag.elector) == "llm":  # the chat model is part of the system too
            sha += f",{self.model or cfg.llm.model or cfg.answer.chat_model}@t={cfg.llm.temperature:g}"
        return sha

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
        elector = self.elector or cfg.eerag.elector
        chat = None
        if elector == "llm":
            from ...llm import chat_model_for

            chat = self._models.get((self.model, config_hash(cfg.llm), config_hash(cfg.answer)),
                                    lambda: chat_model_for(cfg, self.model, emb))
        model, prompt = make_elector(elector, cfg, emb, chat)
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



@register_objective("eerag", kinds=("eerag",), options=("mode", "elector", "model"))
def _eerag(ds: DatasetRef, options: Mapping[str, Any]) -> Objective:
    elector, model = options.get("elector"), options.get("model")
    return EeragObjective(_require(ds.path, "EE-RAG benchmark file"), mode=str(options.get("mode", "dense")),
                          elector=str(elector) if elector else None, model=str(model) if model else None)

