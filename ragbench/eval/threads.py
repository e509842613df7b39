"""Thread recovery: do DCS's continuity nodes (DCNs) recover the labelled lines of work of a conversation?

The DCS-EE-RAG test set (``dcs_test_messages.json``) labels each of 80 messages with its ``thread``. We replay the
messages in time order with the clock at each message's timestamp: first the context DCS would assemble for the
message is taken from the earlier messages, then the message is routed to a DCN and registered. At the end one
merge pass runs. Scores, over the messages of the real threads (``noise`` and the one-message ``cross-ref-*``
labels belong to no single line of work and are left out):

* ``purity``, ``ari`` (adjusted Rand index), ``nmi`` of the DCN assignment against ``thread`` (scikit-learn);
* ``context_share``: mean share of a message's assembled context that comes from its own thread (messages with an
  empty context are skipped), next to ``base_share``, the share its thread has in the whole prior history (what a
  context that ignores threads would get), and ``context_size``, the mean number of context messages.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from datetime import datetime
from typing import Sequence

import numpy as np
import pandas as pd

from ..config import DcsConfig
from ..dcs.assembler import DcsContextAssembler
from ..dcs.classifier import Classifier, PatternClassifier
from ..errors import DataError

#: Labels that are not lines of work.
def is_real_thread(label: str) -> bool:
    return label != "noise" and not label.startswith("cross-ref")


def load_messages(path: str | Path) -> pd.DataFrame:
    """``id, content, timestamp (UTC), thread, notes`` sorted by time (the EVAL engineer's loader)."""
    from .datasets import load_dcs_messages

    return load_dcs_messages(path)


@dataclass(frozen=True)
class ThreadReport:
    setting: str
    messages: int
    dcns: int
    merges: int
    purity: float
    ari: float
    nmi: float
    context_share: float
    base_share: float
    context_size: float

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def purity(labels: Sequence[str], clusters: Sequence[object]) -> float:
    """Share of items whose cluster's majority label is their own label."""
    if len(labels) != len(clusters):
        raise DataError(f"purity: {len(labels)} labels but {len(clusters)} cluster ids.")
    if not labels:
        return 0.0
    table = pd.crosstab(pd.Series(list(map(str, clusters))), pd.Series(list(labels)))
    return float(table.max(axis=1).sum() / len(labels))


def replay(messages: pd.DataFrame, classifier: Classifier,
           config: DcsConfig) -> tuple[pd.DataFrame, DcsContextAssembler, int]:
    """Route every message; returns a frame ``id, thread, dcn, context`` (context = assembled message ids),
    the assembler, and the number of merges of the final merge pass."""
    for col in ("id", "content", "timestamp", "thread"):
        if col not in messages.columns:
            raise DataError(f"thread replay: expected columns id, content, timestamp, thread; missing {col!r}.")
    clock: dict[str, datetime | None] = {"now": None}
    # The assembler never reads the clock here: every replayed message carries its own timestamp.
    asm = DcsContextAssembler(config, clock=lambda: clock["now"],  # type: ignore[arg-type, return-value]
                              escalation=classifier.is_escalation)
    contexts: list[list[str]] = []
    for row in messages.itertuples(index=False):
        ts = pd.Timestamp(row.timestamp).to_pydatetime()
        clock["now"] = ts
        key = classifier.classify(row.content)
        node = asm.match_dcn(key)
        query = key.with_dcns((node.dcn_id,)) if node is not None else key
        contexts.append([s.message.message_id for s in asm.assemble(query)])
        asm.observe(str(row.id), key, row.content, ts)
    mapping = asm.merge_similar_dcns()
    out = pd.DataFrame({"id": messages["id"].astype(str), "thread": messages["thread"].astype(str),
                        "context": contexts})
    out["dcn"] = [asm.messages[i].hard_linked_dcns[0] if asm.messages[i].hard_linked_dcns else -1 for i in out["id"]]
    return out, asm, len(mapping)


def evaluate_threads(messages: pd.DataFrame, classifier: Classifier, config: DcsConfig,
                     setting: str = "") -> ThreadReport:
    from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

    routed, asm, merges = replay(messages, classifier, config)
    thread_of = dict(zip(routed["id"], routed["thread"]))
    real = routed[routed["thread"].map(is_real_thread)]
    shares, bases, sizes = [], [], []
    seen: list[str] = []
    for row in routed.itertuples(index=False):
        if is_real_thread(row.thread) and row.context:
            shares.append(np.mean([thread_of[c] == row.thread for c in row.context]))
            bases.append(np.mean([thread_of[c] == row.thread for c in seen]))
            sizes.append(len(row.context))
        seen.append(row.id)
    labels, clusters = list(real["thread"]), list(real["dcn"])
    return ThreadReport(setting, len(real), len(asm.nodes), merges, purity(labels, clusters),
                        float(adjusted_rand_score(labels, clusters)),
                        float(normalized_mutual_info_score(labels, clusters)),
                        float(np.mean(shares)) if shares else 0.0, float(np.mean(bases)) if bases else 0.0,
                        float(np.mean(sizes)) if sizes else 0.0)


def configured_classifier(dcs: DcsConfig, texts: Sequence[str] = (), embedder=None, seed: int = 42) -> Classifier:
    """The classifier ``dcs.classifier`` names: ``patterns`` (of ``dcs.profile``) or ``clusters`` (KMeans over the
    embeddings of ``texts``, ``dcs.clusters`` topics; needs ``embedder``)."""
    from ..errors import ConfigError

    if dcs.classifier == "patterns":
        return PatternClassifier(dcs.profile)
    if dcs.classifier == "clusters":
        if embedder is None or not len(texts):
            raise ConfigError("dcs.classifier=clusters needs an embedder and the texts to fit on.")
        from ..dcs.classifier import EmbeddingClusterClassifier

        return EmbeddingClusterClassifier(embedder, dcs.clusters, seed, "domain").fit(list(texts))
    raise ConfigError(f"dcs.classifier must be patterns or clusters, found {dcs.classifier!r}.")


def default_settings(embedder=None, n_clusters: int = 8, seed: int = 42,
                     texts: Sequence[str] | None = None,
                     config: DcsConfig | None = None) -> dict[str, tuple[Classifier, DcsConfig]]:
    """``faithful`` (source profile, source flaws), ``improved`` (word forms, fixes; assembled per ``config``,
    default :class:`DcsConfig`) and, given an embedder, ``clusters`` (the learned taxonomy: KMeans clusters of the
    texts' embeddings as the only topic ids, with the same assembler; fitted on the conversation itself, no
    labels)."""
    config = config or DcsConfig()
    settings: dict[str, tuple[Classifier, DcsConfig]] = {
        "faithful": (PatternClassifier("source"), DcsConfig(faithful=True, profile="source")),
        "improved": (PatternClassifier("improved"), config),
    }
    if embedder is not None:
        from ..dcs.classifier import EmbeddingClusterClassifier

        if texts is None:
            raise DataError("default_settings: the cluster setting needs the texts to fit on.")
        clf = EmbeddingClusterClassifier(embedder, n_clusters, seed, "domain")
        settings["clusters"] = (clf.fit(list(texts)), config)
    return settings


def thread_recovery(messages: pd.DataFrame, settings: dict[str, tuple[Classifier, DcsConfig]]) -> pd.DataFrame:
    """One row per setting with the :class:`ThreadReport` fields."""
    rows = [evaluate_threads(messages, clf, cfg, name).as_dict() for name, (clf, cfg) in settings.items()]
    return pd.DataFrame(rows).set_index("setting")
