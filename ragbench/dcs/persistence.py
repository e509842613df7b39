"""Saving and reloading a DCS conversation (messages, DCNs, identifier index) in the knowledge store.

Uses the store's extension point only: ``store.ensure_schema(name, ddl, version)``, ``store.transaction()`` and
``store.query(sql, params)`` — anything with those three methods works (tests also use a plain sqlite3 wrapper).
A save replaces one conversation's rows in a single transaction, so a failed save leaves the previous state.
The index is saved as it is (with the faithful mode's repeats and stale buckets), so a reloaded assembler
makes exactly the same selections as the one that was saved.
"""
from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Hashable, Protocol, cast

from ..config import DcsConfig, from_dict, to_dict
from ..errors import DataError
from .assembler import DcsContextAssembler, DcsMessage
from .key import DcsKey
from .nodes import Clock, DcnNode, utc_now

SCHEMA_NAME = "dcs"
SCHEMA_VERSION = 1
DDL = """
CREATE TABLE IF NOT EXISTS dcs_conversations (
    conversation_id TEXT PRIMARY KEY, config TEXT NOT NULL, next_dcn_id INTEGER NOT NULL,
    next_seq INTEGER NOT NULL, saved_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS dcs_messages (
    conversation_id TEXT NOT NULL, message_id TEXT NOT NULL, seq INTEGER NOT NULL, content TEXT NOT NULL,
    timestamp TEXT NOT NULL, dcs_key TEXT NOT NULL, hard_linked TEXT NOT NULL,
    PRIMARY KEY (conversation_id, message_id));
CREATE TABLE IF NOT EXISTS dcs_nodes (
    conversation_id TEXT NOT NULL, dcn_id INTEGER NOT NULL, position INTEGER NOT NULL, topics TEXT NOT NULL,
    created_at TEXT NOT NULL, last_referenced_at TEXT NOT NULL, linked TEXT NOT NULL,
    PRIMARY KEY (conversation_id, dcn_id));
CREATE TABLE IF NOT EXISTS dcs_index (
    conversation_id TEXT NOT NULL, identifier TEXT NOT NULL, position INTEGER NOT NULL, message_id TEXT NOT NULL,
    PRIMARY KEY (conversation_id, identifier, position));
"""
_TABLES = ("dcs_messages", "dcs_nodes", "dcs_index", "dcs_conversations")


class StoreLike(Protocol):
    def ensure_schema(self, name: str, ddl: str, version: int = 1) -> None: ...
    def transaction(self) -> Any: ...
    def query(self, sql: str, params: Any = ()) -> list[Any]: ...


def _ident_to_text(ident: Hashable) -> str:
    """``3`` → ``"3"``; ``("d", 3)`` → ``"d:3"``."""
    return f"{ident[0]}:{ident[1]}" if isinstance(ident, tuple) else str(ident)


def _ident_from_text(text: str) -> Hashable:
    if ":" in text:
        level, value = text.split(":", 1)
        return (level, int(value))
    return int(text)


def save_conversation(store: StoreLike, assembler: DcsContextAssembler, conversation_id: str = "default") -> None:
    """Write the assembler's whole state under ``conversation_id`` (replacing an earlier save), atomically."""
    if not isinstance(conversation_id, str) or not conversation_id.strip():
        raise DataError(f"save_conversation: expected a non-blank conversation id, found {conversation_id!r}.")
    store.ensure_schema(SCHEMA_NAME, DDL, SCHEMA_VERSION)
    msgs = sorted(assembler._messages.values(), key=lambda m: assembler._seq[m.message_id])
    with store.transaction() as conn:
        for table in _TABLES:
            conn.execute(f"DELETE FROM {table} WHERE conversation_id = ?", (conversation_id,))
        conn.execute("INSERT INTO dcs_conversations VALUES (?, ?, ?, ?, ?)",
                     (conversation_id, json.dumps(to_dict(assembler.config), sort_keys=True),
                      assembler.nodes.next_id, assembler._next_seq, utc_now().isoformat()))
        conn.executemany("INSERT INTO dcs_messages VALUES (?, ?, ?, ?, ?, ?, ?)", [
            (conversation_id, m.message_id, assembler._seq[m.message_id], m.content,
             cast(datetime, m.timestamp).isoformat(),
             m.key.serialize(), ",".join(str(d) for d in m.hard_linked_dcns)) for m in msgs])
        conn.executemany("INSERT INTO dcs_nodes VALUES (?, ?, ?, ?, ?, ?, ?)", [
            (conversation_id, n.dcn_id, pos, json.dumps([_ident_to_text(t) for t in n.topics]),
             n.created_at.isoformat(), n.last_referenced_at.isoformat(), json.dumps(n.linked_message_ids))
            for pos, n in enumerate(assembler.nodes.nodes.values())])
        conn.executemany("INSERT INTO dcs_index VALUES (?, ?, ?, ?)", [
            (conversation_id, _ident_to_text(ident), pos, mid)
            for ident, mids in assembler.index_items() for pos, mid in enumerate(mids)])


def conversation_ids(store: StoreLike) -> list[str]:
    store.ensure_schema(SCHEMA_NAME, DDL, SCHEMA_VERSION)
    return [r[0] for r in store.query("SELECT conversation_id FROM dcs_conversations ORDER BY conversation_id")]


def load_conversation(store: StoreLike, conversation_id: str = "default", clock: Clock = utc_now,
                      config: DcsConfig | None = None) -> DcsContextAssembler:
    """A new assembler in the saved state. The saved config is used unless ``config`` is given."""
    store.ensure_schema(SCHEMA_NAME, DDL, SCHEMA_VERSION)
    head = store.query("SELECT config, next_dcn_id, next_seq FROM dcs_conversations WHERE conversation_id = ?",
                       (conversation_id,))
    if not head:
        raise DataError(f"no saved DCS conversation {conversation_id!r}; saved: {conversation_ids(store)}. "
                        "Fix: save_conversation(...) first or check the id.")
    cfg = config or from_dict(DcsConfig, json.loads(head[0][0]))
    asm = DcsContextAssembler(cfg, clock=clock)
    for row in store.query("SELECT message_id, seq, content, timestamp, dcs_key, hard_linked FROM dcs_messages "
                           "WHERE conversation_id = ? ORDER BY seq", (conversation_id,)):
        hard = tuple(int(x) for x in row[5].split(",") if x)
        msg = DcsMessage(row[0], DcsKey.parse(row[4]), row[2], datetime.fromisoformat(row[3]), hard)
        asm._messages[msg.message_id] = msg
        asm._seq[msg.message_id] = row[1]
        asm._timeline.append((cast(datetime, msg.timestamp), row[1], msg.message_id))
    asm._timeline.sort()
    for row in store.query("SELECT dcn_id, topics, created_at, last_referenced_at, linked FROM dcs_nodes "
                           "WHERE conversation_id = ? ORDER BY position", (conversation_id,)):
        asm.nodes.add(DcnNode(row[0], [_ident_from_text(t) for t in json.loads(row[1])],
                              datetime.fromisoformat(row[2]), datetime.fromisoformat(row[3]), json.loads(row[4])))
    for row in store.query("SELECT identifier, message_id FROM dcs_index WHERE conversation_id = ? "
                           "ORDER BY rowid", (conversation_id,)):
        ident = _ident_from_text(row[0])
        bucket = asm._index.setdefault(ident, [] if asm.faithful else {})
        if isinstance(bucket, list):
            bucket.append(row[1])
        else:
            bucket[row[1]] = None
    asm.nodes.next_id = head[0][1]
    asm._next_seq = head[0][2]
    return asm
