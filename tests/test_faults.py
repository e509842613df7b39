"""Bad input to every command (issue 13): one ``error:`` line that names the file or field and the fix, exit status 2
(bad input), no traceback, nothing run. Every command runs in-process through ``ragbench.cli.main``."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ragbench.cli import main
from ragbench.errors import EXIT_BAD_INPUT

from conftest import extra

ROOT = Path(__file__).resolve().parents[1]
LATIN1 = "bm25:\n  k1: 1.2  # Caf\xe9\n".encode("latin-1")
BINARY = bytes(range(256)) * 4


def run(capsys, *argv: str) -> tuple[int, str]:
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err
    return code, err


def bad_input(code: int, err: str, *needles: str) -> None:
    """Exit 2 with one typed ``error:`` line containing every needle and a fix, and no traceback."""
    assert code == EXIT_BAD_INPUT, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, err
    assert "Fix" in lines[0] or "fix" in lines[0], lines[0]
    for needle in needles:
        assert str(needle) in lines[0], (needle, lines[0])


def write(path: Path, data: bytes | str | object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    elif isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture
def note(tmp_path) -> Path:
    return write(tmp_path / "docs" / "note.md", "# Leave\nStaff get 25 days of annual leave.\n")


# ------------------------------------------------------------------------------------------- config files


def _commands(tmp: Path, note: Path) -> dict[str, list[str]]:
    """Each command with valid arguments apart from the config file (appended as --config)."""
    eerag = ROOT.parent / "shared" / "data" / "dcs_ee_rag" / "eedag_benchmark_v1.json"
    return {
        "index": ["index", str(note), "--store", str(tmp / "kb.sqlite"), "--no-embed"],
        "search": ["search", "leave", "--store", str(tmp / "kb.sqlite")],
        "eval golden": ["eval", "golden", "--out", str(tmp / "run"), "--no-mlflow"],
        "ask": ["ask", "How much leave?", "--as", "eval-staff", "--store", str(tmp / "ask.sqlite")],
        "eerag bench": ["eerag", "bench", str(eerag)],
        "research": ["research", "How does GraphQL compare to REST?"],
        "dal watch": ["dal", "watch", str(note.parent), "--store", str(tmp / "dal.sqlite"), "--once"],
    }


@pytest.mark.parametrize("command", ["index", "search", "eval golden", "ask", "eerag bench", "research",
                                     "dal watch"])
@pytest.mark.parametrize("content, needle", [
    (LATIN1, "is not UTF-8 text"),
    (BINARY, "is not UTF-8 text"),
    ("bm25: {k1: 1.2, bogus: 3}\n", "unknown config field(s) bm25.bogus"),
    ("bm25: {b: 7.0}\n", "bm25.b: 7.0 is outside its range [0, 1]"),
    ("- just\n- a list\n", "expected a mapping at the top level"),
    ("bm25: {k1: [oops\n", "is not valid YAML"),
], ids=["latin1", "binary", "unknown-field", "out-of-range", "list", "syntax"])
def test_bad_config_file(tmp_path, capsys, note, command, content, needle):
    cfg = write(tmp_path / "bad.yaml", content)
    code, err = run(capsys, *_commands(tmp_path, note)[command], "--config", cfg)
    bad_input(code, err, needle, cfg)
    assert not (tmp_path / "kb.sqlite").exists() and not (tmp_path / "run").exists()


# ------------------------------------------------------------------------------------------- tune


def _experiment(tmp: Path, **changes: object) -> dict:
    corpus = write(tmp / "tiny" / "corpus.jsonl", "".join(
        json.dumps({"_id": f"d{i}", "title": "", "text": f"word{i} text"}) + "\n" for i in range(6)))
    write(tmp / "tiny" / "queries.jsonl", "".join(json.dumps({"_id": f"q{i}", "text": f"word{i}"}) + "\n"
                                                  for i in range(6)))
    write(tmp / "tiny" / "qrels" / "test.tsv", "query-id\tcorpus-id\tscore\n" + "".join(
        f"q{i}\td{i}\t1\n" for i in range(6)))
    spec = {"name": "t", "dataset": f"beir:{corpus.parent}:test",
            "base": {"retrieval": {"mode": "bm25"}, "chunking": {"strategy": "none"},
                     "embedding": {"model": "hashing"}},
            "space": {"bm25.k1": "float[0.5, 2.0]"}, "metrics": [{"nDCG@10": "maximize"}], "pruner": "none",
            "trials": 2}
    spec.update(changes)
    return spec


@pytest.mark.parametrize("changes, needle", [
    ({"space": {"bm25.b": "float[-3.0, 7.0]"}}, "space.bm25.b: 'float[-3.0, 7.0]' reaches outside the field's range"),
    ({"space": {"lsh.bits": "int[0, 80]"}}, "outside the field's range [1, 64]"),
    ({"space": {"chunking.overlap": "choice[0.1, 1.5]"}}, "(1.5 is not in it)"),
    ({"sampler": {"name": "tpe", "n_startup": 3}}, "sampler 'tpe' has no option(s) 'n_startup'"),
    ({"sampler": {"name": "random", "n_startup_trials": 3}}, "sampler 'random' has no option(s)"),
    ({"pruner": {"name": "median", "warmup": 2}}, "pruner 'median' has no option(s) 'warmup'"),
    ({"options": {"mode": "dense"}}, "options 'mode' are not read by objective 'retrieval'"),
    ({"base": {"bm25": {"b": 2}}}, "base: bm25.b: 2.0 is outside its range [0, 1]"),
    ({"base": {"retrieval": {"mode": "dense"}, "embedding": {"model": "bert"}}}, "embedding.model must be"),
    ({"trials": 0}, "trials must be an integer ≥ 1"),
], ids=["space-range", "int-range", "choice-range", "sampler-option", "random-option", "pruner-option",
        "objective-option", "base-range", "unknown-model", "trials"])
def test_bad_experiment_fails_before_the_first_trial(tmp_path, capsys, changes, needle):
    extra("optuna", "tune")
    path = write(tmp_path / "exp.yaml", yaml.safe_dump(_experiment(tmp_path, **changes)))
    code, err = run(capsys, "tune", path, "--no-mlflow")
    bad_input(code, err, needle)
    assert not (tmp_path / "runs").exists()  # no study was created


@pytest.mark.parametrize("content, needle", [(LATIN1, "is not UTF-8 text"), (BINARY, "is not UTF-8 text"),
                                             ("[1, 2]\n", "expected a mapping at the top level")])
def test_unreadable_experiment_file(tmp_path, capsys, content, needle):
    path = write(tmp_path / "exp.yaml", content)
    bad_input(*run(capsys, "tune", path), needle, path)


FLAKY = """
import sys
from ragbench.tune import sweep
real = sweep.evaluate_trial
def flaky(trial, prepared):
    if trial.number == 1:
        trial.set_user_attr("error", "RuntimeError: disk on fire")
        raise RuntimeError("disk on fire")
    return real(trial, prepared)
