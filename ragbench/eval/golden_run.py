"""The golden evaluation as a function: every retrieval mode (and the grounded-answer system) on a golden set,
scored, compared, saved, plotted and logged (``ragbench eval golden`` and notebook 01 call :func:`run_golden`).

Steps: load the golden set → chunk its documents → index one retriever per mode (one shared embedder) →
:func:`ragbench.eval.harness.experiment` with each question asked as its principal, slices = question tags,
baselines bm25 and dense (and ``answer``, when another answer system is scored beside it) → save the run folder
(default ``runs/golden/<timestamp>``) with a bar chart and what decided each answer (``decisions.csv``,
:mod:`ragbench.eval.decisions`) → log one MLflow run (:func:`ragbench.tracking.record_run`). :func:`report` renders
the tables the command prints.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import RagbenchConfig
from ..errors import ConfigError
from .decisions import decisions, decisions_json
from .harness import ExperimentResult, experiment
from .metrics import AnswerGold
from .plots import bar_chart

if TYPE_CHECKING:
    from .golden import GoldenSet

DEFAULT_MODES = ("bm25", "dense", "lsh", "hybrid")
EXPERIMENT = "ragbench-golden"
FOCUS_SLICE = "paraphrase"
ARTIFACTS = ("aggregate.csv", "per_slice.csv", "per_query.csv", "significance.csv", "config.yaml", "meta.json",
             "golden_metrics.png", "decisions.csv")


def measures(k: int) -> tuple[str, ...]:
    """The reported measures at cutoff ``k`` (AP is uncut; at depth k it is AP@k in effect)."""
    return (f"nDCG@{k}", f"R@{k}", f"RR@{k}", f"P@{k}", "AP")


@dataclass(frozen=True)
class GoldenEval:
    result: ExperimentResult
    run_dir: Path
    plot: Path
    mlflow_run_id: str | None
    tracking_error: str | None
    tracking_note: str | None = None   # why nothing was logged, when it was not attempted
    #: What decided each answer, per answer system (:func:`ragbench.eval.decisions.decisions`); empty without one.
    decisions: Any = None
    #: The run's own MLflow params (:func:`golden_params`) and the golden set's data hash, kept so that the run can
    #: be logged after the fact (:func:`record_golden`; a multi-set evaluation logs its sets under one parent run).
    params: Any = None
    data_hash: str | None = None


#: The answer measures each answer system is compared on against ``answer`` (paired over the questions).
ANSWER_COMPARED = ("RefusalAccuracy", "HandledRight", "FactInAnswer", "CitationPrecision", "AnyCorrectCitation")


def golden_baselines(systems: Sequence[str]) -> list[str]:
    """The systems the others are tested against: bm25 and dense where scored, and the default answer system
    ``answer`` when another answer system (``answer-<model>``, a judge or rescue profile) is scored beside it."""
    out = [b for b in ("bm25", "dense") if b in systems]
    if "answer" in systems and any(str(s).startswith("answer-") for s in systems):
        out.append("answer")
    return out


def build_retrievers(golden: Any, cfg: RagbenchConfig, modes: Sequence[str], embedder: Any = None,
                     show_progress: bool = False) -> dict[str, Any]:
    """Index one retriever per mode over the golden documents (chunked per ``cfg.chunking``), with ACLs/titles."""
    from ..retrieval.factory import make_chunker
    from ..retrieval.retriever import make_retriever, needs_embedder, normalize_mode

    chunker = make_chunker(cfg.chunking)
    chunks = [c for d in golden.documents for c in chunker.chunk(d)]
    acls = {d.doc_id: d.acl for d in golden.documents}
    titles = {d.doc_id: d.title for d in golden.documents}
    if embedder is None and any(needs_embedder(m) for m in modes):
        from ..retrieval.embedding import make_embedder

        embedder = make_embedder(cfg.embedding)
    out: dict[str, Any] = {}
    for mode in modes:
        name = normalize_mode(mode)
        out[name] = make_retriever(name, cfg, embedder).index(chunks, acls, titles, show_progress=show_progress)
    return out


def answer_systems(golden: Any, cfg: RagbenchConfig, retrievers: Mapping[str, Any],
                   models: Sequence[str] = (), judges: Sequence[str] = (),
                   rescues: Sequence[str] = (), user_set: Collection[str] = ()) -> dict[str, Callable]:
    """The grounded-answer systems scored next to the retrievers (:mod:`ragbench.eval.answers`): ``answer``,
    one ``answer-<model>`` per extra chat model, one ``answer-judge-<judge>`` per judge (the judge profile) and one
    ``answer-rescue-<model>`` per rescue judge (the rescue profile), whose settings give way to the ``--set`` keys
    in ``user_set``."""
    from .answers import golden_answer_systems

    return dict(golden_answer_systems(golden, cfg, retrievers, models, judges, rescues, user_set))


def default_run_dir(kind: str = "golden") -> Path:
    """``runs/<kind>/<timestamp>`` (suffixed ``-2``, ``-3``… when taken)."""
    base = Path("runs") / kind / datetime.now().strftime("%Y%m%d-%H%M%S")
    out, n = base, 1
    while out.exists():
        n += 1
        out = base.with_name(f"{base.name}-{n}")
    return out


def result_metrics(result: ExperimentResult) -> dict[str, float]:
    """``{"system.measure": v, "system.slice.measure": v}`` of an experiment (the MLflow metrics)."""
    metrics: dict[str, float] = {}
    for system, row in result.aggregate.iterrows():
        metrics.update({f"{system}.{m}": float(v) for m, v in row.items()})
    for _, row in result.per_slice.iterrows():
        for m in result.aggregate.columns:
            metrics[f"{row['system']}.{row['slice']}.{m}"] = float(row[m])
    return metrics


def run_golden(data: str | Path | GoldenSet | None = None, modes: Sequence[str] = DEFAULT_MODES, k: int = 5,
               seed: int = 0, out: str | Path | None = None, cfg: RagbenchConfig | None = None,
               log_mlflow: bool = True, experiment_name: str = EXPERIMENT, tracking_timeout: float | None = 10,
               embedder: Any = None, show_progress: bool = False, answers: bool = True,
               models: Sequence[str] = (), judges: Sequence[str] = (), rescues: Sequence[str] = (),
               user_set: Collection[str] = ()) -> GoldenEval:
    """The whole golden evaluation (module doc) of the golden folder ``data`` (or a set already loaded from one);
    ``answers=False`` scores retrieval only; ``models`` adds an ``answer-<model>`` system per chat model, ``judges``
    an ``answer-judge-<judge>`` system per judge (the judge profile) and ``rescues`` an ``answer-rescue-<model>``
    system per rescue judge, next to the default ``answer``; ``user_set`` names the config fields the user set
    (``--set``), which the profiles leave as they are."""
    from .golden import DEFAULT_FOLDER, GoldenSet, load_golden

    cfg = cfg or RagbenchConfig()
    if not modes:
        raise ConfigError("eval golden: no retrieval modes given. Fix: e.g. --retriever bm25,dense,lsh,hybrid.")
    if answers:
        from ..llm.factory import check_chat_model

        # A misspelt or missing model fails now, not after the retrievers and the other systems have run.
        for name in (*models, *judges, *rescues):
            check_chat_model(name)
    golden = data if isinstance(data, GoldenSet) else load_golden(data or DEFAULT_FOLDER)
    retrievers = build_retrievers(golden, cfg, modes, embedder, show_progress)
    systems: dict[str, Any] = dict(retrievers)
    extra = answer_systems(golden, cfg, retrievers, models, judges, rescues, user_set) if answers else {}
    systems.update(extra)
    baselines = golden_baselines([*retrievers, *extra])
    run_dir = Path(out) if out is not None else default_run_dir("golden")
    result = experiment(
        systems, golden.queries_df(), golden.qrels_df(), measures(k), baseline=baselines or None,
        slices=golden.tags(), k=k, seed=seed, save_dir=run_dir, config=cfg, data_hash=golden.data_hash,
        gold_answers=[AnswerGold.from_golden(q) for q in golden.questions] if extra else None,
        principals={q.qid: golden.principal(q.qid) for q in golden.questions}, show_progress=show_progress)
    plot = bar_chart(result.aggregate, run_dir / "golden_metrics.png", f"golden set, k = {k}")
    table = decisions(result.answers, golden.questions)
    if len(table):
        table.to_csv(run_dir / "decisions.csv", index=False)
    ev = GoldenEval(result, run_dir, plot, None, None, None, table,
                    golden_params(list(retrievers), k, seed, golden.folder, list(extra), judges, rescues, cfg,
                                  user_set),
                    golden.data_hash)
    return record_golden(ev, cfg, experiment_name, log_mlflow, tracking_timeout)


def record_golden(ev: GoldenEval, cfg: RagbenchConfig, experiment_name: str = EXPERIMENT, enabled: bool = True,
                  timeout: float | None = 10, parent_run_id: str | None = None,
                  tags: Mapping[str, Any] | None = None) -> GoldenEval:
    """Log a finished golden evaluation as one MLflow run (nested under ``parent_run_id`` when given) and return it
    with the run's id, or with why it was not logged."""
    from ..tracking import record_run

    meta = ev.result.meta or {}
    rec = record_run(experiment_name, f"golden-{ev.run_dir.name}", cfg, result_metrics(ev.result), params=ev.params,
                     artifacts=[ev.run_dir / name for name in ARTIFACTS], data_hash=ev.data_hash,
                     model_sha256=meta.get("model_sha256"), stages=meta.get("stages"),
                     tags={"dataset": "golden", "run_dir": str(ev.run_dir), **dict(tags or {})}, enabled=enabled,
                     timeout=timeout, parent_run_id=parent_run_id)
    return replace(ev, mlflow_run_id=rec.run_id, tracking_error=rec.error, tracking_note=rec.skipped)


