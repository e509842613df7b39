"""What every objective shares: the dataset reference, the seeded split, the :class:`Objective` contract, the
registry (:func:`register_objective`) and small per-process memos of expensive parts."""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from ...config import RagbenchConfig
from ...errors import ConfigError, DataError

COLUMNS = ["qid", "measure", "value"]


@dataclass(frozen=True)
class DatasetRef:
    """``kind`` golden | beir | eerag | dcs-threads, with its path and (BEIR) split; ``paths`` every folder of a
    dataset of several golden sets (``golden:A,B,…``; ``path`` is then the first)."""

    kind: str
    path: Path | None = None
    split: str | None = None
    paths: tuple[Path, ...] = ()

    def __str__(self) -> str:
        if self.kind == "beir":
            return f"beir:{self.path}:{self.split}"
        if len(self.paths) > 1:
            return f"{self.kind}:" + ",".join(map(str, self.paths))
        return self.kind + (f":{self.path}" if self.path is not None else "")


def parse_dataset(text: str) -> DatasetRef:
    """``golden`` | ``golden:<DIR>`` | ``golden:<DIR>,<DIR>,…`` (several golden sets) | ``beir:<DIR>:<split>`` |
    ``eerag:<FILE>`` | ``dcs-threads:<FILE>``."""
    kind, _, rest = str(text).strip().partition(":")
    kind = kind.lower()
    if kind == "golden":
        folders = [f.strip() for f in rest.split(",")] if rest else []
        if any(not f for f in folders):
            raise ConfigError(f"dataset {text!r}: an empty golden folder in the list. Fix: golden:<DIR>,<DIR>,… "
                              "with no empty entries.")
        paths = tuple(Path(f).expanduser() for f in folders)
        return DatasetRef("golden", paths[0] if paths else None, paths=paths if len(paths) > 1 else ())
    if kind == "beir":
        folder, sep, split = rest.rpartition(":")
        if not sep or not folder or not split:
            raise ConfigError(f"dataset {text!r}: expected beir:<DIR>:<split>, e.g. beir:data/scifact:train.")
        return DatasetRef("beir", Path(folder).expanduser(), split)
    if kind in ("eerag", "dcs-threads", "locomo", "qa"):
        if not rest:
            raise ConfigError(f"dataset {text!r}: expected {kind}:<FILE>.")
        return DatasetRef(kind, Path(rest).expanduser())
    raise ConfigError(f"unknown dataset {text!r}; expected golden[:DIR], beir:<DIR>:<split>, eerag:<FILE>, "
                      "dcs-threads:<FILE>, locomo:<FILE> or qa:<FILE>.")


def split_units(units: Sequence[str], heldout: float, seed: int,
                limit: int | None = None) -> tuple[list[str], list[str]]:
    """Seeded (tuning, held-out) partition of ``units``: sort, permute with ``default_rng(seed)``, optionally keep
    the first ``limit``, and put ``round(n · heldout)`` (at least one) into the held-out part. Each part keeps the
    sorted order."""
    uniq = sorted(set(map(str, units)))
    perm = [uniq[i] for i in np.random.default_rng(seed).permutation(len(uniq))]
    if limit is not None:
        perm = perm[:limit]
    n_held = max(1, int(round(len(perm) * heldout)))
    if len(perm) - n_held < 1:
        raise DataError(f"cannot split {len(perm)} unit(s) into tuning and held-out parts (heldout={heldout}). "
                        "Fix: use a larger dataset or a smaller split.heldout.")
    held = sorted(perm[:n_held])
    return sorted(perm[n_held:]), held


def split_by_sets(units: Sequence[str], heldout_sets: Sequence[str],
                  set_of: Callable[[str], str]) -> tuple[list[str], list[str]]:
    """(tuning, held-out) partition of ``units`` by the set each belongs to (``set_of``): the units of
    ``heldout_sets`` are held out whole, so that what is chosen on some organisations is reported on another. Each
    part keeps the sorted order; a named set that has no units, or no set left to tune on, is an error."""
    uniq = sorted(set(map(str, units)))
    present = sorted({set_of(u) for u in uniq})
    unknown = [s for s in heldout_sets if s not in present]
    if unknown:
        raise ConfigError(f"split.heldout_sets names {', '.join(map(repr, unknown))}, which the dataset does not "
                          f"have. Fix: use the sets' folder names: {', '.join(present)}.")
    held = [u for u in uniq if set_of(u) in set(heldout_sets)]
    tune = [u for u in uniq if set_of(u) not in set(heldout_sets)]
    if not tune:
        raise ConfigError("split.heldout_sets holds out every set, leaving nothing to tune on. Fix: hold out fewer "
                          "sets, or add sets to the dataset.")
    return tune, held


