"""The golden evaluation over several golden sets at once: each set scored on its own, then all of them pooled
(``ragbench eval golden --data A B …``; one set: :func:`ragbench.eval.golden_run.run_golden`).

A number reported for one organisation says little about the next one (issue 15: thresholds fitted to one set did
not carry). Choosing on one set and reporting on the others, or reporting over many, needs each set's numbers side by
side and the pooled ones: the same measures over the union of the questions, each question weighing the same
whichever set it comes from (a micro average, not a mean of the sets' means).

Steps: every set is evaluated exactly as alone (:func:`~ragbench.eval.golden_run.run_golden`, one shared embedder)
into ``<run>/<set>/`` → the sets' per-question tables are stacked (qids become ``<set>/<qid>``) and summarised by
:func:`ragbench.eval.harness.summarise` (aggregate, per slice, paired tests over all questions) → the decision
tables are added up → ``<run>/`` receives ``per_set.csv`` (set × system × measure), the pooled ``aggregate.csv``,
``per_slice.csv``, ``significance.csv``, ``per_query.csv`` (with a ``set`` column), ``decisions.csv``, ``meta.json``
and a bar chart → one MLflow run holds the pooled metrics under the names a single-set run uses (so both compare in
the MLflow UI), with one nested run per set.
"""
from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from ..config import RagbenchConfig
from ..errors import ConfigError
from .decisions import COLUMNS
from .golden_run import (DEFAULT_MODES, EXPERIMENT, GoldenEval, default_run_dir, golden_baselines, record_golden,
                         result_metrics, run_footer, summary_json, tables_json, tables_text)
from .harness import ExperimentResult, summarise, write_atomic
from .plots import bar_chart

POOLED_FILES = ("per_set.csv", "aggregate.csv", "per_slice.csv", "significance.csv", "decisions.csv", "meta.json",
                "golden_metrics.png")


@dataclass(frozen=True)
class PooledEval:
    #: Each set's own evaluation, by set name (the folder's name), in the order given.
    sets: dict[str, GoldenEval]
    #: The pooled tables: ``aggregate`` (system × measure), ``per_query`` (with ``set``), ``per_slice``,
    #: ``significance``, as :class:`~ragbench.eval.harness.ExperimentResult` holds them.
    result: ExperimentResult
    #: ``set``, ``system``, ``n`` (questions), then every measure: each set's aggregate, stacked.
    per_set: pd.DataFrame
    #: What decided each answer, added up over the sets (:mod:`ragbench.eval.decisions` columns, with ``system``).
    decisions: pd.DataFrame
    run_dir: Path
    mlflow_run_id: str | None = None
    tracking_error: str | None = None
    tracking_note: str | None = None


def set_names(folders: Sequence[str | Path]) -> list[str]:
    """A name per golden folder: its folder name, with ``-2``, ``-3``… when two folders share one. The same folder
    given twice is an error (it would count its questions twice in the pooled numbers)."""
    seen: dict[Path, str] = {}
    names: list[str] = []
    for folder in folders:
        resolved = Path(folder).resolve()
        if resolved in seen:
            raise ConfigError(f"the golden folder {folder} is listed twice; pooling it would count its questions "
                              "twice. Fix: list each golden folder once.")
        base = Path(folder).name or "golden"
        name, n = base, 1
        while name in names:
            n += 1
            name = f"{base}-{n}"
        seen[resolved] = name
        names.append(name)
    return names


def pool_per_query(sets: dict[str, GoldenEval]) -> pd.DataFrame:
    """The sets' per-question tables stacked, qids made unique as ``<set>/<qid>`` and a ``set`` column added."""
    parts = [ev.result.per_query.assign(set=name, qid=name + "/" + ev.result.per_query["qid"].astype(str))
             for name, ev in sets.items()]
    return pd.concat(parts, ignore_index=True)


def pool_decisions(sets: dict[str, GoldenEval]) -> pd.DataFrame:
    """The sets' decision tables added up per system and rule, most frequent rule first within each system."""
    parts = [ev.decisions for ev in sets.values() if ev.decisions is not None and len(ev.decisions)]
    if not parts:
        return pd.DataFrame(columns=["system", *COLUMNS])
    counts = [c for c in COLUMNS if c != "decided_by"]
    table = pd.concat(parts, ignore_index=True).groupby(["system", "decided_by"], as_index=False)[counts].sum()
    table = table.sort_values(["system", "n", "decided_by"], ascending=[True, False, True], ignore_index=True)
    return table[["system", *COLUMNS]]


