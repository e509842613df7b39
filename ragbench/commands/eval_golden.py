"""``ragbench eval golden``: every retrieval mode on the bundled golden set, scored, compared, saved and logged.

Steps: load the golden set (``--data``, default ``data/golden``) → chunk its documents → index bm25 / dense / lsh /
hybrid retrievers (one shared embedder) → :func:`ragbench.eval.harness.experiment` with each question asked as
its principal, slices = question tags, baselines bm25 and dense → print the aggregate, per-slice and paraphrase
significance tables → save the run folder (default ``runs/golden/<timestamp>``) with a bar chart → log one
MLflow run. With ``--json`` the last output line is ``{"systems": {...}, "mlflow_run_id": ..., "run_dir": ...}``.

If MLflow cannot be reached the results are still saved and printed; the command then exits with status 1.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..config import RagbenchConfig, load_config
from ..errors import ConfigError, TrackingError
from ..eval.harness import ExperimentResult, experiment
from ..eval.metrics import AnswerGold

DEFAULT_MODES = ("bm25", "dense", "lsh", "hybrid")


def measures(k: int) -> tuple[str, ...]:
    """The reported measures at cutoff ``k`` (AP is uncut; at depth k it is AP@k in effect)."""
    return (f"nDCG@{k}", f"R@{k}", f"RR@{k}", f"P@{k}", "AP")

EXPERIMENT = "ragbench-golden"
FOCUS_SLICE = "paraphrase"


@dataclass(frozen=True)
class GoldenEval:
    result: ExperimentResult
    run_dir: Path
    plot: Path
    mlflow_run_id: str | None
    tracking_error: str | None


def build_retrievers(golden: Any, cfg: RagbenchConfig, modes: Sequence[str], embedder: Any = None,
                     show_progress: bool = False) -> dict[str, Any]:
    """Index one retriever per mode over the golden documents (chunked per ``cfg.chunking``), with ACLs/titles."""
    from ..retrieval.chunking import make_chunker
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


# ============================================================================================ ANSWER HOOK
# Answer metrics (citation precision / recall, any-correct, refusal accuracy, support ratio, context tokens,
# model calls) are added here once the grounded-answer service exists. The ANSWER engineer provides
#     ragbench.eval.answers.golden_answer_systems(golden, cfg, retrievers) -> {name: callable}
# where each callable takes the queries table (qid, query) of ALL golden questions and returns answer records
# (qid, answer, refused, cited_docnos or citations, support_ratio, context_tokens[, model_calls]), answering each
# question as golden.principal(qid). Until that module exists this returns {} and only retrieval is scored.
def answer_systems(golden: Any, cfg: RagbenchConfig, retrievers: Mapping[str, Any]) -> dict[str, Callable]:
    try:
        from ..eval.answers import golden_answer_systems
    except ImportError:
        return {}
    return dict(golden_answer_systems(golden, cfg, retrievers))
# ========================================================================================== END ANSWER HOOK


def bar_chart(aggregate: Any, path: str | Path, title: str = "golden set") -> Path:
    """Grouped bars: one group per measure, one bar per system (matplotlib, Agg backend)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = aggregate.dropna(axis=1, how="all")
    fig, ax = plt.subplots(figsize=(max(6, 1.4 * len(data.columns) + 2), 4), dpi=100)
    width = 0.8 / max(1, len(data.index))
    for i, system in enumerate(data.index):
        xs = [j + i * width for j in range(len(data.columns))]
        ax.bar(xs, data.loc[system].fillna(0).to_numpy(), width, label=str(system))
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(data.columns))], list(data.columns))
    ax.set_ylim(0, 1.05)
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize="small")
    fig.tight_layout()
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    # Fixed metadata so the same numbers give byte-identical PNGs.
    fig.savefig(p, format="png", metadata={"Software": None})
    plt.close(fig)
    return p


def _default_out() -> Path:
    base = Path("runs") / "golden" / datetime.now().strftime("%Y%m%d-%H%M%S")
    out, n = base, 1
    while out.exists():
        n += 1
        out = base.with_name(f"{base.name}-{n}")
    return out


def _metrics_for_mlflow(result: ExperimentResult) -> dict[str, float]:
    metrics: dict[str, float] = {}
    for system, row in result.aggregate.iterrows():
        metrics.update({f"{system}.{m}": float(v) for m, v in row.items()})
    for _, row in result.per_slice.iterrows():
        for m in result.aggregate.columns:
            metrics[f"{row['system']}.{row['slice']}.{m}"] = float(row[m])
    return metrics


