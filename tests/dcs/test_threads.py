import pandas as pd
import pytest

from ragbench.config import DcsConfig
from ragbench.dcs.classifier import PatternClassifier
from ragbench.errors import DataError
from ragbench.eval.threads import default_settings, evaluate_threads, purity, replay, thread_recovery


def test_purity_hand_computed():
    # cluster 1: a,a,b (majority 2); cluster 2: b,c (majority 1) -> 3/5
    assert purity(["a", "a", "b", "b", "c"], [1, 1, 1, 2, 2]) == pytest.approx(0.6)
    with pytest.raises(DataError):
        purity(["a"], [1, 2])


def small():
    return pd.DataFrame({
        "id": ["1", "2", "3", "4"],
        "content": ["design the react page", "explain the sql database", "design the react form", "hello"],
        "timestamp": pd.to_datetime(["2025-01-15T09:00Z", "2025-01-15T09:05Z", "2025-01-15T09:10Z",
                                     "2025-01-15T09:15Z"], utc=True),
        "thread": ["ui", "db", "ui", "noise"]})


def test_replay_routes_and_assembles_from_earlier_messages_only():
    routed, asm, merges = replay(small(), PatternClassifier("improved"), DcsConfig())
    assert list(routed["dcn"]) == [1, 2, 1, 3] and merges == 0
    assert list(routed["context"]) == [[], [], ["1"], []]
    rep = evaluate_threads(small(), PatternClassifier("improved"), DcsConfig(), "x")
    assert (rep.messages, rep.purity, rep.ari, rep.context_share, rep.context_size) == (3, 1.0, 1.0, 1.0, 1.0)
    assert rep.base_share == pytest.approx(0.5)  # message 3 sees "1" (ui) and "2" (db)


def test_replay_bad_frame():
    with pytest.raises(DataError):
        replay(small().drop(columns=["thread"]), PatternClassifier(), DcsConfig())


def test_real_messages(shared_data):
    from ragbench.eval.threads import load_messages

    df = load_messages(shared_data / "dcs_ee_rag" / "dcs_test_messages.json")
    routed, asm, merges = replay(df, PatternClassifier("source"), DcsConfig(faithful=True, profile="source"))
    # seed-behaviour 1.13: 3 DCNs with topics [1,8,6], [2], [5,7]; no merges
    assert [n.topics for n in asm.nodes] == [[1, 8, 6], [2], [5, 7]] and merges == 0
    table = thread_recovery(df, default_settings())
    assert table.loc["improved", "ari"] > table.loc["faithful", "ari"]