def fold_labels(units: Sequence[str], folds: int | str, set_of: Callable[[str], str] | None = None) -> list[str]:
    """The folds of a cross-validation: ``fold1``…``foldK``, or (``folds="sets"``) the sets' names in sorted order."""
    if folds != "sets":
        k = int(folds)
        n = len(set(map(str, units)))
        if n < k:
            raise DataError(f"cannot cut {n} unit(s) into {k} folds. Fix: use split.folds ≤ {n}, or more data.")
        return [f"fold{i + 1}" for i in range(k)]
    if set_of is None:
        raise ConfigError("split.folds: sets holds out each golden set in turn, but the dataset is a single one. Fix: "
                          "dataset: golden:<DIR>,<DIR>,… with objective: answers, or split: {folds: 5}.")
    present = sorted({set_of(str(u)) for u in units})
    if len(present) < 2:
        raise ConfigError(f"split.folds: sets needs at least two golden sets, found {present}. Fix: list more "
                          "folders in the dataset, or use split: {folds: 5}.")
    return present


def split_fold(units: Sequence[str], fold: str, folds: int | str, seed: int,
               set_of: Callable[[str], str] | None = None) -> tuple[list[str], list[str]]:
    """(tuning, held-out) partition of one fold of a cross-validation. K folds: the units sorted, permuted with
    ``default_rng(seed)`` and dealt round-robin, so fold sizes differ by at most one and each unit is held out by
    exactly one fold; ``sets``: the fold's set is held out whole (:func:`split_by_sets`)."""
    labels = fold_labels(units, folds, set_of)
    if fold not in labels:
        raise ConfigError(f"no fold {fold!r} in this cross-validation. Fix: use one of {', '.join(labels)}.")
    if folds == "sets":
        assert set_of is not None
        return split_by_sets(units, [fold], set_of)
    uniq = sorted(set(map(str, units)))
    perm = [uniq[i] for i in np.random.default_rng(seed).permutation(len(uniq))]
    index = labels.index(fold)
    held = set(perm[index::len(labels)])
    return [u for u in uniq if u not in held], [u for u in uniq if u in held]


class Objective(ABC):
    """A dataset bound to an evaluation: ``objective(cfg, units)`` → long table ``qid, measure, value``."""

    name: str = "objective"
    #: True when any subset of units can be evaluated on its own (then trials report per query and may prune).
    incremental: bool = True

    @abstractmethod
    def units(self) -> list[str]:
        """The split units (query ids, case ids, thread labels)."""

    @abstractmethod
    def check_measure(self, measure: str) -> str:
        """The canonical name of ``measure``; :class:`ConfigError` when this objective cannot produce it."""

    @abstractmethod
    def __call__(self, cfg: RagbenchConfig, units: Sequence[str], measures: Sequence[str]) -> pd.DataFrame:
        """Per-query values of ``measures`` for configuration ``cfg`` over ``units``."""

    data_hash: str = ""
    #: Measures every trial logs besides the optimised ones (so a trial's MLflow run shows the whole picture).
    report_measures: tuple[str, ...] = ()

    def model_sha256(self, cfg: RagbenchConfig) -> str | None:
        """SHA-256 of the model weights a configuration uses (None when it uses none)."""
        return None


def embedder_for(cfg: RagbenchConfig) -> Any:
    """One embedder per embedding section per process (:func:`ragbench.retrieval.factory.shared_embedder`)."""
    from ...retrieval.factory import shared_embedder

    return shared_embedder(cfg.embedding)


@dataclass(frozen=True)
class _Entry:
    factory: Callable[[DatasetRef, Mapping[str, Any]], Objective]
    kinds: tuple[str, ...]
    options: tuple[str, ...] = ()
    several_sets: bool = False


OBJECTIVES: dict[str, _Entry] = {}


def register_objective(name: str, kinds: Sequence[str], options: Sequence[str] = (),
                       several_sets: bool = False) -> Callable:
    """Decorator: register ``factory(dataset, options) → Objective`` for the dataset kinds it accepts; ``options``
    names the keys of an experiment's ``options:`` it reads (any other key is refused as a typo); ``several_sets``:
    it also takes a dataset of several golden folders (``golden:A,B,…``), whose units it names ``<set>/<qid>``."""
    def deco(factory: Callable[[DatasetRef, Mapping[str, Any]], Objective]) -> Callable:
        OBJECTIVES[name] = _Entry(factory, tuple(kinds), tuple(options), several_sets)
        return factory
    return deco


def check_options(name: str, entry: _Entry, options: Mapping[str, Any]) -> None:
    """Raise :class:`ConfigError` for ``options:`` keys objective ``name`` does not read."""
    unknown = sorted(set(map(str, options)) - set(entry.options))
    if unknown:
        valid = ", ".join(entry.options) if entry.options else "none"
        raise ConfigError(f"experiment: options {', '.join(map(repr, unknown))} are not read by objective {name!r}"
                          f" (valid options: {valid}). Fix: correct or remove them.")


def _require(path: Path | None, what: str) -> Path:
    if path is None or not path.exists():
        raise DataError(f"{what} {path} does not exist. Fix: check the dataset path in the experiment file.")
    return path

