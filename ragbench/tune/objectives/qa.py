"""The ``qa`` objective (``dataset: qa:<FILE>``): the source's QA benchmark per question (:mod:`ragbench.eval.qa`),
with the chat model and temperature of the config (``llm.model``, ``llm.temperature``) — the source's
model × temperature auto-tuning is a grid over these two fields. Measures per question: ``Correct``,
``PossiblyCorrect``, ``DefinitelyWrong``, ``Indeterminate`` (0/1; means are rates) and ``QaScore``
(Correct + 0.5·Possibly − 2·Wrong)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ...config import RagbenchConfig, config_hash
from ...errors import ConfigError
from ...retrieval.factory import Memo
from .base import DatasetRef, Objective, _require, embedder_for, register_objective


class QaObjective(Objective):
    """QA outcomes per question for a chat model configuration."""

    name = "qa"
    MEASURES = ("Correct", "PossiblyCorrect", "DefinitelyWrong", "Indeterminate", "QaScore")
    report_measures = MEASURES

    def __init__(self, path: Path, few_shot: int = 3, model: str | None = None) -> None:
        from ...eval.qa import load_qa
        from ...provenance import data_hash

        self.items = {it.qid: it for it in load_qa(path)}
        self.few_shot, self.model = few_shot, model
        self.data_hash = data_hash(path)
        self._models = Memo(2)

    def units(self) -> list[str]:
        return list(self.items)

    def check_measure(self, measure: str) -> str:
        if measure not in self.MEASURES:
            raise ConfigError(f"metric {measure!r} cannot be produced by the qa objective; expected one of "
                              f"{', '.join(self.MEASURES)}.")
        return measure

    def model_sha256(self, cfg: RagbenchConfig) -> str | None:
        return f"{self.model or cfg.llm.model or cfg.answer.chat_model}@t={cfg.llm.temperature:g}"

    def __call__(self, cfg: RagbenchConfig, units: Sequence[str], measures: Sequence[str]) -> pd.DataFrame:
        from ...eval.qa import run_qa
        from ...llm import chat_model_for

        emb = embedder_for(cfg) if self.few_shot else None
        chat = self._models.get((self.model, config_hash(cfg.llm), config_hash(cfg.answer)),
                                lambda: chat_model_for(cfg, self.model, emb))
        # Examples come from the whole file (as the source does), the graded questions from ``units``.
        items = list(self.items.values())
        res = run_qa(items, chat, emb, self.few_shot, only=set(units))
        per = res.per_query()
        return per[per["measure"].isin(set(measures))].reset_index(drop=True)


@register_objective("qa", kinds=("qa",), options=("few_shot", "model"))
def _qa(ds: DatasetRef, options: Mapping[str, Any]) -> Objective:
    model = options.get("model")
    return QaObjective(_require(ds.path, "QA file"), int(options.get("few_shot", 3)), str(model) if model else None)
