"""The ``dcs-locomo`` objective (``dataset: locomo:<FILE>``): DCS context selection on LoCoMo, question by question.

Units are questions (``<sample_id>#<index>``), so the held-out split holds questions of every conversation. For a
configuration, each conversation's turns are replayed through DCS (``dcs.*`` fields) and every question is scored
with the LoCoMo evidence recall of the first k turns: ``DcsRecall@k`` (DCS alone) and ``DcsDenseRecall@k`` (dense
cosine + ``options.dcs_weight`` × the DCS score, the ``dcs_dense`` strategy of ``ragbench dcs locomo``), plus
``DcsTokens@k`` (tokens of the DCS selection). Turn texts and their embeddings are computed once per embedding
config.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...config import RagbenchConfig, config_hash
from ...errors import ConfigError
from ...retrieval.factory import Memo
from .base import COLUMNS, DatasetRef, Objective, _require, embedder_for, register_objective

_MEASURE = re.compile(r"^(DcsRecall|DcsDenseRecall|DcsTokens)@(\d+)$")


class LocomoDcsObjective(Objective):
    """DCS (and DCS + dense) evidence recall on LoCoMo questions."""

    name = "dcs-locomo"
    incremental = True
    report_measures = ("DcsRecall@10", "DcsDenseRecall@10", "DcsTokens@10", "DcsRecall@25")

    def __init__(self, path: Path, dcs_weight: float = 0.1) -> None:
        from ...eval.datasets import load_locomo
        from ...eval.locomo import TurnText, load_captions, turn_texts
        from ...provenance import data_hash

        self.convs = {c.sample_id: c for c in load_locomo(path)}
        captions = load_captions(path)
        how = TurnText()
        self.texts = {s: turn_texts(c, how, captions) for s, c in self.convs.items()}
        self.raw = {s: turn_texts(c, TurnText(speaker=True, captions=True, date=False, before=0), captions)
                    for s, c in self.convs.items()}
        self.dcs_weight = float(dcs_weight)
        self.data_hash = data_hash(path)
        self._vectors = Memo(2)

    def units(self) -> list[str]:
        return [f"{s}#{i}" for s, c in self.convs.items() for i in range(len(c.qa))]

    def check_measure(self, measure: str) -> str:
        m = _MEASURE.match(measure)
        if not m or int(m.group(2)) < 1:
            raise ConfigError(f"metric {measure!r} cannot be produced by the dcs-locomo objective; expected "
                              "DcsRecall@k, DcsDenseRecall@k or DcsTokens@k (k ≥ 1).")
        return measure

    def model_sha256(self, cfg: RagbenchConfig) -> str | None:
        return embedder_for(cfg).sha256

    def _turn_vectors(self, cfg: RagbenchConfig) -> dict[str, np.ndarray]:
        def make() -> dict[str, np.ndarray]:
            emb = embedder_for(cfg)
            return {s: np.asarray(emb.embed(t), dtype=np.float32) for s, t in self.texts.items()}

        return self._vectors.get(config_hash(cfg.embedding), make)

    def __call__(self, cfg: RagbenchConfig, units: Sequence[str], measures: Sequence[str]) -> pd.DataFrame:
        from ...eval.locomo import dcs_rankings
        from ...eval.metrics import evidence_recall_at_k
        from ...text import count_tokens

        parsed = [(m, *_MEASURE.match(m).groups()) for m in measures]  # type: ignore[union-attr]
        kmax = max(int(k) for _, _, k in parsed) if parsed else 10
        by_conv: dict[str, list[int]] = {}
        for u in units:
            sample, _, idx = u.rpartition("#")
            by_conv.setdefault(sample, []).append(int(idx))
        vectors = self._turn_vectors(cfg)
        emb = embedder_for(cfg)
        rows: list[tuple[str, str, float]] = []
        for sample, idxs in by_conv.items():
            conv = self.convs[sample]
            qas = [conv.qa[i] for i in idxs]
            ids = [t.dia_id for t in conv.turns]
            tokens = np.array([count_tokens(t) for t in self.raw[sample]])
            ranked = dcs_rankings(conv, self.raw[sample], [q.question for q in qas], cfg.dcs, limit=kmax)
            qvecs = np.asarray(emb.embed([q.question for q in qas]), dtype=np.float32)
            cos = qvecs @ vectors[sample].T
            for j, (i, qa) in enumerate(zip(idxs, qas, strict=True)):
                dcs_order = [t for t, _ in ranked[j]]
                score = np.zeros(len(ids))
                for t, s in ranked[j]:
                    score[t] = s
                combo = np.argsort(-(cos[j] + self.dcs_weight * score), kind="stable")
                for name, kind, k in parsed:
                    n = int(k)
                    if kind == "DcsTokens":
                        value = float(tokens[dcs_order[:n]].sum()) if dcs_order else 0.0
                    else:
                        order = dcs_order if kind == "DcsRecall" else list(combo)
                        value = evidence_recall_at_k(qa.evidence, [ids[t] for t in order[:n]], n)
                    rows.append((f"{sample}#{i}", name, value))
        return pd.DataFrame(rows, columns=COLUMNS)


@register_objective("dcs-locomo", kinds=("locomo",), options=("dcs_weight",))
def _locomo(ds: DatasetRef, options: Mapping[str, Any]) -> Objective:
    return LocomoDcsObjective(_require(ds.path, "LoCoMo file"), float(options.get("dcs_weight", 0.1)))
