"""`ragbench eval golden --require`: bounds on measures, checked on every set and the pool; unmet → exit 1."""
from __future__ import annotations

import json
import math

import pytest
from conftest import extra

from ragbench import cli
from ragbench.errors import ConfigError
from ragbench.eval.requirements import check, parse_requirement, report

FAST = ["--set", "embedding.model=hashing", "--set", "embedding.cache=false", "--retriever", "bm25", "--no-answers",
        "--no-mlflow", "--quiet"]
RECORD = {"systems": {"answer": {"RefusalAccuracy": 0.9, "LeakedDocs": 0.0, "FactInAnswer": math.nan}},
          "slices": {"answer": {"refuse-acl": {"RefusalAccuracy": 0.75}}}}


def test_parse_a_requirement():
    r = parse_requirement(" answer.refuse-acl.RefusalAccuracy >= 0.9 ")
    assert (r.system, r.slice, r.measure, r.op, r.bound) == ("answer", "refuse-acl", "RefusalAccuracy", ">=", 0.9)
    r = parse_requirement("dense.nDCG@5>.5")
    assert (r.system, r.slice, r.measure, r.op, r.bound) == ("dense", None, "nDCG@5", ">", 0.5)
    assert parse_requirement("answer.LeakedDocs==0").op == "=="
    for bad in ("answer.RefusalAccuracy", "RefusalAccuracy>=0.9", "answer.RefusalAccuracy=>0.9",
                "answer..RefusalAccuracy>=1", "a.b.c.d>=1", "answer.RefusalAccuracy>=high"):
        with pytest.raises(ConfigError, match="expected SYSTEM.MEASURE OP VALUE"):
            parse_requirement(bad)


def test_check_each_scope_and_bound():
    reqs = [parse_requirement(t) for t in ("answer.RefusalAccuracy>=0.9", "answer.RefusalAccuracy>0.9",
                                           "answer.refuse-acl.RefusalAccuracy>=0.9", "answer.LeakedDocs<=0",
                                           "answer.FactInAnswer>=0", "answer.Nope>=1", "dense.nDCG@5>=0",
                                           "answer.direct.RefusalAccuracy>=0")]
    rows = check(reqs, {"one": RECORD})
    assert [r["met"] for r in rows] == [True, False, False, True, False, False, False, False]
    assert [r["value"] for r in rows[:4]] == [0.9, 0.9, 0.75, 0.0] and [r["value"] for r in rows[5:]] == [None] * 3
    assert math.isnan(rows[4]["value"])  # a NaN measure meets no bound
    assert rows[5]["note"] == ("not measured; measures of answer: RefusalAccuracy, LeakedDocs, FactInAnswer")
    assert rows[6]["note"] == "not measured; systems: answer"
    assert rows[7]["note"] == "not measured; slices of answer: refuse-acl"
    two = check(reqs[:1], {"a": RECORD, "pooled": {"systems": {"answer": {"RefusalAccuracy": 0.5}}}})
    assert [(r["scope"], r["met"]) for r in two] == [("a", True), ("pooled", False)]
    text = report(two)
    assert text.splitlines()[0] == "Requirements" and "NOT MET" in text and text.endswith("1 of 2 met; 1 not met")


def test_unmet_requirement_exits_1_and_is_in_the_json(tmp_path, capsys):
    extra("matplotlib", "track")  # eval golden draws its result chart (the track extra)
    code = cli.main(["eval", "golden", "--json", "--out", str(tmp_path / "r1"), "--require", "bm25.nDCG@5>=0",
                     "--require", "bm25.direct.nDCG@5>1.01"] + FAST)
    captured = capsys.readouterr()
    record = json.loads(captured.out)
    assert code == 1
    assert [(r["requirement"], r["scope"], r["met"]) for r in record["requirements"]] == [
        ("bm25.nDCG@5>=0", "golden", True), ("bm25.direct.nDCG@5>1.01", "golden", False)]
    assert record["requirements"][0]["value"] == record["systems"]["bm25"]["nDCG@5"]
    assert "error: 1 requirement check(s) not met" in captured.err
    code = cli.main(["eval", "golden", "--json", "--out", str(tmp_path / "r2"), "--require", "bm25.nDCG@5>=0"] + FAST)
    assert code == 0 and json.loads(capsys.readouterr().out)["requirements"][0]["met"] is True


def test_a_malformed_requirement_fails_before_anything_runs(tmp_path, capsys):
    out = tmp_path / "run"
    code = cli.main(["eval", "golden", "--out", str(out), "--require", "answer.RefusalAccuracy~0.9"] + FAST)
    assert code == 2 and "expected SYSTEM.MEASURE OP VALUE" in capsys.readouterr().err
    assert not out.exists()