def per_set_table(sets: dict[str, GoldenEval]) -> pd.DataFrame:
    """Each set's aggregate with its name and question count: one row per set and system."""
    rows = []
    for name, ev in sets.items():
        agg = ev.result.aggregate.reset_index()
        n = int(ev.result.per_query["qid"].nunique())
        rows.append(agg.assign(set=name, n=n))
    table = pd.concat(rows, ignore_index=True)
    return table[["set", "system", "n", *[c for c in table.columns if c not in ("set", "system", "n")]]]


def run_golden_sets(folders: Sequence[str | Path], modes: Sequence[str] = DEFAULT_MODES, k: int = 5, seed: int = 0,
                    out: str | Path | None = None, cfg: RagbenchConfig | None = None, log_mlflow: bool = True,
                    experiment_name: str = EXPERIMENT, tracking_timeout: float | None = 10, embedder: Any = None,
                    show_progress: bool = False, answers: bool = True, models: Sequence[str] = (),
                    judges: Sequence[str] = (), rescues: Sequence[str] = (),
                    user_set: Collection[str] = ()) -> PooledEval:
    """Evaluate every golden folder of ``folders`` as :func:`~ragbench.eval.golden_run.run_golden` would, then pool
    them (module doc). The options mean what they mean there; ``out`` is the parent run folder (default
    ``runs/golden-sets/<timestamp>``)."""
    from ..retrieval.embedding import make_embedder
    from ..retrieval.retriever import needs_embedder
    from .golden import load_golden
    from .golden_run import run_golden

    cfg = cfg or RagbenchConfig()
    if len(folders) < 2:
        raise ConfigError("eval golden: pooling needs at least two golden folders. Fix: pass several --data "
                          "folders, or one for a single-set run.")
    if not modes:
        raise ConfigError("eval golden: no retrieval modes given. Fix: e.g. --retriever bm25,dense,lsh,hybrid.")
    names = set_names(folders)
    # Every folder is loaded (and so checked) before any is scored: a bad last one writes nothing.
    goldens = [load_golden(folder) for folder in folders]
    if embedder is None and (answers or any(needs_embedder(m) for m in modes)):
        embedder = make_embedder(cfg.embedding)  # loaded once, not once per set
    run_dir = Path(out) if out is not None else default_run_dir("golden-sets")
    sets: dict[str, GoldenEval] = {}
    for name, golden in zip(names, goldens, strict=True):
        sets[name] = run_golden(golden, modes, k, seed, run_dir / name, cfg, log_mlflow=False,
                                experiment_name=experiment_name, embedder=embedder, show_progress=show_progress,
                                answers=answers, models=models, judges=judges, rescues=rescues,
                                user_set=user_set)
    first = next(iter(sets.values()))
    systems = [str(s) for s in first.result.aggregate.index]
    baselines = golden_baselines(systems)
    per_query = pool_per_query(sets)
    aggregate, per_slice, significance = summarise(per_query, systems, baselines, seed)
    meta = {"sets": {name: {"folder": str(Path(f)), "data_hash": ev.data_hash, "run_dir": str(ev.run_dir),
                            "questions": int(ev.result.per_query["qid"].nunique())}
                     for (name, ev), f in zip(sets.items(), folders, strict=True)},
            "questions": int(per_query["qid"].nunique()), "systems": systems}
    result = ExperimentResult(aggregate, per_query, per_slice, significance, meta=meta, save_dir=run_dir)
    pooled = PooledEval(sets, result, per_set_table(sets), pool_decisions(sets), run_dir)
    save_pooled(pooled, k)
    return record_pooled(pooled, cfg, list(folders), experiment_name, log_mlflow, tracking_timeout)


def save_pooled(pooled: PooledEval, k: int) -> None:
    """Write the pooled tables and chart into the parent run folder (each set's own are in its subfolder)."""
    root, res = pooled.run_dir, pooled.result
    write_atomic(root / "per_set.csv", pooled.per_set.to_csv(index=False))
    write_atomic(root / "aggregate.csv", res.aggregate.to_csv())
    write_atomic(root / "per_slice.csv", res.per_slice.to_csv(index=False))
    write_atomic(root / "significance.csv", res.significance.to_csv(index=False))
    write_atomic(root / "per_query.csv", res.per_query.to_csv(index=False))
    write_atomic(root / "meta.json", json.dumps(res.meta, indent=2, sort_keys=True))
    if len(pooled.decisions):
        write_atomic(root / "decisions.csv", pooled.decisions.to_csv(index=False))
    bar_chart(res.aggregate, root / "golden_metrics.png", f"{len(pooled.sets)} golden sets pooled, k = {k}")


