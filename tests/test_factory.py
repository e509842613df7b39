"""The one config → stage factory: the tuner and the CLI build identical systems for every configuration the
experiment search spaces can produce, and ``get_params()`` reads back exactly the config's values."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragbench.config import RagbenchConfig, with_overrides
from ragbench.errors import ConfigError
from ragbench.retrieval.bm25 import BM25Retriever
from ragbench.retrieval.chunking import SentenceChunker, WordWindowChunker
from ragbench.retrieval.embedding_cache import CachedEmbedder
from ragbench.retrieval.factory import (IndexedParts, make_chunker, make_embedder, make_part, make_retriever,
                                        normalize_mode)
from ragbench.retrieval.fusion import HybridRetriever
from ragbench.retrieval.hashing_embedder import HashingEmbedder
from ragbench.retrieval.lsh import LshRetriever
from ragbench.provenance import provenance
from ragbench.schema import Document
from ragbench.stages import embedders_of
from ragbench.tracking import run_params
from ragbench.tune.objectives import RetrievalObjective
from ragbench.tune.space import Param, TuneSpec, parse_spec
from ragbench.config import read_yaml_mapping

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"
DOCS = [Document(f"d{i}", f"Document {i} talks about {w} and leave policy number {i}. " * 3, title=f"T{i}")
        for i, w in enumerate(["holidays", "salaries", "laptops", "parking"])]
QUERIES = pd.DataFrame({"qid": ["q1"], "query": ["leave policy"]})
QRELS = pd.DataFrame({"qid": ["q1"], "docno": ["d1"], "label": [1]})
#: Model-free embeddings without the disk cache keep every example fast and local.
FAST = {"embedding.model": "hashing", "embedding.cache": False}


def _specs() -> list[TuneSpec]:
    specs = []
    for path in sorted(EXPERIMENTS.glob("*.yaml")):
        data = read_yaml_mapping(path, "experiment")
        if "space" in data:  # batch.yaml is not an experiment
            specs.append(parse_spec(data, EXPERIMENTS, name=path.stem))
    return specs


SPECS = _specs()


def _value(p: Param) -> st.SearchStrategy[Any]:
    if p.kind == "int":
        return st.integers(int(p.low), int(p.high))  # type: ignore[arg-type]
    if p.kind == "float":
        return st.floats(float(p.low), float(p.high), allow_nan=False)  # type: ignore[arg-type]
    return st.sampled_from(list(p.choices))


@st.composite
def configs(draw: st.DrawFn) -> RagbenchConfig:
    """A base configuration of one experiment file with a point of its space, plus the retrieval knobs every
    experiment may set in its base (mode, hybrid vector half, adaptive fusion, the seeds)."""
    spec = draw(st.sampled_from(SPECS))
    params = {p.name: draw(_value(p)) for p in spec.space}
    params.update({
        "retrieval.mode": draw(st.sampled_from(["bm25", "dense", "lsh", "hybrid"])),
        "fusion.dense_part": draw(st.sampled_from(["dense", "lsh"])),
        "fusion.adaptive": draw(st.sampled_from([0.0, 0.5, 2.0])),
        "fusion.rerank": draw(st.booleans()),
        "seed": draw(st.integers(0, 5)),
        "lsh.seed": draw(st.sampled_from([None, 7])),
        **FAST})
    return with_overrides(spec.config_for({}), params)


def test_every_experiment_space_is_read() -> None:
    assert {s.name for s in SPECS} >= {"golden_fusion", "golden_lsh", "golden_chunking"}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cfg=configs())
def test_tuner_and_cli_build_identical_systems(cfg: RagbenchConfig) -> None:
    tuner = RetrievalObjective(DOCS, QUERIES, QRELS).system(cfg)
    cli = make_retriever(cfg.retrieval.mode, cfg)
    assert tuner.param_signature() == cli.param_signature()
    assert tuner.get_params().keys() == cli.get_params().keys()
    if isinstance(cli, HybridRetriever):
        f = cfg.fusion
        assert {k: cli.get_params()[k] for k in ("rrf_k", "candidate_k", "keyword_weight", "dense_weight",
                                                 "adaptive", "rerank")} == {
            "rrf_k": f.rrf_k, "candidate_k": f.candidate_k, "keyword_weight": f.keyword_weight,
            "dense_weight": f.dense_weight, "adaptive": f.adaptive, "rerank": f.rerank}
    lsh = [r for r in (cli, getattr(cli, "vector", None)) if isinstance(r, LshRetriever)]
    for r in lsh:  # cfg.seed seeds the hyperplanes unless lsh.seed is set
        assert r.seed == (cfg.lsh.seed if cfg.lsh.seed is not None else cfg.seed)


def test_get_params_reads_constructor_arguments_under_config_names() -> None:
    cfg = with_overrides(RagbenchConfig(), {**FAST, "bm25.k1": 1.2, "fusion.keyword_weight": 0.3,
                                            "fusion.adaptive": 1.5, "fusion.dense_part": "lsh", "lsh.bits": 6,
                                            "embedding.hashing_dim": 64})
    hy = make_retriever("hybrid", cfg)
    params = hy.get_params()
    assert isinstance(hy.keyword, BM25Retriever) and isinstance(hy.vector, LshRetriever)
    assert (params["keyword__k1"], params["keyword_weight"], params["adaptive"], params["vector__bits"],
            params["vector__seed"], params["vector__embedder__hashing_dim"]) == (1.2, 0.3, 1.5, 6, 42, 64)
    assert hy.get_params(deep=False).keys() == {"keyword", "vector", "rrf_k", "candidate_k", "rerank",
                                                  "rerank_weight", "keyword_weight", "dense_weight", "adaptive",
                                                  "method"}
    assert repr(make_chunker(cfg.chunking)) == "WordWindowChunker(words=40, overlap=0.25)"
    sentences = make_chunker(with_overrides(cfg, {"chunking.strategy": "sentences"}).chunking)
    assert isinstance(sentences, SentenceChunker)
    assert sentences.get_params() == {"max_chars": 600, "char_overlap": 100}
    cached = make_embedder(with_overrides(cfg, {"embedding.cache": True, "embedding.cache_path": "x.db"}).embedding)
    assert isinstance(cached, CachedEmbedder)
    assert cached.param_signature() == "CachedEmbedder(inner=HashingEmbedder(hashing_dim=64), cache_path='x.db')"


def test_precision_is_a_config_field_and_old_model_names_still_work() -> None:
    base = RagbenchConfig().embedding
    assert make_embedder(with_overrides(RagbenchConfig(), {"embedding.precision": "int8",
                                                           "embedding.cache": False}).embedding
                         ).get_params()["precision"] == "int8"
    old = with_overrides(RagbenchConfig(), {"embedding.model": "minilm-fp32", "embedding.cache": False})
    assert make_embedder(old.embedding).get_params()["precision"] == "fp32"
    clash = with_overrides(old, {"embedding.precision": "int8"})
    with pytest.raises(ConfigError, match="embedding.precision"):
        make_embedder(clash.embedding)
    assert base.precision == "auto"


def test_indexed_parts_are_shared_between_configs_that_agree() -> None:
    parts = IndexedParts(DOCS)
    a = with_overrides(RagbenchConfig(), {**FAST, "fusion.rrf_k": 10})
    b = with_overrides(a, {"fusion.rrf_k": 90, "fusion.adaptive": 1.0})
    ha, hb = parts.system(a), parts.system(b)
    assert isinstance(ha, HybridRetriever) and isinstance(hb, HybridRetriever)
    assert ha.keyword is hb.keyword and ha.vector is hb.vector and ha is not hb
    assert (ha.rrf_k, hb.rrf_k, hb.adaptive) == (10, 90, 1.0)
    c = with_overrides(a, {"chunking.words": 8})
    assert parts.system(c).keyword is not ha.keyword
    assert normalize_mode("KEYWORD") == "bm25"
    assert isinstance(make_chunker(c.chunking), WordWindowChunker)
    assert isinstance(parts.part(a, "dense").get_params()["embedder"], HashingEmbedder)


def _plain_system(queries):  # a callable system has no parameters: it is named by its function
    return queries


def test_stage_signatures_reach_provenance_and_mlflow_params() -> None:
    cfg = with_overrides(RagbenchConfig(), {**FAST, "embedding.hashing_dim": 64})
    hy = make_retriever("hybrid", cfg)
    assert isinstance(hy, HybridRetriever)
    assert hy.param_signature() == (
        "HybridRetriever(keyword=BM25Retriever(k1=1.5, b=0.75, stopwords=False, stopword_list='source', "
        "stemmer='english', method='lucene', delta=0.5, rm3=False, rm3_docs=10, rm3_terms=10, rm3_weight=0.5), "
        "vector=DenseRetriever(embedder=HashingEmbedder(hashing_dim=64)), rrf_k=60, candidate_k=100, rerank=False, "
        "rerank_weight=0.1, keyword_weight=1.0, dense_weight=1.0, adaptive=0.0, method='rrf')")
    meta = provenance(cfg, "data", None, stages={"hybrid": hy, "plain": _plain_system})
    assert meta["stages"] == {"hybrid": hy.param_signature(), "plain": "_plain_system"}
    assert "stages" not in provenance(cfg)
    params = run_params(cfg, stages={"hybrid": hy, "named": "BM25Retriever(k1=2)"})
    assert (params["stage.hybrid"], params["stage.named"]) == (hy.param_signature(), "BM25Retriever(k1=2)")
    assert params["fusion.keyword_weight"] == "1.0"
    assert embedders_of(hy) == [hy.vector.get_params()["embedder"]]
    assert embedders_of(_plain_system) == []


def test_the_config_seed_reaches_every_seeded_part() -> None:
    cfg = with_overrides(RagbenchConfig(), {**FAST, "seed": 7})
    assert make_part("lsh", cfg).get_params()["seed"] == 7
    assert make_part("ann", cfg).get_params()["seed"] == 7  # constructing it needs no faiss; indexing would
    assert make_part("lsh", with_overrides(cfg, {"lsh.seed": 3})).get_params()["seed"] == 3
    assert make_part("ann", with_overrides(cfg, {"ann.seed": 5})).get_params()["seed"] == 5


def test_stage_signatures_equal_those_of_the_stages_a_run_builds():
    """What evaluating commands log as `stage.<name>`: the signatures of the stages built from the same config, with
    an embedder only where one is built (a mode needs it, or the run passes the one it used)."""
    from ragbench.retrieval.factory import stage_signatures
    from ragbench.retrieval.retriever import retriever_from_store
    from ragbench.store import KnowledgeStore

    cfg = with_overrides(RagbenchConfig(), {**FAST, "embedding.hashing_dim": 32, "lsh.tables": 3})
    embedder = make_embedder(cfg.embedding)
    with KnowledgeStore.open(":memory:") as store:
        store.ingest(DOCS, make_chunker(cfg.chunking), embedder)
        built = {m: retriever_from_store(store, m, cfg, embedder).param_signature() for m in ("bm25", "lsh")}
    sigs = stage_signatures(cfg, ["keyword", "lsh"], chunker=True)
    assert sigs == {"chunker": make_chunker(cfg.chunking).param_signature(),
                    "embedder": "HashingEmbedder(hashing_dim=32)", **built}
    assert "tables=3" in sigs["lsh"] and "HashingEmbedder(hashing_dim=32)" in sigs["lsh"]
    assert stage_signatures(cfg, ["bm25"]) == {"bm25": built["bm25"]}
    assert stage_signatures(cfg, embedder=False) == {}
    passed = HashingEmbedder(hashing_dim=8)
    assert stage_signatures(cfg, embedder=passed) == {"embedder": "HashingEmbedder(hashing_dim=8)"}
    assert stage_signatures(cfg, embedder=True) == {"embedder": "HashingEmbedder(hashing_dim=32)"}
