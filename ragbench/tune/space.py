"""Search spaces and tuning experiments, read from YAML.

An experiment file names a base configuration, distributions over config fields (by dotted name), the objective
metric(s) with directions, the dataset and its seeded tuning / held-out split, the sampler, the pruner and the trial
budget::

    name: golden-lsh
    dataset: golden                      # golden[:DIR[,DIR…]] | beir:<DIR>:<split> | eerag:<FILE> | dcs-threads:<FILE>
    base: {retrieval: {mode: lsh}, embedding: {model: hashing}}
    space:
      lsh.tables: int[4, 32]
      lsh.bits: int[4, 16, step=2]
      fusion.rrf_k: int[10, 100, log]
      chunking.overlap: float[0, 0.5]
      bm25.stopwords: choice[true, false]
    metrics: [{nDCG@10: maximize}, {latency_ms: minimize}]
    split: {heldout: 0.3, seed: 7}       # or, for golden:<DIR>,<DIR>,… (objective answers), whole sets held
                                         # out: split: {heldout_sets: [golden_vardon]}; or nested cross-
                                         # validation: split: {folds: 5, seed: 7} | {folds: sets}
    sampler: {name: tpe, seed: 42}
    pruner: {name: wilcoxon, p_threshold: 0.1}
    trials: 20

Everything is checked here, before a study starts: unknown field names (with the list of valid ones), empty or
ill-typed ranges (each ``space:`` entry is read by :func:`ragbench.tune.params.parse_param`), directions, sampler and
pruner names. Whether the dataset can produce the metrics is checked when
the objective is built (:mod:`ragbench.tune.objectives`).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..config import RagbenchConfig, config_hash, flatten, from_dict, read_yaml_mapping, with_overrides
from ..errors import ConfigError, require_extra
from .params import KINDS, Param, param_text, parse_param

# Param, parse_param and KINDS live in .params; they are re-exported here, where callers have always imported them.
__all__ = ["KINDS", "DIRECTIONS", "SAMPLERS", "TESTS", "PRUNERS", "TOP_KEYS", "Param", "TuneSpec", "parse_param",
           "parse_spec", "expand_dataset", "load_spec", "spec_to_dict"]

DIRECTIONS = {"maximize": "maximize", "max": "maximize", "minimize": "minimize", "min": "minimize"}
SAMPLERS = ("tpe", "random", "nsgaii", "grid")
TESTS = ("permutation", "t", "wilcoxon")
PRUNERS = ("none", "wilcoxon", "median")
TOP_KEYS = ("name", "description", "dataset", "objective", "options", "base", "space", "metrics", "split",
            "sampler", "pruner", "trials", "storage", "mlflow_experiment", "output_dir", "confirm")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")



@dataclass(frozen=True)
class TuneSpec:
    """A validated tuning experiment (see the module doc for the YAML form)."""

    name: str
    dataset: str
    base: RagbenchConfig
    space: tuple[Param, ...]
    metrics: tuple[tuple[str, str], ...]          # (metric, direction), first = primary
    objective: str | None = None                  # None: inferred from the dataset kind
    options: Mapping[str, Any] = field(default_factory=dict)
    heldout: float = 0.3
    split_seed: int = 0
    limit: int | None = None
    heldout_sets: tuple[str, ...] = ()            # whole golden sets held out (then heldout and limit do not apply)
    folds: int | str | None = None                # nested cross-validation: K folds of units, or "sets" (one per set)
    fold: str | None = None                       # the fold one study of a cross-validation holds out (its label)
    sampler: str = "tpe"
    sampler_options: Mapping[str, Any] = field(default_factory=dict)
    seed: int = 42
    pruner: str = "none"
    pruner_options: Mapping[str, Any] = field(default_factory=dict)
    trials: int = 20
    storage: str | None = None
    mlflow_experiment: str = "ragbench-tune"
    folder: Path = Path(".")                      # folder of the YAML file; outputs are placed relative to it
    output_dir: str = "tuned"                     # where --promote copies the tuned config (tracked in git)
    description: str = ""
    confirm_test: str = "permutation"             # the held-out paired test --promote requires to be significant
    alpha: float = 0.05

    @property
    def directions(self) -> list[str]:
        return [d for _, d in self.metrics]

    @property
    def metric_names(self) -> list[str]:
        return [m for m, _ in self.metrics]

    @property
    def multi_objective(self) -> bool:
        return len(self.metrics) > 1

    def config_for(self, params: Mapping[str, Any]) -> RagbenchConfig:
        """The base configuration with a trial's parameters applied (type-checked)."""
        return with_overrides(self.base, self.tidy(params))

    def tidy(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """A trial's parameters with stepped floats as written in the space (:meth:`Param.tidy`)."""
        by_name = {p.name: p for p in self.space}
        return {k: by_name[k].tidy(v) if k in by_name else v for k, v in params.items()}

    def fingerprint(self) -> str:
        """Hash of what defines the study (dataset, base, space, metrics, split); resuming requires equality."""
        # The base enters as its non-default fields only, so new config fields (with defaults) keep studies resumable.
        defaults = flatten(RagbenchConfig())
        base = {k: v for k, v in flatten(self.base).items() if k not in defaults or defaults[k] != v}
        split: list[Any] = [self.heldout, self.split_seed, self.limit]
        split += [list(self.heldout_sets)] if self.heldout_sets else []
        split += [self.folds, self.fold] if self.folds is not None else []
        payload = {"dataset": self.dataset, "objective": self.objective, "base": base,
                   "space": [p.__dict__ | {"choices": list(p.choices)} for p in self.space],
                   "metrics": list(self.metrics), "split": split,
                   "options": dict(self.options)}
        return config_hash(payload)

    @property
    def study_name(self) -> str:
        """The Optuna study's (and MLflow run's) name: ``name``, or ``name.fold`` for one fold of a
        cross-validation."""
        return f"{self.name}.{self.fold}" if self.fold else self.name

    @property
    def study_dir(self) -> Path:
        """Local results of the study: ``<experiment folder>/runs/<name>/`` (ignored by git); one fold of a
        cross-validation: ``runs/<name>/<fold>/``."""
        return self.folder / "runs" / self.name / self.fold if self.fold else self.folder / "runs" / self.name

    @property
    def tuned_path(self) -> Path:
        """The tuned config of the last run: ``<study folder>/tuned.yaml`` (never a tracked file)."""
        return self.study_dir / "tuned.yaml"

    @property
    def promoted_path(self) -> Path:
        """Where ``--promote`` copies a significantly better tuned config: ``<experiment folder>/tuned/<name>.yaml``."""
        return self.folder / self.output_dir / f"{self.name}.yaml"

    def grid(self) -> dict[str, list[Any]]:
        """The grid of a ``grid`` sampler: every choice, every int step; floats need ``step``."""
        out: dict[str, list[Any]] = {}
        for p in self.space:
            if p.kind == "choice":
                out[p.name] = list(p.choices)
                continue
            low, high = float(p.low or 0), float(p.high or 0)  # numeric params always have both bounds
            if p.step is not None and not p.log:
                n = int(round((high - low) / float(p.step)))
                vals = [low + i * float(p.step) for i in range(n + 1)]
                out[p.name] = [int(round(v)) for v in vals] if p.kind == "int" else [round(v, 12) for v in vals]
            elif p.kind == "int" and not p.log:
                out[p.name] = list(range(int(low), int(high) + 1))
            else:
                raise ConfigError(f"experiment {self.name}: the grid sampler needs a finite grid, but {p.name} is "
                                  f"{p.kind}[{p.low}, {p.high}]. Fix: give it a step (float[0, 1, step=0.25]) or "
                                  "use choice[...].")
        return out


# ------------------------------------------------------------------------------------------------ parsing




def _metrics(raw: Any) -> tuple[tuple[str, str], ...]:
    if raw is None:
        raise ConfigError("experiment: 'metrics' is missing. Fix: e.g. metrics: [{nDCG@10: maximize}].")
    if isinstance(raw, str):
        raw = [{raw: "maximize"}]
    if isinstance(raw, Mapping):
        raw = [{k: v} for k, v in raw.items()]
    if not isinstance(raw, list) or not raw:
        raise ConfigError(f"experiment: 'metrics' must be a non-empty list of {{metric: direction}}, found {raw!r}.")
    out: list[tuple[str, str]] = []
    for item in raw:
        if isinstance(item, str):
            item = {item: "maximize"}
        if not isinstance(item, Mapping) or len(item) != 1:
            raise ConfigError(f"experiment: each metric must be {{name: maximize|minimize}}, found {item!r}.")
        (name, direction), = item.items()
        d = DIRECTIONS.get(str(direction).strip().lower())
        if d is None:
            raise ConfigError(f"experiment: metric {name!r} has direction {direction!r}; expected maximize or "
                              "minimize.")
        if str(name) in [m for m, _ in out]:
            raise ConfigError(f"experiment: metric {name!r} is listed twice.")
        out.append((str(name), d))
    return tuple(out)


def _section(raw: Any, key: str, names: tuple[str, ...], default: str) -> tuple[str, dict[str, Any]]:
    if raw is None:
        return default, {}
    if isinstance(raw, str):
        raw = {"name": raw}
    if not isinstance(raw, Mapping):
        raise ConfigError(f"experiment: '{key}' must be a name or a mapping with 'name', found {raw!r}.")
    opts = dict(raw)
    name = str(opts.pop("name", default)).strip().lower()
    if name not in names:
        raise ConfigError(f"experiment: unknown {key} {name!r}; expected one of {', '.join(names)}.")
    return name, opts


def _check_options(key: str, name: str, opts: Mapping[str, Any], extra: tuple[str, ...] = ()) -> None:
    """Sampler / pruner options must be arguments of the Optuna class (plus ``extra`` of ours) and accepted by it,
    so that a typo fails here rather than as a TypeError inside every trial."""
    import importlib.util
    import inspect

    if importlib.util.find_spec("optuna") is None:
        return  # a spec can be read without the tune extra; running it says which extra is missing
    optuna = require_extra("optuna", "tune", "tuning")

    classes = {"tpe": optuna.samplers.TPESampler, "random": optuna.samplers.RandomSampler,
               "nsgaii": optuna.samplers.NSGAIISampler, "wilcoxon": optuna.pruners.WilcoxonPruner,
               "median": optuna.pruners.MedianPruner, "none": optuna.pruners.NopPruner}
    cls = classes.get(name)
    # The grid sampler's only argument, its grid, comes from the space.
    valid = [n for n in inspect.signature(cls).parameters if n not in ("self", "seed")] if cls else []
    valid += list(extra)
    unknown = sorted(set(map(str, opts)) - set(valid))
    if unknown:
        raise ConfigError(f"experiment: {key} {name!r} has no option(s) {', '.join(map(repr, unknown))}. Valid "
                          f"options: {', '.join(valid) or 'none'}. Fix: correct or remove them.")
    if extra and "batch" in opts:
        _int(opts["batch"], f"{key}.batch", 1)
    if cls is None:
        return
    try:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cls(**{k: v for k, v in opts.items() if k not in extra})
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"experiment: {key} {name!r} refuses its options {dict(opts)}: {exc}. Fix: see the "
                          f"Optuna documentation of {cls.__name__}.") from None


