"""The answers and dcs-locomo objectives agree with the evaluations they wrap; the chat model comes from the
config (llm.model, llm.temperature); the grid sampler visits each combination once."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from ragbench.config import RagbenchConfig, with_overrides
from ragbench.errors import ConfigError
from ragbench.llm import chat_model_for
from ragbench.tune.objectives import make_objective
from ragbench.tune.space import parse_spec
from ragbench.tune.sweep import optimize, prepare

from .conftest import require, tiny_spec

HASHING = {"embedding.model": "hashing", "embedding.hashing_dim": 64, "embedding.cache": False}
LOCOMO = [{
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Ann", "speaker_b": "Bob",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "I started a pottery class on Monday."},
            {"speaker": "Bob", "dia_id": "D1:2", "text": "Nice, what did you make?"},
            {"speaker": "Ann", "dia_id": "D1:3", "text": "A blue bowl.", "blip_caption": "a photo of a blue bowl"},
        ],
        "session_2_date_time": "2:10 pm on 9 May, 2023",
        "session_2": [
            {"speaker": "Bob", "dia_id": "D2:1", "text": "My dog Rex learned to swim at the lake."},
            {"speaker": "Ann", "dia_id": "D2:2", "text": "Wow, how old is Rex?"},
            {"speaker": "Bob", "dia_id": "D2:3", "text": "He is three years old."},
        ],
    },
    "qa": [
        {"question": "Which pottery class did Ann start?", "answer": "pottery", "evidence": ["D1:1"], "category": 4},
        {"question": "How old is Bob's dog Rex?", "answer": "three", "evidence": ["D2:3", "D2:1"], "category": 1},
        {"question": "What did Ann make in her pottery class?", "answer": "a bowl", "evidence": ["D1:3"],
         "category": 1},
    ],
}]


def test_locomo_objective_equals_the_locomo_evaluation(tmp_path):
    from ragbench.eval.locomo import evaluate_locomo
    from ragbench.retrieval.embedding import make_embedder

    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(LOCOMO))
    obj = make_objective(f"locomo:{path}", options={"dcs_weight": 0.1})
    assert obj.units() == ["conv-x#0", "conv-x#1", "conv-x#2"]
    cfg = with_overrides(RagbenchConfig(), HASHING)
    per = obj(cfg, obj.units(), ["DcsRecall@2", "DcsDenseRecall@2", "DcsTokens@1"])
    ref = evaluate_locomo(path, ks=(1, 2), embedder=make_embedder(cfg.embedding), config=cfg.dcs,
                          dcs_weight=0.1).per_question
    for measure, strategy in (("DcsRecall@2", "dcs"), ("DcsDenseRecall@2", "dcs_dense")):
        got = per[per.measure == measure]["value"].tolist()
        assert got == ref[ref.strategy == strategy]["recall@2"].tolist(), measure
    assert per[per.measure == "DcsTokens@1"]["value"].tolist() == \
        ref[ref.strategy == "dcs"]["tokens@1"].astype(float).tolist()
    with pytest.raises(ConfigError, match="DcsRecall@k"):
        obj.check_measure("recall@10")


def test_answers_objective_equals_the_golden_answer_evaluation():
    from ragbench.eval.answers import answer_config, evaluate_golden_answers
    from ragbench.eval.golden import load_golden

    cfg = answer_config(with_overrides(RagbenchConfig(), HASHING), "dense")
    cfg = with_overrides(cfg, {"retrieval.mode": "dense"})
    obj = make_objective("golden", "answers")
    units = obj.units()
    assert len(units) == len(load_golden().questions)
    measures = ["CitationPrecision", "RefusalAccuracy", "FactInAnswer", "ContextTokens"]
    per = obj(cfg, units, measures)
    ref = evaluate_golden_answers(load_golden(), cfg, modes=("dense",)).per_query
    ref = ref[ref.measure.isin(measures)]
    merged = per.merge(ref[["qid", "measure", "value"]], on=["qid", "measure"], suffixes=("", "_ref"))
    assert len(merged) == len(per) == len(ref)
    pd.testing.assert_series_equal(merged["value"], merged["value_ref"], check_names=False)
    means = per.groupby("measure")["value"].mean()
    assert 0 < means["RefusalAccuracy"] <= 1 and means["ContextTokens"] > 0


def test_chat_model_from_config(tmp_path):
    cfg = RagbenchConfig()
    assert chat_model_for(cfg).model_id.startswith("extractive")
    openai = chat_model_for(with_overrides(cfg, {"llm.model": "openai", "llm.temperature": 0.7,
                                                 "answer.llm_model": "m1"}))
    assert (openai.temperature, openai.model) == (0.7, "m1")
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF")
    llama = chat_model_for(with_overrides(cfg, {"llm.model": "openai", "llm.temperature": 0.5}), f"llama:{gguf}")
    assert llama.model_id == "llama.cpp:tiny@t=0.5" and llama.temperature == 0.5
    assert llama.seed == 42  # the config's seed (RagbenchConfig().seed) seeds llama's sampling
    assert chat_model_for(with_overrides(cfg, {"seed": 3}), f"llama:{gguf}").seed == 3


def test_grid_sampler_visits_every_combination_once(tmp_path, tiny_beir):
    require("optuna", "tune")
    space = {"bm25.stopwords": "choice[true, false]", "bm25.k1": "float[1.0, 1.5, step=0.5]"}
    spec = parse_spec(tiny_spec(tmp_path, tiny_beir, trials=4, sampler={"name": "grid"}, space=space), tmp_path)
    study = optimize(spec, prepare(spec), ":memory:", 4)
    seen = sorted((t.params["bm25.stopwords"], t.params["bm25.k1"]) for t in study.trials)
    assert seen == [(False, 1.0), (False, 1.5), (True, 1.0), (True, 1.5)]


def test_qa_objective_grades_every_question_once():
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "data" / "qa" / "sample.jsonl"
    obj = make_objective(f"qa:{path}", options={"few_shot": 0})
    assert obj.units()[:2] == ["qa-01", "qa-02"] and len(obj.units()) == 16
    per = obj(RagbenchConfig(), ["qa-01", "qa-05"], list(obj.report_measures))
    wide = per.pivot_table(index="qid", columns="measure", values="value")
    assert list(wide.index) == ["qa-01", "qa-05"]
    outcomes = ["Correct", "PossiblyCorrect", "DefinitelyWrong", "Indeterminate"]
    assert (wide[outcomes].sum(axis=1) == 1.0).all()  # exactly one outcome per question
    score = wide["Correct"] + 0.5 * wide["PossiblyCorrect"] - 2 * wide["DefinitelyWrong"]
    assert (wide["QaScore"] == score).all()
