import sqlite3
from contextlib import contextmanager

import pytest

from ragbench.config import DcsConfig
from ragbench.dcs.assembler import DcsContextAssembler, DcsMessage
from ragbench.dcs.classifier import PatternClassifier
from ragbench.dcs.key import DcsKey
from ragbench.dcs.persistence import conversation_ids, load_conversation, save_conversation
from ragbench.errors import DataError
from ragbench.store import KnowledgeStore

TEXTS = ["How do I fix the auth bug in the API?", "Let's design the React dashboard", "thanks!",
         "The deploy pipeline is failing on Docker", "Explain the SQL migration plan", "Build the endpoint",
         "Actually that's not right, the cache is wrong", "What paper should we compare against?"]


class SqliteShim:
    """A plain sqlite3 connection with the store's extension-point shape."""

    def __init__(self):
        self.conn = sqlite3.connect(":memory:", isolation_level=None)
        self.conn.execute("CREATE TABLE schemas (name TEXT PRIMARY KEY, version INTEGER)")

    def ensure_schema(self, name, ddl, version=1):
        row = self.conn.execute("SELECT version FROM schemas WHERE name = ?", (name,)).fetchone()
        if row is None or row[0] < version:
            self.conn.executescript(ddl)
            self.conn.execute("INSERT OR REPLACE INTO schemas VALUES (?, ?)", (name, version))

    @contextmanager
    def transaction(self):
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def query(self, sql, params=()):
        return self.conn.execute(sql, tuple(params)).fetchall()


def build(clock, faithful):
    cfg = DcsConfig(faithful=faithful, profile="source" if faithful else "improved")
    asm = DcsContextAssembler(cfg, clock=clock)
    clf = PatternClassifier(cfg.profile)
    for i, text in enumerate(TEXTS):
        asm.observe(f"m{i}", clf.classify(text), text)
        clock.advance(hours=3)
    asm.register(DcsMessage("loose", clf.classify("fix the bug in the API"), "fix the bug in the API"))
    asm.merge_similar_dcns()
    return asm, clf


def selection(asm, clf):
    return [[(s.message.message_id, round(s.score, 12)) for s in asm.assemble(clf.classify(t).with_dcns((1,)))]
            for t in TEXTS]


@pytest.fixture(params=["shim", "store"])
def store(request, tmp_path):
    if request.param == "shim":
        yield SqliteShim()
        return
    st = KnowledgeStore.open(tmp_path / "kb.db")
    yield st
    st.close()


@pytest.mark.parametrize("faithful", [True, False])
def test_save_reload_assemble_identical(store, clock, faithful):
    asm, clf = build(clock, faithful)
    save_conversation(store, asm, "c1")
    again = load_conversation(store, "c1", clock=clock)
    assert again.config == asm.config
    assert again.messages == asm.messages
    assert again.index_items() == asm.index_items()
    assert [(n.dcn_id, n.topics, n.linked_message_ids, n.last_referenced_at) for n in again.nodes] == \
        [(n.dcn_id, n.topics, n.linked_message_ids, n.last_referenced_at) for n in asm.nodes]
    assert selection(again, clf) == selection(asm, clf)
    # the resumed conversation continues identically
    for a in (asm, again):
        a.observe("next", clf.classify("fix the broken form"), "fix the broken form")
    assert again.get("next") == asm.get("next") and selection(again, clf) == selection(asm, clf)


def test_save_replaces_and_keeps_conversations_apart(store, clock):
    asm, _ = build(clock, False)
    save_conversation(store, asm, "c1")
    small = DcsContextAssembler(clock=clock)
    small.register(DcsMessage("only", DcsKey((1,))))
    save_conversation(store, small, "c2")
    save_conversation(store, small, "c1")
    assert conversation_ids(store) == ["c1", "c2"]
    assert list(load_conversation(store, "c1", clock=clock).messages) == ["only"]


def test_failed_save_leaves_previous_state(store, clock, monkeypatch):
    asm, clf = build(clock, False)
    save_conversation(store, asm, "c1")
    before = selection(load_conversation(store, "c1", clock=clock), clf)
    asm.register(DcsMessage("extra", DcsKey((1,))))

    def boom():
        raise RuntimeError("disk full")

    monkeypatch.setattr(asm, "index_items", boom)
    with pytest.raises(RuntimeError):
        save_conversation(store, asm, "c1")
    reloaded = load_conversation(store, "c1", clock=clock)
    assert "extra" not in reloaded and selection(reloaded, clf) == before


def test_bad_ids(store, clock):
    with pytest.raises(DataError):
        load_conversation(store, "missing", clock=clock)
    with pytest.raises(DataError):
        save_conversation(store, DcsContextAssembler(clock=clock), " ")
    assert conversation_ids(store) == []