def _int(value: Any, what: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"experiment: {what} must be an integer ≥ {minimum}, found {value!r}. Fix: give a whole "
                          f"number ≥ {minimum}.")
    return value


def parse_spec(data: Mapping[str, Any], folder: str | Path = ".", name: str | None = None) -> TuneSpec:
    """A :class:`TuneSpec` from the mapping of an experiment file (``folder`` anchors its outputs)."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"experiment: expected a mapping at the top level, found {type(data).__name__}.")
    unknown = sorted(set(data) - set(TOP_KEYS))
    if unknown:
        raise ConfigError(f"experiment: unknown key(s) {', '.join(map(str, unknown))}. Valid keys: "
                          f"{', '.join(TOP_KEYS)}.")
    study = str(data.get("name") or name or "").strip()
    if not _NAME.match(study):
        raise ConfigError(f"experiment: name must be letters, digits, '.', '_' or '-', found {study!r}.")
    dataset = data.get("dataset")
    if not isinstance(dataset, str) or not dataset.strip():
        raise ConfigError("experiment: 'dataset' is missing. Fix: golden | beir:<DIR>:<split> | eerag:<FILE> | "
                          "dcs-threads:<FILE>.")
    try:
        base = from_dict(RagbenchConfig, data.get("base") or {})
    except ConfigError as exc:
        msg = str(exc)
        raise ConfigError(f"experiment: base: {msg}" + ("" if "Fix:" in msg else " Fix: correct the base section.")) \
            from None
    raw_space = data.get("space")
    if not isinstance(raw_space, Mapping) or not raw_space:
        raise ConfigError("experiment: 'space' must map config fields to distributions, e.g. "
                          "{lsh.tables: 'int[4, 32]'}.")
    space = tuple(parse_param(str(k), v) for k, v in raw_space.items())
    for p in space:  # the base must also accept every bound (e.g. a literal that only the base constrains)
        for v in (p.choices if p.kind == "choice" else (p.low, p.high)):
            with_overrides(base, {p.name: v})
    metrics = _metrics(data.get("metrics"))
    split = data.get("split") or {}
    if not isinstance(split, Mapping) or set(split) - {"heldout", "seed", "limit", "heldout_sets", "folds"}:
        raise ConfigError("experiment: 'split' takes heldout, seed and limit, or heldout_sets, or folds (with seed), "
                          f"found {split!r}.")
    heldout_sets = _heldout_sets(split)
    folds = _folds(split)
    heldout = split.get("heldout", 0.3)
    if isinstance(heldout, bool) or not isinstance(heldout, (int, float)) or not 0 < heldout < 1:
        raise ConfigError(f"experiment: split.heldout must be a fraction in (0, 1), found {heldout!r}.")
    limit = split.get("limit")
    if limit is not None:
        limit = _int(limit, "split.limit", 2)
    sampler, sampler_opts = _section(data.get("sampler"), "sampler", SAMPLERS, "tpe")
    seed = _int(sampler_opts.pop("seed", base.seed), "sampler.seed", 0)
    _check_options("sampler", sampler, sampler_opts)
    pruner, pruner_opts = _section(data.get("pruner"), "pruner", PRUNERS,
                                   "wilcoxon" if len(metrics) == 1 else "none")
    _check_options("pruner", pruner, pruner_opts, extra=("batch",) if pruner != "none" else ())
    if pruner != "none" and len(metrics) > 1:
        raise ConfigError(f"experiment: pruner {pruner!r} needs a single objective (Optuna does not prune "
                          "multi-objective studies). Fix: pruner: none.")
    options = data.get("options") or {}
    if not isinstance(options, Mapping):
        raise ConfigError(f"experiment: 'options' must be a mapping, found {options!r}.")
    conf = data.get("confirm") or {}
    if not isinstance(conf, Mapping) or set(conf) - {"test", "alpha"}:
        raise ConfigError(f"experiment: 'confirm' takes test ({' | '.join(TESTS)}) and alpha, found {conf!r}.")
    test = str(conf.get("test", "permutation"))
    alpha = conf.get("alpha", 0.05)
    if test not in TESTS:
        raise ConfigError(f"experiment: confirm.test must be one of {', '.join(TESTS)}, found {test!r}.")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise ConfigError(f"experiment: confirm.alpha must be in (0, 1), found {alpha!r}.")
    return TuneSpec(
        name=study, dataset=expand_dataset(dataset.strip()), base=base, space=space, metrics=metrics,
        objective=str(data["objective"]) if data.get("objective") else None, options=dict(options),
        heldout=float(heldout), split_seed=_int(split.get("seed", 0), "split.seed", 0), limit=limit,
        heldout_sets=heldout_sets, folds=folds,
        sampler=sampler, sampler_options=sampler_opts, seed=seed, pruner=pruner, pruner_options=pruner_opts,
        trials=_int(data.get("trials", 20), "trials", 1), storage=data.get("storage"),
        mlflow_experiment=str(data.get("mlflow_experiment") or "ragbench-tune"), folder=Path(folder),
        output_dir=str(data.get("output_dir") or "tuned"), description=str(data.get("description") or ""),
        confirm_test=test, alpha=float(alpha))


def expand_dataset(text: str) -> str:
    """Environment variables in a dataset string; ``${RAGBENCH_DATA}`` defaults to the shared data folder next to
    the project (``../shared/data``), as the tests' ``shared_data`` fixture does."""
    if "RAGBENCH_DATA" in text and not os.environ.get("RAGBENCH_DATA"):
        from ..provenance import project_root

        default = str(project_root().parent / "shared" / "data")
        text = text.replace("${RAGBENCH_DATA}", default).replace("$RAGBENCH_DATA", default)
    return os.path.expandvars(text)


