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


# ----------------------------------------------------------------------------------------------- LoCoMo
from ragbench.eval.datasets import load_dcs_messages, load_eerag_bench, load_locomo  # noqa: E402


def _locomo_sample(**over):
    sample = {
        "sample_id": "conv-1",
        "conversation": {
            "speaker_a": "Ann", "speaker_b": "Bob",
            "session_1_date_time": "1:56 pm on 8 May, 2023", "session_3_date_time": "unused",
            "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "hi"},
                          {"speaker": "Bob", "dia_id": "D1:2", "text": "hello"}],
            "session_2_date_time": "9 May", "session_2": [{"speaker": "Ann", "dia_id": "D2:1", "text": "again"}],
        },
        "qa": [{"question": "q?", "answer": 7, "evidence": ["D1:2; D:2:01", "D"], "category": 4},
               {"question": "adv?", "adversarial_answer": "no", "evidence": ["D9:9"], "category": 5},
               {"question": "none?", "answer": "x", "evidence": [], "category": 3}],
    }
    sample.update(over)
    return sample


def test_load_locomo_fixture(tmp_path):
    p = tmp_path / "l.json"
    p.write_text(json.dumps([_locomo_sample()]))
    (conv,) = load_locomo(p)
    assert conv.sample_id == "conv-1" and conv.speakers == ("Ann", "Bob")
    assert [(t.dia_id, t.session, t.date) for t in conv.turns] == [
        ("D1:1", 1, "1:56 pm on 8 May, 2023"), ("D1:2", 1, "1:56 pm on 8 May, 2023"), ("D2:1", 2, "9 May")]
    q1, q2, q3 = conv.qa
    assert q1.evidence == ("D1:2", "D2:1") and q1.answer == "7" and q1.unresolved == ()
    assert q2.answer == "no" and q2.unresolved == ("D9:9",) and q2.category == 5
    assert q3.evidence == ()
    assert list(conv.turns_df().columns) == ["dia_id", "speaker", "text", "session", "date"]


@pytest.mark.parametrize("payload, match", [
    ({"not": "a list"}, "expected a JSON list"),
    ([{"sample_id": "x"}], "expected keys"),
    ([_locomo_sample(), _locomo_sample()], "duplicate sample_id"),
    ([_locomo_sample(qa=[{"question": "q", "category": "x", "evidence": []}])], "not an integer"),
    ([_locomo_sample(qa=[{"question": "q", "category": 1, "evidence": "D1:1"}])], "should be a list"),
])
def test_load_locomo_errors(tmp_path, payload, match):
    p = tmp_path / "l.json"
    p.write_text(json.dumps(payload))
    with pytest.raises(DataError, match=match):
        load_locomo(p)


def test_load_json_reports_bad_bytes_and_syntax(tmp_path):
    p = tmp_path / "x.json"
    p.write_bytes(b'[\n{"a": "\xff"}]')
    with pytest.raises(DataError, match=r"x\.json:2: not UTF-8 text \(byte 0xff at offset 9\)"):
        load_locomo(p)
    p.write_text('[\n{"a": }]')
    with pytest.raises(DataError, match="x.json:2: invalid JSON"):
        load_locomo(p)


def test_load_locomo_dev(shared_data):
    convs = load_locomo(shared_data / "locomo" / "locomo_dev.json")
    assert [c.sample_id for c in convs] == ["conv-26", "conv-30", "conv-41", "conv-42", "conv-43"]
    assert sum(len(c.turns) for c in convs) == 2760
    assert sum(len(c.qa) for c in convs) == 999
    conv26 = convs[0]
    assert len({t.session for t in conv26.turns}) == 19  # despite 35 date keys
    # 'D8:6; D9:17' is split into two resolvable ids.
    assert any(q.evidence[:2] == ("D8:6", "D9:17") for q in conv26.qa)
    # The only well-formed id without a turn in the dev split is conv-42's D10:19.
    assert [(c.sample_id, u) for c in convs for q in c.qa for u in q.unresolved] == [("conv-42", "D10:19")]


# ------------------------------------------------------------------------------------------ EE-RAG / DCS


