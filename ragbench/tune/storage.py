"""Optuna storages for sweeps.

* a journal file (default ``<experiment folder>/runs/<name>/study.journal``; ``journal:PATH`` or any path that is
  not a URL): Optuna's ``JournalStorage`` with a file backend, safe for several processes on one machine. Its lock
  is ours: a lock held longer than ``lock_timeout`` seconds raises :class:`StoreError` naming the lock file instead of
  being broken silently, and a journal that cannot be read raises :class:`StoreError` naming the file.
* an RDB URL (``postgresql://…``, ``postgresql+psycopg2://…``, ``mysql://…``, ``sqlite:///…``): Optuna's
  ``RDBStorage`` with a heartbeat, so workers on many machines share one study and a crashed worker's trial is
  marked failed.
* ``:memory:``: an in-process store (one worker; notebooks and tests).
"""
from __future__ import annotations

import errno
import json
import os
import time
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from ..errors import StoreError, require_extra

RDB_SCHEMES = ("postgresql", "postgres", "mysql", "sqlite", "oracle", "mssql")


def is_rdb(url: str) -> bool:
    scheme = url.split(":", 1)[0].split("+", 1)[0].lower()
    return "://" in url and scheme in RDB_SCHEMES


def journal_path(url: str) -> Path | None:
    """The journal file a storage string names, or None for RDB / in-memory storages."""
    if url == ":memory:" or is_rdb(url):
        return None
    return Path(url[len("journal:"):] if url.startswith("journal:") else url)


def describe(url: str) -> str:
    """The storage string with any password hidden (for messages and logs)."""
    if is_rdb(url) and "@" in url:
        head, tail = url.split("://", 1)
        creds, host = tail.rsplit("@", 1)
        user = creds.split(":", 1)[0]
        return f"{head}://{user}:***@{host}" if ":" in creds else url
    return url


class TimeoutLock:  # Optuna's file backend only calls acquire() and release()
    """A journal-file lock (an exclusively created ``<journal>.lock`` file) that waits at most ``timeout`` seconds
    and then raises :class:`StoreError`; a lock is never broken behind another process's back."""

    def __init__(self, journal: Path, timeout: float = 60.0) -> None:
        self.lock_file = Path(str(journal) + ".lock")
        self.timeout = timeout

    def acquire(self) -> bool:
        deadline = time.monotonic() + self.timeout
        delay = 0.001
        while True:
            try:
                fd = os.open(self.lock_file, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except OSError as exc:
                if exc.errno != errno.EEXIST:
                    raise StoreError(f"cannot create the lock file {self.lock_file}: {exc}. Fix: check the "
                                     "folder's permissions.") from exc
                if time.monotonic() > deadline:
                    raise StoreError(
                        f"the Optuna journal is locked: {self.lock_file} has existed for more than {self.timeout:.0f}"
                        " s. Another process may be writing the study, or one died while holding the lock. Fix: "
                        "wait for the other run, or delete the lock file if no other process uses the study.") from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
                continue
            os.write(fd, str(os.getpid()).encode())
            os.close(fd)
            return True

    def release(self) -> None:
        try:
            self.lock_file.unlink()
        except FileNotFoundError:
            pass


@contextmanager
def quiet_experimental() -> Iterator[None]:
    """Optuna's ``ExperimentalWarning`` silenced inside the block only (heartbeats, the Wilcoxon pruner and fANOVA
    carry it and it says nothing actionable); the process's own warning filters are left as they were."""
    optuna = require_extra("optuna", "tune", "tuning")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
        yield


def open_storage(url: str, lock_timeout: float = 60.0) -> Any:
    """An Optuna storage for ``url`` (see the module doc); problems raise :class:`StoreError`."""
    optuna = require_extra("optuna", "tune", "tuning (Optuna storage)")

    if url == ":memory:":
        return optuna.storages.InMemoryStorage()
    if is_rdb(url):
        try:
            with quiet_experimental():  # heartbeat_interval is "experimental"
                return optuna.storages.RDBStorage(url, heartbeat_interval=30, grace_period=120,
                                                  engine_kwargs={"pool_pre_ping": True})
        except Exception as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
            raise StoreError(f"cannot open the Optuna storage {describe(url)}: {first}. Fix: check that the "
                             "database server is running and the URL (user, password, host, port, database) is "
                             "right.") from exc
    path = journal_path(url)
    assert path is not None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot create the folder of the Optuna journal {path}: {exc}.") from exc
    storages = require_extra("optuna.storages", "tune", "tuning (Optuna storage)")
    JournalStorage = storages.JournalStorage
    JournalFileBackend = require_extra("optuna.storages.journal", "tune", "tuning").JournalFileBackend

    try:
        return JournalStorage(JournalFileBackend(str(path), lock_obj=TimeoutLock(path, lock_timeout)))
    except StoreError:
        raise
    except (ValueError, KeyError, TypeError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise StoreError(f"the Optuna journal {path} is corrupt or not a journal ({type(exc).__name__}: {exc}). "
                         "Fix: restore it from a backup, or delete it to start the study afresh.") from exc
    except OSError as exc:
        raise StoreError(f"cannot open the Optuna journal {path}: {exc}. Fix: check the path and permissions.") \
            from exc
