"""`ragbench eval golden`: tables, JSON line, run folder, MLflow run, and failure paths (hashing embedder: fast)."""
from __future__ import annotations

import json
import socket

import pytest
from conftest import extra
import pytrec_eval

from ragbench import cli
from ragbench.eval import golden_run
from ragbench.retrieval.trec import read_trec_run

FAST = ["--set", "embedding.model=hashing", "--set", "embedding.cache=false"]


@pytest.fixture
def no_answers(monkeypatch):
    # Answer systems are the ANSWER engineer's (tested there); keep these tests to retrieval and fast.
    monkeypatch.setattr(golden_run, "answer_systems", lambda golden, cfg, retrievers, *systems: {})


def test_eval_golden_json_run_folder_and_mlflow(tmp_path, capsys, no_answers):
    MlflowClient = extra("mlflow.tracking", "track").MlflowClient

    from ragbench.eval.golden import load_golden
    from ragbench.tracking import tracking_uri

    out = tmp_path / "run"
    code = cli.main(["eval", "golden", "--json", "--out", str(out)] + FAST)
    captured = capsys.readouterr()
    assert code == 0
    assert len(captured.out.splitlines()) == 1  # --json: exactly one line on stdout, the report on stderr
    summary = json.loads(captured.out)
    printed = captured.err
    assert list(summary["systems"]) == ["bm25", "dense", "lsh", "hybrid"]
    for metrics in summary["systems"].values():
        assert list(metrics) == ["nDCG@5", "R@5", "RR@5", "P@5", "AP"]
        assert all(0.0 <= v <= 1.0 for v in metrics.values())
    assert "Retrieval: per slice" in printed and "Answers:" not in printed
    assert "Significance on the paraphrase slice: hybrid vs baselines" in printed
    for name in ("aggregate.csv", "per_query.csv", "per_slice.csv", "significance.csv", "config.yaml",
                 "meta.json", "runs/bm25.trec", "runs/hybrid.trec"):
        assert (out / name).is_file(), name
    assert (out / "golden_metrics.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The reported numbers are what trec_eval computes from the saved run file.
    golden = load_golden()
    qrels: dict = {}
    for q in golden.questions:
        if not q.should_refuse:
            qrels[q.qid] = {d: 1 for d in q.expected_docs}
    run: dict = {}
    for r in read_trec_run(out / "runs" / "bm25.trec").itertuples():
        run.setdefault(r.qid, {})[r.docno] = r.score
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.5", "recall.5"}).evaluate(run)
    ndcg = sum(v["ndcg_cut_5"] for v in ref.values()) / len(qrels)
    assert summary["systems"]["bm25"]["nDCG@5"] == pytest.approx(ndcg, abs=1e-12)
    # One MLflow run with safe metric names, the flattened config and the artifacts.
    client = MlflowClient(tracking_uri())
    mrun = client.get_run(summary["mlflow_run_id"])
    assert mrun.data.metrics["bm25.nDCG_at_5"] == pytest.approx(summary["systems"]["bm25"]["nDCG@5"])
    assert "hybrid.paraphrase.RR_at_5" in mrun.data.metrics
    assert mrun.data.params["embedding.model"] == "hashing" and mrun.data.params["eval.k"] == "5"
    assert mrun.data.tags["data_hash"] == golden.data_hash
    assert {a.path for a in client.list_artifacts(mrun.info.run_id)} >= {"aggregate.csv", "golden_metrics.png",
                                                                          "config.yaml"}


def test_unreachable_tracking_server_still_saves_results(tmp_path, capsys, monkeypatch, no_answers):
    extra("mlflow", "track")
    extra("matplotlib", "track")
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"http://127.0.0.1:{port}")
    out = tmp_path / "run"
    code = cli.main(["eval", "golden", "--json", "--retriever", "bm25", "--out", str(out)] + FAST)
    captured = capsys.readouterr()
    assert code == 1
    assert "MLflow tracking failed" in captured.err and f"127.0.0.1:{port}" in captured.err
    summary = json.loads(captured.out)
    assert summary["mlflow_run_id"] is None and list(summary["systems"]) == ["bm25"]
    assert (out / "aggregate.csv").is_file() and (out / "meta.json").is_file()


def test_unknown_retriever_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["eval", "golden", "--out", str(tmp_path / "run"), "--retriever", "bm25,fuzzy"])
    assert exc.value.code == 2 and "expected comma-separated modes" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("args, message", [
    (["--data", "does/not/exist"], "golden folder"),
    (["--set", "bm25.k1"], "--set expects key=value"),
    # a misspelt judge, rescue judge or reader fails before any retrieval or answering is done
    (["--rescue", "foo"], "unknown chat model 'foo'"),
    (["--judge", "llama:nosuch"], "unknown local model 'nosuch'"),
    (["--model", "gpt"], "unknown chat model 'gpt'"),
])
def test_bad_input_fails_cleanly_without_writing(tmp_path, capsys, args, message, no_answers):
    out = tmp_path / "run"
    code = cli.main(["eval", "golden", "--out", str(out), "--no-mlflow"] + FAST + args)
    assert code == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.slow
def test_eval_golden_default_model_with_answers(tmp_path, capsys):
    code = cli.main(["eval", "golden", "--json", "--out", str(tmp_path / "run")])
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 0
    assert summary["systems"]["hybrid"]["R@5"] >= 0.7  # seed 3.11 integration threshold


