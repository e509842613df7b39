"""`ragbench eval compare BASE NEW`: two saved golden runs paired question by question — on hand-written run folders
with hand-computed counts, on real runs of two bundled sets (hashing embedder, BM25: fast), and on bad input."""
from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
from conftest import extra, isolate

from ragbench import cli
from ragbench.errors import DataError
from ragbench.eval.compare import CHANGE_COLUMNS, compare_runs, load_run

REFUSAL = "I don't have enough information in the indexed documents to answer that."
# set, qid, slice, RefusalAccuracy, HandledRight, FactInAnswer, answer, decided_by
BASE = [("s1", "q1", "direct", 1, 1, 1.0, "The fee is £40. [1]", "check:coverage"),
        ("s1", "q2", "paraphrase", 0, 0, None, REFUSAL, "check:thresholds"),
        ("s2", "q1", "refuse-acl", 1, 1, None, REFUSAL, "restricted-gap"),
        ("s2", "q2", "direct", 1, 0, 0.0, "Vans are checked weekly. [1]", "check:coverage")]
NEW = [("s1", "q1", "direct", 1, 1, 1.0, "The fee is £40. [1]", "check:coverage"),
       ("s1", "q2", "paraphrase", 1, 1, 1.0, "It costs £12 a night. [2]", "check:coverage"),
       ("s2", "q1", "refuse-acl", 0, 0, None, "The salary band is £30,000. [1]", "check:coverage"),
       ("s2", "q2", "direct", 1, 1, 1.0, "Drays are inspected every 6 weeks. [1]", "check:coverage")]


