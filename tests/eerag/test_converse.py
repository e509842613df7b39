"""``eerag converse``: LoCoMo replay through the conversation system, four contexts, LOCO choice, bad input."""
from __future__ import annotations

import json

import pytest

from ragbench.cli import main
from ragbench.config import RagbenchConfig, with_overrides
from ragbench.errors import DataError
from ragbench.eval.eerag_converse import run_converse, with_loco
from ragbench.retrieval.embedding import HashingEmbedder


def _session(turns):
    return [{"speaker": s, "dia_id": d, "text": t} for s, d, t in turns]


def tiny_locomo(path):
    convs = []
    for n, (pet, town) in enumerate([("a dog named Rex", "Lisbon"), ("a cat named Tom", "Porto")]):
        convs.append({"sample_id": f"conv-{n}", "conversation": {
            "speaker_a": "Ana", "speaker_b": "Bo",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": _session([("Ana", "D1:1", f"I just adopted {pet} last week."),
                                   ("Bo", "D1:2", "Congratulations, that is lovely news."),
                                   ("Ana", "D1:3", "We walk by the river every morning.")]),
            "session_2_date_time": "10:00 am on 20 May, 2023",
            "session_2": _session([("Bo", "D2:1", f"I am moving to {town} in June for work."),
                                   ("Ana", "D2:2", "Good luck with the move and the new job!")])},
            "qa": [{"question": "What pet did Ana adopt?", "answer": pet, "evidence": ["D1:1"], "category": 4},
                   {"question": "Where is Bo moving?", "answer": town, "evidence": ["D2:1"], "category": 4},
                   {"question": "Is there weather talk?", "answer": "no", "evidence": [], "category": 3}]})
    path.write_text(json.dumps(convs))
    return path


def test_replay_scores_the_four_systems(tmp_path):
    path = tiny_locomo(tmp_path / "locomo.json")
    cfg = with_overrides(RagbenchConfig(), {"retrieval.mode": "bm25", "eerag.top_k": 2,
                                            "eerag.elect_threshold": -1.0, "eerag.max_expand": 1})
    res = with_loco(run_converse(path, cfg, embedder=HashingEmbedder(64), k=1, variants=[{"eerag.top_k": 3}]))
    pq = res.per_question
    assert set(pq.system) == {"full-history", "top-k", "eerag", "eerag+dcs", "eerag[1]", "eerag+dcs[1]",
                              "eerag (LOCO)", "eerag+dcs (LOCO)"}
    assert len(pq[pq.system == "eerag"]) == 6  # 2 conversations × 3 questions
    s = res.systems()
    assert s["full-history"]["evidence_recall"] == 1.0 and s["full-history"]["token_share"] == 1.0
    # BM25 puts the evidence turn first for both answerable questions; no evidence counts 1.0.
    assert s["top-k"]["evidence_recall"] == 1.0
    assert s["eerag"]["model_calls"] == 2.0  # threshold −1: the policy always elects its best candidate
    assert s["eerag"]["token_share"] > 1  # on a five-turn conversation the header alone outweighs the history
    assert set(pq[pq.system == "eerag (LOCO)"].chosen) <= {"eerag", "eerag[1]"}
    diag = res.dcs_diagnostics()
    assert set(diag) == {"eerag+dcs", "eerag+dcs[1]"}
    assert 0 <= diag["eerag+dcs"]["header_changed"] <= 1 and diag["eerag+dcs"]["dcs_turn_share"] <= 1
    sig = res.paired("eerag+dcs", "eerag")
    assert set(sig) >= {"p_value", "test", "delta", "ci"}


def test_not_locomo_shaped_is_a_data_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"sample_id": "x", "conversation": {}}]))
    with pytest.raises(DataError, match=r"bad\.json.*expected keys sample_id, conversation, qa"):
        run_converse(bad, embedder=HashingEmbedder(64))


def test_converse_cli_json(tmp_path, capsys):
    path = tiny_locomo(tmp_path / "locomo.json")
    code = main(["eerag", "converse", str(path), "--json", "--quiet", "--no-mlflow", "--retriever", "bm25",
                 "--set", "embedding.model=hashing", "--variants", "[]", "-k", "1"])
    assert code == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1
    report = json.loads(out[0])
    assert report["questions"] == 6 and report["mlflow_run_id"] is None
    assert set(report["systems"]) >= {"full-history", "top-k", "eerag", "eerag+dcs"}
    assert set(report["significance"]) >= {"p_value", "test", "delta", "ci"}
    assert report["model_id"] == "policy-elector"
    assert set(report["systems"]["top-k"]["by_category"]) == {"single-hop", "open-domain"}
