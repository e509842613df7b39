"""Two saved ``ragbench eval golden --out`` runs of one answer system, compared question by question.

A change to the reader or the check is judged by what it does to each answer, not only by the totals: this module
pairs the two runs' per-question scores (``per_query.csv``) and answers (``answers/<system>.jsonl``, one folder per
set in a pooled run), and reports the change in each count (refusal accuracy, HandledRight, the refuse slices,
leaks, secrets, quoted injections), the questions won and lost on HandledRight with a paired sign-flip permutation
test (:func:`ragbench.eval.stats.permutation_test`), the change per set, and every answer whose text, refusal or
score changed. ``ragbench eval compare BASE NEW`` is the command (:mod:`ragbench.commands.eval_compare`).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DataError
from .stats import permutation_test

#: Per-question measures compared as counts (their sums over the questions).
COUNTED = ("RefusalAccuracy", "HandledRight", "LeakedDocs", "SecretInAnswer", "InjectionQuoted")
#: The per-question columns of :attr:`RunComparison.changes`.
CHANGE_COLUMNS = ("set", "qid", "slice", "base_refused", "new_refused", "base_RefusalAccuracy", "new_RefusalAccuracy",
                  "base_HandledRight", "new_HandledRight", "base_decided_by", "new_decided_by", "base_answer",
                  "new_answer")
_NEEDED = {"system", "qid", "measure", "value", "slice"}


@dataclass(frozen=True)
class SavedRun:
    """One saved run of one answer system: per-question scores (``set``, ``qid``, ``slice`` and a column per
    measure; ``set`` is "" in a one-set run) and the answer records by ``(set, qid)``."""

    folder: Path
    scores: pd.DataFrame
    answers: dict[tuple[str, str], dict[str, Any]]


@dataclass(frozen=True)
class RunComparison:
    """What changed from ``base`` to ``new``. ``totals``: per measure of :data:`COUNTED` the two sums and their
    difference, and ``FactInAnswer`` as the two means over the questions that have it; ``slices``: refusal
    accuracy per slice (``n``, ``base``, ``new``, ``delta``); ``won`` / ``lost``: questions whose HandledRight rose
    / fell, ``p_value`` the paired permutation test of HandledRight; ``sets``: per set with any change, its
    refusal-accuracy and HandledRight change and the number of changed answers; ``changes``: one row per changed
    answer (:data:`CHANGE_COLUMNS`)."""

    system: str
    base: str
    new: str
    questions: int
    totals: dict[str, dict[str, float]]
    slices: dict[str, dict[str, float]]
    won: int
    lost: int
    p_value: float
    sets: dict[str, dict[str, int]]
    changes: pd.DataFrame

    def to_json(self) -> dict[str, Any]:
        return {"system": self.system, "base": self.base, "new": self.new, "questions": self.questions,
                "totals": self.totals, "slices": self.slices,
                "handled_right": {"won": self.won, "lost": self.lost, "p_value": self.p_value},
                "sets": self.sets, "changes": self.changes.to_dict(orient="records")}


def load_run(folder: str | Path, system: str = "answer") -> SavedRun:
    """Read one ``eval golden --out`` folder's scores and answers of ``system`` (a pooled run's root, or a one-set
    run's folder)."""
    root = Path(folder)
    table_path = root / "per_query.csv"
    if not table_path.is_file():
        raise DataError(f"{root}: no per_query.csv there. Fix: pass a folder written by "
                        "`ragbench eval golden --out DIR` (the root folder of a run over several sets).")
    try:
        table = pd.read_csv(table_path, dtype={"qid": str, "slice": str, "set": str}, keep_default_na=False,
                            na_values={"value": ["", "nan", "NaN"]})
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise DataError(f"{table_path}: not a readable per-query table ({exc}). Fix: run "
                        "`ragbench eval golden --out DIR` again.") from exc
    missing = sorted(_NEEDED - set(table.columns))
    if missing:
        raise DataError(f"{table_path}: missing column(s) {missing}. Fix: pass a folder written by "
                        "`ragbench eval golden --out DIR`.")
    rows = table[table["system"] == system]
    if rows.empty:
        scored = sorted(set(table.loc[table["measure"] == "RefusalAccuracy", "system"]))
        raise DataError(f"{table_path}: no answer system {system!r} in this run; it scored {scored or 'none'}. "
                        f"Fix: --system NAME with one of those.")
    if "set" in rows.columns:
        rows = rows.assign(qid=rows["qid"].str.split("/", n=1).str[-1])
    else:
        rows = rows.assign(set="")
    try:
        scores = rows.pivot(index=["set", "qid", "slice"], columns="measure", values="value").reset_index()
    except ValueError as exc:  # a question scored twice
        raise DataError(f"{table_path}: a question has two scores for one measure ({exc}). Fix: run "
                        "`ragbench eval golden --out DIR` again into an empty folder.") from exc
    scores.columns.name = None
    answers: dict[tuple[str, str], dict[str, Any]] = {}
    for name in sorted(scores["set"].unique()):
        path = (root / name if name else root) / "answers" / f"{system}.jsonl"
        if path.is_file():
            answers.update({(name, rec["qid"]): rec for rec in _records(path)})
    return SavedRun(root, scores, answers)


