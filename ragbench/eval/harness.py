"""One declarative experiment call, in the spirit of PyTerrier's ``Experiment``::

    res = experiment({"bm25": bm25, "hybrid": hybrid}, queries, qrels, ["nDCG@5", "R@5", "RR@5"],
                     baseline="bm25", slices=golden.tags(), k=5, seed=0, save_dir="runs/x", config=cfg)
    res.aggregate        # system × measure means
    res.per_query        # long: system, qid, measure, value, slice
    res.per_slice        # system, slice, n, <measure>…
    res.significance     # per baseline × system × measure × slice: mean diff, p-values, Holm p, CI, W/T/L

**Systems.** A :class:`~ragbench.retrieval.base.Retriever` is run over the queries (as each query's principal
when ``principals`` maps qid → Principal; ACLs are enforced by the retriever) and scored with the retrieval
measures; retrievers run on the queries that have judgements in ``qrels``. A plain callable receives the queries
table (and ``show_progress=`` when it takes that keyword, to draw its own bar over the questions on stderr, as a
retriever's ``run`` does) and returns either a run table (``qid, docno, score, rank``) or **answer records** —
this is the entry point for answer systems such as the grounded-answer service: records (a DataFrame or mappings)
with ``qid``, ``refused``, ``citations`` or ``cited_docnos`` and optionally ``answer``, ``support_ratio``,
``context_tokens``, ``model_calls``. Answer records are scored with the answer measures of
:mod:`ragbench.eval.metrics` against ``gold_answers`` (:class:`~ragbench.eval.metrics.AnswerGold`).

**Scoring rules.** Runs are put in the canonical order (score desc, docno desc — trec_eval's) before scoring
and saving, and checked by :func:`ragbench.eval.validity.check_run` (``validity="warn" | "strict" | "off"``).
Significance compares each system with each baseline on the queries where both have a value; p-values are
Holm-corrected (or ``correction="bonferroni"``) within each (baseline, slice) family of systems × measures.

**Saving and caching.** With ``save_dir`` the folder receives ``aggregate.csv``, ``per_query.csv``,
``per_slice.csv``, ``significance.csv``, ``runs/<system>.trec``, ``answers/<system>.jsonl``, ``config.yaml`` and
``meta.json`` (written last). A saved experiment is reused only when its ``cache_key`` — a hash of the config's
content hash, the data hash (given, or computed from the queries and qrels), the package's source hash
(:func:`ragbench.provenance.code_hash`: edited code is never served old results), the system names, measures, k,
seed, baselines, slices and the answer-side measures (``rag_metrics.PASS_THROUGH``) — matches; never by folder
name alone, and never when ``config`` is None (systems built outside the config cannot be hashed, so there is
nothing to vouch that they are the same).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, is_dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd
import yaml

from ..config import config_hash, to_dict
from ..errors import ConfigError, DataError, SchemaError
from ..provenance import code_hash, provenance, text_hash
from ..retrieval.base import Retriever
from ..schema import validate
from ..stages import embedders_of
from . import stats
from .metrics import AnswerGold, evaluate, evaluate_answers, parse_measure
from .rag_metrics import PASS_THROUGH
from .validity import canonical_order, check_run

System = "Retriever | Callable[[pd.DataFrame], Any]"
ALL = "all"  # slice label of the whole query set


@dataclass(frozen=True)
class ExperimentResult:
    aggregate: pd.DataFrame
    per_query: pd.DataFrame
    per_slice: pd.DataFrame
    significance: pd.DataFrame
    runs: dict[str, pd.DataFrame] = field(default_factory=dict)
    answers: dict[str, pd.DataFrame] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    save_dir: Path | None = None
    cached: bool = False


# ------------------------------------------------------------------------------------------ running systems


def _run_retriever(system: Retriever, queries: pd.DataFrame, k: int,
                   principals: Mapping[str, Any] | None, show_progress: bool) -> pd.DataFrame:
    q = queries[["qid", "query"]]
    if not principals:
        return system.run(q, k=k, show_progress=show_progress)
    parts = []
    # Group by principal so that each query is answered with exactly its asker's permissions.
    keys = q["qid"].map(lambda x: getattr(principals.get(x), "user_id", None))
    for _, group in q.groupby(keys, sort=True, dropna=False):
        principal = principals.get(group["qid"].iloc[0])
        parts.append(system.run(group, k=k, principal=principal, show_progress=show_progress))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["qid", "docno", "score", "rank"])


def _run_callable(system: Any, queries: pd.DataFrame, show_progress: bool) -> Any:
    """``system(queries)``, with ``show_progress=`` when the callable takes that keyword (an answer system then draws
    its bar over the questions it answers; silenced, like every bar, by ``show_progress=False``)."""
    import inspect

    try:
        params = list(inspect.signature(system).parameters.values())
    except (TypeError, ValueError):  # some builtins and C callables have no signature: call them plainly
        params = []
    if any(p.name == "show_progress" or p.kind is p.VAR_KEYWORD for p in params):
        return system(queries, show_progress=show_progress)
    return system(queries)


def _as_frame(out: Any, name: str) -> pd.DataFrame:
    if isinstance(out, pd.DataFrame):
        return out.copy()
    try:
        rows = [dict(r) if isinstance(r, Mapping) else dict(vars(r)) for r in out]
    except TypeError:
        raise SchemaError(f"system {name!r} returned {type(out).__name__}; expected a run table or answer "
                          "records. Fix: return a DataFrame or a list of mappings.") from None
    return pd.DataFrame(rows)


def is_answer_table(df: pd.DataFrame) -> bool:
    """Answer records carry ``refused``; run tables carry ``docno`` and ``score``."""
    return "refused" in df.columns


# ------------------------------------------------------------------------------------------------- tables


def _aggregate(per_query: pd.DataFrame, systems: Sequence[str], measures: Sequence[str]) -> pd.DataFrame:
    means = per_query.groupby(["system", "measure"], sort=False)["value"].mean().unstack("measure")
    cols = [m for m in measures if m in means.columns]
    out = means.reindex(index=list(systems), columns=cols)
    out.index.name = "system"
    out.columns.name = None
    return out


def _per_slice(per_query: pd.DataFrame, systems: Sequence[str], measures: Sequence[str]) -> pd.DataFrame:
    if "slice" not in per_query.columns:
        return pd.DataFrame(columns=["system", "slice", "n"] + list(measures))
    rows = []
    for (system, slc), g in per_query.groupby(["system", "slice"], sort=False):
        row: dict[str, Any] = {"system": system, "slice": slc, "n": int(g["qid"].nunique())}
        means = g.groupby("measure")["value"].mean()
        row.update({m: float(means[m]) if m in means.index else math.nan for m in measures})
        rows.append(row)
    df = pd.DataFrame(rows, columns=["system", "slice", "n"] + list(measures))
    order = {s: i for i, s in enumerate(systems)}
    return df.sort_values(["system", "slice"], key=lambda c: c.map(order) if c.name == "system" else c,
                          kind="stable").reset_index(drop=True)


def summarise(per_query: pd.DataFrame, systems: Sequence[str], baselines: Sequence[str] = (), seed: int = 0,
              n_resamples: int = 10000, correction: str = "holm") -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The aggregate, per-slice and significance tables of a long per-query table (columns ``system``, ``qid``,
    ``measure``, ``value`` and optionally ``slice``): :func:`experiment` makes its tables with it, and pooling the
    per-query tables of several runs (qids kept apart) gives the tables of their union."""
    measures = list(dict.fromkeys(per_query["measure"]))
    return (_aggregate(per_query, systems, measures), _per_slice(per_query, systems, measures),
            _significance(per_query, systems, baselines, measures, seed, n_resamples, correction))


