"""Objectives: what a trial measures. A small registry maps a name to a factory ``(dataset, options) → Objective``;
an :class:`Objective` is a callable ``(cfg, units) → long table qid, measure, value`` over a subset of the dataset's
split units (queries, benchmark cases or conversation threads), so the sweep code never changes when a new kind of
objective is added::

    @register_objective("my-objective", kinds=("golden",))
    def _make(dataset: DatasetRef, options: Mapping[str, Any]) -> Objective: ...

Built in:

* ``retrieval`` (``golden[:DIR]``, ``beir:<DIR>:<split>``): any retrieval measure (``nDCG@10``, ``R@100``,
  ``RR@10``, ``P@5``, ``AP`` …), ``latency_ms`` (search time of the query) and ``context_tokens`` (tokens of the top
  ``retrieval.k`` chunks, what a RAG prompt would carry). Golden queries run as their asker (ACLs enforced).
* ``eerag`` (``eerag:<FILE>``): the EE-RAG benchmark per case (``ElectionF1``, ``ElectionPrecision``,
  ``ElectionRecall``, ``CandidateRecall``, ``RetrievalRate``, ``context_tokens``, ``model_calls``).
* ``dcs-threads`` (``dcs-threads:<FILE>``): DCS thread recovery; the split unit is a thread and each message of a
  real thread gets ``purity`` (1 when its DCN's majority thread is its own; the mean is the purity),
  ``context_share`` and ``context_size``.
* ``answers`` (``golden[:DIR]`` with ``objective: answers``): grounded answers per question (``CitationPrecision``,
  ``RefusalAccuracy``, ``FactInAnswer``, ``ContextTokens`` …) with the config's chat model and temperature.
* ``dcs-locomo`` (``locomo:<FILE>``): DCS evidence recall per LoCoMo question (``DcsRecall@k``,
  ``DcsDenseRecall@k``, ``DcsTokens@k``).
* ``qa`` (``qa:<FILE>``): the source's QA benchmark per question (``Correct``, ``PossiblyCorrect``,
  ``DefinitelyWrong``, ``Indeterminate``, ``QaScore``) with the config's chat model and temperature.

Every objective names ``report_measures``: all of them are logged for every trial, next to the optimised ones.

Expensive per-configuration work (chunking, indexing, embedding through the persistent cache) is memoised by the
hash of the config sections it depends on, so evaluating a configuration query batch by query batch (for pruning)
costs one index build.
"""
from __future__ import annotations

from typing import Any, Mapping

from ...errors import ConfigError
from .answers import AnswersObjective, GoldenSetsAnswersObjective
from .base import (
    COLUMNS,
    OBJECTIVES,
    DatasetRef,
    Objective,
    check_options,
    embedder_for,
    fold_labels,
    parse_dataset,
    register_objective,
    split_by_sets,
    split_fold,
    split_units,
)
from .dcs import DcsThreadsObjective
from .eerag import EeragObjective
from .locomo import LocomoDcsObjective
from .qa import QaObjective
from .retrieval import RetrievalObjective

#: The objective of a dataset kind when the experiment names none (golden also has ``answers``).
DEFAULTS = {"golden": "retrieval", "beir": "retrieval"}

__all__ = ["AnswersObjective", "GoldenSetsAnswersObjective", "COLUMNS", "LocomoDcsObjective", "OBJECTIVES",
           "DatasetRef", "QaObjective", "DcsThreadsObjective", "EeragObjective", "Objective", "RetrievalObjective",
           "embedder_for", "fold_labels", "make_objective", "parse_dataset", "register_objective", "split_by_sets",
           "split_fold", "split_units"]


def make_objective(dataset: str, name: str | None = None, options: Mapping[str, Any] | None = None) -> Objective:
    """The objective ``name`` (default: the one registered for the dataset's kind) bound to ``dataset``."""
    ds = parse_dataset(dataset)
    if name is None:
        matches = [n for n, e in OBJECTIVES.items() if ds.kind in e.kinds]
        if not matches:
            raise ConfigError(f"no objective is registered for dataset kind {ds.kind!r}.")
        name = DEFAULTS.get(ds.kind, matches[0])
    if name not in OBJECTIVES:
        raise ConfigError(f"unknown objective {name!r}; registered: {', '.join(sorted(OBJECTIVES))}.")
    entry = OBJECTIVES[name]
    if ds.kind not in entry.kinds:
        raise ConfigError(f"objective {name!r} takes datasets of kind {', '.join(entry.kinds)}, not {ds.kind!r}.")
    if ds.paths and not entry.several_sets:
        several = sorted(n for n, e in OBJECTIVES.items() if e.several_sets)
        raise ConfigError(f"objective {name!r} takes one golden folder, not {len(ds.paths)}. Fix: give one folder, "
                          f"or use an objective that pools several ({', '.join(several)}).")
    check_options(name, entry, options or {})
    return entry.factory(ds, dict(options or {}))
