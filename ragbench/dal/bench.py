"""Ingestion delta benchmark: ``python -m ragbench.dal.bench [--files 1000] [--changed 10] [--embedder hashing]``.

A folder of small Markdown files is ingested once; then ``--changed`` files are edited and three systems bring
the index up to date, each from the same starting copy of the store:

* **ragbench IngestionPipeline** (incremental: raw-hash delta from its state table);
* **full re-index** — the non-incremental baseline the seed warns about: a fresh store, every file chunked and
  embedded again;
* **KnowledgeStore.ingest of every file** — store-level idempotency only: every file is read, cleaned and
  hashed, unchanged documents are skipped by content hash.

Reported: wall time (median of ``--repeats``), documents re-processed and texts embedded. Read ratios, not
absolutes, on a shared machine.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ..retrieval.base import Embedder
from ..store import KnowledgeStore
from .chunkers import chunker_for
from .pipeline import IngestionPipeline, transform
from .watchers import FolderWatcher


class CountingEmbedder(Embedder):
    """Counts the texts it embeds."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.texts = inner, 0
        self.model_id, self.dim = inner.model_id, inner.dim

    @property
    def sha256(self) -> str:
        return self.inner.sha256

    def embed(self, texts: Sequence[str], show_progress: bool = False) -> np.ndarray:
        self.texts += len(texts)
        return self.inner.embed(texts)


def make_folder(root: Path, files: int) -> Path:
    folder = root / "notes"
    folder.mkdir(parents=True)
    for i in range(files):
        (folder / f"n{i:05d}.md").write_text(f"# Note {i}\nNote {i} covers topic {i % 37}. It has a second "
                                             f"sentence about item {i * 7 % 101}.\n", encoding="utf-8")
    return folder


def _timed(fn: Callable[[], tuple[int, int]]) -> tuple[float, int, int]:
    t = time.perf_counter()
    docs, texts = fn()
    return time.perf_counter() - t, docs, texts


def run(files: int, changed: int, embedder: Embedder, repeats: int = 3) -> list[dict]:
    root = Path(tempfile.mkdtemp(prefix="dal-bench-"))
    try:
        folder = make_folder(root, files)
        base = root / "base.db"
        with KnowledgeStore.open(base) as store:
            IngestionPipeline(store, embedder, batch_size=256).run([FolderWatcher(folder)])
        for i in range(0, files, max(1, files // changed))[:changed]:
            (folder / f"n{i:05d}.md").write_text(f"# Note {i}\nNote {i} was edited in round two.\n", encoding="utf-8")

        def pipeline() -> tuple[int, int]:
            db = root / "p.db"
            shutil.copy(base, db)
            counter = CountingEmbedder(embedder)
            with KnowledgeStore.open(db) as store:
                rep = IngestionPipeline(store, counter, batch_size=256).run([FolderWatcher(folder)])
            db.unlink()
            return len(rep.reprocessed), counter.texts

        def full_reindex() -> tuple[int, int]:
            db = root / "f.db"
            counter = CountingEmbedder(embedder)
            with KnowledgeStore.open(db) as store:
                rep = IngestionPipeline(store, counter, batch_size=256).run([FolderWatcher(folder)])
            db.unlink()
            return len(rep.reprocessed), counter.texts

        def store_ingest_all() -> tuple[int, int]:
            db = root / "s.db"
            shutil.copy(base, db)
            counter = CountingEmbedder(embedder)
            with KnowledgeStore.open(db) as store:
                docs = [transform(item)[0] for item in FolderWatcher(folder).scan().items]
                rep = store.ingest(docs, chunker_for("prose"), counter)
            db.unlink()
            return rep.added + rep.updated, counter.texts

        rows = []
        for name, fn in (("ragbench IngestionPipeline (incremental)", pipeline),
                         ("full re-index (fresh store)", full_reindex),
                         ("KnowledgeStore.ingest of every file", store_ingest_all)):
            results = [_timed(fn) for _ in range(repeats)]
            rows.append({"system": name, "seconds": statistics.median(r[0] for r in results),
                         "runs": [round(r[0], 3) for r in results], "reprocessed": results[0][1],
                         "embedded": results[0][2]})
        return rows
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> int:
    from ..config import EmbeddingConfig
    from ..retrieval.embedding import make_embedder

    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--files", type=int, default=1000)
    p.add_argument("--changed", type=int, default=10)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--embedder", choices=("hashing", "minilm"), default="hashing")
    args = p.parse_args(argv)
    embedder = make_embedder(EmbeddingConfig(model=args.embedder, cache=False))
    rows = run(args.files, args.changed, embedder, args.repeats)
    print(f"{args.files} files, {args.changed} changed, embedder {embedder.model_id}\n")
    print("| system | seconds (median) | runs (s) | documents re-processed | texts embedded |")
    print("|---|---:|---|---:|---:|")
    for r in rows:
        print(f"| {r['system']} | {r['seconds']:.3f} | {', '.join(map(str, r['runs']))} | {r['reprocessed']} | "
              f"{r['embedded']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
