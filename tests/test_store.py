"""Knowledge store: ingest idempotence, versions, deletes, embeddings, bad files, bad input, crash safety."""
from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Sequence

import numpy as np
import pytest

from ragbench.errors import DataError, StoreError
from ragbench.retrieval.base import Embedder
from ragbench.retrieval.chunking import WholeDocumentChunker, WordWindowChunker
from ragbench.schema import PUBLIC_ACL, Acl, Document
from ragbench.store import APPLICATION_ID, SCHEMA_VERSION, KnowledgeStore, read_text_file
from ragbench.text import content_hash

ROOT = Path(__file__).resolve().parents[1]


class FakeEmbedder(Embedder):
    """3-d vectors from simple text statistics; records the size of every call; can fail on a chosen call."""

    model_id = "fake-3d"
    dim = 3

    def __init__(self, fail_on_call: int | None = None, sha: str = "f" * 64) -> None:
        self.calls: list[int] = []
        self.fail_on_call = fail_on_call
        self._sha = sha

    @property
    def sha256(self) -> str:
        return self._sha

    def embed(self, texts: Sequence[str], show_progress: bool = False) -> np.ndarray:
        self.calls.append(len(texts))
        if self.fail_on_call is not None and len(self.calls) == self.fail_on_call:
            raise RuntimeError("embedding server went away")
        v = np.array([[len(t), t.count("w") + 1.0, 1.0] for t in texts], dtype=np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def doc(i: int, n_words: int = 100, prefix: str = "w", **kw) -> Document:
    return Document(f"doc{i:03d}", " ".join(f"{prefix}{i}x{j}" for j in range(n_words)), **kw)


@pytest.fixture
def store(tmp_path):
    with KnowledgeStore.open(tmp_path / "kb.db") as s:
        yield s


def assert_consistent(store: KnowledgeStore, chunker) -> None:
    """Every document has exactly its complete chunk set; no orphan chunks or embeddings."""
    assert store.query("PRAGMA integrity_check")[0][0] == "ok"
    assert store.query("PRAGMA foreign_key_check") == []
    assert store.query("SELECT COUNT(*) FROM chunks WHERE doc_id NOT IN (SELECT doc_id FROM documents)")[0][0] == 0
    for d in store.documents():
        expected = chunker.chunk(Document(d.doc_id, d.text))
        assert store.chunks([d.doc_id]) == expected


# ------------------------------------------------------------------------------------------ opening

def test_open_creates_a_marked_wal_store(tmp_path) -> None:
    path = tmp_path / "sub" / "kb.db"
    lazy = KnowledgeStore(path)
    assert not path.exists()  # the constructor stores the path only
    with lazy as s:
        assert s.get_meta("schema_version") == str(SCHEMA_VERSION)
        assert s.schema_version("core") == SCHEMA_VERSION
        assert s.query("PRAGMA journal_mode")[0][0] == "wal"
    header = path.read_bytes()[:100]
    assert int.from_bytes(header[68:72], "big") == APPLICATION_ID
    assert int.from_bytes(header[60:64], "big") == SCHEMA_VERSION
    with KnowledgeStore.open(path) as again:
        assert len(again) == 0


def test_memory_store_works() -> None:
    with KnowledgeStore.open(":memory:") as s:
        report = s.ingest([doc(1)], WordWindowChunker())
        assert (report.added, report.chunks, len(s)) == (1, 3, 1)


def test_empty_file_is_initialised_as_a_store(tmp_path) -> None:
    path = tmp_path / "empty.db"
    path.write_bytes(b"")
    with KnowledgeStore.open(path) as s:
        s.set_meta("k", "v")
        assert s.get_meta("k") == "v"


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir()}


@pytest.mark.parametrize("content, match", [
    (bytes(range(256)) * 40, "not a SQLite database"),
    (b"title,text\nhello,world\n", "not a SQLite database"),
    (b"SQLite format 3\x00" + bytes(20), "not a SQLite database"),  # truncated header
])
def test_non_sqlite_files_are_refused_and_left_unchanged(tmp_path, content: bytes, match: str) -> None:
    path = tmp_path / "data.db"
    path.write_bytes(content)
    before = _files(tmp_path)
    with pytest.raises(StoreError, match=match) as err:
        KnowledgeStore.open(path)
    assert "Fix:" in str(err.value) and str(path) in str(err.value)
    assert _files(tmp_path) == before  # same bytes, and no -wal / -shm created


