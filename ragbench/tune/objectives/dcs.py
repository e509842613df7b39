"""The ``dcs-threads`` objective: DCS thread recovery on a labelled conversation."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ...config import RagbenchConfig, config_hash
from ...retrieval.factory import Memo
from ...errors import ConfigError, DataError
from .base import COLUMNS, DatasetRef, Objective, _require, embedder_for, register_objective


class DcsThreadsObjective(Objective):
    """DCS thread recovery on a labelled conversation; units are threads, rows are messages."""

    name = "dcs-threads"
    incremental = False  # a replay needs the whole (sub-)conversation at once
    MEASURES = ("purity", "context_share", "context_size")
    report_measures = MEASURES

    def __init__(self, path: Path) -> None:
        from ...eval.threads import is_real_thread, load_messages
        from ...provenance import data_hash

        self.messages = load_messages(path)
        self.real = is_real_thread
        self.threads = sorted({t for t in self.messages["thread"].astype(str) if is_real_thread(t)})
        if len(self.threads) < 2:
            raise DataError(f"{path}: fewer than two real threads; nothing to split.")
        self.data_hash = data_hash(path)
        self._classifiers = Memo(2)

    def classifier(self, cfg: RagbenchConfig) -> Any:
        """``dcs.classifier`` of the config; a clusters classifier is fitted once per embedding/k/seed on all
        messages (unsupervised: no labels are used)."""
        from ...eval.threads import configured_classifier

        if cfg.dcs.classifier != "clusters":
            return configured_classifier(cfg.dcs)
        key = (config_hash(cfg.embedding), cfg.dcs.clusters, cfg.seed)
        return self._classifiers.get(key, lambda: configured_classifier(
            cfg.dcs, list(self.messages["content"]), embedder_for(cfg), cfg.seed))

    def units(self) -> list[str]:
        return list(self.threads)

    def check_measure(self, measure: str) -> str:
        if measure not in self.MEASURES:
            raise ConfigError(f"metric {measure!r} cannot be produced by the dcs-threads objective; expected one of "
                              f"{', '.join(self.MEASURES)} (per message; ARI/NMI are not per-message scores).")
        return measure

    def __call__(self, cfg: RagbenchConfig, units: Sequence[str], measures: Sequence[str]) -> pd.DataFrame:
        from ...eval.threads import replay

        chosen = set(units)
        # Messages outside every real thread (noise, cross references) stay in as distractors.
        keep = self.messages["thread"].astype(str).map(lambda t: t in chosen or not self.real(t))
        routed, _, _ = replay(self.messages[keep].reset_index(drop=True), self.classifier(cfg), cfg.dcs)
        thread_of = dict(zip(routed["id"], routed["thread"]))
        scored = routed[routed["thread"].isin(chosen)]
        majority = scored.groupby("dcn")["thread"].agg(lambda s: s.value_counts().sort_index().idxmax())
        rows: list[tuple[str, str, float]] = []
        for r in scored.itertuples(index=False):
            if "purity" in measures:
                rows.append((r.id, "purity", float(majority[r.dcn] == r.thread)))
            if r.context and "context_share" in measures:
                rows.append((r.id, "context_share", float(np.mean([thread_of[c] == r.thread for c in r.context]))))
            if "context_size" in measures:
                rows.append((r.id, "context_size", float(len(r.context))))
        return pd.DataFrame(rows, columns=COLUMNS)



@register_objective("dcs-threads", kinds=("dcs-threads",))
def _dcs(ds: DatasetRef, options: Mapping[str, Any]) -> Objective:
    return DcsThreadsObjective(_require(ds.path, "DCS message file"))