def record_pooled(pooled: PooledEval, cfg: RagbenchConfig, folders: Sequence[str | Path],
                  experiment_name: str = EXPERIMENT, enabled: bool = True,
                  timeout: float | None = 10) -> PooledEval:
    """Log the pooled run (its metrics named as a single set's) and each set's run nested under it."""
    from ..tracking import record_run

    first = next(iter(pooled.sets.values()))
    params = dict(first.params or {})
    params["eval"] = {**params.get("eval", {}), "data": ",".join(str(f) for f in folders),
                      "sets": ",".join(pooled.sets)}
    rec = record_run(experiment_name, f"golden-sets-{pooled.run_dir.name}", cfg, result_metrics(pooled.result),
                     params=params, artifacts=[pooled.run_dir / name for name in POOLED_FILES],
                     data_hash=",".join(ev.data_hash or "" for ev in pooled.sets.values()),
                     tags={"dataset": "golden-sets", "run_dir": str(pooled.run_dir), "sets": ",".join(pooled.sets)},
                     enabled=enabled, timeout=timeout)
    sets = pooled.sets
    if rec.run_id:
        sets = {name: record_golden(ev, cfg, experiment_name, enabled, timeout, parent_run_id=rec.run_id,
                                    tags={"set": name}) for name, ev in sets.items()}
        errors = [ev.tracking_error for ev in sets.values() if ev.tracking_error]
        if errors and not rec.error:
            rec = replace(rec, error=errors[0])
    return replace(pooled, sets=sets, mlflow_run_id=rec.run_id, tracking_error=rec.error, tracking_note=rec.skipped)


#: The answer measures the per-set table prints (all are in ``per_set.csv``), refusal accuracy also on the two
#: slices of questions to refuse.
HEADLINE = ("RefusalAccuracy", "refuse-acl", "refuse-unanswerable", "HandledRight", "FactInAnswer",
            "CitationPrecision", "AnyCorrectCitation", "LeakedDocs", "SecretInAnswer", "InjectionQuoted")


def headline_table(sets: dict[str, GoldenEval]) -> pd.DataFrame:
    """Set × answer system: the :data:`HEADLINE` measures (refusal accuracy per refuse slice from the set's per-slice
    table); without an answer system, set × retrieval system with every retrieval measure."""
    rows = []
    for name, ev in sets.items():
        agg, per = ev.result.aggregate, ev.result.per_slice
        answer_systems = [s for s in agg.index if str(s).startswith("answer")]
        for system in answer_systems or list(agg.index):
            row: dict[str, Any] = {"set": name, "system": system}
            if not answer_systems:
                row.update(agg.loc[system].dropna().to_dict())
            else:
                for m in HEADLINE:
                    if m in agg.columns:
                        row[m] = agg.loc[system, m]
                    else:
                        hit = per[(per["system"] == system) & (per["slice"] == m)]
                        row[m] = float(hit["RefusalAccuracy"].iloc[0]) if len(hit) else float("nan")
            rows.append(row)
    return pd.DataFrame(rows).set_index(["set", "system"])


def pooled_report(pooled: PooledEval) -> str:
    """The printed tables: each set's headline measures side by side (:func:`headline_table`), then the pooled
    aggregate, per-slice, significance and decision tables."""
    lines = [f"Per set ({len(pooled.sets)} golden sets, {pooled.result.meta['questions']} questions; every measure "
             f"in {pooled.run_dir / 'per_set.csv'})",
             headline_table(pooled.sets).to_string(float_format=lambda v: f"{v:.3f}"), ""]
    lines += tables_text(pooled.result.aggregate, pooled.result.per_slice, pooled.result.significance,
                         pooled.decisions, scope="Pooled ")
    return "\n".join(lines + run_footer(pooled.run_dir, pooled.mlflow_run_id, pooled.tracking_note))


def pooled_json(pooled: PooledEval) -> dict[str, Any]:
    """The ``--json`` record: the pooled ``systems``, ``slices`` and ``decisions`` under the keys of a single-set
    run, ``questions`` (pooled count), and ``sets``: each set's own record (:func:`summary_json`)."""
    res = pooled.result
    return {**tables_json(res.aggregate, res.per_slice, pooled.decisions), "questions": res.meta["questions"],
            "sets": {name: summary_json(ev) for name, ev in pooled.sets.items()},
            "mlflow_run_id": pooled.mlflow_run_id, "run_dir": str(pooled.run_dir)}
