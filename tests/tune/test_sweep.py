"""Sweeps: seeded reproducibility (also in a new process), resume, failed trials, pruning, held-out confirmation,
storage errors and the command's JSON line."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from ragbench.cli import main
from ragbench.config import load_config
from ragbench.errors import ConfigError, StoreError
from ragbench.provenance import code_hash
from ragbench.tune.objectives import split_units
from ragbench.tune.run import run_study
from ragbench.tune.space import load_spec, parse_spec
from ragbench.tune.storage import open_storage
from ragbench.tune.sweep import optimize, prepare

from .conftest import require, tiny_spec, write_yaml

optuna = require("optuna", "tune")

ROOT = Path(__file__).resolve().parents[2]
SPACE3 = {"bm25.k1": "float[0.5, 2.0]", "bm25.b": "float[0, 1]", "bm25.stopwords": "choice[true, false]"}


def _params(study) -> list[dict]:
    return [t.params for t in sorted(study.trials, key=lambda t: t.number)]


def _study(url: str, name: str = "tiny"):
    return optuna.load_study(study_name=name, storage=open_storage(url))


def test_split_is_a_seeded_partition():
    units = [f"q{i}" for i in range(10)]
    tune, held = split_units(units, 0.3, seed=1)
    assert len(tune) == 7 and len(held) == 3
    assert sorted(tune + held) == sorted(units) and not set(tune) & set(held)
    assert (tune, held) == split_units(list(reversed(units)), 0.3, seed=1)  # input order does not matter
    assert split_units(units, 0.3, seed=2) != (tune, held)


def test_same_seed_same_trials_also_in_a_new_process(tmp_path, tiny_beir):
    data = tiny_spec(tmp_path, tiny_beir, space=SPACE3, trials=6,
                     sampler={"name": "tpe", "seed": 5, "n_startup_trials": 3})
    spec = parse_spec(data, tmp_path / "a")
    prepared = prepare(spec)
    first = _params(optimize(spec, prepared, ":memory:", 6))
    second = _params(optimize(spec, prepared, ":memory:", 6))
    assert first == second and len(first) == 6
    assert len({json.dumps(p, sort_keys=True) for p in first}) == 6  # the sampler explored
    other = _params(optimize(parse_spec({**data, "sampler": {"name": "tpe", "seed": 6}}, tmp_path / "b"),
                             prepared, ":memory:", 6))
    assert other != first
    # A fresh interpreter, through the command line, gives the same trials.
    path = write_yaml(tmp_path / "c" / "tiny.yaml", data)
    journal = tmp_path / "c" / "j.journal"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "ragbench", "tune", str(path), "--storage", str(journal),
                          "--no-mlflow", "--json"], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert _params(_study(str(journal))) == first
    assert len(out.stdout.splitlines()) == 1 and set(json.loads(out.stdout)) == {
        "best_params", "tune_score", "heldout_score", "baseline_heldout_score", "p_value", "trials", "tuned_path",
        "promoted", "mlflow_run_id"}


def test_resume_continues_where_it_stopped(tmp_path, tiny_beir):
    spec = parse_spec(tiny_spec(tmp_path, tiny_beir, space=SPACE3), tmp_path)
    prepared = prepare(spec)
    url = str(tmp_path / "study.journal")
    optimize(spec, prepared, url, 3)
    before = _params(_study(url))
    study = optimize(spec, prepared, url, 5)
    assert [t.number for t in study.trials] == [0, 1, 2, 3, 4]
    assert _params(study)[:3] == before
    assert len(optimize(spec, prepared, url, 5).trials) == 5  # budget reached: nothing more runs
    changed = parse_spec(tiny_spec(tmp_path, tiny_beir, space={"bm25.k1": "float[0.1, 3]"}), tmp_path)
    with pytest.raises(ConfigError, match="resumed study must keep its definition"):
        optimize(changed, prepare(changed), url, 6)
    assert len(_study(url).trials) == 5


def test_a_study_resumed_by_other_code_says_how_many_trials_that_code_scored(tmp_path, tiny_beir, caplog,
                                                                              monkeypatch):
    import logging

    from ragbench.tune import sweep

    spec = parse_spec(tiny_spec(tmp_path, tiny_beir, space=SPACE3), tmp_path)
    prepared = prepare(spec)
    url = str(tmp_path / "study.journal")
    study = optimize(spec, prepared, url, 2)
    assert [t.user_attrs["code_hash"] for t in study.trials] == [code_hash()] * 2
    with caplog.at_level(logging.WARNING, logger="ragbench.tune.sweep"):
        optimize(spec, prepared, url, 3)
    assert "other code" not in caplog.text  # the same code resumes silently
    monkeypatch.setattr(sweep, "code_hash", lambda: "0" * 16)  # as if the package had been edited
    with caplog.at_level(logging.WARNING, logger="ragbench.tune.sweep"):
        study = optimize(spec, prepared, url, 4)
    assert "holds 3 finished trial(s) scored by other code" in caplog.text
    assert [t.user_attrs["code_hash"] for t in study.trials] == [code_hash()] * 3 + ["0" * 16]
    assert sweep.other_code_trials(study) == 3


def test_a_failing_trial_is_recorded_and_the_study_goes_on(tmp_path, tiny_beir):
    spec = parse_spec(tiny_spec(tmp_path, tiny_beir, trials=6, sampler={"name": "random", "seed": 0},
                                space={"retrieval.mode": "choice[bm25, nonsense]",
                                       "bm25.stopwords": "choice[true, false]"}), tmp_path)
    res = run_study(spec, storage=":memory:", track=False, n_resamples=200)
    table = pd.read_csv(res.study_dir / "trials.csv")
    assert len(table) == 6
    failed = table[table["state"] == "FAIL"]
    assert len(failed) >= 1 and (table["state"] == "COMPLETE").sum() >= 1
    assert (table.loc[failed.index, "param:retrieval.mode"] == "nonsense").all()
    assert failed["error"].str.startswith("ConfigError: unknown retrieval mode 'nonsense'").all()
    assert set(table["code_hash"]) == {code_hash()}
    assert res.best_params["retrieval.mode"] == "bm25"


def test_wilcoxon_pruning_stops_worse_trials(tmp_path, tiny_beir):
    spec = parse_spec(tiny_spec(tmp_path, tiny_beir, trials=8, sampler={"name": "random", "seed": 0},
                                pruner={"name": "wilcoxon", "p_threshold": 0.1, "n_startup_steps": 2, "batch": 2}),
                      tmp_path)
    study = optimize(spec, prepare(spec), ":memory:", 8)
    trials = sorted(study.trials, key=lambda t: t.number)
    first_good = min(t.number for t in trials if t.params["bm25.stopwords"] and t.state.name == "COMPLETE")
    later_bad = [t for t in trials if t.number > first_good and not t.params["bm25.stopwords"]]
    assert later_bad, "the seeded sampler must try stopwords=false after a good trial"
    for t in later_bad:
        # 4 queries all worse than the best trial: one-sided Wilcoxon p = 1/16 < 0.1 → pruned after 2 batches of 2.
        assert t.state.name == "PRUNED"
        assert t.user_attrs["n_queries"] == 4
        assert t.user_attrs["metrics"]["nDCG@10"] == pytest.approx(1 / math.log2(3))
    assert all(t.state.name == "COMPLETE" for t in trials if t.params["bm25.stopwords"])


def test_heldout_confirmation_numbers(tmp_path, tiny_beir):
    path = write_yaml(tmp_path / "exp" / "tiny.yaml",
                      tiny_spec(tmp_path, tiny_beir, sampler={"name": "random", "seed": 0}))
    spec = load_spec(path)
    res = run_study(spec, track=False)
    # stopwords removed: every relevant document first (1.0); the base keeps "the": relevant second (1/log2 3).
    assert res.best_params == {"bm25.stopwords": True}
    assert res.tune_score == 1.0
    assert res.heldout_score == 1.0
    assert res.baseline_heldout_score == pytest.approx(1 / math.log2(3), abs=1e-12)
    assert res.p_value == 0.25  # exact sign-flip test: 3 equal positive differences → 2 of 8 flips as extreme
    assert res.summary["heldout_n"] == 3 and res.summary["tune_n"] == 7
    tuned = load_config(spec.tuned_path)
    assert tuned.bm25.stopwords is True and tuned.retrieval.mode == "bm25"
    header = spec.tuned_path.read_text().splitlines()[1]
    assert "held-out tuned 1 vs base 0.63093" in header and "p = 0.25" in header
    per = pd.read_csv(spec.study_dir / "confirmation_per_query.csv", dtype={"qid": str})
    assert len(per) == 6 and set(per["system"]) == {"tuned", "base"}
    assert sorted(per[per.system == "base"]["value"].round(6)) == [0.63093] * 3
    summary = json.loads((spec.study_dir / "summary.json").read_text())
    assert summary["p_value"] == 0.25 and summary["trials"] == 4 and summary["mlflow_run_id"] is None
    assert (spec.study_dir / "history.png").stat().st_size > 1000
    assert not spec.promoted_path.exists()  # a run never writes the tracked tuned/ folder


def test_promotion_requires_a_significant_heldout_improvement(tmp_path, tiny_beir):
    path = write_yaml(tmp_path / "exp" / "tiny.yaml",
                      tiny_spec(tmp_path, tiny_beir, sampler={"name": "random", "seed": 0}))
    spec = load_spec(path)
    refused = run_study(spec, track=False, promote_result=True)  # held-out p = 0.25 ≥ 0.05
    assert not refused.promotion.promoted and not spec.promoted_path.exists()
    assert "not significant at alpha = 0.05" in refused.promotion.reason and "permutation p = 0.25" in \
        refused.promotion.reason
    forced = run_study(spec, track=False, promote_result=True, force=True)
    assert forced.promotion.promoted and forced.promotion.forced
    header = spec.promoted_path.read_text().splitlines()[0]
    assert header.startswith("# Promoted with --force although it failed the promotion test: held-out nDCG@10")
    assert load_config(spec.promoted_path).bm25.stopwords is True
    lenient = load_spec(write_yaml(tmp_path / "exp" / "tiny.yaml", {
        **tiny_spec(tmp_path, tiny_beir, sampler={"name": "random", "seed": 0}),
        "confirm": {"test": "permutation", "alpha": 0.3}}))
    res = run_study(lenient, track=False, promote_result=True, storage=":memory:")
    assert res.promotion.promoted and not res.promotion.forced
    assert spec.promoted_path.read_text().startswith("# Promoted by `ragbench tune --promote`: held-out nDCG@10 "
                                                     "tuned 1 vs base 0.6309, permutation p = 0.25, n = 3 < alpha")


def test_corrupt_journal_is_a_clear_error(tmp_path, tiny_beir):
    spec = parse_spec(tiny_spec(tmp_path, tiny_beir), tmp_path)
    journal = tmp_path / "bad.journal"
    journal.write_text("this is not a journal\n{}\n")
    with pytest.raises(StoreError, match="corrupt or not a journal"):
        optimize(spec, prepare(spec), str(journal), 2)
    assert journal.read_text() == "this is not a journal\n{}\n"


def test_locked_journal_is_a_clear_error(tmp_path):
    journal = tmp_path / "locked.journal"
    lock = Path(str(journal) + ".lock")
    lock.write_text("12345")
    storage = open_storage(str(journal), lock_timeout=0.2)
    with pytest.raises(StoreError, match="locked.journal.lock"):
        optuna.create_study(study_name="x", storage=storage)
    assert journal.read_text() == "" and lock.read_text() == "12345"  # nothing written, lock not broken


def test_unreachable_database_is_a_clear_error():
    with pytest.raises(StoreError,
                       match=r"cannot open the Optuna storage postgresql\+psycopg2://u:\*\*\*@127.0.0.1:9/db: .*Fix"):
        open_storage("postgresql+psycopg2://u:secret@127.0.0.1:9/db")


def test_cli_json_line_and_bad_trials(tmp_path, tiny_beir, capsys):
    path = write_yaml(tmp_path / "tiny.yaml", tiny_spec(tmp_path, tiny_beir))
    assert main(["tune", str(path), "--trials", "3", "--no-mlflow", "--json"]) == 0
    out = capsys.readouterr().out
    assert len(out.splitlines()) == 1
    last = json.loads(out)
    assert last["trials"] == 3 and last["mlflow_run_id"] is None and last["promoted"] is None
    assert main(["tune", str(path), "--trials", "0"]) == 2
    assert "--trials must be ≥ 1" in capsys.readouterr().err
    assert main(["tune", str(path), "--force"]) == 2
    assert "--force only applies with --promote" in capsys.readouterr().err
    tuned = tmp_path / "runs" / "tiny" / "tuned.yaml"
    assert last["tuned_path"] == str(tuned) and not (tmp_path / "tuned").exists()
    assert yaml.safe_load(tuned.read_text().split("\n", 4)[4])["bm25"]["stopwords"] in (True, False)