def golden_params(modes: Sequence[str], k: int, seed: int, folder: Any, answer_systems: Sequence[str] = (),
                  judges: Sequence[str] = (), rescues: Sequence[str] = (), cfg: RagbenchConfig | None = None,
                  user_set: Collection[str] = ()) -> dict[str, Any]:
    """The run's own parameters for MLflow (the config is logged beside them): retrieval modes, k, seed, data
    folder, the answer systems scored and, with a judge or rescue profile, its judge template, thresholds and the
    named rules its judge reads, as the profile ran them (``cfg`` under the profile, the ``--set`` keys of
    ``user_set`` kept), so runs made before and after a template or profile change stay apart in the MLflow UI."""
    params: dict[str, Any] = {"eval": {"modes": ",".join(modes), "k": k, "seed": seed, "data": str(folder),
                                       "answer_systems": ",".join(answer_systems)}}
    if not (judges or rescues):
        return params
    from ..answer import judge as jd
    from .answers import judge_config

    for key, names, as_judge in (("judge_profile", judges, True), ("rescue_profile", rescues, False)):
        if names:
            used = judge_config(cfg or RagbenchConfig(), names[0] if as_judge else None,
                                None if as_judge else names[0], user_set).answer
            params[key] = {"judges": ",".join(names), "template": f"{jd.JUDGE_NAME}@{jd.JUDGE_VERSION}",
                           "min_yes": used.judge_min_yes, "min_yes_restricted": used.judge_min_yes_restricted,
                           "rules": used.judge_rescue_rules, "rules_min_yes": used.judge_rules_min_yes}
    return params


