"""Data-set loaders: BEIR layout, LoCoMo, EE-RAG benchmark and DCS messages, with their error paths."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragbench.errors import DataError
from ragbench.eval.datasets import load_beir


def _beir(root: Path, corpus=None, queries=None, qrels=None) -> Path:
    corpus = corpus if corpus is not None else [
        {"_id": "d1", "title": "T1", "text": "alpha"}, {"_id": "d2", "title": "", "text": "beta"}]
    queries = queries if queries is not None else [{"_id": "q1", "text": "what alpha"}, {"_id": "q2", "text": "b"},
                                                   {"_id": "q3", "text": "unused"}]
    qrels = qrels if qrels is not None else "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t2\nq2\td1\t0\n"
    (root / "qrels").mkdir(parents=True, exist_ok=True)
    (root / "corpus.jsonl").write_bytes(b"".join(
        (json.dumps(c).encode() if isinstance(c, dict) else c) + b"\n" for c in corpus))
    (root / "queries.jsonl").write_bytes(b"".join(
        (json.dumps(c).encode() if isinstance(c, dict) else c) + b"\n" for c in queries))
    (root / "qrels" / "test.tsv").write_bytes(qrels.encode() if isinstance(qrels, str) else qrels)
    return root


def test_load_beir_fixture(tmp_path):
    ds = load_beir(_beir(tmp_path / "mini"), "test")
    assert [d.doc_id for d in ds.corpus] == ["d1", "d2"]
    assert ds.corpus[0].title == "T1" and ds.corpus[0].text == "alpha"
    assert list(ds.queries["qid"]) == ["q1", "q2"]  # only queries of the split
    assert list(ds.queries["query"]) == ["what alpha", "b"]
    assert ds.qrels.values.tolist() == [["q1", "d1", 1], ["q2", "d2", 2], ["q2", "d1", 0]]
    assert ds.name == "mini" and ds.split == "test"


@pytest.mark.parametrize("kwargs, where", [
    ({"qrels": "query-id\tcorpus-id\tscore\nq9\td1\t1\n"}, "test.tsv:2"),
    ({"qrels": "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td9\t1\n"}, "test.tsv:3"),
    ({"qrels": "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td1\t1\n"}, "test.tsv:3"),
    ({"qrels": "query-id\tcorpus-id\tscore\nq1\td1\tx\n"}, "test.tsv:2"),
    ({"qrels": "query-id\tcorpus-id\tscore\nq1\td1\n"}, "test.tsv:2"),
    ({"qrels": b"query-id\tcorpus-id\tscore\nq1\td\xff1\t1\n"}, "test.tsv:2"),
    ({"corpus": [{"_id": "d1", "text": "a"}, {"_id": "d1", "text": "b"}]}, "corpus.jsonl:2"),
    ({"corpus": [{"_id": "d1", "text": "a"}, b"{not json"]}, "corpus.jsonl:2"),
    ({"corpus": [{"_id": "d1", "text": "a"}, b'{"_id": "d2", "text": "caf\xe9"}']}, "corpus.jsonl:2"),
    ({"corpus": [{"_id": "d1"}]}, "corpus.jsonl:1"),
    ({"queries": [{"_id": "q1", "text": "a"}, {"_id": "q1", "text": "b"}]}, "queries.jsonl:2"),
])
def test_load_beir_errors_name_file_and_line(tmp_path, kwargs, where):
    root = _beir(tmp_path / "bad", **kwargs)
    with pytest.raises(DataError) as err:
        load_beir(root, "test")
    assert where in str(err.value)
    assert "Fix" in str(err.value) or "UTF-8" in str(err.value) or "should be" in str(err.value)


def test_load_beir_missing_split(tmp_path):
    with pytest.raises(DataError, match="train.tsv"):
        load_beir(_beir(tmp_path / "m"), "train")


def test_load_beir_scifact_train(shared_data):
    ds = load_beir(shared_data / "beir_scifact", "train")
    assert len(ds.corpus) == 5183
    assert len(ds.queries) == 809
    assert len(ds.qrels) == 919
    assert ds.qrels["docno"].nunique() == 565
