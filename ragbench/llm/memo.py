"""A graded judge's verdicts kept on disk, so a rerun pays only for prompts it has not seen.

The local judge costs seconds per question (about 5 minutes per golden set on 2 cores), and most of a rerun's prompts
are the previous run's: a change to one rule changes a few answers, not all. ``LlamaCppChatModel`` resets its state
before every call, so P(yes) depends on the model file and the messages alone (on one machine's arithmetic), and a
stored value is the value the model would give again. The key names the model (its id and file size) and every
message; a prompt template change changes the messages and so misses.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any, Sequence

from ..errors import DataError
from ..schema import Message

_SCHEMA = "CREATE TABLE IF NOT EXISTS yes_probability (key TEXT PRIMARY KEY, model TEXT NOT NULL, p REAL NOT NULL)"


class VerdictMemo:
    """P(yes) per prompt key in a SQLite file (created on first use). Safe to share between threads; each write is
    its own transaction, so an interrupted run keeps every verdict it finished."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise DataError(f"judge memo {self.path} is a folder. Fix: give a file path, e.g. "
                            f"{self.path / 'judge-memo.sqlite'}.")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            self._conn = sqlite3.connect(self.path, check_same_thread=False)
            with self._conn:
                self._conn.execute(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise DataError(f"judge memo {self.path} is not a readable SQLite file ({exc}). Fix: delete it or "
                            "point answer.judge_memo at another file; it only holds cached verdicts.") from exc

    def get(self, key: str) -> float | None:
        with self._lock:
            row = self._conn.execute("SELECT p FROM yes_probability WHERE key = ?", (key,)).fetchone()
        return None if row is None else float(row[0])

    def put(self, key: str, model: str, p: float) -> None:
        with self._lock, self._conn:
            self._conn.execute("INSERT OR REPLACE INTO yes_probability VALUES (?, ?, ?)", (key, model, float(p)))

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM yes_probability").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def model_fingerprint(model: Any) -> str:
    """The model's id, and its file's size when it names one (a re-quantised file under the same name misses)."""
    path = getattr(model, "model_path", None)
    size = Path(path).stat().st_size if path and Path(path).is_file() else None
    return f"{model.model_id}|{size}" if size is not None else str(model.model_id)


def prompt_key(fingerprint: str, messages: Sequence[Message]) -> str:
    payload = json.dumps([fingerprint, [[m.role, m.content] for m in messages]], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class MemoJudgeModel:
    """``model`` with its ``yes_probability`` looked up in ``memo`` first; everything else is the model's own.
    ``hits`` and ``misses`` count this object's lookups."""

    def __init__(self, model: Any, memo: VerdictMemo) -> None:
        if not callable(getattr(model, "yes_probability", None)):
            raise TypeError(f"{type(model).__name__} gives no graded verdict (yes_probability); a memo needs one")
        self.model = model
        self.memo = memo
        self.fingerprint = model_fingerprint(model)
        self.hits = 0
        self.misses = 0

    @property
    def model_id(self) -> str:
        return str(self.model.model_id)

    def yes_probability(self, messages: Sequence[Message]) -> float:
        key = prompt_key(self.fingerprint, messages)
        p = self.memo.get(key)
        if p is not None:
            self.hits += 1
            return p
        p = float(self.model.yes_probability(messages))  # a failing model raises: nothing is stored
        self.misses += 1
        self.memo.put(key, self.fingerprint, p)
        return p

    def __getattr__(self, name: str) -> Any:
        if name == "model":  # not set yet (copying, unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.model, name)


def with_memo(judge: Any, path: str) -> Any:
    """``judge`` with its graded verdicts kept in ``path`` (``answer.judge_memo``); ``judge`` itself when ``path``
    is empty or the judge gives no graded verdict (a greedy judge's reply is not stored)."""
    if not path or judge is None or not callable(getattr(judge, "yes_probability", None)):
        return judge
    return MemoJudgeModel(judge, VerdictMemo(path))
