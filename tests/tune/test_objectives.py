"""Objectives: the registry, the retrieval extras, and agreement of the DCS and EE-RAG objectives with the
evaluations they wrap (same numbers on the whole dataset)."""
from __future__ import annotations

import pandas as pd
import pytest

from ragbench.config import RagbenchConfig, with_overrides
from ragbench.errors import ConfigError, DataError
from ragbench.text import count_tokens
from ragbench.tune.objectives import OBJECTIVES, Objective, make_objective, register_objective

from .conftest import WORDS

TINY = {"retrieval.mode": "bm25", "chunking.strategy": "none", "embedding.model": "hashing"}


def test_retrieval_extras(tiny_beir):
    obj = make_objective(f"beir:{tiny_beir}:test")
    cfg = with_overrides(RagbenchConfig(), TINY)
    per = obj(cfg, ["q0", "q3"], ["RR@10", "latency_ms", "context_tokens"])
    assert list(per.columns) == ["qid", "measure", "value"]
    rr = per[per.measure == "RR@10"].set_index("qid")["value"]
    assert rr.to_dict() == {"q0": 0.5, "q3": 0.5}  # stopwords kept: the distractor ranks first
    tokens = per[per.measure == "context_tokens"].set_index("qid")["value"]
    # Only the two documents containing the word (or "the") can match; the k=10 context holds every hit.
    w = WORDS[3]
    hits = obj.system(cfg).search("the " + w, k=10)
    assert tokens["q3"] == sum(count_tokens(h.text) for h in hits)
    assert {h.doc_id for h in hits[:2]} == {f"r-{w}", f"x-{w}"}
    assert (per[per.measure == "latency_ms"]["value"] > 0).all()


def test_registry_plugs_in_a_new_objective(tmp_path):
    class Constant(Objective):
        name = "constant"

        def units(self):
            return ["a", "b", "c"]

        def check_measure(self, measure):
            if measure != "one":
                raise ConfigError("only 'one'")
            return measure

        def __call__(self, cfg, units, measures):
            return pd.DataFrame({"qid": list(units), "measure": "one", "value": 1.0})

    register_objective("constant", kinds=("golden",))(lambda ds, opts: Constant())
    try:
        obj = make_objective("golden", "constant")
        assert obj(RagbenchConfig(), ["a"], ["one"])["value"].tolist() == [1.0]
        with pytest.raises(ConfigError, match="objective 'constant' takes datasets of kind golden"):
            make_objective("eerag:x.json", "constant")
    finally:
        OBJECTIVES.pop("constant")
    with pytest.raises(ConfigError, match="unknown objective 'nope'"):
        make_objective("golden", "nope")
    with pytest.raises(DataError, match="does not exist"):
        make_objective(f"eerag:{tmp_path / 'missing.json'}")


def test_dcs_objective_matches_thread_recovery(shared_data):
    from ragbench.dcs.classifier import make_classifier
    from ragbench.eval.threads import evaluate_threads, load_messages

    path = shared_data / "dcs_ee_rag" / "dcs_test_messages.json"
    obj = make_objective(f"dcs-threads:{path}")
    cfg = RagbenchConfig()
    per = obj(cfg, obj.units(), ["purity", "context_share", "context_size"])
    report = evaluate_threads(load_messages(path), make_classifier(cfg.dcs.profile), cfg.dcs)
    means = per.groupby("measure")["value"].mean()
    assert means["purity"] == pytest.approx(report.purity, abs=1e-12)
    assert means["context_share"] == pytest.approx(report.context_share, abs=1e-12)
    assert means["context_size"] >= 0 and per[per.measure == "purity"]["qid"].nunique() == report.messages


def test_eerag_objective_matches_the_benchmark(shared_data):
    from ragbench.eval.eerag_bench import run_bench

    path = shared_data / "dcs_ee_rag" / "eedag_benchmark_v1.json"
    cfg = with_overrides(RagbenchConfig(), {"embedding.model": "hashing"})
    obj = make_objective(f"eerag:{path}")
    per = obj(cfg, obj.units(), ["ElectionF1", "CandidateRecall", "context_tokens"])
    ref = run_bench(path, cfg=cfg)
    for measure in ("ElectionF1", "CandidateRecall"):
        mine = per[per.measure == measure].set_index("qid")["value"].sort_index()
        theirs = ref.per_query[ref.per_query.measure == measure].set_index("qid")["value"].sort_index()
        assert mine.to_dict() == theirs.to_dict()
    assert per[per.measure == "context_tokens"]["value"].mean() == pytest.approx(ref.summary["context_tokens"])