@pytest.mark.parametrize("quiet", [False, True])
def test_answer_phase_progress_is_on_stderr_and_quiet_silences_it(tmp_path, capsys, monkeypatch, quiet):
    """An answer system that takes ``show_progress`` gets the command's setting: its bar over the questions it
    answers goes to stderr (one tick per question), --quiet silences it, and --json keeps stdout one JSON line."""
    pytest.importorskip("matplotlib")  # eval golden draws its result chart (the track extra)
    from tqdm.auto import tqdm

    calls: list[tuple[bool, int]] = []
    named: list[list[str]] = []

    def answer_systems(golden, cfg, retrievers, models=(), judges=(), rescues=(), user_set=()):
        named.append(list(user_set))  # the --set keys, which a judge or rescue profile leaves alone

        def system(queries, show_progress=False):
            calls.append((show_progress, len(queries)))
            return [{"qid": qid, "refused": True, "citations": [], "answer": ""}
                    for qid in tqdm(list(queries["qid"]), desc="answers", disable=not show_progress)]
        return {"answer": system}

    monkeypatch.setattr(golden_run, "answer_systems", answer_systems)
    code = cli.main(["eval", "golden", "--json", "--no-mlflow", "--retriever", "bm25", "--out", str(tmp_path / "r")]
                    + FAST + (["--quiet"] if quiet else []))
    captured = capsys.readouterr()
    assert code == 0
    assert len(captured.out.splitlines()) == 1 and list(json.loads(captured.out)["systems"]) == ["bm25", "answer"]
    from ragbench.eval.golden import load_golden

    n = len(load_golden().questions)
    assert calls == [(not quiet, n)]
    assert named == [["embedding.model", "embedding.cache"]]
    if quiet:
        assert "answers" not in captured.err and "it/s" not in captured.err and "%|" not in captured.err
    else:
        assert "answers: 100%" in captured.err and f"{n}/{n}" in captured.err


def test_slices_json_nests_system_tag_measure():
    import pandas as pd

    per_slice = pd.DataFrame([{"system": "answer", "slice": "direct", "n": 2, "RefusalAccuracy": 1.0, "nDCG@5": None},
                              {"system": "dense", "slice": "direct", "n": 2, "RefusalAccuracy": float("nan"),
                               "nDCG@5": 0.5}])
    assert golden_run.slices_json(per_slice) == {"answer": {"direct": {"RefusalAccuracy": 1.0}},
                                                 "dense": {"direct": {"nDCG@5": 0.5}}}


def test_counts_are_drawn_apart_from_rates(tmp_path):
    pytest.importorskip("matplotlib")
    import pandas as pd

    from ragbench.eval.plots import bar_chart, is_count, panels

    assert [m for m in ("nDCG@5", "R@5", "RefusalAccuracy", "FactInAnswer", "ContextTokens", "ModelCalls",
                        "context_tokens", "latency_ms", "LeakedDocs") if is_count(m)] == [
        "ContextTokens", "ModelCalls", "context_tokens", "latency_ms", "LeakedDocs"]
    agg = pd.DataFrame({"nDCG@5": [0.8, None], "RefusalAccuracy": [None, 0.9], "ContextTokens": [None, 546.4]},
                       index=["bm25", "answer"])
    assert panels(agg) == [["nDCG@5", "RefusalAccuracy"], ["ContextTokens"]]
    assert panels(agg[["nDCG@5"]]) == [["nDCG@5"]]
    path = bar_chart(agg, tmp_path / "m.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert bar_chart(agg, tmp_path / "again.png").read_bytes() == path.read_bytes()  # same numbers, same bytes


def test_each_answer_system_is_tested_against_answer(tmp_path, capsys, monkeypatch):
    """With a second answer system beside ``answer``, the run pairs it with ``answer`` question by question: here one
    that refuses everything, whose refusal accuracy is the share of questions to refuse."""
    pytest.importorskip("matplotlib")
    import pandas as pd

    from ragbench.eval.golden import load_golden

    golden = load_golden()

    def answer_systems(golden_, cfg, retrievers, models=(), judges=(), rescues=(), user_set=()):
        def answering(queries):
            return [{"qid": qid, "refused": False, "citations": [], "answer": "No idea."} for qid in queries["qid"]]

        def refusing(queries):
            return [{"qid": qid, "refused": True, "citations": [], "answer": ""} for qid in queries["qid"]]
        return {"answer": answering, "answer-refuses": refusing}

    monkeypatch.setattr(golden_run, "answer_systems", answer_systems)
    out = tmp_path / "run"
    code = cli.main(["eval", "golden", "--no-mlflow", "--retriever", "bm25", "--out", str(out)] + FAST)
    printed = capsys.readouterr().out
    assert code == 0
    sig = pd.read_csv(out / "significance.csv")
    row = sig[(sig.baseline == "answer") & (sig.system == "answer-refuses") & (sig.slice == "all")
              & (sig.measure == "RefusalAccuracy")].iloc[0]
    n_refuse = sum(q.should_refuse for q in golden.questions)
    n = len(golden.questions)
    assert (row["n"], row["mean"], row["baseline_mean"]) == (n, pytest.approx(n_refuse / n),
                                                             pytest.approx((n - n_refuse) / n))
    assert (row["wins"], row["losses"], row["ties"]) == (n_refuse, n - n_refuse, 0)
    assert "Answers: each answer system against answer" in printed
    # The retrieval baselines' own comparisons are unchanged: bm25 is the only one here, with no other retriever.
    assert set(sig["baseline"]) == {"answer"}
