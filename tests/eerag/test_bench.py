from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ragbench.config import RagbenchConfig
from ragbench.eerag.pipeline import EeragPipeline
from ragbench.eval.eerag_bench import SUMMARY_KEYS, run_bench
from ragbench.eval.eerag_tokens import run_token_study
from ragbench.retrieval.embedding import HashingEmbedder
from ragbench.eerag.electors import PolicyElector
from ragbench.store import KnowledgeStore
from ragbench.retrieval.retriever import retriever_from_store


def test_bench_policy_elector_on_source_benchmark(shared_data):
    report = run_bench(shared_data / "dcs_ee_rag" / "eedag_benchmark_v1.json")
    s = report.summary
    # 17 cases expect one entry each, 3 expect none; with MiniLM and the default threshold 0.3 the policy elector
    # elects the right entry in 16 of 17 cases, one extra entry once, and nothing for the three chit-chat cases.
    assert len(report.cases) == 20
    assert s["candidate_recall"] == 1.0
    assert s["precision"] == pytest.approx(0.9)
    assert s["recall"] == pytest.approx(0.95)
    assert s["f1"] == pytest.approx(11 / 12)
    assert s["retrieval_rate"] == pytest.approx(0.85) and s["expected_retrieval_rate"] == pytest.approx(0.85)
    assert s["context_tokens"] < s["naive_context_tokens"]
    assert set(report.cases.loc[report.cases.case_id.isin(["bc-018", "bc-019", "bc-020"]), "model_calls"]) == {1}


def test_bench_cli_json_last_line(shared_data):
    out = subprocess.run([sys.executable, "-m", "ragbench", "eerag", "bench",
                          str(shared_data / "dcs_ee_rag" / "eedag_benchmark_v1.json"), "--json"],
                         capture_output=True, text=True, check=True).stdout
    data = json.loads(out.strip().splitlines()[-1])
    assert list(data) == list(SUMMARY_KEYS) + ["elector", "model_id", "prompt", "mode", "mlflow_run_id"]
    assert data["mlflow_run_id"]
    assert data["f1"] == pytest.approx(11 / 12) and data["failed_elections"] == 0
    assert data["model_id"] == "policy-elector(t=0.3,m=0.1,n=3,r=0)" and len(out.strip().splitlines()) == 1


def _write_beir(root):
    (root / "qrels").mkdir(parents=True)
    docs = {"d1": ("Rebasing", "git rebase replays commits of a branch onto another base."),
            "d2": ("Volumes", "docker volumes persist data outside the container filesystem."),
            "d3": ("Indexes", "sql indexes speed up lookups on filtered columns."),
            "d4": ("Coroutines", "python coroutines are declared with async def and awaited.")}
    (root / "corpus.jsonl").write_text("".join(json.dumps({"_id": k, "title": t, "text": x}) + "\n"
                                               for k, (t, x) in docs.items()))
    qs = {"q1": "how does git rebase work", "q2": "persist docker data", "q3": "async def coroutines in python"}
    (root / "queries.jsonl").write_text("".join(json.dumps({"_id": k, "text": v}) + "\n" for k, v in qs.items()))
    (root / "qrels" / "train.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\nq3\td4\t1\n")


def test_token_study_matches_the_pipeline(tmp_path):
    _write_beir(tmp_path / "beir")
    emb = HashingEmbedder(128)
    cfg = RagbenchConfig()
    study = run_token_study(tmp_path / "beir", "train", cfg, k=3, thresholds=(0.0, 0.2, 2.0),
                            store_path=tmp_path / "s.sqlite", embedder=emb)
    pq = study.per_query
    # Threshold 2.0 elects nothing: EE-RAG costs only the header.
    assert (pq[(pq.system == "eerag-policy") & (pq.threshold == 2.0)].elected == 0).all()
    # The study's EE-RAG tokens equal what the pipeline actually injects.
    with KnowledgeStore.open(tmp_path / "s.sqlite") as store:
        retriever = retriever_from_store(store, "dense", cfg, emb)
        for t in (0.0, 0.2):
            elector = PolicyElector(emb, t, cfg.eerag.margin, cfg.eerag.max_expand)
            for qid, query in [("q1", "how does git rebase work"), ("q3", "async def coroutines in python")]:
                ecfg = cfg.eerag.__class__(top_k=3, elect_threshold=t)
                res = EeragPipeline(store, retriever, elector, ecfg, embedder=emb).run(query)
                row = pq[(pq.qid == qid) & (pq.system == "eerag-policy") & (pq.threshold == t)].iloc[0]
                assert row.tokens == res.context_tokens
                assert row.elected == len(res.elected)
    naive = study.curve[study.curve.system == "naive"].iloc[0]
    assert naive.evidence_recall == pytest.approx(1.0)