@pytest.mark.parametrize("journal", ["delete", "wal"])
def test_another_programs_sqlite_database_is_refused_and_left_unchanged(tmp_path, journal: str) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA journal_mode = {journal}")
    conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO customers VALUES (1, 'Ada')")
    conn.commit()
    conn.close()
    before = _files(tmp_path)
    with pytest.raises(StoreError, match="another program's SQLite database") as err:
        KnowledgeStore.open(path)
    assert "Fix:" in str(err.value)
    assert _files(tmp_path) == before


def test_store_of_a_newer_schema_is_refused_unchanged(tmp_path) -> None:
    path = tmp_path / "kb.db"
    KnowledgeStore.open(path).close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="schema version 99"):
        KnowledgeStore.open(path)
    assert path.read_bytes() == before


def test_directory_path_is_refused(tmp_path) -> None:
    with pytest.raises(StoreError, match="is a directory"):
        KnowledgeStore.open(tmp_path)


# ------------------------------------------------------------------------------------------ ingest

def test_ingest_stores_documents_chunks_and_fields(store) -> None:
    acl = Acl.make(["HR"], ["People"], "Confidential")
    docs = [doc(1, title="One", source="a.txt", acl=acl, metadata={"lang": "en", "n": [1, 2]}), doc(2, 50)]
    report = store.ingest(docs, WordWindowChunker())
    assert (report.added, report.updated, report.unchanged, report.chunks, report.errors) == (2, 0, 0, 5, [])
    one = store.get_document("doc001")
    assert (one.title, one.source, one.version, one.acl, one.metadata) == ("One", "a.txt", 1, acl,
                                                                            {"lang": "en", "n": [1, 2]})
    assert one.sha256 == content_hash(docs[0].text) and one.text == docs[0].text
    assert store.get_document("doc002").acl == PUBLIC_ACL
    assert store.doc_ids() == ["doc001", "doc002"] and len(store) == 2 and "doc002" in store
    chunks = store.chunks()
    assert [(c.doc_id, c.seq) for c in chunks] == [("doc001", 0), ("doc001", 1), ("doc001", 2),
                                                   ("doc002", 0), ("doc002", 1)]
    assert chunks == WordWindowChunker().chunk(docs[0]) + WordWindowChunker().chunk(docs[1])
    assert store.chunks(["doc002", "nope"]) == chunks[3:]
    assert store.get_chunk(chunks[4].chunk_id) == chunks[4] and store.get_chunk("nope") is None
    assert store.titles() == {"doc001": "One", "doc002": ""}
    assert store.acls() == {"doc001": acl, "doc002": PUBLIC_ACL}
    assert store.get_document("missing") is None and store.acl_of("missing") is None


def test_second_ingest_is_a_no_op(store) -> None:
    docs = [doc(i) for i in range(5)]
    emb = FakeEmbedder()
    store.ingest(docs, WordWindowChunker(), emb)
    stamps = {d.doc_id: d.updated_at for d in store.documents()}
    changes = store._conn.total_changes
    report = store.ingest(docs, WordWindowChunker(), emb)
    assert (report.added, report.updated, report.unchanged, report.chunks) == (0, 0, 5, 0)
    assert store._conn.total_changes == changes  # nothing rewritten
    assert emb.calls == [15]  # the second ingest embedded nothing
    assert {d.doc_id: d.updated_at for d in store.documents()} == stamps
    # whitespace-only edits have the same content hash: still unchanged
    respaced = [Document(d.doc_id, d.text.replace(" ", "  \n")) for d in docs]
    assert store.ingest(respaced, WordWindowChunker(), emb).unchanged == 5


