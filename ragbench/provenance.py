"""Provenance of a result: which code (git commit, package version, a hash of the package's sources), which data
(content hash of files and folders), which configuration (config hash) and which model (sha256) produced it.
Written into every run folder's ``meta.json`` and logged as MLflow tags, and used to decide whether a cached run
may be reused."""
from __future__ import annotations

import hashlib
import os
import platform
import subprocess
import sys
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping

from .assets import file_sha256
from .errors import DataError


def project_root() -> Path:
    """The checkout holding ``pyproject.toml`` for an editable install, else the current directory."""
    here = Path(__file__).resolve().parents[1]
    return here if (here / "pyproject.toml").is_file() else Path.cwd()


def git_commit(path: str | Path | None = None) -> str:
    """HEAD commit of the git checkout containing ``path`` (default: the project), with ``-dirty`` appended when
    tracked files have uncommitted changes; ``"unknown"`` outside git or when git is not installed."""
    cwd = Path(path) if path is not None else project_root()
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return "unknown"
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=cwd,
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    commit = head.stdout.strip()
    return commit + ("-dirty" if dirty.returncode == 0 and dirty.stdout.strip() else "")


def package_version() -> str:
    """Installed version of ragbench (falls back to ``ragbench.__version__``)."""
    try:
        from importlib.metadata import version

        return version("ragbench")
    except Exception:  # noqa: BLE001 - not installed as a distribution
        from . import __version__

        return __version__


def data_hash(paths: str | Path | Iterable[str | Path]) -> str:
    """Content hash (first 16 hex of SHA-256) of files and folders.

    Folders are walked recursively; each file contributes its path relative to the given root and its bytes'
    SHA-256, in sorted order, so the hash depends on content and layout, not on timestamps or absolute paths.
    Hidden files and ``__pycache__`` are skipped."""
    items = [paths] if isinstance(paths, (str, Path)) else list(paths)
    h = hashlib.sha256()
    for item in items:
        root = Path(item)
        if not root.exists():
            raise DataError(f"data_hash: {root} does not exist. Fix: check the data path.")
        if root.is_file():
            entries = [(root.name, root)]
        else:
            entries = sorted(
                (p.relative_to(root).as_posix(), p) for p in root.rglob("*")
                if p.is_file() and not any(part.startswith(".") or part == "__pycache__"
                                           for part in p.relative_to(root).parts))
        for rel, p in entries:
            h.update(rel.encode("utf-8") + b"\0" + file_sha256(p).encode("ascii") + b"\n")
    return h.hexdigest()[:16]


@lru_cache(maxsize=8)
def code_hash(root: Path | None = None) -> str:
    """First 16 hex of SHA-256 over the Python sources under ``root`` (default: the ragbench package), each file's
    relative path and bytes in path order: a saved experiment made by other code is not reused, committed or not."""
    root = root or Path(__file__).resolve().parent
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode("utf-8") + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def text_hash(*parts: str) -> str:
    """First 16 hex of SHA-256 of strings (for in-memory data such as a query table)."""
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode("utf-8") + b"\0")
    return h.hexdigest()[:16]


def provenance(config: Any = None, data: str | None = None, model_sha256: str | None = None,
               stages: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ``meta.json`` record: config hash, data hash, model sha256, package version, git commit, runtime, and
    with ``stages`` each named stage's parameter signature (from ``get_params()``:
    :func:`ragbench.stages.stage_signature`)."""
    from .config import config_hash
    from .stages import stage_signature

    extra = {"stages": {str(k): stage_signature(v) for k, v in stages.items()}} if stages else {}
    return {
        "config_hash": config_hash(config) if config is not None else None,
        "data_hash": data,
        "model_sha256": model_sha256,
        "package_version": package_version(),
        "git_commit": git_commit(),
        "code_hash": code_hash(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "pid": os.getpid(),
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        **extra,
    }