def load_spec(path: str | Path) -> TuneSpec:
    """Read and validate an experiment YAML file (its name defaults to the file stem)."""
    p = Path(path)
    data = read_yaml_mapping(p, "experiment")
    try:
        return parse_spec(data, p.resolve().parent, name=p.stem)
    except ConfigError as exc:  # name the file in every message
        raise ConfigError(f"experiment file {p}: {str(exc).removeprefix('experiment: ')}") from None


def _heldout_sets(split: Mapping[str, Any]) -> tuple[str, ...]:
    """``split.heldout_sets``: the names of the golden sets held out whole (``[]`` or absent: a random split of the
    questions). It replaces ``heldout``, ``seed`` and ``limit``, which are then refused."""
    raw = split.get("heldout_sets")
    if raw is None:
        return ()
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, (list, tuple)) or not raw or not all(isinstance(x, str) and x.strip() for x in raw):
        raise ConfigError(f"experiment: split.heldout_sets must list golden set names (folder names), found {raw!r}.")
    mixed = sorted(set(split) & {"heldout", "seed", "limit"})
    if mixed:
        raise ConfigError(f"experiment: split.heldout_sets holds out whole sets, so {', '.join(mixed)} cannot also be "
                          "given. Fix: keep one way of splitting.")
    return tuple(dict.fromkeys(x.strip() for x in raw))