def test_changed_text_becomes_version_2_replacing_chunks_and_embeddings(store) -> None:
    emb = FakeEmbedder()
    store.ingest([doc(1), doc(2)], WordWindowChunker(), emb)
    old_ids = {c.chunk_id for c in store.chunks(["doc001"])}
    created = store.get_document("doc001").created_at
    new = doc(1, 60, prefix="v")
    report = store.ingest([new, doc(2)], WordWindowChunker(), emb)
    assert (report.added, report.updated, report.unchanged, report.chunks) == (0, 1, 1, 2)
    d1 = store.get_document("doc001")
    assert (d1.version, d1.text, d1.created_at) == (2, new.text, created)
    new_chunks = store.chunks(["doc001"])
    assert new_chunks == WordWindowChunker().chunk(new)
    assert not old_ids & {c.chunk_id for c in new_chunks}
    assert store.query(f"SELECT COUNT(*) FROM chunks WHERE chunk_id IN ({','.join('?' * len(old_ids))})",
                       list(old_ids))[0][0] == 0
    ids, vecs = store.embeddings("fake-3d")
    assert set(ids) == {c.chunk_id for c in store.chunks()} and vecs.shape == (5, 3)
    assert emb.calls == [6, 2]


def test_a_surviving_chunk_keeps_its_embedding_and_summary(store) -> None:
    emb = FakeEmbedder()
    base = doc(1, 100)
    store.ingest([base], WordWindowChunker(), emb, summarizer=lambda c: f"S{c.seq}")
    before = store.chunks(["doc001"])
    edited = Document("doc001", base.text.rsplit(" ", 1)[0] + " zzz")  # only the last window changes
    store.ingest([edited], WordWindowChunker(), emb, summarizer=lambda c: f"T{c.seq}")
    after = store.chunks(["doc001"])
    assert [c.chunk_id for c in after[:2]] == [c.chunk_id for c in before[:2]]
    assert after[2].chunk_id != before[2].chunk_id
    assert [c.summary for c in after] == ["S0", "S1", "T2"]
    assert emb.calls == [3, 1]  # only the new window was embedded
    assert store.get_document("doc001").version == 2


def test_metadata_only_change_updates_fields_without_new_version(store) -> None:
    store.ingest([doc(1)], WordWindowChunker())
    chunks = store.chunks()
    secret = Acl.make(roles=["exec"], classification="Restricted")
    report = store.ingest([doc(1, title="New title", acl=secret)], WordWindowChunker())
    assert (report.updated, report.unchanged, report.chunks) == (1, 0, 0)
    d = store.get_document("doc001")
    assert (d.version, d.title, d.acl) == (1, "New title", secret)
    assert store.acl_of("doc001") == secret
    assert store.chunks() == chunks


def test_a_new_chunker_rechunks_without_a_new_version(store) -> None:
    store.ingest([doc(1)], WordWindowChunker())
    report = store.ingest([doc(1)], WholeDocumentChunker())
    assert (report.updated, report.chunks) == (1, 1)
    assert store.get_document("doc001").version == 1
    assert [c.text for c in store.chunks()] == [doc(1).text]


def test_acl_of_sees_another_connections_change_at_once(tmp_path) -> None:
    path = tmp_path / "kb.db"
    with KnowledgeStore.open(path) as reader, KnowledgeStore.open(path) as writer:
        writer.ingest([doc(1)], WholeDocumentChunker())
        assert reader.acl_of("doc001") == PUBLIC_ACL
        writer.ingest([doc(1, acl=Acl.make(roles=["hr"]))], WholeDocumentChunker())
        assert reader.acl_of("doc001").roles == frozenset({"hr"})


def test_delete_cascades_to_chunks_and_embeddings(store) -> None:
    store.ingest([doc(1), doc(2)], WordWindowChunker(), FakeEmbedder())
    assert store.delete_document("doc001") is True
    assert store.delete_document("doc001") is False
    assert store.doc_ids() == ["doc002"]
    assert store.query("SELECT COUNT(*) FROM chunks")[0][0] == 3
    assert store.query("SELECT COUNT(*) FROM embeddings")[0][0] == 3
    assert {c.doc_id for c in store.chunks()} == {"doc002"}


def test_duplicate_ids_fail_before_anything_is_written(store) -> None:
    with pytest.raises(DataError, match="duplicate doc id 'doc002'"):
        store.ingest([doc(1), doc(2), doc(3), doc(2)], WordWindowChunker())
    assert len(store) == 0 and store.query("SELECT COUNT(*) FROM chunks")[0][0] == 0


