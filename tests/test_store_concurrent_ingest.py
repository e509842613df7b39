"""Two writers ingesting into one store: a document planned before the other writer committed it is re-checked
under the write lock (issue 13, fault 6: the second `ragbench index` died on the unique document id)."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from ragbench.retrieval.chunking import WordWindowChunker
from ragbench.retrieval.embedding import HashingEmbedder
from ragbench.schema import Document
from ragbench.store import KnowledgeStore

ROOT = Path(__file__).resolve().parents[1]


def _docs(n: int, suffix: str = "") -> list[Document]:
    return [Document(f"d{i:03d}", f"document {i} about topic {i % 7} with words alpha beta gamma {suffix}".strip())
            for i in range(n)]


def _snapshot(path: Path) -> list[tuple]:
    with KnowledgeStore.open(path) as s:
        docs = s.query("SELECT doc_id, version, sha256 FROM documents ORDER BY doc_id")
        chunks = s.query("SELECT chunk_id, doc_id FROM chunks ORDER BY chunk_id")
        vecs = s.query("SELECT COUNT(*) FROM embeddings")
        return [tuple(r) for r in docs] + [tuple(r) for r in chunks] + [tuple(r) for r in vecs]


def test_a_document_written_by_another_writer_after_planning_is_updated_not_inserted(tmp_path):
    path = tmp_path / "kb.db"
    chunker, emb = WordWindowChunker(), HashingEmbedder(32)
    a, b = KnowledgeStore.open(path), KnowledgeStore.open(path)
    try:
        real_finish = b._finish_group
        other_ran = []

        def finish_after_the_other_writer(group, *args, **kwargs):
            if not other_ran:  # b has planned every document as "add"; a commits them all first
                other_ran.append(a.ingest(_docs(12), chunker, emb))
            return real_finish(group, *args, **kwargs)

        b._finish_group = finish_after_the_other_writer  # type: ignore[method-assign]
        report = b.ingest(_docs(12), chunker, emb, batch_chunks=1000)
        assert other_ran[0].added == 12
        assert (report.added, report.updated) == (0, 12)  # re-checked under the lock: already there, same content
        # A changed document planned before the other writer's commit becomes version 2, not a duplicate.
        other_ran.clear()
        real_finish2 = b._finish_group = real_finish  # type: ignore[method-assign]

        def finish_after_a_change(group, *args, **kwargs):
            if not other_ran:
                other_ran.append(a.ingest(_docs(12, "changed"), chunker, emb))
            return real_finish2(group, *args, **kwargs)

        b._finish_group = finish_after_a_change  # type: ignore[method-assign]
        b.ingest(_docs(12, "changed twice"), chunker, emb, batch_chunks=1000)
        versions = {r["doc_id"]: r["version"] for r in b.query("SELECT doc_id, version FROM documents")}
        assert set(versions.values()) == {3}
        assert len(b.query("SELECT chunk_id FROM chunks")) == 12
    finally:
        a.close()
        b.close()


def test_two_index_processes_on_one_store_both_finish_and_equal_a_clean_run(tmp_path):
    script = textwrap.dedent("""
        import sys, time
        from pathlib import Path
        sys.path.insert(0, sys.argv[3])
        from ragbench.retrieval.chunking import WordWindowChunker
        from ragbench.retrieval.embedding import HashingEmbedder
        from ragbench.schema import Document
        from ragbench.store import KnowledgeStore
        go = Path(sys.argv[2])
        while not go.exists():
            time.sleep(0.01)
        docs = [Document(f"d{i:03d}", f"document {i} about topic {i % 7} with words alpha beta gamma")
                for i in range(200)]
        with KnowledgeStore.open(sys.argv[1]) as s:
            s.ingest(docs, WordWindowChunker(), HashingEmbedder(32), batch_chunks=1000)
    """)
    path, go = tmp_path / "shared.db", tmp_path / "go"
    KnowledgeStore.open(path).close()
    procs = [subprocess.Popen([sys.executable, "-c", script, str(path), str(go), str(ROOT)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    go.touch()
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1][-2000:] for o in outs]
    clean = tmp_path / "clean.db"
    with KnowledgeStore.open(clean) as s:
        s.ingest(_docs(200), WordWindowChunker(), HashingEmbedder(32))
    assert _snapshot(path) == _snapshot(clean)
