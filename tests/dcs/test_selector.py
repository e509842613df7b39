
from ragbench.dcs.assembler import DcsContextAssembler
from ragbench.dcs.classifier import PatternClassifier
from ragbench.dcs.selector import DcsContextSelector
from ragbench.schema import Hit, Message

from .conftest import T0

HISTORY = [
    Message("user", "Let's design the React dashboard page", {"id": "d1", "timestamp": "2025-01-15T08:00:00Z"}),
    Message("user", "Explain the SQL database migration", {"id": "s1", "timestamp": "2025-01-15T08:10:00Z"}),
    Message("user", "hello", {"id": "c1", "timestamp": "2025-01-15T08:20:00Z"}),
    Message("user", "design the react form component", {"id": "d2", "timestamp": "2025-01-15T08:30:00Z"}),
]


def selector(clock):
    return DcsContextSelector(DcsContextAssembler(clock=clock), PatternClassifier("improved"))


def test_select_returns_relevant_history_in_order(clock):
    sel = selector(clock)
    picked = sel.select("redesign the react view? design it again", HISTORY)
    assert [m.meta["id"] for m in picked] == ["d1", "d2"]
    assert sel.observe(HISTORY) == 0  # already registered
    assert sel.select("   ", HISTORY) == []


def test_rerank_boost_changes_candidate_order(clock):
    sel = selector(clock)
    sel.observe(HISTORY)
    hits = [Hit("x1", "s1", 0.9, 0), Hit("x2", "d2", 0.5, 1), Hit("x3", "zz", 0.4, 2), Hit("x4", "d1", 0.3, 3)]
    out = sel.rerank("design the react page layout", hits)
    assert [h.doc_id for h in out] == ["d2", "d1", "s1", "zz"]
    assert [h.rank for h in out] == [0, 1, 2, 3]
    assert [h.doc_id for h in sel.rerank("", hits)] == ["s1", "d2", "zz", "d1"]  # no DCS signal: by score
    sel.drop_irrelevant = True
    assert [h.doc_id for h in sel.rerank("design the react page layout", hits)] == ["d2", "d1"]


def test_history_without_ids_or_timestamps(clock):
    sel = selector(clock)
    hist = [Message("user", "design the react page"), Message("assistant", ""), Message("user", "design it")]
    assert sel.observe(hist) == 2  # the empty message is skipped
    assert set(sel.assembler.messages) == {"h0", "h2"}
    assert sel.assembler.get("h0").timestamp == T0