def test_load_eerag_bench_fixture_and_errors(tmp_path):
    good = {"name": "b", "version": "1", "knowledge_entries": [
        {"slug": "s1", "request": "r", "text_response": "t", "summary": "sum"}],
        "benchmark_cases": [{"id": "c1", "query": "q", "expected_slugs": ["s1"], "expect_retrieval": True,
                             "expected_answer_hint": "h"},
                            {"id": "c2", "query": "2+2", "expected_slugs": [], "expect_retrieval": False}]}
    p = tmp_path / "b.json"
    p.write_text(json.dumps(good))
    b = load_eerag_bench(p)
    assert b.entries[0].summary == "sum"
    assert [(c.case_id, c.expected_slugs, c.expect_retrieval, c.expected_answer_hint) for c in b.cases] == [
        ("c1", ("s1",), True, "h"), ("c2", (), False, None)]
    bad = dict(good, benchmark_cases=[{"id": "c1", "query": "q", "expected_slugs": ["nope"]}])
    p.write_text(json.dumps(bad))
    with pytest.raises(DataError, match="unknown slug"):
        load_eerag_bench(p)
    p.write_text(json.dumps(dict(good, knowledge_entries=good["knowledge_entries"] * 2)))
    with pytest.raises(DataError, match="duplicate slug"):
        load_eerag_bench(p)


def test_load_dcs_messages_fixture_and_errors(tmp_path):
    p = tmp_path / "m.json"
    p.write_text(json.dumps([
        {"id": "m2", "content": "b", "timestamp": "2025-01-15T09:05:00Z", "thread": "t1", "notes": ""},
        {"id": "m1", "content": "a", "timestamp": "2025-01-15T09:00:00Z", "thread": "t1"}]))
    df = load_dcs_messages(p)
    assert list(df["id"]) == ["m1", "m2"] and list(df.columns) == ["id", "content", "timestamp", "thread", "notes"]
    p.write_text(json.dumps([{"id": "m1", "content": "a", "timestamp": "soon", "thread": "t"}]))
    with pytest.raises(DataError, match="ISO-8601"):
        load_dcs_messages(p)
    p.write_text(json.dumps([{"id": "m1", "content": "a"}]))
    with pytest.raises(DataError, match="expected id, content, timestamp, thread"):
        load_dcs_messages(p)


def test_shared_eerag_and_dcs(shared_data):
    b = load_eerag_bench(shared_data / "dcs_ee_rag" / "eedag_benchmark_v1.json")
    assert (len(b.entries), len(b.cases)) == (26, 20)
    assert [c.case_id for c in b.cases if not c.expect_retrieval] == ["bc-018", "bc-019", "bc-020"]
    df = load_dcs_messages(shared_data / "dcs_ee_rag" / "dcs_test_messages.json")
    assert len(df) == 80 and df["thread"].value_counts()["auth-bug"] == 13


def test_files_with_a_byte_order_mark_load_as_without(tmp_path):
    want = load_beir(_beir(tmp_path / "plain" / "mini"), "test")
    root = _beir(tmp_path / "bom" / "mini")
    for f in (root / "corpus.jsonl", root / "queries.jsonl", root / "qrels" / "test.tsv"):
        f.write_bytes(b"\xef\xbb\xbf" + f.read_bytes())
    got = load_beir(root, "test")
    assert got.corpus == want.corpus
    assert got.queries.equals(want.queries) and got.qrels.equals(want.qrels)
    p = tmp_path / "locomo.json"
    p.write_bytes(b"\xef\xbb\xbf" + json.dumps([_locomo_sample()]).encode())
    assert [c.sample_id for c in load_locomo(p)] == ["conv-1"]


def test_a_streamed_beir_file_names_the_line_of_a_bad_byte_or_a_nul(tmp_path):
    root = _beir(tmp_path / "mini")
    corpus = root / "corpus.jsonl"
    good = corpus.read_bytes()
    corpus.write_bytes(good + b'{"_id": "x", "title": "", "text": "caf\xe9"}\n')
    line = good.count(b"\n") + 1
    with pytest.raises(DataError, match=rf"corpus\.jsonl:{line}: not UTF-8 text \(byte 0xe9 at offset 38\)"):
        load_beir(root, "test")
    corpus.write_bytes(good + b'{"_id": "x", "title": "", "text": "a\x00b"}\n')
    with pytest.raises(DataError, match=rf"corpus\.jsonl:{line}: a binary file \(NUL byte at offset 36\)"):
        load_beir(root, "test")
