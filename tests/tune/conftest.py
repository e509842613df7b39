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


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def postgres_url():
    """A throw-away PostgreSQL server on 127.0.0.1 (Debian's binaries; run as the ``postgres`` user when we are
    root, since PostgreSQL refuses to run as root). Skips with the reason when no server can be started."""
    import glob
    import os
    import shutil
    import subprocess
    import tempfile

    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        pytest.skip("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb); apt-get install postgresql")
    bindir = Path(found[-1]).parent
    prefix: list[str] = []
    # A folder the server's user can enter (pytest's tmp_path is private to root).
    folder = Path(tempfile.mkdtemp(prefix="ragbench-pg-"))
    if os.geteuid() == 0:
        import pwd

        try:
            pw = pwd.getpwnam("postgres")
        except KeyError:
            shutil.rmtree(folder, ignore_errors=True)
            pytest.skip("running as root and there is no 'postgres' user to run the server as")
        os.chown(folder, pw.pw_uid, pw.pw_gid)
        prefix = ["runuser", "-u", "postgres", "--"]
    data, port = folder / "data", _free_port()

    def run(*cmd: str) -> subprocess.CompletedProcess:
        return subprocess.run(prefix + list(cmd), capture_output=True, text=True, timeout=120)

    init = run(str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
               "--no-sync")
    if init.returncode != 0:
        shutil.rmtree(folder, ignore_errors=True)
        pytest.skip(f"initdb failed: {(init.stderr or init.stdout).strip()[:300]}")
    start = run(str(bindir / "pg_ctl"), "-D", str(data), "-l", str(folder / "server.log"), "-w", "-t", "60",
                "-o", f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off", "start")
    if start.returncode != 0:
        log = (folder / "server.log").read_text() if (folder / "server.log").exists() else ""
        shutil.rmtree(folder, ignore_errors=True)
        pytest.skip(f"the PostgreSQL server did not start: {(start.stderr or log).strip()[:300]}")
    try:
        yield f"postgresql+psycopg2://postgres@127.0.0.1:{port}/postgres"
    finally:
        run(str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(folder, ignore_errors=True)


def require(module: str, extra: str) -> Any:
    """``module`` imported, or the calling test module skipped with the install line of its ``extra``."""
    return pytest.importorskip(module, reason=f'the {extra} extra is not installed: pip install "ragbench[{extra}]"')