SIG_COLUMNS = ["baseline", "system", "slice", "measure", "n", "mean", "baseline_mean", "mean_diff", "t_p",
               "wilcoxon_p", "permutation_p", "p_corrected", "ci_low", "ci_high", "wins", "ties", "losses"]


def _significance(per_query: pd.DataFrame, systems: Sequence[str], baselines: Sequence[str],
                  measures: Sequence[str], seed: int, n_resamples: int, correction: str) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    slices = [ALL] + (sorted(per_query["slice"].dropna().unique()) if "slice" in per_query.columns else [])
    wide = per_query.pivot_table(index=["qid"], columns=["system", "measure"], values="value", aggfunc="first")
    slice_of = per_query.drop_duplicates("qid").set_index("qid")["slice"] if "slice" in per_query.columns else None
    for base in baselines:
        for slc in slices:
            family: list[dict[str, Any]] = []
            if slc == ALL or slice_of is None:
                qids = wide.index
            else:
                qids = wide.index[wide.index.map(lambda q: slice_of.get(q) == slc)]  # noqa: B023 - this iteration
            for system in systems:
                if system == base:
                    continue
                for m in measures:
                    if (system, m) not in wide.columns or (base, m) not in wide.columns:
                        continue
                    pair = wide.loc[qids, [(system, m), (base, m)]].dropna()
                    if len(pair) == 0:
                        continue
                    c = stats.compare(pair.iloc[:, 0].to_numpy(), pair.iloc[:, 1].to_numpy(), seed=seed,
                                      n_resamples=n_resamples)
                    family.append({"baseline": base, "system": system, "slice": slc, "measure": m, "n": c.n,
                                   "mean": c.mean_a, "baseline_mean": c.mean_b, "mean_diff": c.mean_diff,
                                   "t_p": c.t_p, "wilcoxon_p": c.wilcoxon_p, "permutation_p": c.permutation_p,
                                   "ci_low": c.ci_low, "ci_high": c.ci_high, "wins": c.wins, "ties": c.ties,
                                   "losses": c.losses})
            adjusted = stats.correct([r["permutation_p"] for r in family], correction)
            for r, p in zip(family, adjusted):
                r["p_corrected"] = p
            rows.extend(family)
    return pd.DataFrame(rows, columns=SIG_COLUMNS)