@pytest.mark.parametrize("bad, match", [
    (Document("doc009", "   \n "), "'doc009' is empty or whitespace-only"),
    (Document("", "text"), "empty or non-string doc_id"),
    (Document("doc009", b"bytes"), "text must be str"),  # type: ignore[arg-type]
    (Document("doc009", "text", metadata={"when": object()}), "not JSON-serialisable"),
    ("just a string", "expected a Document"),
])
def test_bad_documents_fail_before_anything_is_written(store, bad, match: str) -> None:
    with pytest.raises(DataError, match=match):
        store.ingest([doc(1), bad, doc(2)], WordWindowChunker())
    assert len(store) == 0


def test_on_error_skip_records_blank_documents_and_ingests_the_rest(store) -> None:
    report = store.ingest([doc(1), Document("blank", " "), doc(2)], WordWindowChunker(), on_error="skip")
    assert (report.added, report.errors) == (2, ["document 'blank' is empty or whitespace-only; skipped"])


def test_embeddings_are_batched_across_documents(store) -> None:
    emb = FakeEmbedder()
    store.ingest([doc(i) for i in range(20)], WordWindowChunker(), emb, batch_chunks=8)
    # 3 chunks a document: a group closes once it holds >= 8 chunks, i.e. every 3 documents
    assert emb.calls == [9, 9, 9, 9, 9, 9, 6]
    assert len(store.embeddings("fake-3d")[0]) == 60

def test_missing_embeddings_and_summaries_are_filled_for_unchanged_documents(store) -> None:
    store.ingest([doc(1), doc(2)], WordWindowChunker())
    emb = FakeEmbedder()
    seen = []
    report = store.ingest([doc(1), doc(2)], WordWindowChunker(), emb,
                          summarizer=lambda c: seen.append(c.chunk_id) or c.text[:6])
    assert (report.unchanged, report.chunks) == (2, 0)
    assert emb.calls == [6] and len(seen) == 6
    assert [c.summary for c in store.chunks(["doc002"])] == ["w2x0 w", "w2x30 ", "w2x60 "]
    assert store.embedding_models() == {"fake-3d": {"dim": 3, "sha256": "f" * 64, "count": 6}}
    store.ingest([doc(1), doc(2)], WordWindowChunker(), emb, summarizer=lambda c: 1 / 0)
    assert emb.calls == [6]  # nothing missing any more: neither called again


def test_embedder_with_other_weights_under_the_same_model_id_is_refused(store) -> None:
    store.ingest([doc(1)], WordWindowChunker(), FakeEmbedder(sha="a" * 64))
    with pytest.raises(StoreError, match="delete_embeddings"):
        store.ingest([doc(2)], WordWindowChunker(), FakeEmbedder(sha="b" * 64))
    assert store.doc_ids() == ["doc001"]
    assert store.delete_embeddings("fake-3d") == 3
    store.ingest([doc(1), doc(2)], WordWindowChunker(), FakeEmbedder(sha="b" * 64))
    assert len(store.embeddings("fake-3d")[0]) == 6


# ------------------------------------------------------------------------------------------ embeddings & summaries

def test_put_and_read_embeddings_as_float32_little_endian(store) -> None:
    store.ingest([doc(1)], WordWindowChunker())
    ids = [c.chunk_id for c in store.chunks()]
    vecs = np.array([[1, 0], [0.6, 0.8], [0, 1]], dtype=np.float64)
    store.put_embeddings("m", ids, vecs)
    blob = store.query("SELECT vector FROM embeddings WHERE chunk_id = ?", (ids[1],))[0][0]
    assert blob == np.array([0.6, 0.8], dtype="<f4").tobytes()
    got_ids, got = store.embeddings("m", [ids[2], "missing", ids[0]])
    assert got_ids == [ids[2], ids[0]] and got.dtype == np.float32
    np.testing.assert_array_equal(got, np.array([[0, 1], [1, 0]], dtype=np.float32))
    all_ids, all_vecs = store.embeddings("m")
    assert all_ids == ids and all_vecs.shape == (3, 2)
    none_ids, none = store.embeddings("unknown")
    assert none_ids == [] and none.shape == (0, 0)


