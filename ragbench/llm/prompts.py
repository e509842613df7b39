"""Versioned prompt templates in the knowledge store (Enterprise source, seed-behaviour 3.10), shared by every
subsystem that sends prompts (grounded answers; EE-RAG election, digestion and summaries).

A template is identified as ``name@version`` and hashed by content (SHA-256 of the body with CRLF → LF).
Registering an existing ``(name, version)`` with the same body is a no-op; with a different body it is a
:class:`PromptConflict`, so a version id always means one exact text. Registering a new version makes it the
active one for its name. Every answer records the id of the template it used.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..errors import DataError
from ..text import sha256_text

SCHEMA = "answer.prompts"  # the name predates the move to llm/; kept so that existing stores stay valid
DDL = """
CREATE TABLE IF NOT EXISTS prompt_templates (
    name TEXT NOT NULL,
    version TEXT NOT NULL,
    body TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    active INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    PRIMARY KEY (name, version)
);
"""
#: The slots a grounded-answer template must fill (the default of :meth:`PromptRegistry.register`).
ANSWER_SLOTS = ("context", "question")

_VERSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_SLOT = re.compile(r"\{(context|question)\}")


class PromptConflict(DataError):
    """``(name, version)`` is already registered with a different body."""


def prompt_hash(body: str) -> str:
    """SHA-256 of the body with Windows line ends made Unix ones."""
    return sha256_text(body.replace("\r\n", "\n"))


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    version: str
    body: str
    sha256: str
    active: bool = False

    @property
    def id(self) -> str:
        return f"{self.name}@{self.version}"

    def render(self, context: str, question: str) -> str:
        """Fill ``{context}`` and ``{question}`` in one pass, so text inside the context that looks like a slot
        (``{question}``) is never substituted."""
        values = {"context": context, "question": question}
        return _SLOT.sub(lambda m: values[m.group(1)], self.body.replace("\r\n", "\n"))


class PromptRegistry:
    """Prompt templates stored in a :class:`~ragbench.store.KnowledgeStore`."""

    def __init__(self, store: Any) -> None:
        self.store = store
        store.ensure_schema(SCHEMA, DDL, 1)

    @staticmethod
    def _validate(name: str, version: str, body: str, slots: Sequence[str] = ANSWER_SLOTS) -> None:
        if not isinstance(name, str) or not name.strip() or "@" in name:
            raise DataError(f"prompt name must be a non-blank string without '@', found {name!r}.")
        if not isinstance(version, str) or not _VERSION.match(version):
            raise DataError(f"prompt version must match {_VERSION.pattern}, found {version!r}. Fix: e.g. 'v2'.")
        if not isinstance(body, str) or not body.strip():
            raise DataError("prompt body is blank. Fix: give the template text.")
        missing = ["{" + s + "}" for s in slots if "{" + s + "}" not in body]
        if missing:
            raise DataError(f"prompt body lacks the slot(s) {missing}; expected all of "
                            f"{['{' + s + '}' for s in slots]}.")

    def register(self, name: str, version: str, body: str, slots: Sequence[str] = ANSWER_SLOTS) -> PromptTemplate:
        """Store and activate ``name@version``; idempotent for the same body, :class:`PromptConflict` otherwise.
        ``slots``: the ``{name}`` placeholders the body must contain (answer templates: context and question;
        system prompts: none)."""
        self._validate(name, version, body, slots)
        name = name.strip()
        digest = prompt_hash(body)
        with self.store.transaction() as conn:
            row = conn.execute("SELECT sha256 FROM prompt_templates WHERE name = ? AND version = ?",
                               (name, version)).fetchone()
            if row is not None:
                if row[0] != digest:
                    raise PromptConflict(
                        f"prompt {name}@{version} is already registered with hash {row[0][:12]}…, the new body "
                        f"hashes to {digest[:12]}…. Fix: register the changed text as a new version.")
            else:
                conn.execute("UPDATE prompt_templates SET active = 0 WHERE name = ?", (name,))
                conn.execute("INSERT INTO prompt_templates (name, version, body, sha256, active, created_at) "
                             "VALUES (?, ?, ?, ?, 1, ?)",
                             (name, version, body.replace("\r\n", "\n"), digest,
                              datetime.now(UTC).isoformat()))
        return self.get(name, version)  # type: ignore[return-value]  # written just above

    def activate(self, name: str, version: str) -> PromptTemplate:
        """Make an already registered version the active one."""
        if self.get(name, version) is None:
            raise DataError(f"prompt {name}@{version} is not registered; known: {self.versions(name)}.")
        with self.store.transaction() as conn:
            conn.execute("UPDATE prompt_templates SET active = (version = ?) WHERE name = ?", (version, name))
        return self.get(name, version)  # type: ignore[return-value]

    def get(self, name: str, version: str) -> PromptTemplate | None:
        rows = self.store.query("SELECT name, version, body, sha256, active FROM prompt_templates "
                                "WHERE name = ? AND version = ?", (name, version))
        return _row(rows[0]) if rows else None

    def active(self, name: str) -> PromptTemplate | None:
        rows = self.store.query("SELECT name, version, body, sha256, active FROM prompt_templates "
                                "WHERE name = ? AND active = 1", (name,))
        return _row(rows[0]) if rows else None

    def versions(self, name: str) -> list[str]:
        return [r[0] for r in self.store.query(
            "SELECT version FROM prompt_templates WHERE name = ? ORDER BY created_at, version", (name,))]

    def ensure(self, name: str, version: str, body: str, slots: Sequence[str] = ANSWER_SLOTS) -> PromptTemplate:
        """``name@version`` registered (idempotent) without changing which version is active when it already
        exists; subsystems use this for their built-in prompts, so a store always holds the text they send."""
        current = self.get(name, version)
        if current is not None:
            if current.sha256 != prompt_hash(body):
                raise PromptConflict(f"prompt {name}@{version} is registered with another body. Fix: give the "
                                     "changed built-in text a new version.")
            return current
        return self.register(name, version, body, slots)


def _row(row: Any) -> PromptTemplate:
    return PromptTemplate(row[0], row[1], row[2], row[3], bool(row[4]))