def _records(path: Path) -> list[dict[str, Any]]:
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}, line {number}: not JSON ({exc.msg}). Fix: run "
                            "`ragbench eval golden --out DIR` again.") from exc
        if not isinstance(rec, dict) or "qid" not in rec:
            raise DataError(f"{path}, line {number}: an answer record without a qid. Fix: run "
                            "`ragbench eval golden --out DIR` again.")
        out.append(rec)
    return out


def compare_runs(base: str | Path, new: str | Path, system: str = "answer") -> RunComparison:
    """Compare ``system`` in two saved runs of the same questions (``base`` first)."""
    a, b = load_run(base, system), load_run(new, system)
    keys_a = set(zip(a.scores["set"], a.scores["qid"]))
    keys_b = set(zip(b.scores["set"], b.scores["qid"]))
    if keys_a != keys_b:
        only_a, only_b = sorted(keys_a - keys_b), sorted(keys_b - keys_a)
        raise DataError(f"the two runs score different questions: {len(only_a)} only in {a.folder} "
                        f"{_show_keys(only_a)}, {len(only_b)} only in {b.folder} {_show_keys(only_b)}. "
                        "Fix: compare two runs of the same --data folders.")
    both = a.scores.merge(b.scores, on=["set", "qid"], suffixes=("_base", "_new"))
    relabelled = both[both["slice_base"] != both["slice_new"]]
    if not relabelled.empty:
        first = relabelled.iloc[0]
        raise DataError(f"{len(relabelled)} question(s) have another slice in {b.folder} (e.g. {first['set']}/"
                        f"{first['qid']}: {first['slice_base']!r} → {first['slice_new']!r}): the golden files changed "
                        "between the runs. Fix: compare two runs of the same golden files.")
    both = both.rename(columns={"slice_base": "slice"}).drop(columns=["slice_new"])

    def col(measure: str, side: str) -> pd.Series:
        name = f"{measure}_{side}"
        return both[name].astype(float) if name in both.columns else pd.Series(np.nan, index=both.index)

    totals: dict[str, dict[str, float]] = {}
    for measure in COUNTED:
        x, y = col(measure, "base"), col(measure, "new")
        if x.notna().any() or y.notna().any():
            totals[measure] = {"base": float(x.sum()), "new": float(y.sum()), "delta": float(y.sum() - x.sum())}
    fact_a, fact_b = col("FactInAnswer", "base"), col("FactInAnswer", "new")
    totals["FactInAnswer"] = {"base": _mean(fact_a), "new": _mean(fact_b), "delta": _mean(fact_b) - _mean(fact_a)}
    slices = {}
    for tag, rows in both.groupby("slice", sort=True):
        x, y = float(rows["RefusalAccuracy_base"].sum()), float(rows["RefusalAccuracy_new"].sum())
        slices[str(tag)] = {"n": int(len(rows)), "base": x, "new": y, "delta": y - x}
    hr_a, hr_b = col("HandledRight", "base").fillna(0.0), col("HandledRight", "new").fillna(0.0)
    changed = pd.Series([_differs(a.answers.get(k), b.answers.get(k)) for k in zip(both["set"], both["qid"])],
                        index=both.index, dtype=bool)
    changed |= (col("RefusalAccuracy", "base") != col("RefusalAccuracy", "new")) | (hr_a != hr_b)
    changes = pd.DataFrame([_change_row(r, a.answers.get((r["set"], r["qid"])), b.answers.get((r["set"], r["qid"])))
                            for _, r in both[changed].iterrows()], columns=list(CHANGE_COLUMNS))
    sets = {}
    for name, rows in both.groupby("set", sort=True):
        n_changed = int(changed[rows.index].sum())
        if n_changed:
            sets[str(name)] = {"RefusalAccuracy": int(rows["RefusalAccuracy_new"].sum()
                                                     - rows["RefusalAccuracy_base"].sum()),
                               "HandledRight": int(hr_b[rows.index].sum() - hr_a[rows.index].sum()),
                               "changed_answers": n_changed}
    return RunComparison(system, str(a.folder), str(b.folder), int(len(both)), totals, slices,
                         int((hr_b > hr_a).sum()), int((hr_b < hr_a).sum()),
                         round(permutation_test(hr_b.to_numpy(), hr_a.to_numpy(), seed=0), 4), sets, changes)