@pytest.mark.parametrize("ids, vectors, match", [
    (["c0", "nope"], np.ones((2, 2)), "unknown chunk id"),
    (["c0"], np.ones((2, 2)), "shape"),
    (["c0", "c1"], np.array([[1.0, np.nan], [0, 1]]), "NaN"),
    (["c0", "c0"], np.ones((2, 2)), "duplicate"),
    (["c0"], np.ones((1, 3)), "2-dimensional"),
])
def test_bad_embeddings_are_refused_without_writing(store, ids, vectors, match) -> None:
    store.ingest([doc(1)], WordWindowChunker())
    real = [c.chunk_id for c in store.chunks()]
    store.put_embeddings("m", real[2:], np.array([[0.0, 1.0]]))
    ids = [real[0] if i == "c0" else real[1] if i == "c1" else i for i in ids]
    with pytest.raises(DataError, match=match):
        store.put_embeddings("m", ids, vectors)
    assert store.embeddings("m")[0] == real[2:]


def test_set_summaries_checks_ids_first(store) -> None:
    store.ingest([doc(1)], WordWindowChunker())
    c0 = store.chunks()[0].chunk_id
    with pytest.raises(DataError, match="unknown chunk id"):
        store.set_summaries({c0: "sum", "nope": "x"})
    assert store.get_chunk(c0).summary == ""
    store.set_summaries({c0: "sum"})
    assert store.get_chunk(c0).summary == "sum"


# ------------------------------------------------------------------------------------------ extension point

def test_ensure_schema_runs_once_and_records_the_version(store) -> None:
    ddl = "CREATE TABLE dcs_nodes (id TEXT PRIMARY KEY, label TEXT);"  # not idempotent: a rerun would fail
    store.ensure_schema("dcs", ddl)
    store.ensure_schema("dcs", ddl)
    assert store.schema_version("dcs") == 1
    store.ensure_schema("dcs", "ALTER TABLE dcs_nodes ADD COLUMN weight REAL;", version=2)
    assert store.schema_version("dcs") == 2
    assert [r["name"] for r in store.query("PRAGMA table_info(dcs_nodes)")] == ["id", "label", "weight"]


def test_failing_ddl_leaves_nothing_behind(store) -> None:
    with pytest.raises(StoreError, match="'hub'"):
        store.ensure_schema("hub", "CREATE TABLE hub_a (x); CREATE TABLE hub_b (;")
    assert store.query("SELECT name FROM sqlite_master WHERE name LIKE 'hub_%'") == []
    assert store.schema_version("hub") is None


def test_transaction_commits_rolls_back_and_nests(store) -> None:
    store.ensure_schema("t", "CREATE TABLE t (x INTEGER);")
    with store.transaction() as conn:
        conn.execute("INSERT INTO t VALUES (1)")
    with pytest.raises(ZeroDivisionError):
        with store.transaction() as conn:
            conn.execute("INSERT INTO t VALUES (2)")
            raise ZeroDivisionError
    with store.transaction() as conn:
        conn.execute("INSERT INTO t VALUES (3)")
        with pytest.raises(KeyError):
            with store.transaction() as inner:
                inner.execute("INSERT INTO t VALUES (4)")
                raise KeyError("inner fails")
        store.set_meta("inside", "yes")
    assert [r[0] for r in store.query("SELECT x FROM t ORDER BY x")] == [1, 3]
    assert store.get_meta("inside") == "yes" and store.get_meta("absent") is None


def test_read_text_file_is_available_from_the_store_module(tmp_path) -> None:
    p = tmp_path / "a.txt"
    p.write_bytes(b"fine \xc3")
    with pytest.raises(DataError, match=r"a\.txt:1: not UTF-8 text \(byte 0xc3 at offset 5\)"):
        read_text_file(p)


# ------------------------------------------------------------------------------------------ crash safety

def test_an_embedder_failing_midway_leaves_finished_documents_whole(store) -> None:
    docs = [doc(i) for i in range(10)]
    with pytest.raises(RuntimeError, match="went away"):
        store.ingest(docs, WordWindowChunker(), FakeEmbedder(fail_on_call=2), batch_chunks=9)
    assert store.doc_ids() == [d.doc_id for d in docs[:3]]  # the first group of 3 documents was written
    assert_consistent(store, WordWindowChunker())
    report = store.ingest(docs, WordWindowChunker(), FakeEmbedder())
    assert (report.added, report.unchanged) == (7, 3)
    assert_consistent(store, WordWindowChunker())
    assert len(store.embeddings("fake-3d")[0]) == 30


