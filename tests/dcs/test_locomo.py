import json

import pytest

from ragbench.cli import main
from ragbench.eval.locomo import (STRATEGIES, TurnText, _turn_times, evaluate_locomo, load_captions, parse_session_date,
                                  turn_texts)
from ragbench.errors import ConfigError
from ragbench.retrieval.embedding import HashingEmbedder

SAMPLE = [{
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Ann", "speaker_b": "Bob",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "I started a pottery class on Monday."},
            {"speaker": "Bob", "dia_id": "D1:2", "text": "Nice, what did you make?"},
            {"speaker": "Ann", "dia_id": "D1:3", "text": "A blue bowl.", "blip_caption": "a photo of a blue bowl"},
        ],
        "session_2_date_time": "garbled",
        "session_2": [
            {"speaker": "Bob", "dia_id": "D2:1", "text": "My dog Rex learned to swim at the lake."},
            {"speaker": "Ann", "dia_id": "D2:2", "text": "Wow, how old is Rex?"},
            {"speaker": "Bob", "dia_id": "D2:3", "text": "He is three years old."},
        ],
    },
    "qa": [
        {"question": "Which pottery class did Ann start?", "answer": "pottery", "evidence": ["D1:1"], "category": 4},
        {"question": "How old is Bob's dog Rex?", "answer": "three", "evidence": ["D2:3", "D:2:1"], "category": 1},
        {"question": "Is it raining?", "adversarial_answer": "x", "evidence": [], "category": 5},
    ],
}]


@pytest.fixture
def locomo_file(tmp_path):
    p = tmp_path / "locomo.json"
    p.write_text(json.dumps(SAMPLE))
    return p


def test_dates_captions_and_texts(locomo_file):
    from ragbench.eval.datasets import load_locomo

    conv = load_locomo(locomo_file)[0]
    times = _turn_times(conv)
    assert times[0] == parse_session_date("1:56 pm on 8 May, 2023") and (times[2] - times[0]).seconds == 2
    assert (times[3] - times[2]).seconds == 60  # an unparsable session date continues one minute later
    caps = load_captions(locomo_file)
    assert caps == {("conv-x", "D1:3"): "a photo of a blue bowl"}
    plain = TurnText(date=False, before=0)
    assert turn_texts(conv, plain, caps)[2] == "Ann: A blue bowl. [shares a photo of a blue bowl]"
    assert turn_texts(conv, TurnText(False, False, True, 0), caps)[0] == \
        "(1:56 pm on 8 May, 2023) I started a pottery class on Monday."
    # one earlier turn of the same session, never across sessions; the date once in front
    assert turn_texts(conv, TurnText(captions=False), caps)[1] == \
        "(1:56 pm on 8 May, 2023) Ann: I started a pottery class on Monday. Bob: Nice, what did you make?"
    assert turn_texts(conv, TurnText(date=False), caps)[3] == "Bob: My dog Rex learned to swim at the lake."


def test_strategies_on_a_tiny_conversation(locomo_file):
    res = evaluate_locomo(locomo_file, ks=(1, 2), embedder=HashingEmbedder(64), dcs_weight=0.0,
                          how=TurnText(before=0), strategies=STRATEGIES,
                          token_counter=lambda s: len(s.split()))
    pq = res.per_question.set_index(["strategy", "qid"])
    # recency picks D2:3 then D2:2: question 1 has gold {D2:3, D2:1}
    assert pq.loc[("recency", 1), "recall@1"] == 0.5 and pq.loc[("recency", 0), "recall@2"] == 0.0
    assert pq.loc[("recency", 0), "tokens@1"] == 6  # "Bob: He is three years old." = 6 words
    assert pq.loc[("bm25", 0), "recall@1"] == 1.0  # pottery + class + ann (D1:1) beat "did" (D1:2)
    assert (pq.xs(2, level="qid")["recall@1"] == 1.0).all()  # no evidence counts 1.0
    dense = res.per_question[res.per_question.strategy == "dense"].reset_index(drop=True)
    combo = res.per_question[res.per_question.strategy == "dcs_dense"].reset_index(drop=True)
    assert dense.drop(columns="strategy").equals(combo.drop(columns="strategy"))  # weight 0 = dense
    summary = res.summary()
    assert summary["questions"] == 3 and set(summary["strategies"]) == {"recency", "bm25", "dense", "dcs", "dcs_dense",
                                                                         "memory"}
    assert set(summary["strategies"]["dense"]) == {"recall@1", "recall@2", "tokens@1", "tokens@2"}
    sig = res.significance(k=1)
    assert set(sig["strategy"]) == {"recency", "bm25", "dcs", "dcs_dense", "memory"}
    assert list(res.by_category(1).columns) == ["single-hop", "multi-hop", "adversarial"]


def test_bad_settings(locomo_file):
    with pytest.raises(ConfigError):
        evaluate_locomo(locomo_file, ks=(0,), embedder=HashingEmbedder(8))
    with pytest.raises(ConfigError):
        evaluate_locomo(locomo_file, embedder=HashingEmbedder(8), mode="sideways")


def test_cli_json_line(locomo_file, capsys, mlflow_installed):
    assert main(["dcs", "locomo", str(locomo_file), "-k", "1,2", "--json", "--quiet", "--set",
                 "embedding.model=hashing", "--set", "embedding.hashing_dim=32", "--set", "embedding.cache=false"]) == 0
    out = capsys.readouterr().out
    assert len(out.splitlines()) == 1
    last = json.loads(out)
    assert last["questions"] == 3 and "recall@2" in last["strategies"]["dcs_dense"]
    assert bool(last["mlflow_run_id"]) == mlflow_installed


def test_cli_threads_json(shared_data, capsys):
    assert main(["dcs", "threads", str(shared_data / "dcs_ee_rag" / "dcs_test_messages.json"), "--json",
                 "--clusters", "0"]) == 0
    table = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["settings"]
    assert set(table) == {"faithful", "improved", "configured"} and table["improved"]["ari"] > table["faithful"]["ari"]
    assert table["configured"] == table["improved"]  # the default config: patterns of the improved profile


@pytest.mark.slow
def test_dev_split_numbers(shared_data):
    """The docs/dcs.md numbers: BM25 over contextual turns reaches the paper's DRAGON recall@10."""
    res = evaluate_locomo(shared_data / "locomo" / "locomo_dev.json", ks=(10,))
    s = res.summary()["strategies"]
    assert res.summary()["questions"] == 999
    assert s["bm25"]["recall@10"] >= 0.662
    assert s["dcs"]["recall@10"] < s["dense"]["recall@10"]
