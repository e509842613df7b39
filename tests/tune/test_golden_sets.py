"""Tuning on several golden sets: ``dataset: golden:A,B,…`` with the answers objective (units ``<set>/<qid>``) and
``split: {heldout_sets: […]}``, which holds out whole organisations (hashing embedder: fast)."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from ragbench import cli
from ragbench.config import RagbenchConfig, with_overrides
from ragbench.errors import ConfigError
from ragbench.eval.answers import answer_config
from ragbench.tune.objectives import (AnswersObjective, GoldenSetsAnswersObjective, make_objective, parse_dataset,
                                      split_by_sets)
from ragbench.tune.space import parse_spec, spec_to_dict
from ragbench.tune.sweep import prepare

from .conftest import require, write_yaml

DATA = Path(__file__).resolve().parents[2] / "data"
GOLDEN, TARNWELL = DATA / "golden", DATA / "golden_tarnwell"
HASHING = {"embedding.model": "hashing", "embedding.hashing_dim": 64, "embedding.cache": False}


def _spec(**extra):
    data = {"name": "cross", "dataset": f"golden:{GOLDEN},{TARNWELL}", "objective": "answers",
            "base": {"chunking": {"strategy": "sentences"}, "retrieval": {"mode": "dense"},
                     "embedding": {"model": "hashing", "hashing_dim": 64, "cache": False}},
            "space": {"answer.answerability_min_coverage": "float[0.4, 0.7, step=0.1]"},
            "metrics": [{"HandledRight": "maximize"}], "split": {"heldout_sets": ["golden_tarnwell"]},
            "sampler": {"name": "tpe", "seed": 3, "n_startup_trials": 2}, "pruner": "none", "trials": 2}
    data.update(extra)
    return data


def test_a_dataset_of_several_golden_folders():
    ds = parse_dataset(f"golden:{GOLDEN}, {TARNWELL}")
    assert ds.kind == "golden" and ds.path == GOLDEN and ds.paths == (GOLDEN, TARNWELL)
    assert str(ds) == f"golden:{GOLDEN},{TARNWELL}"
    one = parse_dataset(f"golden:{GOLDEN}")
    assert one.paths == () and str(one) == f"golden:{GOLDEN}"
    with pytest.raises(ConfigError, match="empty golden folder"):
        parse_dataset(f"golden:{GOLDEN},,{TARNWELL}")
    # Only an objective that pools sets takes several; the retrieval one would silently read the first alone.
    with pytest.raises(ConfigError, match="takes one golden folder, not 2.*answers"):
        make_objective(f"golden:{GOLDEN},{TARNWELL}", "retrieval")
    with pytest.raises(ConfigError, match="listed twice"):
        make_objective(f"golden:{GOLDEN},{GOLDEN}", "answers")


def test_split_by_sets_holds_out_whole_sets():
    units = ["a/q2", "b/q1", "a/q1", "c/q1", "b/q2"]
    set_of = GoldenSetsAnswersObjective.set_of
    assert split_by_sets(units, ["b"], set_of) == (["a/q1", "a/q2", "c/q1"], ["b/q1", "b/q2"])
    assert split_by_sets(units, ["a", "c"], set_of) == (["b/q1", "b/q2"], ["a/q1", "a/q2", "c/q1"])
    with pytest.raises(ConfigError, match="'d', which the dataset does not have.*a, b, c"):
        split_by_sets(units, ["d"], set_of)
    with pytest.raises(ConfigError, match="nothing to tune on"):
        split_by_sets(units, ["a", "b", "c"], set_of)


def test_the_pooled_objective_scores_each_set_as_its_own_objective():
    obj = make_objective(f"golden:{GOLDEN},{TARNWELL}", "answers")
    assert isinstance(obj, GoldenSetsAnswersObjective) and list(obj.parts) == ["golden", "golden_tarnwell"]
    units = obj.units()
    assert len(units) == 74 + 96 and units[0] == "golden/g001" and units[-1].startswith("golden_tarnwell/")
    cfg = with_overrides(answer_config(with_overrides(RagbenchConfig(), HASHING), "dense"), {"retrieval.mode": "dense"})
    asked = ["golden/g001", "golden/g002", "golden_tarnwell/t001", "golden_tarnwell/t003"]
    measures = ["RefusalAccuracy", "HandledRight", "ContextTokens"]
    per = obj(cfg, asked, measures)
    from ragbench.eval.golden import load_golden

    for name, folder in (("golden", GOLDEN), ("golden_tarnwell", TARNWELL)):
        alone = AnswersObjective(load_golden(folder))(cfg, [u.split("/")[1] for u in asked if u.startswith(name + "/")],
                                                     measures)
        mine = per[per["qid"].str.startswith(name + "/")].assign(qid=lambda d: d["qid"].str.split("/").str[1])
        pd.testing.assert_frame_equal(mine.reset_index(drop=True), alone.astype({"qid": str}).reset_index(drop=True),
                                      check_dtype=False)
    with pytest.raises(ConfigError, match="names no golden set"):
        obj(cfg, ["nowhere/q1"], measures)


def test_heldout_sets_in_an_experiment_file():
    spec = parse_spec(_spec())
    assert spec.heldout_sets == ("golden_tarnwell",)
    assert spec_to_dict(spec)["split"] == {"heldout_sets": ["golden_tarnwell"]}
    # Holding out another set is another study; a random split of the same data is yet another.
    assert spec.fingerprint() != parse_spec(_spec(split={"heldout_sets": ["golden"]})).fingerprint()
    assert spec.fingerprint() != parse_spec(_spec(split={"heldout": 0.3})).fingerprint()
    assert parse_spec(_spec(split={"heldout_sets": "golden"})).heldout_sets == ("golden",)
    with pytest.raises(ConfigError, match="seed cannot also be given"):
        parse_spec(_spec(split={"heldout_sets": ["golden"], "seed": 3}))
    with pytest.raises(ConfigError, match="must list golden set names"):
        parse_spec(_spec(split={"heldout_sets": []}))
    prepared = prepare(spec)
    assert len(prepared.tune) == 74 and all(u.startswith("golden/") for u in prepared.tune)
    assert len(prepared.heldout) == 96 and all(u.startswith("golden_tarnwell/") for u in prepared.heldout)
    with pytest.raises(ConfigError, match="the dataset is a single one"):
        prepare(parse_spec(_spec(dataset=f"golden:{GOLDEN}")))


def test_tune_chooses_on_one_organisation_and_reports_on_the_other(tmp_path, capsys):
    require("optuna", "tune")
    path = write_yaml(tmp_path / "cross.yaml", _spec())
    code = cli.main(["tune", str(path), "--storage", ":memory:", "--no-mlflow", "--json", "--quiet"])
    printed = json.loads(capsys.readouterr().out)
    assert code == 0
    summary = json.loads((tmp_path / "runs" / "cross" / "summary.json").read_text())
    assert summary["tune_n"] == 74 and summary["heldout_n"] == 96
    assert printed["heldout_score"] == summary["heldout_score"]
    # The held-out score is the mean over the held-out set's questions, each scored by the chosen configuration.
    per = pd.read_csv(tmp_path / "runs" / "cross" / "confirmation_per_query.csv", dtype={"qid": str})
    assert per["qid"].str.startswith("golden_tarnwell/").all() and per["qid"].nunique() == 96