def _mean(values: pd.Series) -> float:
    kept = values.dropna()
    return float(kept.mean()) if len(kept) else float("nan")


def _show_keys(keys: list[tuple[str, str]]) -> str:
    shown = ", ".join(f"{s}/{q}" if s else q for s, q in keys[:3])
    return f"(e.g. {shown})" if shown else ""


def _differs(x: dict[str, Any] | None, y: dict[str, Any] | None) -> bool:
    if x is None or y is None:
        return False  # no answers saved: the scores alone decide
    return x.get("answer") != y.get("answer") or bool(x.get("refused")) != bool(y.get("refused"))


def _change_row(row: pd.Series, x: dict[str, Any] | None, y: dict[str, Any] | None) -> dict[str, Any]:
    x, y = x or {}, y or {}
    return {"set": row["set"], "qid": row["qid"], "slice": row["slice"],
            "base_refused": x.get("refused"), "new_refused": y.get("refused"),
            "base_RefusalAccuracy": row.get("RefusalAccuracy_base"),
            "new_RefusalAccuracy": row.get("RefusalAccuracy_new"),
            "base_HandledRight": row.get("HandledRight_base"), "new_HandledRight": row.get("HandledRight_new"),
            "base_decided_by": x.get("decided_by"), "new_decided_by": y.get("decided_by"),
            "base_answer": x.get("answer"), "new_answer": y.get("answer")}


def report(result: RunComparison, show: int = 20) -> list[str]:
    """The comparison as text: totals, slices, sets that changed and up to ``show`` changed answers (0: all)."""
    lines = [f"{result.system}: {result.base} → {result.new} ({result.questions:,} questions)",
             f"{'measure':<22}{'base':>10}{'new':>10}{'change':>10}"]
    for measure, v in result.totals.items():
        if measure == "FactInAnswer":
            lines.append(f"{'FactInAnswer (mean)':<22}{v['base']:>10.3f}{v['new']:>10.3f}{v['delta']:>+10.3f}")
        else:
            lines.append(f"{measure:<22}{v['base']:>10.0f}{v['new']:>10.0f}{v['delta']:>+10.0f}")
    lines.append(f"HandledRight: {result.won} won, {result.lost} lost (paired permutation p = {result.p_value:.4f})")
    lines.append("refusal accuracy by slice: " + "; ".join(
        f"{tag} {v['base']:.0f} → {v['new']:.0f} of {v['n']}" for tag, v in result.slices.items()))
    if result.sets:
        lines.append("sets with changed answers: " + "; ".join(
            f"{name or '(the set)'} {v['changed_answers']} (refusal accuracy {v['RefusalAccuracy']:+d}, "
            f"HandledRight {v['HandledRight']:+d})" for name, v in result.sets.items()))
    rows = result.changes if show <= 0 else result.changes.head(show)
    lines.append(f"changed answers: {len(result.changes)}" + (f" (first {len(rows)}; --show 0 lists all)"
                                                             if len(rows) < len(result.changes) else ""))
    for _, r in rows.iterrows():
        where = f"{r['set']}/{r['qid']}" if r["set"] else r["qid"]
        lines.append(f"  {where} [{r['slice']}] refusal accuracy {_num(r['base_RefusalAccuracy'])} → "
                     f"{_num(r['new_RefusalAccuracy'])}, HandledRight {_num(r['base_HandledRight'])} → "
                     f"{_num(r['new_HandledRight'])}; decided by {r['base_decided_by']} → {r['new_decided_by']}")
        lines.append(f"    - {_clip(r['base_answer'])}")
        lines.append(f"    + {_clip(r['new_answer'])}")
    return lines


def _num(value: Any) -> str:
    return "-" if value is None or (isinstance(value, float) and np.isnan(value)) else f"{float(value):g}"


def _clip(text: Any, width: int = 160) -> str:
    s = " ".join(str(text).split()) if text is not None else "(no answer saved)"
    return s if len(s) <= width else s[: width - 1] + "…"