_CHILD = textwrap.dedent("""
    import os, signal, sys
    from ragbench.retrieval.chunking import WordWindowChunker
    from ragbench.schema import Document
    from ragbench.store import KnowledgeStore

    path, kill_at = sys.argv[1], int(sys.argv[2])
    store = KnowledgeStore.open(path)
    docs = [Document(f"doc{i:03d}", " ".join(f"w{i}x{j}" for j in range(100))) for i in range(40)]
    state = {"docs": 0, "chunks": 0}

    def trace(sql):
        if sql.startswith("INSERT INTO documents"):
            state["docs"] += 1
        if state["docs"] == kill_at and sql.startswith("INSERT INTO chunks"):
            state["chunks"] += 1
            if state["chunks"] == 2:  # inside the document's transaction, after a chunk row was written
                os.kill(os.getpid(), signal.SIGKILL)

    store._conn.set_trace_callback(trace)
    store.ingest(docs, WordWindowChunker())
    print("finished without being killed")
""")


def test_a_process_killed_midway_leaves_a_consistent_store_and_a_rerun_completes_it(tmp_path) -> None:
    path = tmp_path / "kb.db"
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(path), "13"], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stdout + proc.stderr
    with KnowledgeStore.open(path) as store:
        assert store.doc_ids() == [f"doc{i:03d}" for i in range(12)]
        assert_consistent(store, WordWindowChunker())
        docs = [Document(f"doc{i:03d}", " ".join(f"w{i}x{j}" for j in range(100))) for i in range(40)]
        report = store.ingest(docs, WordWindowChunker())
        assert (report.added, report.unchanged, report.chunks) == (28, 12, 84)
        assert_consistent(store, WordWindowChunker())
        assert len(store) == 40 and len(store.chunks()) == 120


def test_prune_deletes_documents_missing_from_the_input(store) -> None:
    store.ingest([doc(1), doc(2), doc(3)], WordWindowChunker())
    report = store.ingest([doc(2)], WordWindowChunker(), prune=True)
    assert (report.unchanged, report.deleted) == (1, 2)
    assert store.doc_ids() == ["doc002"] and len(store.chunks()) == 3


def test_a_damaged_store_is_reported_and_left_unchanged(tmp_path) -> None:
    path = tmp_path / "kb.db"
    with KnowledgeStore.open(path) as s:
        s.ingest([doc(i) for i in range(30)], WordWindowChunker())
        s.query("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(path.read_bytes())
    data[100:4096] = bytes([0xA5]) * (4096 - 100)  # wipe the schema page after the file header
    path.write_bytes(bytes(data))
    before = _files(tmp_path)
    with pytest.raises(StoreError, match="damaged|malformed") as err:
        KnowledgeStore.open(path).chunks()
    assert "Fix:" in str(err.value)
    assert _files(tmp_path) == before


def test_stores_opened_at_once_on_a_new_path_initialise_it_once(tmp_path) -> None:
    import threading

    path = tmp_path / "kb.db"
    barrier = threading.Barrier(4)
    stores: list[KnowledgeStore] = []
    failures: list[BaseException] = []

    def open_it() -> None:
        barrier.wait()
        try:
            stores.append(KnowledgeStore.open(path))
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    threads = [threading.Thread(target=open_it) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == [] and len(stores) == 4
    assert stores[0].query("SELECT COUNT(*) FROM meta WHERE key = 'schema_version'")[0][0] == 1
    for s in stores:
        s.close()


def test_put_embeddings_records_and_guards_the_model_weights(store) -> None:
    store.ingest([doc(1)], WordWindowChunker())
    ids = [c.chunk_id for c in store.chunks()]
    store.put_embeddings("m", ids[:1], np.ones((1, 2)), sha256="a" * 64)
    assert store.embedding_models()["m"] == {"dim": 2, "sha256": "a" * 64, "count": 1}
    with pytest.raises(StoreError, match="other|weights"):
        store.put_embeddings("m", ids[1:2], np.ones((1, 2)), sha256="b" * 64)
    assert store.embedding_models()["m"]["count"] == 1