def split_measures(table: Any) -> tuple[Any, Any]:
    """(retrieval part, answer part) of an aggregate or per-slice table: columns that parse as retrieval
    measures vs the others, each keeping only the rows where some value applies."""
    from .metrics import parse_measure

    def is_retrieval(col: str) -> bool:
        try:
            parse_measure(col)
            return True
        except ConfigError:
            return False

    keys = [c for c in table.columns if c in ("system", "slice", "n")]
    ret = [c for c in table.columns if c not in keys and is_retrieval(str(c))]
    ans = [c for c in table.columns if c not in keys and c not in ret]
    parts = []
    for cols in (ret, ans):
        part = table[keys + cols]
        parts.append(part.dropna(how="all", subset=cols) if cols else part.iloc[0:0])
    return parts[0], parts[1]


def _fmt(df: Any) -> str:
    return df.to_string(float_format=lambda v: f"{v:.3f}")


def report(ev: GoldenEval) -> str:
    """The printed tables: aggregate, per slice, significance on the paraphrase slice, what decided each answer."""
    lines = tables_text(ev.result.aggregate, ev.result.per_slice, ev.result.significance, ev.decisions)
    return "\n".join(lines + run_footer(ev.run_dir, ev.mlflow_run_id, ev.tracking_note))


def run_footer(run_dir: Path, run_id: str | None, note: str | None) -> list[str]:
    """The report's last lines: where the run folder and the MLflow run are."""
    return [f"run folder: {run_dir}",
            f"mlflow run: {run_id}" if run_id else f"mlflow run: not logged ({note})" if note else
            "mlflow run: not logged"]