sweep.evaluate_trial = flaky
from ragbench.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_failed_trials_make_exit_status_1_without_tracebacks(tmp_path):
    """The job ran with recorded failures: status 1, the errors in trials.csv, one line per failed trial (a real
    process, so that Optuna's own log handler is the one a user sees)."""
    extra("optuna", "tune")
    path = write(tmp_path / "exp.yaml", yaml.safe_dump(_experiment(tmp_path, trials=3)))
    r = subprocess.run([sys.executable, "-c", FLAKY, "tune", str(path), "--no-mlflow", "--quiet"], cwd=tmp_path,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=600)
    assert r.returncode == 1 and "error: 1 trial(s) failed" in r.stderr and "disk on fire" in r.stderr
    assert "Traceback" not in r.stderr
    assert "RuntimeError: disk on fire" in (tmp_path / "runs" / "t" / "trials.csv").read_text()


# ------------------------------------------------------------------------------------------- batch


@pytest.mark.parametrize("timeout, needle", [("abc", "timeout must be a whole number of seconds > 0"),
                                             (-5, "found -5"), (0, "found 0"), (1.5, "found 1.5")])
def test_bad_batch_timeout(tmp_path, capsys, timeout, needle):
    nb = write(tmp_path / "n.ipynb", {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    path = write(tmp_path / "batch.yaml", yaml.safe_dump({"timeout": timeout, "jobs": [{"notebook": str(nb)}]}))
    bad_input(*run(capsys, "batch", path, "--no-mlflow"), needle, path)


@pytest.mark.parametrize("content", [LATIN1, BINARY], ids=["latin1", "binary"])
def test_unreadable_batch_file(tmp_path, capsys, content):
    path = write(tmp_path / "batch.yaml", content)
    bad_input(*run(capsys, "batch", path, "--no-mlflow"), "is not UTF-8 text", path)


# ------------------------------------------------------------------------------------------- golden files


@pytest.fixture
def golden(tmp_path) -> Path:
    folder = tmp_path / "golden"
    shutil.copytree(ROOT / "data" / "golden", folder)
    return folder


@pytest.mark.parametrize("target", ["docs/hr-leave.md", "questions.jsonl", "principals.yaml"])
def test_non_utf8_golden_file(golden, tmp_path, capsys, target):
    path = golden / target
    if not path.exists():  # the document name may change; any document will do
        path = sorted((golden / "docs").glob("*.md"))[0]
    path.write_bytes(path.read_bytes() + "\nCaf\xe9\n".encode("latin-1"))
    code, err = run(capsys, "eval", "golden", "--data", golden, "--out", tmp_path / "run", "--no-mlflow")
    bad_input(code, err, path, "not UTF-8 text", "re-encode the file as UTF-8")


def test_non_utf8_principals_for_ask(tmp_path, capsys):
    path = write(tmp_path / "p.yaml", "principals:\n  bob: {roles: [caf\xe9]}\n".encode("latin-1"))
    code, err = run(capsys, "ask", "How much leave?", "--as", "bob", "--principals", path,
                    "--store", tmp_path / "s.sqlite")
    bad_input(code, err, path, "not UTF-8 text")


# ------------------------------------------------------------------------------------------- EE-RAG, DCS


BENCH = {"name": "b", "version": "1",
         "knowledge_entries": [{"slug": "a", "request": "What is a?", "text_response": "A is a letter."}],
         "benchmark_cases": [{"id": "c1", "query": "what is a", "expected_slugs": ["a"]}]}


@pytest.mark.parametrize("change, needle", [
    ({"benchmark_cases": []}, "benchmark_cases must be a non-empty list"),
    ({"knowledge_entries": []}, "knowledge_entries must be a non-empty list"),
    ({"benchmark_cases": [{"id": "c1", "query": "q", "expected_slugs": ["a"], "expect_retrival": True}]},
     "benchmark_cases[0] has unknown key(s) 'expect_retrival'"),
    ({"knowledge_entries": [{"slug": "a", "request": "r", "text_response": "t", "sumary": "s"}]},
     "knowledge_entries[0] has unknown key(s) 'sumary'"),
    ({"extra": 1}, "the top level has unknown key(s) 'extra'"),
], ids=["no-cases", "no-entries", "case-key", "entry-key", "top-key"])
def test_bad_eerag_benchmark(tmp_path, capsys, change, needle):
    path = write(tmp_path / "bench.json", {**BENCH, **change})
    bad_input(*run(capsys, "eerag", "bench", path, "--json"), path, needle)


def test_non_utf8_eerag_benchmark(tmp_path, capsys):
    path = write(tmp_path / "bench.json", json.dumps(BENCH).replace("letter", "lettr\xe9").encode("latin-1"))
    bad_input(*run(capsys, "eerag", "bench", path), path, "bench.json:1: not UTF-8 text (byte 0xe9 at offset 121)")


MESSAGES = [{"id": "m1", "content": "Hello there", "timestamp": "2025-01-01T09:00:00Z", "thread": "t1"}]


@pytest.mark.parametrize("data, needle", [
    ([], "found an empty list"),
    ([{**MESSAGES[0], "content": "  "}], "message 0 ('m1') has empty content"),
    ({"messages": MESSAGES}, "expected a non-empty JSON list of messages, found dict"),
], ids=["empty", "blank-message", "object"])
def test_bad_dcs_messages(tmp_path, capsys, data, needle):
    path = write(tmp_path / "m.json", data)
    bad_input(*run(capsys, "dcs", "threads", path, "--json"), path, needle)


def _locomo(qa: list) -> list:
    turns = [{"speaker": "A", "dia_id": "D1:1", "text": "I moved to Paris."},
             {"speaker": "B", "dia_id": "D1:2", "text": "Nice."}]
    return [{"sample_id": "s1", "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1": turns,
                                                  "session_1_date_time": "1:56 pm on 8 May, 2023"}, "qa": qa}]


@pytest.mark.parametrize("data, needle", [
    ([], "found an empty list"),
    (_locomo([]), "no sample has a question"),
    (_locomo({"question": "q"}), "'qa' should be a list"),
], ids=["empty", "no-qa", "qa-object"])
def test_bad_locomo_file(tmp_path, capsys, data, needle):
    path = write(tmp_path / "l.json", data)
    bad_input(*run(capsys, "dcs", "locomo", path, "--json"), path, needle)


def test_locomo_evidence_naming_no_turn_is_reported(tmp_path, caplog):
    from ragbench.eval.locomo import evaluate_locomo
    from ragbench.retrieval.embedding import HashingEmbedder

    path = write(tmp_path / "l.json", _locomo([{"question": "Where did A move?", "answer": "Paris",
                                                "evidence": ["D1:1", "D9:9"], "category": 4}]))
    res = evaluate_locomo(path, ks=(1,), embedder=HashingEmbedder(32))
    assert res.settings["unresolved_evidence"] == ["s1 qa 0: D9:9"]
    assert "1 evidence id(s) name no dialog turn" in caplog.text and str(path) in caplog.text


# ------------------------------------------------------------------------------------------- research, dal, index


@pytest.mark.parametrize("args, needle", [
    (["research", " "], "research question is blank"),
    (["research", "q", "--max-passes", "9"], "dal.max_passes: 9 is outside its range [1, 4]"),
    (["research", "q", "--url-rewrite", "http://127.0.0.1:1/x"], "has no {host} field"),
    (["research", "q", "--url-rewrite", "--search-url", "ftp://x"], "needs an http(s) search URL"),
], ids=["blank", "passes", "template", "bare-rewrite"])
def test_bad_research_arguments(capsys, args, needle):
    bad_input(*run(capsys, *args), needle)


def test_dal_watch_missing_folder(tmp_path, capsys):
    missing = tmp_path / "nope"
    bad_input(*run(capsys, "dal", "watch", missing, "--store", tmp_path / "s.sqlite", "--once"), missing,
              "neither a folder nor an http(s) URL")
    assert not (tmp_path / "s.sqlite").exists()


def test_index_non_utf8_and_binary_files(tmp_path, capsys):
    latin = write(tmp_path / "latin.md", "Caf\xe9 cr\xe8me\n".encode("latin-1"))
    bad_input(*run(capsys, "index", latin, "--store", tmp_path / "kb.sqlite", "--no-embed"), latin,
              "latin.md:1: not UTF-8 text (byte 0xe9 at offset 3)")
    assert not (tmp_path / "kb.sqlite").exists()


def test_a_foreign_store_is_refused(tmp_path, capsys, note):
    foreign = write(tmp_path / "foreign.sqlite", b"not a database at all" * 100)
    bad_input(*run(capsys, "index", note, "--store", foreign, "--no-embed"), foreign)
    assert foreign.read_bytes() == b"not a database at all" * 100
