"""Fixtures of the tuning tests: a tiny BEIR folder whose BM25 ranks are known by hand, and experiment writers."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

#: Ten topics. Each query "the <word>" has one relevant document "<word> <word> alpha"; its distractor repeats
#: "the" four times next to the word once. Twenty filler documents without "the" make "the" informative. With
#: stopwords kept, "the" lifts the distractor above the relevant document (rank 2, nDCG@10 = 1/log2(3)); with
#: stopwords removed the relevant document is first (nDCG@10 = 1).
WORDS = ["apple", "banana", "cherry", "damson", "elder", "fig", "grape", "hazel", "iris", "juniper"]


def write_tiny_beir(folder: Path) -> Path:
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    with (folder / "corpus.jsonl").open("w") as f:
        for w in WORDS:
            f.write(json.dumps({"_id": f"r-{w}", "title": "", "text": f"{w} {w} alpha"}) + "\n")
            f.write(json.dumps({"_id": f"x-{w}", "title": "", "text": f"the the the the {w} beta"}) + "\n")
        for i in range(20):
            f.write(json.dumps({"_id": f"f{i:02d}", "title": "", "text": "zeta eta theta"}) + "\n")
    with (folder / "queries.jsonl").open("w") as f:
        for i, w in enumerate(WORDS):
            f.write(json.dumps({"_id": f"q{i}", "text": f"the {w}"}) + "\n")
    with (folder / "qrels" / "test.tsv").open("w") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for i, w in enumerate(WORDS):
            f.write(f"q{i}\tr-{w}\t1\n")
    return folder


@pytest.fixture
def tiny_beir(tmp_path: Path) -> Path:
    return write_tiny_beir(tmp_path / "tiny")


def tiny_spec(tmp_path: Path, data: Path, **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "name": "tiny",
        "dataset": f"beir:{data}:test",
        "base": {"retrieval": {"mode": "bm25", "k": 10}, "chunking": {"strategy": "none"},
                 "embedding": {"model": "hashing"}},
        "space": {"bm25.stopwords": "choice[true, false]"},
        "metrics": [{"nDCG@10": "maximize"}],
        "split": {"heldout": 0.3, "seed": 1},
        "sampler": {"name": "tpe", "seed": 3, "n_startup_trials": 4},
        "pruner": "none",
        "trials": 4,
    }
    spec.update(extra)
    return spec


def write_yaml(path: Path, data: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path