# ------------------------------------------------------------------------------------------------ caching


def _config_payload(config: Any) -> Any:
    return to_dict(config) if is_dataclass(config) else config


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def _save(result: ExperimentResult, folder: Path, config: Any, settings: dict[str, Any]) -> None:
    from ..retrieval.trec import write_trec_run

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "meta.json").unlink(missing_ok=True)  # the folder is not a valid cache until meta.json is back
    write_atomic(folder / "aggregate.csv", result.aggregate.to_csv())
    write_atomic(folder / "per_query.csv", result.per_query.to_csv(index=False))
    write_atomic(folder / "per_slice.csv", result.per_slice.to_csv(index=False))
    write_atomic(folder / "significance.csv", result.significance.to_csv(index=False))
    for name, run in result.runs.items():
        write_trec_run(run[["qid", "docno", "score", "rank"]], folder / "runs" / f"{name}.trec", tag=name)
    for name, answers in result.answers.items():
        write_atomic(folder / "answers" / f"{name}.jsonl",
                     answers.to_json(orient="records", lines=True, force_ascii=False))
    write_atomic(folder / "config.yaml", yaml.safe_dump({"config": _config_payload(config), "experiment": settings},
                                                        sort_keys=False, allow_unicode=True))
    write_atomic(folder / "meta.json", json.dumps(result.meta, indent=2, sort_keys=True, default=str))


def _load_cached(folder: Path, key: str) -> ExperimentResult | None:
    meta_path = folder / "meta.json"
    if not meta_path.is_file():
        return None
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    if meta.get("cache_key") != key:
        return None
    from ..retrieval.trec import read_trec_run

    per_query = pd.read_csv(folder / "per_query.csv", dtype={"qid": str, "system": str, "slice": str})
    aggregate = pd.read_csv(folder / "aggregate.csv", index_col="system")
    per_slice = pd.read_csv(folder / "per_slice.csv", dtype={"slice": str, "system": str})
    significance = pd.read_csv(folder / "significance.csv", dtype={"slice": str, "system": str, "baseline": str})
    runs = {p.stem: read_trec_run(p) for p in sorted((folder / "runs").glob("*.trec"))}
    answers = {p.stem: pd.read_json(p, lines=True, dtype={"qid": str})
               for p in sorted((folder / "answers").glob("*.jsonl"))}
    return ExperimentResult(aggregate, per_query, per_slice, significance, runs, answers, meta, folder, True)


