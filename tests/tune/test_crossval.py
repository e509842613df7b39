"""Nested cross-validation of a tuning experiment (``split: {folds: K}`` or ``{folds: sets}``): one study per fold,
each unit held out once, the folds' held-out values pooled against the base; and stepped floats written as in the
space."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from ragbench import cli
from ragbench.errors import ConfigError, DataError
from ragbench.tune.crossval import run_crossval
from ragbench.tune.objectives import GoldenSetsAnswersObjective, fold_labels, split_fold
from ragbench.tune.params import parse_param
from ragbench.tune.space import parse_spec, spec_to_dict
from ragbench.tune.sweep import prepare

from .conftest import require, tiny_spec, write_yaml

DATA = Path(__file__).resolve().parents[2] / "data"
GOLDEN, TARNWELL = DATA / "golden", DATA / "golden_tarnwell"
BASE_NDCG = 1 / math.log2(3)  # stopwords kept: the distractor ranks first (tests/tune/conftest.py)


def test_k_folds_hold_out_every_unit_exactly_once():
    units = [f"q{i}" for i in range(10)]
    assert fold_labels(units, 3) == ["fold1", "fold2", "fold3"]
    held = [split_fold(units, f, 3, seed=7)[1] for f in ("fold1", "fold2", "fold3")]
    assert sorted(u for h in held for u in h) == sorted(units)
    assert sorted(map(len, held)) == [3, 3, 4]
    tune, held1 = split_fold(units, "fold1", 3, seed=7)
    assert sorted(tune + held1) == sorted(units) and not set(tune) & set(held1)
    assert tune == sorted(tune) and held1 == sorted(held1)
    # Seeded: the same seed deals the same folds, another seed others.
    assert split_fold(units, "fold2", 3, seed=7) == split_fold(list(reversed(units)), "fold2", 3, seed=7)
    assert [split_fold(units, f, 3, seed=8)[1] for f in ("fold1", "fold2", "fold3")] != held
    with pytest.raises(ConfigError, match="no fold 'fold4'.*fold1, fold2, fold3"):
        split_fold(units, "fold4", 3, seed=7)
    with pytest.raises(DataError, match="cannot cut 2 unit.*into 3 folds"):
        fold_labels(["a", "b"], 3)


def test_set_folds_hold_out_each_set_in_turn():
    units = ["b/q1", "a/q1", "c/q2", "a/q2"]
    set_of = GoldenSetsAnswersObjective.set_of
    assert fold_labels(units, "sets", set_of) == ["a", "b", "c"]
    assert split_fold(units, "b", "sets", 0, set_of) == (["a/q1", "a/q2", "c/q2"], ["b/q1"])
    with pytest.raises(ConfigError, match="the dataset is a single one"):
        fold_labels(units, "sets")
    with pytest.raises(ConfigError, match="at least two golden sets"):
        fold_labels(["a/q1", "a/q2"], "sets", set_of)


def test_folds_in_an_experiment_file(tmp_path, tiny_beir):
    spec = parse_spec(tiny_spec(tmp_path, tiny_beir, split={"folds": 3, "seed": 5}), tmp_path)
    assert spec.folds == 3 and spec.split_seed == 5 and spec.fold is None
    assert spec_to_dict(spec)["split"] == {"folds": 3, "seed": 5}
    fold = spec.__class__(**{**spec.__dict__, "fold": "fold2"})
    assert fold.study_name == "tiny.fold2" and fold.study_dir == tmp_path / "runs" / "tiny" / "fold2"
    assert spec_to_dict(fold)["fold"] == "fold2"
    # Each fold is its own study, and a cross-validation is not the random split of the same data.
    assert len({spec.fingerprint(), fold.fingerprint(),
                parse_spec(tiny_spec(tmp_path, tiny_beir), tmp_path).fingerprint(),
                parse_spec(tiny_spec(tmp_path, tiny_beir, split={"folds": 4, "seed": 5}), tmp_path).fingerprint()}) == 4
    assert parse_spec(tiny_spec(tmp_path, tiny_beir, split={"folds": "sets"}), tmp_path).folds == "sets"
    for split, message in (({"folds": 1}, "integer ≥ 2 or 'sets'"), ({"folds": "all"}, "integer ≥ 2 or 'sets'"),
                           ({"folds": True}, "integer ≥ 2 or 'sets'"),
                           ({"folds": 3, "heldout": 0.2}, "heldout cannot also be given"),
                           ({"folds": "sets", "seed": 1}, "nothing to shuffle"),
                           ({"fold": 3}, "'split' takes heldout")):
        with pytest.raises(ConfigError, match=message):
            parse_spec(tiny_spec(tmp_path, tiny_beir, split=split), tmp_path)
    with pytest.raises(ConfigError, match="cross-validated.*one study per fold"):
        prepare(spec)
    with pytest.raises(ConfigError, match="the dataset is a single one"):
        run_crossval(parse_spec(tiny_spec(tmp_path, tiny_beir, split={"folds": "sets"}), tmp_path), track=False)


def test_cross_validation_pools_each_folds_choice_against_the_base(tmp_path, tiny_beir, capsys):
    require("optuna", "tune")
    spec = tiny_spec(tmp_path, tiny_beir, split={"folds": 3, "seed": 5}, sampler={"name": "grid", "seed": 0},
                     trials=2)
    path = write_yaml(tmp_path / "cv.yaml", {**spec, "name": "cv"})
    out = tmp_path / "runs" / "cv"
    # One fold alone (one process or machine per fold): an ordinary study's output, in the fold's folder.
    assert cli.main(["tune", str(path), "--fold", "fold2", "--no-mlflow", "--json", "--quiet"]) == 0
    alone = json.loads(capsys.readouterr().out)
    assert alone["best_params"] == {"bm25.stopwords": True} and alone["heldout_score"] == 1.0
    assert alone["tuned_path"] == str(out / "fold2" / "tuned.yaml") and not (out / "fold1").exists()
    assert cli.main(["tune", str(path), "--fold", "fold9", "--no-mlflow", "--quiet"]) == 2
    assert "no fold 'fold9'" in capsys.readouterr().err
    plain = write_yaml(tmp_path / "plain.yaml", tiny_spec(tmp_path, tiny_beir, name="plain"))
    assert cli.main(["tune", str(plain), "--fold", "fold1", "--no-mlflow", "--quiet"]) == 2
    assert "has no split.folds" in capsys.readouterr().err
    # The whole cross-validation: fold2 is at its budget (only re-confirmed), the others run.
    code = cli.main(["tune", str(path), "--no-mlflow", "--json", "--quiet"])
    printed = json.loads(capsys.readouterr().out)
    assert code == 0
    # Every fold removes stopwords (nDCG@10 1 on every query) against the base's 1/log2(3).
    assert printed["crossval"] is True and printed["n"] == 10
    assert printed["heldout_score"] == 1.0
    assert printed["baseline_heldout_score"] == pytest.approx(BASE_NDCG, abs=1e-12)
    assert (printed["wins"], printed["ties"], printed["losses"]) == (10, 0, 0)
    assert printed["p_value"] < 0.01
    assert [f["fold"] for f in printed["folds"]] == ["fold1", "fold2", "fold3"]
    assert [f["best_params"] for f in printed["folds"]] == [{"bm25.stopwords": True}] * 3
    assert sorted(f["heldout_n"] for f in printed["folds"]) == [3, 3, 4]
    assert all(f["tune_n"] + f["heldout_n"] == 10 for f in printed["folds"])
    table = pd.read_csv(out / "crossval.csv")
    assert list(table.columns[:12]) == ["fold", "tune_n", "heldout_n", "trials", "best_trial", "tune_score",
                                        "heldout_score", "baseline_heldout_score", "p_value", "wins", "ties",
                                        "losses"]
    assert table["param:bm25.stopwords"].tolist() == [True, True, True]
    per = pd.read_csv(out / "crossval_per_query.csv", dtype={"qid": str})
    primary = per[per["measure"] == "nDCG@10"]
    assert sorted(primary[primary.system == "tuned"]["qid"]) == [f"q{i}" for i in range(10)]
    assert (out / "crossval.png").read_bytes().startswith(b"\x89PNG")
    for label in ("fold1", "fold2", "fold3"):  # each fold is an ordinary study in its own folder
        assert (out / label / "summary.json").exists() and (out / label / "study.journal").exists()
    summary = json.loads((out / "crossval.json").read_text())
    assert summary["stability"] == {"bm25.stopwords": [True, True, True]} and summary["folds"] == 3
    # Run again: every fold's study is at its budget, so nothing is re-sampled and the numbers are the same.
    assert cli.main(["tune", str(path), "--no-mlflow", "--json", "--quiet"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["heldout_score"] == printed["heldout_score"] and [f["trials"] for f in again["folds"]] == [2] * 3
    # A cross-validation estimates the procedure; there is no one config to promote.
    assert cli.main(["tune", str(path), "--no-mlflow", "--promote", "--quiet"]) == 2
    assert "no one config to promote" in capsys.readouterr().err


def test_cross_validation_over_organisations(tmp_path):
    require("optuna", "tune")
    spec = parse_spec({
        "name": "orgs", "dataset": f"golden:{GOLDEN},{TARNWELL}", "objective": "answers",
        "base": {"chunking": {"strategy": "sentences"}, "retrieval": {"mode": "dense"},
                 "embedding": {"model": "hashing", "hashing_dim": 64, "cache": False}},
        "space": {"answer.answerability_min_coverage": "float[0.4, 0.7, step=0.1]"},
        "metrics": [{"HandledRight": "maximize"}], "split": {"folds": "sets"},
        "sampler": {"name": "tpe", "seed": 3, "n_startup_trials": 2}, "pruner": "none", "trials": 2}, tmp_path)
    res = run_crossval(spec, track=False, n_resamples=200)
    assert [r["fold"] for r in res.table.to_dict(orient="records")] == ["golden", "golden_tarnwell"]
    assert res.table["heldout_n"].tolist() == [74, 96] and res.table["tune_n"].tolist() == [96, 74]
    assert res.n == 170
    # The pooled score weighs every question alike: the folds' held-out means weighted by their sizes.
    pooled = (74 * res.table["heldout_score"][0] + 96 * res.table["heldout_score"][1]) / 170
    assert res.heldout_score == pytest.approx(pooled, abs=1e-12)
    tuned = res.per_query[(res.per_query.system == "tuned") & (res.per_query.measure == "HandledRight")]
    assert tuned["qid"].str.startswith("golden/").sum() == 74 and tuned["qid"].nunique() == 170
    assert set(tuned[tuned["qid"].str.startswith("golden/")]["fold"]) == {"golden"}
    # Stepped floats are the space's values, not Optuna's low + k·step (0.6000000000000001).
    chosen = res.stability()["answer.answerability_min_coverage"]
    assert all(v in (0.4, 0.5, 0.6, 0.7) for v in chosen)
    trials = pd.read_csv(tmp_path / "runs" / "orgs" / "golden" / "trials.csv")
    assert set(trials["param:answer.answerability_min_coverage"]) <= {0.4, 0.5, 0.6, 0.7}


def test_stepped_floats_are_written_as_in_the_space():
    p = parse_param("answer.answerability_min_coverage", "float[0.3, 0.8, step=0.05]")
    assert p.tidy(0.6000000000000001) == 0.6 and p.tidy(0.35000000000000003) == 0.35
    assert parse_param("bm25.k1", "float[0.5, 2.5, step=0.5]").tidy(1.5000000000000002) == 1.5
    assert parse_param("chunking.overlap", "float[0, 0.5]").tidy(0.123456789) == 0.123456789  # no step: as drawn
    assert parse_param("lsh.tables", "int[4, 32]").tidy(7) == 7
