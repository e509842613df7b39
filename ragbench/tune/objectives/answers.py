"""The ``answers`` objective: grounded answers on a golden set, question by question (``objective: answers``).

Each configuration answers the chosen golden questions as their askers (follow-ups through a chat session, as
``ragbench eval golden`` does) with the chat model of :func:`ragbench.llm.chat_model_for` (``llm.model`` /
``answer.chat_model``, ``llm.temperature``), over a store chunked and embedded per the config. Measures:
``CitationPrecision``, ``CitationRecall``, ``AnyCorrectCitation``, ``RefusalAccuracy``, ``SupportRatio``,
``FactInAnswer``, ``HandledRight``, ``ContextTokens``, ``ModelCalls`` (NaN where a measure does not apply, e.g.
citations of a refusal; means skip those). The config is used as given: set ``chunking.strategy: sentences`` and
the retrieval mode in the experiment's ``base`` (experiments/golden_answers.yaml).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from ...config import RagbenchConfig, config_hash
from ...errors import ConfigError
from ...retrieval.factory import Memo
from .base import COLUMNS, DatasetRef, Objective, _require, embedder_for, register_objective


class AnswersObjective(Objective):
    """Grounded-answer quality and cost per golden question."""

    name = "answers"
    # Follow-up questions depend on their chain's earlier turns, so a trial answers its whole split at once.
    incremental = False
    MEASURES = ("CitationPrecision", "CitationRecall", "AnyCorrectCitation", "RefusalAccuracy", "SupportRatio",
                "FactInAnswer", "HandledRight", "ContextTokens", "ModelCalls")
    report_measures = MEASURES

    def __init__(self, golden: Any, model: str | None = None) -> None:
        self.golden = golden
        self.model = model
        self.data_hash = golden.data_hash
        self._stores = Memo(2)

    def units(self) -> list[str]:
        return sorted(q.qid for q in self.golden.questions)

    def check_measure(self, measure: str) -> str:
        if measure not in self.MEASURES:
            raise ConfigError(f"metric {measure!r} cannot be produced by the answers objective; expected one of "
                              f"{', '.join(self.MEASURES)}.")
        return measure

    def model_sha256(self, cfg: RagbenchConfig) -> str | None:
        chat = self.model or cfg.llm.model or cfg.answer.chat_model
        return f"{embedder_for(cfg).sha256},{chat}@t={cfg.llm.temperature:g}"

    def _store(self, cfg: RagbenchConfig) -> Any:
        from ...eval.answers import build_store

        return self._stores.get((config_hash(cfg.chunking), config_hash(cfg.embedding)),
                                lambda: build_store(self.golden, cfg, embedder_for(cfg)))

    def __call__(self, cfg: RagbenchConfig, units: Sequence[str], measures: Sequence[str]) -> pd.DataFrame:
        from ...eval.answers import answer_golden, build_service, score_answers
        from ...llm import chat_model_for

        emb = embedder_for(cfg)
        service = build_service(self.golden, cfg, cfg.retrieval.mode, emb,
                                chat_model=chat_model_for(cfg, self.model, emb), store=self._store(cfg))
        answers, prompts = answer_golden(service, self.golden, list(units))
        per = score_answers("tuned", self.golden, answers, prompts)[COLUMNS]
        return per[per["measure"].isin(set(measures))].reset_index(drop=True)


class GoldenSetsAnswersObjective(Objective):
    """The ``answers`` objective over several golden sets (``dataset: golden:A,B,…``): a unit is ``<set>/<qid>``
    (the set named by its folder, as ``ragbench eval golden --data A B …`` names it), each set answered by its own
    :class:`AnswersObjective` over its own store. With ``split: {heldout_sets: [name, …]}`` whole sets are held out:
    the configuration is chosen on some organisations and reported on others."""

    name = "answers"
    incremental = False
    MEASURES = AnswersObjective.MEASURES
    report_measures = MEASURES

    def __init__(self, parts: Mapping[str, AnswersObjective]) -> None:
        self.parts = dict(parts)
        self.data_hash = config_hash({name: part.data_hash for name, part in self.parts.items()})

    @staticmethod
    def set_of(unit: str) -> str:
        return str(unit).split("/", 1)[0]

    def units(self) -> list[str]:
        return sorted(f"{name}/{qid}" for name, part in self.parts.items() for qid in part.units())

    def check_measure(self, measure: str) -> str:
        return next(iter(self.parts.values())).check_measure(measure)

    def model_sha256(self, cfg: RagbenchConfig) -> str | None:
        return next(iter(self.parts.values())).model_sha256(cfg)

    def __call__(self, cfg: RagbenchConfig, units: Sequence[str], measures: Sequence[str]) -> pd.DataFrame:
        by_set: dict[str, list[str]] = {}
        for unit in units:
            name, _, qid = str(unit).partition("/")
            if name not in self.parts or not qid:
                raise ConfigError(f"unit {unit!r} names no golden set of this dataset ({', '.join(self.parts)}).")
            by_set.setdefault(name, []).append(qid)
        frames = [self.parts[name](cfg, qids, measures).assign(qid=lambda d, n=name: n + "/" + d["qid"].astype(str))
                  for name, qids in by_set.items()]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)


@register_objective("answers", kinds=("golden",), options=("model",), several_sets=True)
def _answers(ds: DatasetRef, options: Mapping[str, Any]) -> Objective:
    from ...eval.golden import DEFAULT_FOLDER, load_golden

    model = options.get("model")
    chat = str(model) if model else None
    if len(ds.paths) > 1:
        from ...eval.golden_sets import set_names

        return GoldenSetsAnswersObjective({name: AnswersObjective(load_golden(_require(path, "golden folder")), chat)
                                           for name, path in zip(set_names(ds.paths), ds.paths, strict=True)})
    golden = load_golden(_require(ds.path, "golden folder") if ds.path is not None else DEFAULT_FOLDER)
    return AnswersObjective(golden, chat)
