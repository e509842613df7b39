"""Optuna sweeps over a :class:`~ragbench.tune.space.TuneSpec`.

A trial samples the space, applies it to the base configuration and evaluates the tuning split with the
objective. Single-objective trials report each query's value with ``trial.report(value, step=query_index)`` (queries
in a seeded per-trial order, in batches) and are stopped early by ``optuna.pruners.WilcoxonPruner`` when they are
significantly worse than the best trial on the same queries. A trial that raises is recorded as failed (its error
in the trial's ``error`` attribute) and the study goes on.

``workers > 1`` starts that many processes (``spawn``), each with its own storage handle, its own worker slot (the
sampler's seed is ``seed + slot``; independent ``ragbench tune`` processes on one journal take distinct slots too)
and its own share of the remaining budget, so the study ends with exactly the budgeted number of finished trials;
a ``MaxTrialsCallback`` also stops a worker once the study holds the budget (several machines sharing an RDB study).
A resumed study (same name and storage) runs only what is missing from its budget; its search space must be
unchanged (checked by a fingerprint).
"""
from __future__ import annotations

import logging
import multiprocessing as mp
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..config import RagbenchConfig, config_hash
from ..errors import ConfigError, DataError, StoreError, require_extra
from ..provenance import code_hash
from .objectives import Objective, make_objective, split_by_sets, split_fold, split_units
from .space import TuneSpec, spec_to_dict
from .storage import WorkerSlot, is_rdb, journal_path, open_storage, process_alive, process_id, quiet_experimental

log = logging.getLogger(__name__)
FINISHED = ("COMPLETE", "PRUNED", "FAIL")


@dataclass
class Prepared:
    """A spec bound to its data: the objective, canonical metric names and the seeded split."""

    spec: TuneSpec
    objective: Objective
    metrics: list[str]
    tune: list[str]
    heldout: list[str]
    reported: list[str] = field(default_factory=list)   # every measure a trial logs: metrics + the objective's

    def __post_init__(self) -> None:
        if not self.reported:
            self.reported = list(self.metrics)

    @property
    def prunes(self) -> bool:
        return self.spec.pruner != "none" and self.objective.incremental and not self.spec.multi_objective


def check_stages(spec: TuneSpec) -> None:
    """Build the chunker and (for modes that embed) the embedder of the base config and of every choice in the
    space, so a setting no stage accepts (``embedding.model: bert``) fails here, not in every trial."""
    from dataclasses import replace

    from ..retrieval.factory import make_chunker, make_embedder

    configs = [spec.base] + [spec.config_for({p.name: v}) for p in spec.space if p.kind == "choice"
                             for v in p.choices]
    for cfg in configs:
        make_chunker(cfg.chunking)
        if cfg.retrieval.mode != "bm25":
            make_embedder(replace(cfg.embedding, cache=False))


def prepare(spec: TuneSpec, objective: Objective | None = None) -> Prepared:
    """Load the dataset (or take the already loaded ``objective``), check that it can produce every metric, split it.
    Raises before any study exists. A cross-validated spec (``split.folds``) is prepared one fold at a time
    (``spec.fold`` set; :func:`ragbench.tune.crossval.run_crossval` does it)."""
    if objective is None:
        check_stages(spec)
        objective = make_objective(spec.dataset, spec.objective, spec.options)
    metrics = [objective.check_measure(m) for m in spec.metric_names]
    if spec.folds is not None:
        if spec.fold is None:
            raise ConfigError(f"experiment {spec.name!r} is cross-validated (split.folds), so it runs one study "
                              "per fold. Fix: run it with `ragbench tune` or ragbench.tune.crossval.run_crossval.")
        tune, held = split_fold(objective.units(), spec.fold, spec.folds, spec.split_seed,
                                getattr(objective, "set_of", None))
    elif spec.heldout_sets:
        set_of = getattr(objective, "set_of", None)
        if set_of is None:
            raise ConfigError("split.heldout_sets holds out whole golden sets, but the dataset is a single one. Fix: "
                              "dataset: golden:<DIR>,<DIR>,… with objective: answers, or split: {heldout: 0.3}.")
        tune, held = split_by_sets(objective.units(), spec.heldout_sets, set_of)
    else:
        tune, held = split_units(objective.units(), spec.heldout, spec.split_seed, spec.limit)
    extra = [objective.check_measure(m) for m in getattr(objective, "report_measures", ())]
    return Prepared(spec, objective, metrics, tune, held, list(dict.fromkeys(metrics + extra)))


