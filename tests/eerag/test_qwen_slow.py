"""The real local model: Qwen2.5-Coder-1.5B-Instruct elects on a few EE-RAG benchmark cases (slow; skipped with a
reason when llama-cpp-python or the model is not installed — `make install-llm` installs both)."""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from ragbench.config import RagbenchConfig
from ragbench.eerag.pipeline import EeragPipeline
from ragbench.eerag.prompts import builtin_prompt
from ragbench.eval.datasets import load_eerag_bench
from ragbench.eval.eerag_bench import seed_store
from ragbench.llm.local import QWEN_FILE
from ragbench.retrieval.embedding import make_embedder
from ragbench.retrieval.retriever import retriever_from_store
from ragbench.store import KnowledgeStore

# Read before the autouse fixture points RAGBENCH_CACHE at a temporary folder.
QWEN = Path(os.environ.get("RAGBENCH_CACHE", Path.home() / ".cache" / "ragbench")) / "models" / QWEN_FILE


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python not installed "
                    "(make install-llm)")
@pytest.mark.skipif(not QWEN.is_file(), reason=f"Qwen GGUF not at {QWEN} (make install-llm)")
def test_qwen_follows_the_election_protocol(shared_data):
    from ragbench.llm.llama import LlamaCppChatModel

    cfg = RagbenchConfig()
    bench = load_eerag_bench(shared_data / "dcs_ee_rag" / "eedag_benchmark_v1.json")
    cases = {c.case_id: c for c in bench.cases}
    model = LlamaCppChatModel(model_path=QWEN, max_tokens=32, n_threads=2)
    embedder = make_embedder(cfg.embedding)
    with KnowledgeStore.open(":memory:") as store:
        seed_store(store, bench, embedder)
        retriever = retriever_from_store(store, "dense", cfg, embedder)
        prompt = builtin_prompt(cfg.eerag.elect_prompt).body
        got = {}
        for cid in ("bc-001", "bc-006", "bc-019"):
            pipe = EeragPipeline(store, retriever, model, cfg.eerag, embedder=embedder, system_prompt=prompt)
            res = pipe.run(cases[cid].query, answer=False)
            got[cid] = (res.election_status, res.elected_docs)
    assert got["bc-001"] == ("elected", list(cases["bc-001"].expected_slugs))
    assert got["bc-006"] == ("elected", list(cases["bc-006"].expected_slugs))
    # "capital of France" expects no retrieval; with eerag.elect@v1 Qwen still asks for an entry (docs/eerag.md), but
    # its reply follows the protocol: a shown id, never garbage.
    assert got["bc-019"][0] in ("declined", "elected")