def tables_text(aggregate: Any, per_slice: Any, sig: Any, table: Any, scope: str = "") -> list[str]:
    """Report lines of an evaluation's tables (``scope`` prefixes each heading, e.g. "Pooled ")."""
    lines: list[str] = []
    for label, agg, per in zip(("Retrieval", "Answers"), split_measures(aggregate), split_measures(per_slice),
                               strict=True):
        if len(agg):
            lines += [f"{scope}{label}: aggregate (mean over questions)", _fmt(agg), "",
                      f"{scope}{label}: per slice", _fmt(per.set_index(["system", "slice"])), ""]
    focus = sig[(sig["slice"] == FOCUS_SLICE) & (sig["system"] == "hybrid")] if len(sig) else sig
    if len(focus):
        cols = ["baseline", "measure", "n", "mean", "baseline_mean", "mean_diff", "t_p", "wilcoxon_p",
                "permutation_p", "p_corrected", "ci_low", "ci_high", "wins", "ties", "losses"]
        lines += [f"{scope}Significance on the {FOCUS_SLICE} slice: hybrid vs baselines (p_corrected = Holm over "
                  "the slice's family)", _fmt(focus[cols].reset_index(drop=True)), ""]
    versus = sig[(sig["baseline"] == "answer") & (sig["slice"] == "all") & sig["measure"].isin(ANSWER_COMPARED)] \
        if len(sig) else sig
    if len(versus):
        cols = ["system", "measure", "n", "mean", "baseline_mean", "mean_diff", "permutation_p", "p_corrected", "wins",
                "ties", "losses"]
        lines += [f"{scope}Answers: each answer system against answer, paired over the questions both score "
                  "(p_corrected = Holm over the family)", _fmt(versus[cols].reset_index(drop=True)), ""]
    if table is not None and len(table):
        lines.append(f"{scope}Answers: what decided each question (questions per rule and outcome; right = refused "
                     "when it should be + answered with the fact)")
        for system, part in table.groupby("system", sort=True):
            lines += [f"{system}:", part.drop(columns="system").set_index("decided_by").to_string(), ""]
    return lines


def slices_json(per_slice: Any) -> dict[str, dict[str, dict[str, float]]]:
    """``{system: {slice: {measure: value}}}`` of a per-slice table, measures that apply only."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for _, row in per_slice.iterrows():
        values = {str(m): float(v) for m, v in row.items()
                  if m not in ("system", "slice", "n") and v is not None and not math.isnan(float(v))}
        out.setdefault(str(row["system"]), {})[str(row["slice"])] = values
    return out


def summary_json(ev: GoldenEval) -> dict[str, Any]:
    """The ``--json`` record: each system lists the measures that apply to it (retrieval or answer measures);
    ``slices`` the same per question tag; ``decisions`` (with an answer system) what decided its answers,
    ``{system: {decided_by: {outcome: count}}}`` (:mod:`ragbench.eval.decisions`)."""
    return {**tables_json(ev.result.aggregate, ev.result.per_slice, ev.decisions),
            "mlflow_run_id": ev.mlflow_run_id, "run_dir": str(ev.run_dir)}


def tables_json(aggregate: Any, per_slice: Any, table: Any) -> dict[str, Any]:
    """``systems`` (the measures that apply to each), ``slices`` and, with an answer system, ``decisions`` of an
    evaluation's tables: the part of the ``--json`` record a single-set and a pooled run share."""
    systems = {str(s): {m: float(v) for m, v in row.items() if not math.isnan(float(v))}
               for s, row in aggregate.iterrows()}
    out: dict[str, Any] = {"systems": systems, "slices": slices_json(per_slice)}
    if table is not None and len(table):
        out["decisions"] = decisions_json(table)
    return out