def default_storage(spec: TuneSpec) -> str:
    return str(spec.study_dir / "study.journal")


def make_sampler(spec: TuneSpec, worker: int = 0, existing: int = 0) -> Any:
    """The spec's sampler, seeded with ``seed + worker`` (worker 0 of a fresh study reproduces a one-process run).
    A resumed study (``existing`` trials) gets a seed derived from all three, so it does not replay the random
    draws of the run that started it."""
    optuna = require_extra("optuna", "tune", "tuning")

    seed = spec.seed + worker
    if existing:
        seed = int(np.random.SeedSequence([spec.seed, worker, existing]).generate_state(1)[0])
    opts = dict(spec.sampler_options)
    if spec.sampler == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    if spec.sampler == "nsgaii":
        return optuna.samplers.NSGAIISampler(seed=seed, **opts)
    if spec.sampler == "grid":
        return optuna.samplers.GridSampler(spec.grid(), seed=seed)
    opts.setdefault("n_startup_trials", 5)
    return optuna.samplers.TPESampler(seed=seed, **opts)


def make_pruner(prepared: Prepared) -> Any:
    optuna = require_extra("optuna", "tune", "tuning")

    opts = {k: v for k, v in prepared.spec.pruner_options.items() if k != "batch"}
    if not prepared.prunes:
        return optuna.pruners.NopPruner()
    if prepared.spec.pruner == "median":
        return optuna.pruners.MedianPruner(**opts)
    opts.setdefault("p_threshold", 0.1)
    opts.setdefault("n_startup_steps", 5)
    with quiet_experimental():
        return optuna.pruners.WilcoxonPruner(**opts)


# ----------------------------------------------------------------------------------------------- one trial


def _means(per: pd.DataFrame, metrics: Sequence[str]) -> dict[str, float]:
    means = per.groupby("measure")["value"].mean()
    return {m: float(means[m]) if m in means.index else float("nan") for m in metrics}


def evaluate_trial(trial: Any, prepared: Prepared) -> float | tuple[float, ...]:
    """The Optuna objective: sample, build the config, evaluate the tuning split (reporting per query)."""
    optuna = require_extra("optuna", "tune", "tuning")

    spec = prepared.spec
    try:
        trial.set_user_attr("owner", process_id())  # lets another process tell a live trial from a stale one
        trial.set_user_attr("code_hash", code_hash())  # which code scored it (a resumed study may mix codes)
        params = {p.name: p.suggest(trial) for p in spec.space}
        cfg = spec.config_for(params)
        trial.set_user_attr("config_hash", config_hash(cfg))
        units = prepared.tune
        if prepared.prunes:
            primary = prepared.metrics[0]
            batch = int(spec.pruner_options.get("batch", 8))
            order = np.random.default_rng([spec.seed, trial.number]).permutation(len(units))
            parts: list[pd.DataFrame] = []
            for start in range(0, len(order), batch):
                idx = [int(i) for i in order[start:start + batch]]
                per = prepared.objective(cfg, [units[i] for i in idx], prepared.reported)
                parts.append(per)
                values = per[per["measure"] == primary].set_index("qid")["value"]
                for i in idx:
                    if units[i] in values.index:
                        trial.report(float(values[units[i]]), step=i)
                if trial.should_prune():
                    done = pd.concat(parts, ignore_index=True)
                    trial.set_user_attr("metrics", _means(done, prepared.reported))
                    trial.set_user_attr("n_queries", int(done["qid"].nunique()))
                    raise optuna.TrialPruned(f"pruned after {start + len(idx)} of {len(units)} queries")
            per = pd.concat(parts, ignore_index=True)
        else:
            per = prepared.objective(cfg, units, prepared.reported)
        means = _means(per, prepared.reported)
        trial.set_user_attr("metrics", means)
        trial.set_user_attr("n_queries", int(per["qid"].nunique()) if len(per) else 0)
        missing = [m for m in prepared.metrics if np.isnan(means[m])]
        if missing:
            raise DataError(f"the objective produced no value for {missing} on the tuning split.")
        values = tuple(means[m] for m in prepared.metrics)
        return values[0] if len(values) == 1 else values
    except optuna.TrialPruned:
        raise
    except Exception as exc:
        trial.set_user_attr("error", f"{type(exc).__name__}: {exc}"[:2000])
        raise