def run_golden(data: str | Path | None = None, modes: Sequence[str] = DEFAULT_MODES, k: int = 5, seed: int = 0,
               out: str | Path | None = None, cfg: RagbenchConfig | None = None, log_mlflow: bool = True,
               experiment_name: str = EXPERIMENT, tracking_timeout: float | None = 10,
               embedder: Any = None, show_progress: bool = False) -> GoldenEval:
    """The whole golden evaluation as a function (used by the command and the notebook)."""
    from ..eval.golden import DEFAULT_FOLDER, load_golden
    from ..provenance import provenance

    cfg = cfg or RagbenchConfig()
    if not modes:
        raise ConfigError("eval golden: no retrieval modes given. Fix: e.g. --modes bm25,dense,lsh,hybrid.")
    golden = load_golden(data or DEFAULT_FOLDER)
    retrievers = build_retrievers(golden, cfg, modes, embedder, show_progress)
    systems: dict[str, Any] = dict(retrievers)
    extra = answer_systems(golden, cfg, retrievers)
    systems.update(extra)
    baselines = [b for b in ("bm25", "dense") if b in retrievers]
    run_dir = Path(out) if out is not None else _default_out()
    result = experiment(
        systems, golden.queries_df(), golden.qrels_df(), measures(k), baseline=baselines or None,
        slices=golden.tags(), k=k, seed=seed, save_dir=run_dir, config=cfg, data_hash=golden.data_hash,
        gold_answers=[AnswerGold.from_golden(q) for q in golden.questions] if extra else None,
        principals={q.qid: golden.principal(q.qid) for q in golden.questions}, show_progress=show_progress)
    plot = bar_chart(result.aggregate, run_dir / "golden_metrics.png", f"golden set, k = {k}")
    run_id, error = None, None
    if log_mlflow:
        from ..tracking import Tracker

        meta = result.meta if result.meta else provenance(cfg, golden.data_hash)
        shas = {v for v in (meta.get("model_sha256") or {}).values() if v}
        tags = {"config_hash": meta.get("config_hash"), "data_hash": meta.get("data_hash"),
                "model_sha256": ",".join(sorted(shas)) or "none", "git_commit": meta.get("git_commit"),
                "package_version": meta.get("package_version"), "dataset": "golden", "run_dir": str(run_dir)}
        try:
            tracker = Tracker(experiment_name, timeout=tracking_timeout)
            with tracker.start_run(f"golden-{run_dir.name}", tags) as run:
                run.log_params(cfg)
                run.log_params({"eval": {"modes": ",".join(retrievers), "k": k, "seed": seed,
                                         "data": str(golden.folder)}})
                run.log_metrics(_metrics_for_mlflow(result))
                for name in ("aggregate.csv", "per_slice.csv", "per_query.csv", "significance.csv", "config.yaml",
                             "meta.json", "golden_metrics.png"):
                    run.log_artifact(run_dir / name)
            run_id = run.run_id
        except TrackingError as exc:
            error = str(exc)
    return GoldenEval(result, run_dir, plot, run_id, error)


def split_measures(table: Any) -> tuple[Any, Any]:
    """(retrieval part, answer part) of an aggregate or per-slice table: columns that parse as retrieval
    measures vs the others, each keeping only the rows where some value applies."""
    from ..errors import SchemaError
    from ..eval.metrics import parse_measure

    def is_retrieval(col: str) -> bool:
        try:
            parse_measure(col)
            return True
        except SchemaError:
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
    """The printed tables: aggregate, per slice, and significance on the paraphrase slice."""
    res = ev.result
    lines: list[str] = []
    for label, agg, per in zip(("Retrieval", "Answers"), split_measures(res.aggregate),
                               split_measures(res.per_slice)):
        if len(agg):
            lines += [f"{label}: aggregate (mean over questions)", _fmt(agg), "",
                      f"{label}: per slice", _fmt(per.set_index(["system", "slice"])), ""]
    sig = res.significance
    focus = sig[(sig["slice"] == FOCUS_SLICE) & (sig["system"] == "hybrid")] if len(sig) else sig
    if len(focus):
        cols = ["baseline", "measure", "n", "mean", "baseline_mean", "mean_diff", "t_p", "wilcoxon_p",
                "permutation_p", "p_corrected", "ci_low", "ci_high", "wins", "ties", "losses"]
        lines += [f"Significance on the {FOCUS_SLICE} slice: hybrid vs baselines (p_corrected = Holm over the "
                  "slice's family)", _fmt(focus[cols].reset_index(drop=True)), ""]
    lines.append(f"run folder: {ev.run_dir}")
    lines.append(f"mlflow run: {ev.mlflow_run_id}" if ev.mlflow_run_id else "mlflow run: not logged")
    return "\n".join(lines)


def summary_json(ev: GoldenEval) -> dict[str, Any]:
    # Each system lists the measures that apply to it (retrieval or answer measures).
    systems = {str(s): {m: float(v) for m, v in row.items() if not math.isnan(float(v))}
               for s, row in ev.result.aggregate.iterrows()}
    return {"systems": systems, "mlflow_run_id": ev.mlflow_run_id, "run_dir": str(ev.run_dir)}


def _overrides(pairs: Sequence[str]) -> dict[str, Any]:
    import yaml

    out: dict[str, Any] = {}
    for pair in pairs:
        if "=" not in pair:
            raise ConfigError(f"--set expects key=value, found {pair!r}. Fix: e.g. --set bm25.k1=1.2")
        key, value = pair.split("=", 1)
        out[key.strip()] = yaml.safe_load(value)
    return out


def main(args: argparse.Namespace) -> int:
    cfg = load_config(args.config, _overrides(args.set or []))
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    ev = run_golden(args.data, modes, args.k, args.seed, args.out, cfg, log_mlflow=not args.no_mlflow,
                    show_progress=args.progress)
    print(report(ev))
    if ev.tracking_error:
        print(f"error: {ev.tracking_error}", file=sys.stderr)
    if args.json:
        print(json.dumps(summary_json(ev), sort_keys=False))
    return 1 if ev.tracking_error else 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("golden", help="evaluate every retrieval mode on the bundled golden set")
    p.add_argument("--data", default=None, help="golden folder (default: data/golden)")
    p.add_argument("--out", default=None, help="run folder (default: runs/golden/<timestamp>)")
    p.add_argument("--modes", default=",".join(DEFAULT_MODES), help="comma-separated retrieval modes")
    p.add_argument("--k", type=int, default=5, help="retrieval depth and metric cutoff (default 5)")
    p.add_argument("--seed", type=int, default=0, help="seed of the permutation and bootstrap tests")
    p.add_argument("--config", default=None, help="YAML config file")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="config override, repeatable")
    p.add_argument("--json", action="store_true", help="end the output with one JSON summary line")
    p.add_argument("--no-mlflow", action="store_true", help="do not log to MLflow")
    p.add_argument("--progress", action="store_true", help="show progress bars")
    p.set_defaults(func=main)