def write_run(root: Path, rows, pooled: bool = True) -> Path:
    """An `eval golden --out` folder as the run writes it: per_query.csv (a retrieval system's rows too) and
    answers/answer.jsonl per set (a pooled run) or in the folder itself (one set)."""
    lines = ["system,qid,measure,value,slice" + (",set" if pooled else "")]
    answers: dict[str, list[str]] = {}
    for s, qid, tag, ra, hr, fia, text, rule in rows:
        key = f"{s}/{qid}" if pooled else qid
        tail = f",{s}" if pooled else ""
        lines.append(f"dense,{key},nDCG@5,1.0,{tag}{tail}")
        for measure, value in (("RefusalAccuracy", ra), ("HandledRight", hr), ("FactInAnswer", fia),
                               ("LeakedDocs", 0.0), ("InjectionQuoted", 0.0), ("SecretInAnswer", None)):
            lines.append(f"answer,{key},{measure},{'' if value is None else float(value)},{tag}{tail}")
        answers.setdefault(s if pooled else "", []).append(json.dumps(
            {"qid": qid, "answer": text, "refused": text == REFUSAL, "decided_by": rule}))
    root.mkdir(parents=True)
    (root / "per_query.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for s, recs in answers.items():
        folder = (root / s if s else root) / "answers"
        folder.mkdir(parents=True)
        (folder / "answer.jsonl").write_text("\n".join(recs) + "\n", encoding="utf-8")
    return root


def test_two_pooled_runs_are_paired_question_by_question(tmp_path):
    result = compare_runs(write_run(tmp_path / "a", BASE), write_run(tmp_path / "b", NEW))
    assert result.questions == 4
    assert result.totals["RefusalAccuracy"] == {"base": 3.0, "new": 3.0, "delta": 0.0}
    assert result.totals["HandledRight"] == {"base": 2.0, "new": 3.0, "delta": 1.0}
    assert result.totals["LeakedDocs"] == {"base": 0.0, "new": 0.0, "delta": 0.0}
    assert "SecretInAnswer" not in result.totals  # never scored (no secrets in these sets)
    # FactInAnswer is a mean over the questions that have it: (1 + 0) / 2 → (1 + 1 + 1) / 3.
    assert result.totals["FactInAnswer"] == {"base": 0.5, "new": 1.0, "delta": 0.5}
    assert result.slices == {"direct": {"n": 2, "base": 2.0, "new": 2.0, "delta": 0.0},
                             "paraphrase": {"n": 1, "base": 0.0, "new": 1.0, "delta": 1.0},
                             "refuse-acl": {"n": 1, "base": 1.0, "new": 0.0, "delta": -1.0}}
    # Two won, one lost: the net change is +1, and every one of the 2^3 sign flips is at least that far from 0.
    assert (result.won, result.lost, result.p_value) == (2, 1, 1.0)
    assert result.sets == {"s1": {"RefusalAccuracy": 1, "HandledRight": 1, "changed_answers": 1},
                           "s2": {"RefusalAccuracy": -1, "HandledRight": 0, "changed_answers": 2}}
    assert list(result.changes.columns) == list(CHANGE_COLUMNS)
    assert result.changes[["set", "qid"]].values.tolist() == [["s1", "q2"], ["s2", "q1"], ["s2", "q2"]]
    leak = result.changes.iloc[1]
    assert (leak["base_refused"], leak["new_refused"], leak["base_decided_by"], leak["new_decided_by"]) == (
        True, False, "restricted-gap", "check:coverage")
    assert (leak["base_RefusalAccuracy"], leak["new_RefusalAccuracy"]) == (1.0, 0.0)
    assert leak["new_answer"] == "The salary band is £30,000. [1]"
    # Without the leak: two won, none lost; of the four sign flips two reach ±2.
    kept = compare_runs(tmp_path / "a", write_run(tmp_path / "c", [NEW[0], NEW[1], BASE[2], NEW[3]]))
    assert (kept.won, kept.lost, kept.p_value, len(kept.changes)) == (2, 0, 0.5, 2)


def test_a_run_compared_with_itself_changes_nothing_and_a_one_set_run_has_no_set_names(tmp_path):
    one = [r for r in BASE if r[0] == "s1"]
    result = compare_runs(write_run(tmp_path / "a", one, pooled=False), write_run(tmp_path / "b", one, pooled=False))
    assert (result.questions, result.won, result.lost, result.p_value) == (2, 0, 0, 1.0)
    assert result.changes.empty and result.sets == {}
    assert all(v["delta"] == 0 for v in result.totals.values())
    assert load_run(tmp_path / "a").answers[("", "q2")]["decided_by"] == "check:thresholds"


def test_the_command_prints_the_report_or_one_json_line(tmp_path, capsys):
    a, b = write_run(tmp_path / "a", BASE), write_run(tmp_path / "b", NEW)
    assert cli.main(["eval", "compare", str(a), str(b), "--show", "1"]) == 0
    text = capsys.readouterr().out
    assert "HandledRight: 2 won, 1 lost (paired permutation p = 1.0000)" in text
    assert "refusal accuracy by slice: direct 2 → 2 of 2; paraphrase 0 → 1 of 1; refuse-acl 1 → 0 of 1" in text
    assert "changed answers: 3 (first 1; --show 0 lists all)" in text
    assert "    + It costs £12 a night. [2]" in text and "s2/q1" not in text.split("changed answers")[1]
    assert cli.main(["eval", "compare", str(a), str(b), "--json", "--quiet"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["handled_right"] == {"won": 2, "lost": 1, "p_value": 1.0}
    assert [(c["set"], c["qid"]) for c in record["changes"]] == [("s1", "q2"), ("s2", "q1"), ("s2", "q2")]
    assert record["changes"][0]["base_HandledRight"] == 0.0 and record["changes"][0]["new_HandledRight"] == 1.0


def test_bad_runs_are_named_with_the_fix(tmp_path, capsys):
    a = write_run(tmp_path / "a", BASE)
    with pytest.raises(DataError, match=r"no per_query.csv there\. Fix: pass a folder written by"):
        compare_runs(tmp_path / "missing", a)
    with pytest.raises(DataError, match=r"no answer system 'answer-judge-llama' in this run; it scored \['answer'\]"):
        compare_runs(a, a, system="answer-judge-llama")
    fewer = write_run(tmp_path / "fewer", BASE[:3])
    with pytest.raises(DataError, match=r"different questions: 1 only in .*a \(e\.g\. s2/q2\), 0 only in"):
        compare_runs(a, fewer)
    relabelled = write_run(tmp_path / "relabelled", [(*BASE[0][:2], "paraphrase", *BASE[0][3:]), *BASE[1:]])
    with pytest.raises(DataError, match=r"1 question\(s\) have another slice .*s1/q1: 'direct' → 'paraphrase'"):
        compare_runs(a, relabelled)
    broken = write_run(tmp_path / "broken", BASE)
    with (broken / "s1" / "answers" / "answer.jsonl").open("a", encoding="utf-8") as f:
        f.write("{not json\n")
    with pytest.raises(DataError, match=r"answer\.jsonl, line 3: not JSON"):
        compare_runs(a, broken)
    # The command reports the error and exits with the bad-input status, writing nothing.
    assert cli.main(["eval", "compare", str(a), str(tmp_path / "missing")]) == 2
    assert "no per_query.csv there" in capsys.readouterr().err


def test_two_real_runs_agree_with_their_own_reports(tmp_path_factory):
    """Golden + tarnwell scored twice, with the answerability check on and off: compare's totals are the runs' own
    pooled counts, and its changed answers are exactly the saved answers that differ."""
    extra("matplotlib", "track")
    data = Path(__file__).resolve().parents[1] / "data"
    sets = [str(data / "golden"), str(data / "golden_tarnwell")]
    fast = ["--set", "embedding.model=hashing", "--set", "embedding.cache=false", "--retriever", "bm25", "--quiet",
            "--no-mlflow", "--json", "--data", *sets]
    out = tmp_path_factory.mktemp("compare")
    records = {}
    with pytest.MonkeyPatch.context() as mp:
        isolate(tmp_path_factory, mp)
        for name, extra_args in (("on", []), ("off", ["--set", "answer.answerability=false"])):
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                assert cli.main(["eval", "golden", "--out", str(out / name), *fast, *extra_args]) == 0
            records[name] = json.loads(buf.getvalue())
    result = compare_runs(out / "on", out / "off")
    n = records["on"]["questions"]
    assert result.questions == n
    for side, name in (("base", "on"), ("new", "off")):
        for measure in ("RefusalAccuracy", "HandledRight"):
            assert result.totals[measure][side] == pytest.approx(records[name]["systems"]["answer"][measure] * n)
    differing = 0
    for s in ("golden", "golden_tarnwell"):
        on = {r["qid"]: r for r in map(json.loads, (out / "on" / s / "answers" / "answer.jsonl").open())}
        off = {r["qid"]: r for r in map(json.loads, (out / "off" / s / "answers" / "answer.jsonl").open())}
        differing += sum(on[q]["answer"] != off[q]["answer"] for q in on)
    assert differing > 0 and len(result.changes) == differing
    assert result.totals["RefusalAccuracy"]["delta"] != 0