# ------------------------------------------------------------------------------------------------ studies


class _NoTraceback(logging.Filter):
    """Optuna logs a failed trial with its traceback; the one-line error is kept (also in trials.csv)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.exc_info, record.exc_text = None, None
        return True


def _quiet_optuna() -> None:
    optuna = require_extra("optuna", "tune", "tuning")

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if not log.isEnabledFor(logging.DEBUG):
        for handler in logging.getLogger("optuna").handlers:
            if not any(isinstance(f, _NoTraceback) for f in handler.filters):
                handler.addFilter(_NoTraceback())


def load_or_create(spec: TuneSpec, storage: Any, prepared: Prepared | None = None, worker: int = 0) -> Any:
    """Create the study, or load it when it exists with the same fingerprint (else :class:`ConfigError`)."""
    optuna = require_extra("optuna", "tune", "tuning")

    directions: list[Any] = list(spec.directions)  # "maximize" / "minimize", checked by parse_spec
    sampler = make_sampler(spec, worker)
    pruner = make_pruner(prepared) if prepared is not None else None
    try:
        study = optuna.create_study(study_name=spec.study_name, storage=storage, sampler=sampler, pruner=pruner,
                                    directions=directions, load_if_exists=True)
    except ValueError as exc:  # different directions
        raise ConfigError(f"study {spec.study_name!r} exists in the storage with other objectives ({exc}). Fix: use "
                          "another experiment name or storage.") from None
    existing = len(study.get_trials(deepcopy=False))
    if existing:
        study.sampler = make_sampler(spec, worker, existing)
    found = study.user_attrs.get("fingerprint")
    if found is None:
        study.set_user_attr("fingerprint", spec.fingerprint())
        study.set_user_attr("spec", spec_to_dict(spec))
    elif found != spec.fingerprint():
        raise ConfigError(f"study {spec.study_name!r} exists in the storage with another dataset, base config, "
                          "search space, metrics or split. Fix: rename the experiment (name:) or use another --storage "
                          "to start a new study; a resumed study must keep its definition.")
    other = other_code_trials(study)
    if other:
        log.warning("study %r holds %d finished trial(s) scored by other code (their code_hash is not %s, this "
                    "ragbench's source hash): their scores and new ones may not compare. Fix: rename the experiment "
                    "(name:) or use another --storage to start afresh; the trials table's code_hash column says "
                    "which trial is which.", spec.study_name, other, code_hash())
    return study


def other_code_trials(study: Any) -> int:
    """Finished trials scored by other code than this process runs (their ``code_hash`` differs or is missing):
    a study resumed after an edit mixes scores that may not compare. The definition is checked by the fingerprint;
    the code cannot be, since a bug fix or a log line should not make a study unresumable, so this only counts."""
    here = code_hash()
    return sum(1 for t in study.get_trials(deepcopy=False)
               if t.state.name in FINISHED and t.user_attrs.get("code_hash") != here)


def finished_count(study: Any) -> int:
    """Trials that count against the budget: complete, pruned, failed (not those failed as stale)."""
    return sum(1 for t in study.get_trials(deepcopy=False)
               if t.state.name in FINISHED and not t.user_attrs.get("stale"))


def fail_stale(study: Any, slot: WorkerSlot | None = None) -> int:
    """Mark trials left RUNNING by a stopped process as failed (journal and in-memory storages). A trial records
    its ``owner`` process; it is stale when that process is gone. A trial without an owner yet (just created by
    another process) is stale only when no other live process holds a worker slot of the journal: failing a live
    trial would kill its process ("Cannot tell a FAIL trial")."""
    TrialState = require_extra("optuna.trial", "tune", "tuning").TrialState

    n = 0
    others = slot.others_alive() if slot is not None else False
    for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        owner = t.user_attrs.get("owner")
        if (process_alive(owner) is not False) if owner else others:
            continue
        study._storage.set_trial_user_attr(t._trial_id, "stale", True)
        study._storage.set_trial_user_attr(t._trial_id, "error", "stale: the process running it stopped")
        study._storage.set_trial_state_values(t._trial_id, TrialState.FAIL)
        n += 1
    return n


def _optimize(study: Any, prepared: Prepared, n_trials: int, budget: int, show_progress: bool) -> None:
    MaxTrialsCallback = require_extra("optuna.study", "tune", "tuning").MaxTrialsCallback
    TrialState = require_extra("optuna.trial", "tune", "tuning").TrialState

    if n_trials <= 0:
        return
    cap = MaxTrialsCallback(budget, states=(TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL))
    study.optimize(lambda t: evaluate_trial(t, prepared), n_trials=n_trials, catch=(Exception,),
                   callbacks=[cap], show_progress_bar=show_progress, gc_after_trial=False)


def _slot(url: str) -> WorkerSlot | None:
    path = journal_path(url)
    return WorkerSlot(path) if path is not None else None


def _worker(spec: TuneSpec, url: str, n_trials: int, budget: int, worker: int) -> None:
    """Entry point of a worker process: its own data, storage handle and seeded sampler (seed + its worker slot
    for a journal, so concurrent processes never sample alike)."""
    _quiet_optuna()
    prepared = prepare(spec)
    slot = _slot(url)
    try:
        if slot is not None:
            worker = slot.acquire()
        study = load_or_create(spec, open_storage(url), prepared, worker)
        _optimize(study, prepared, n_trials, budget, show_progress=False)
    finally:
        if slot is not None:
            slot.release()


def shares(remaining: int, workers: int) -> list[int]:
    """Split ``remaining`` trials over at most ``workers`` workers (no empty shares)."""
    n = max(0, min(workers, remaining))
    return [remaining // n + (1 if i < remaining % n else 0) for i in range(n)] if n else []


def optimize(spec: TuneSpec, prepared: Prepared, url: str, budget: int, workers: int = 1,
             show_progress: bool = False) -> Any:
    """Bring the study named ``spec.study_name`` in ``url`` to ``budget`` finished trials; returns the study."""
    if workers < 1:
        raise ConfigError(f"--workers must be ≥ 1, found {workers}.")
    if workers > 1 and url == ":memory:":
        raise ConfigError("an in-memory storage cannot be shared by worker processes. Fix: use a journal file or "
                          "an RDB URL, or --workers 1.")
    _quiet_optuna()
    storage = open_storage(url)
    slot = _slot(url)
    try:
        worker = slot.acquire() if slot is not None else 0
        study = load_or_create(spec, storage, prepared, worker)
        if not is_rdb(url):
            fail_stale(study, slot)
        plan = shares(budget - finished_count(study), workers)
        if len(plan) <= 1:
            _optimize(study, prepared, plan[0] if plan else 0, budget, show_progress)
            return study
    finally:
        if slot is not None:
            slot.release()  # worker processes claim their own slots
    ctx = mp.get_context("spawn")  # no fork: the parent may hold ONNX sessions, SQLite and MLflow handles
    procs = [ctx.Process(target=_worker, args=(spec, url, n, budget, i), name=f"ragbench-tune-{i}")
             for i, n in enumerate(plan)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    bad = [p.name for p in procs if p.exitcode != 0]
    if bad:
        raise StoreError(f"tuning worker(s) {', '.join(bad)} stopped with an error (see the messages above); the "
                         f"finished trials are kept in {url}. Fix: correct the cause and run the same command again "
                         "to resume.")
    return load_or_create(spec, open_storage(url), prepared, 0)


def trial_config(spec: TuneSpec, params: dict[str, Any]) -> RagbenchConfig:
    return spec.config_for(params)


def storage_url(spec: TuneSpec, storage: str | None) -> str:
    url = storage or spec.storage or default_storage(spec)
    path = journal_path(url)
    if path is not None and not path.is_absolute() and storage is None and spec.storage:
        url = str(spec.folder / path)  # a storage path in the experiment file is relative to that file
    return url