def _model_shas(systems: Mapping[str, Any]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name, s in systems.items():
        found = embedders_of(s)
        emb = found[0] if found else None
        try:
            out[name] = emb.sha256 if emb is not None else None
        except Exception:  # noqa: BLE001 - a model that cannot be hashed is reported as unknown
            out[name] = None
    return out


# ------------------------------------------------------------------------------------------------ the call


def experiment(systems: Mapping[str, Any], queries: pd.DataFrame, qrels: pd.DataFrame | None,
               measures: Sequence[str] = ("nDCG@10", "R@10", "RR@10"), baseline: str | Sequence[str] | None = None,
               slices: Mapping[str, str] | None = None, k: int = 10, seed: int = 0,
               save_dir: str | Path | None = None, config: Any = None, data_hash: str | None = None,
               gold_answers: Sequence[AnswerGold] | None = None, principals: Mapping[str, Any] | None = None,
               correction: str = "holm", n_resamples: int = 10000, validity: str = "warn",
               doc_ids: Sequence[str] | None = None, reuse: bool = True,
               show_progress: bool = False) -> ExperimentResult:
    """Run every system over ``queries``, score, compare with the baseline(s) and optionally save (module doc)."""
    if not systems:
        raise ConfigError("experiment: no systems given. Fix: pass {name: retriever_or_callable}.")
    names = [str(n) for n in systems]
    baselines = [] if baseline is None else ([baseline] if isinstance(baseline, str) else list(baseline))
    unknown = [b for b in baselines if b not in names]
    if unknown:
        raise ConfigError(f"experiment: baseline {unknown} is not a system; systems are {names}.")
    if validity not in ("warn", "strict", "off"):
        raise ConfigError(f"experiment: validity must be warn, strict or off, found {validity!r}.")
    if k < 1:
        raise ConfigError(f"experiment: k must be ≥ 1, found {k}.")
    validate(queries[[c for c in queries.columns if c in ("qid", "query", "conversation_id", "turn")]], "queries")
    queries = queries.assign(qid=queries["qid"].astype(str))
    ret_measures = [str(parse_measure(m)) for m in measures]
    if qrels is not None:
        validate(qrels, "qrels")
        qrels = qrels.assign(qid=qrels["qid"].astype(str), docno=qrels["docno"].astype(str))
    dhash = data_hash or text_hash(queries[["qid", "query"]].to_csv(index=False),
                                   "" if qrels is None else qrels.to_csv(index=False))
    settings = {"systems": names, "measures": ret_measures, "baselines": baselines, "k": k, "seed": seed,
                "correction": correction, "n_resamples": n_resamples,
                "slices": dict(sorted((str(a), str(b)) for a, b in (slices or {}).items()))}
    chash = config_hash(_config_payload(config)) if config is not None else None
    # The answer-side measures are part of the key: a saved result from before a measure was added is not reused.
    # So is the code: an edited reader re-run into the same folder must not get the old answers back.
    key = text_hash(json.dumps({"config": chash, "data": dhash, "code": code_hash(),
                                "answer_measures": list(PASS_THROUGH), **settings}, sort_keys=True))
    folder = Path(save_dir) if save_dir is not None else None
    if folder is not None and reuse and chash is not None:
        cached = _load_cached(folder, key)
        if cached is not None:
            return cached

    from tqdm.auto import tqdm

    # Retrievers run on the judged queries only (unjudged ones could not be scored); answer systems get them all.
    judged_queries = queries if qrels is None else queries[queries["qid"].isin(set(qrels["qid"]))]

    parts: list[pd.DataFrame] = []
    runs: dict[str, pd.DataFrame] = {}
    answers: dict[str, pd.DataFrame] = {}
    gold = list(gold_answers) if gold_answers is not None else None
    for name in tqdm(names, desc="systems", disable=not show_progress):
        system = systems[name]
        if isinstance(system, Retriever):
            if qrels is None:
                raise DataError(f"system {name!r} is a retriever but no qrels were given. Fix: pass qrels.")
            out = _run_retriever(system, judged_queries, k, principals, show_progress)
        elif callable(system):
            out = _as_frame(_run_callable(system, queries[["qid", "query"]].copy(), show_progress), name)
        else:
            raise ConfigError(f"system {name!r} is a {type(system).__name__}; expected a Retriever or a callable.")
        if is_answer_table(out):
            if gold is None:
                raise DataError(f"system {name!r} returned answer records but no gold_answers were given. "
                                "Fix: pass gold_answers=[AnswerGold…] (e.g. from golden questions).")
            out = out.assign(qid=out["qid"].astype(str))
            answers[name] = out
            per = evaluate_answers(out, gold)
        else:
            if qrels is None:
                raise DataError(f"system {name!r} returned a run but no qrels were given. Fix: pass qrels.")
            run = canonical_order(out[[c for c in out.columns if c in ("qid", "docno", "score", "rank")]])
            if validity != "off":
                check_run(run, qrels, queries=list(judged_queries["qid"]), doc_ids=doc_ids,
                          strict=validity == "strict",
                          name=f"system {name!r}")
            runs[name] = run
            per = evaluate(run, qrels, ret_measures)
            per = per[per["qid"].isin(set(queries["qid"]))]
        parts.append(per.assign(system=name))
    per_query = pd.concat(parts, ignore_index=True)[["system", "qid", "measure", "value"]]
    if slices is not None:
        per_query["slice"] = per_query["qid"].map(lambda q: slices.get(q, slices.get(str(q))))
    aggregate, per_slice, significance = summarise(per_query, names, baselines, seed, n_resamples, correction)
    meta = provenance(config, dhash, None, stages=systems)
    meta.update({"cache_key": key, "model_sha256": _model_shas(systems), "settings": settings,
                 "n_queries": int(queries["qid"].nunique())})
    result = ExperimentResult(aggregate, per_query, per_slice, significance, runs, answers, meta, folder, False)
    if folder is not None:
        _save(result, folder, config, settings)
    return result
