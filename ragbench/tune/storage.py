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
import socket
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


def process_id() -> str:
    """``host:pid`` of this process, as recorded on the trials it runs."""
    return f"{socket.gethostname()}:{os.getpid()}"


def process_alive(owner: str) -> bool | None:
    """Whether the ``host:pid`` process runs; ``None`` when it lives on another host (cannot be known here)."""
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return None
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by another user
    return True


class WorkerSlot:
    """A numbered worker slot of a journal study, held by one live process: ``<journal>.worker-<i>`` created
    exclusively, holding ``host:pid``. Independent ``ragbench tune`` processes on one journal (the documented way to
    add workers by hand) thus get distinct numbers — and distinct sampler seeds — without talking to each other; the
    first process gets 0, so a one-process run is reproducible. A slot whose process died is taken over."""

    def __init__(self, journal: Path, limit: int = 1024) -> None:
        self.journal = journal
        self.limit = limit
        self.index: int | None = None
        self.file: Path | None = None

    def _file(self, i: int) -> Path:
        return Path(f"{self.journal}.worker-{i}")

    def acquire(self) -> int:
        me = process_id()
        for i in range(self.limit):
            f = self._file(i)
            try:
                fd = os.open(f, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                try:
                    owner = f.read_text(encoding="utf-8").strip()
                except OSError:
                    continue
                if owner and process_alive(owner) is False:
                    f.unlink(missing_ok=True)  # its process died; retry the same number once
                    try:
                        fd = os.open(f, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
                    except FileExistsError:
                        continue
                else:
                    continue
            except OSError as exc:
                raise StoreError(f"cannot create the worker file {f}: {exc}. Fix: check the folder's permissions.") \
                    from exc
            os.write(fd, me.encode("utf-8"))
            os.close(fd)
            self.index, self.file = i, f
            return i
        raise StoreError(f"more than {self.limit} workers hold slots of {self.journal}. Fix: delete stale "
                         f"{self.journal}.worker-* files of processes that no longer run.")

    def release(self) -> None:
        if self.file is not None:
            self.file.unlink(missing_ok=True)
            self.file = self.index = None

    def others_alive(self) -> bool:
        """Whether another live process (or one on another host) holds a slot of this journal."""
        me = process_id()
        for f in sorted(self.journal.parent.glob(self.journal.name + ".worker-*")):
            if f == self.file:
                continue
            try:
                owner = f.read_text(encoding="utf-8").strip()
            except OSError:
                continue
            if owner != me and (not owner or process_alive(owner) is not False):
                return True  # an empty file is a slot being written right now
        return False

    def __enter__(self) -> "WorkerSlot":
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
