"""TREC run files: ranks written from 1, read back from 0; bad input leaves no file."""
from __future__ import annotations

import pandas as pd
import pytest

from ragbench.errors import DataError, SchemaError
from ragbench.retrieval.trec import read_trec_run, write_trec_run


def run_df() -> pd.DataFrame:
    return pd.DataFrame({"qid": ["q2", "q1", "q1"], "docno": ["d9", "d3", "d1"],
                         "score": [0.5, 1.25, 2.0], "rank": [0, 1, 0]})


def test_write_exact_lines_and_read_back(tmp_path):
    p = write_trec_run(run_df(), tmp_path / "runs" / "a.run", tag="bm25")
    assert p.read_text().splitlines() == ["q1 Q0 d1 1 2.0 bm25", "q1 Q0 d3 2 1.25 bm25", "q2 Q0 d9 1 0.5 bm25"]
    back = read_trec_run(p)
    assert list(back.columns) == ["qid", "docno", "score", "rank"]
    assert back.to_dict("records") == [
        {"qid": "q1", "docno": "d1", "score": 2.0, "rank": 0},
        {"qid": "q1", "docno": "d3", "score": 1.25, "rank": 1},
        {"qid": "q2", "docno": "d9", "score": 0.5, "rank": 0}]


def test_scores_round_trip_exactly(tmp_path):
    df = pd.DataFrame({"qid": ["q"], "docno": ["d"], "score": [0.1 + 0.2], "rank": [0]})
    assert read_trec_run(write_trec_run(df, tmp_path / "x.run"))["score"][0] == 0.1 + 0.2


@pytest.mark.parametrize("change, error", [
    ({"docno": ["a b", "d3", "d1"]}, DataError),
    ({"score": [float("nan"), 1.0, 2.0]}, DataError),
    ({"rank": [-1, 1, 0]}, SchemaError),
])
def test_bad_rows_write_nothing(tmp_path, change, error):
    df = run_df().assign(**change)
    with pytest.raises(error):
        write_trec_run(df, tmp_path / "bad.run")
    assert list(tmp_path.iterdir()) == []


def test_missing_column_and_bad_tag(tmp_path):
    with pytest.raises(SchemaError, match="missing"):
        write_trec_run(run_df().drop(columns=["score"]), tmp_path / "a.run")
    with pytest.raises(DataError, match="tag"):
        write_trec_run(run_df(), tmp_path / "a.run", tag="my tag")
    assert list(tmp_path.iterdir()) == []


def test_read_rejects_malformed_files(tmp_path):
    (tmp_path / "a.run").write_text("q1 Q0 d1 1 2.0\n")
    with pytest.raises(DataError, match=":1: expected 6 fields"):
        read_trec_run(tmp_path / "a.run")
    (tmp_path / "b.run").write_text("q1 Q0 d1 0 2.0 t\n")
    with pytest.raises(DataError, match="start at 1"):
        read_trec_run(tmp_path / "b.run")
    (tmp_path / "c.run").write_text("q1 Q0 d1 x 2.0 t\n")
    with pytest.raises(DataError, match="integer"):
        read_trec_run(tmp_path / "c.run")
    with pytest.raises(DataError, match="does not exist"):
        read_trec_run(tmp_path / "none.run")
    (tmp_path / "d.run").write_bytes(b"q1 Q0 d1 1 2.0 t\nq1 Q0 d\xe92 2 1.0 t\n")
    with pytest.raises(DataError, match=r"d\.run:2: not UTF-8 text \(byte 0xe9 at offset 24\)"):
        read_trec_run(tmp_path / "d.run")