def _folds(split: Mapping[str, Any]) -> int | str | None:
    """``split.folds``: K ≥ 2 seeded folds of the units, or ``sets`` (each golden set of a ``golden:A,B,…`` dataset
    held out in turn). Every unit is held out exactly once, so the pooled held-out score estimates how well the
    tuning procedure itself does on data it did not choose on (nested cross-validation)."""
    raw = split.get("folds")
    if raw is None:
        return None
    mixed = sorted(set(split) & {"heldout", "limit", "heldout_sets"})
    if mixed:
        raise ConfigError(f"experiment: split.folds holds out every unit once, so {', '.join(mixed)} cannot also be "
                          "given. Fix: keep one way of splitting (split: {folds: 5, seed: 0} or {folds: sets}).")
    if raw == "sets":
        if "seed" in split:
            raise ConfigError("experiment: split.folds: sets holds out each golden set in turn, so split.seed has "
                              "nothing to shuffle. Fix: drop split.seed.")
        return "sets"
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 2:
        raise ConfigError(f"experiment: split.folds must be an integer ≥ 2 or 'sets', found {raw!r}.")
    return raw


def spec_to_dict(spec: TuneSpec) -> dict[str, Any]:
    """The YAML-able form of a spec (as written next to the results)."""
    return {"name": spec.name, "dataset": spec.dataset, "objective": spec.objective, "options": dict(spec.options),
            "space": {p.name: param_text(p) for p in spec.space}, "metrics": [{m: d} for m, d in spec.metrics],
            "split": ({"heldout_sets": list(spec.heldout_sets)} if spec.heldout_sets else
                      {"folds": spec.folds} if spec.folds == "sets" else
                      {"folds": spec.folds, "seed": spec.split_seed} if spec.folds is not None else
                      {"heldout": spec.heldout, "seed": spec.split_seed, "limit": spec.limit}),
            **({"fold": spec.fold} if spec.fold else {}),
            "sampler": {"name": spec.sampler, "seed": spec.seed, **spec.sampler_options},
            "pruner": {"name": spec.pruner, **spec.pruner_options}, "trials": spec.trials}
