"""`ragbench eval golden --data A B …`: each set scored as alone, then pooled over all questions (hashing embedder,
BM25 retrieval and the default answer system on two of the project's golden sets: fast)."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import extra, isolate

from ragbench import cli
from ragbench.errors import ConfigError
from ragbench.eval.golden_sets import set_names

FAST = ["--set", "embedding.model=hashing", "--set", "embedding.cache=false", "--retriever", "bm25", "--quiet"]
DATA = Path(__file__).resolve().parents[1] / "data"
SETS = [str(DATA / "golden"), str(DATA / "golden_tarnwell")]


@pytest.fixture(scope="module")
def pooled_run(tmp_path_factory):
    """One pooled run of golden + tarnwell and one single-set run of each, with MLflow when it is installed."""
    import contextlib
    import io

    extra("matplotlib", "track")  # eval golden draws its result chart (the track extra)
    out = tmp_path_factory.mktemp("pooled")
    records = {}
    with pytest.MonkeyPatch.context() as mp:
        isolate(tmp_path_factory, mp)
        for key, args in (("pooled", ["--data", *SETS, "--out", str(out / "both"),
                                      "--require", "answer.RefusalAccuracy>=0"]),
                          ("golden", ["--data", SETS[0], "--out", str(out / "golden"), "--no-mlflow"]),
                          ("golden_tarnwell", ["--data", SETS[1], "--out", str(out / "tarnwell"), "--no-mlflow"])):
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                code = cli.main(["eval", "golden", "--json"] + FAST + args)
            assert code == 0, key
            records[key] = json.loads(buf.getvalue())
    return out / "both", records


def test_each_set_is_scored_exactly_as_alone(pooled_run):
    _, records = pooled_run
    pooled = records["pooled"]
    assert list(pooled["sets"]) == ["golden", "golden_tarnwell"]
    for name in ("golden", "golden_tarnwell"):
        assert pooled["sets"][name]["systems"] == records[name]["systems"]
        assert pooled["sets"][name]["slices"] == records[name]["slices"]
        assert pooled["sets"][name]["decisions"] == records[name]["decisions"]


def test_pooled_measures_weigh_every_question_the_same(pooled_run):
    run_dir, records = pooled_run
    pooled = records["pooled"]
    per_query = pd.read_csv(run_dir / "per_query.csv", dtype={"qid": str})
    n = {name: per_query.loc[per_query["set"] == name, "qid"].nunique() for name in ("golden", "golden_tarnwell")}
    assert n == {"golden": 74, "golden_tarnwell": 96} and pooled["questions"] == 170
    assert per_query["qid"].str.startswith(("golden/", "golden_tarnwell/")).all()
    # Refusal accuracy is scored on every question: the pooled value is the question-weighted mean of the sets'.
    ra = {name: records[name]["systems"]["answer"]["RefusalAccuracy"] for name in n}
    assert pooled["systems"]["answer"]["RefusalAccuracy"] == pytest.approx(
        (ra["golden"] * 74 + ra["golden_tarnwell"] * 96) / 170, abs=1e-12)
    # A measure scored on some questions only (FactInAnswer: answered answerable ones) pools over those questions.
    fia = per_query[(per_query["system"] == "answer") & (per_query["measure"] == "FactInAnswer")]
    assert pooled["systems"]["answer"]["FactInAnswer"] == pytest.approx(fia["value"].mean(), abs=1e-12)
    # The pooled decision table adds the sets' tables up, rule by rule.
    for rule, counts in pooled["decisions"]["answer"].items():
        parts = [records[name]["decisions"]["answer"].get(rule, {}) for name in n]
        assert counts == {c: sum(p.get(c, 0) for p in parts) for c in counts}, rule
    assert sum(c["n"] for c in pooled["decisions"]["answer"].values()) == 170


def test_requirements_are_checked_on_every_set_and_on_the_pool(pooled_run):
    _, records = pooled_run
    rows = records["pooled"]["requirements"]
    assert [(r["scope"], r["met"]) for r in rows] == [("golden", True), ("golden_tarnwell", True), ("pooled", True)]
    assert [r["value"] for r in rows] == [records["golden"]["systems"]["answer"]["RefusalAccuracy"],
                                          records["golden_tarnwell"]["systems"]["answer"]["RefusalAccuracy"],
                                          records["pooled"]["systems"]["answer"]["RefusalAccuracy"]]


def test_the_run_folder_holds_each_set_and_the_pooled_tables(pooled_run):
    run_dir, records = pooled_run
    for name in ("per_set.csv", "aggregate.csv", "per_slice.csv", "significance.csv", "per_query.csv",
                 "decisions.csv", "meta.json"):
        assert (run_dir / name).is_file(), name
    assert (run_dir / "golden_metrics.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for name in ("golden", "golden_tarnwell"):
        assert (run_dir / name / "aggregate.csv").is_file() and (run_dir / name / "decisions.csv").is_file()
    per_set = pd.read_csv(run_dir / "per_set.csv")
    assert list(per_set[["set", "system", "n"]].itertuples(index=False, name=None)) == [
        ("golden", "bm25", 74), ("golden", "answer", 74), ("golden_tarnwell", "bm25", 96),
        ("golden_tarnwell", "answer", 96)]
    row = per_set[(per_set["set"] == "golden_tarnwell") & (per_set["system"] == "answer")].iloc[0]
    assert row["RefusalAccuracy"] == pytest.approx(records["golden_tarnwell"]["systems"]["answer"]["RefusalAccuracy"])
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["questions"] == 170 and list(meta["sets"]) == ["golden", "golden_tarnwell"]


def test_mlflow_holds_the_pooled_run_with_each_set_nested(pooled_run, mlflow_installed):
    if not mlflow_installed:
        pytest.skip('MLflow (the track extra) is not installed: pip install "ragbench[track]"')
    MlflowClient = extra("mlflow.tracking", "track").MlflowClient
    from ragbench.tracking import tracking_uri

    _, records = pooled_run
    pooled = records["pooled"]
    client = MlflowClient(tracking_uri())
    parent = client.get_run(pooled["mlflow_run_id"])
    ra = pooled["systems"]["answer"]["RefusalAccuracy"]
    assert parent.data.metrics["answer.RefusalAccuracy"] == pytest.approx(ra)
    assert parent.data.params["eval.sets"] == "golden,golden_tarnwell"
    assert parent.data.tags["dataset"] == "golden-sets"
    for name in ("golden", "golden_tarnwell"):
        child = client.get_run(pooled["sets"][name]["mlflow_run_id"])
        assert child.data.tags["mlflow.parentRunId"] == parent.info.run_id and child.data.tags["set"] == name
        assert child.data.metrics["answer.RefusalAccuracy"] == pytest.approx(
            records[name]["systems"]["answer"]["RefusalAccuracy"])


def test_set_names_keep_apart_folders_that_share_a_name(tmp_path):
    (tmp_path / "a" / "golden").mkdir(parents=True)
    (tmp_path / "b" / "golden").mkdir(parents=True)
    assert set_names([tmp_path / "a" / "golden", tmp_path / "b" / "golden", DATA / "golden_tarnwell"]) == [
        "golden", "golden-2", "golden_tarnwell"]
    with pytest.raises(ConfigError, match="listed twice"):
        set_names([tmp_path / "a" / "golden", tmp_path / "a" / ".." / "a" / "golden"])


def test_a_folder_given_twice_fails_before_anything_is_written(tmp_path, capsys):
    out = tmp_path / "run"
    code = cli.main(["eval", "golden", "--no-mlflow", "--out", str(out), "--data", SETS[0], SETS[0]] + FAST)
    assert code == 2
    assert "is listed twice" in capsys.readouterr().err
    assert not out.exists()


def test_a_missing_folder_among_several_is_named_before_any_set_is_scored(tmp_path, capsys):
    out = tmp_path / "run"
    code = cli.main(["eval", "golden", "--no-mlflow", "--out", str(out), "--data", SETS[0],
                     str(tmp_path / "nope")] + FAST)
    assert code == 2
    assert f"golden folder {tmp_path / 'nope'} not found" in capsys.readouterr().err
    assert not out.exists()
