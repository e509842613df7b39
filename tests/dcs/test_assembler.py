import logging
import math
from datetime import datetime, timedelta

import pytest

from ragbench.config import DcsConfig
from ragbench.dcs.assembler import DcsContextAssembler, DcsMessage
from ragbench.dcs.key import DcsKey
from ragbench.errors import ConfigError, DataError

from .conftest import T0


def faithful(clock, **kw):
    return DcsContextAssembler(DcsConfig(faithful=True, **kw), clock=clock)


def improved(clock, **kw):
    return DcsContextAssembler(DcsConfig(**kw), clock=clock)


def ids(selection):
    return [s.message.message_id for s in selection]


def test_per_dcn_cap_source_test(clock):
    asm = improved(clock)
    node = asm.find_or_create_dcn(DcsKey((1,)))
    for i in range(30):
        asm.register(DcsMessage(f"m{i}", DcsKey((1,), (), (node.dcn_id,)), hard_linked_dcns=(node.dcn_id,)))
    out = asm.assemble(DcsKey((1,), (), (node.dcn_id,)), max_total=100)
    assert len(out) == 20 and ids(out) == [f"m{i}" for i in range(20)]


def test_influence_source_test_and_terms():
    a = DcsMessage("a", DcsKey((6,), (10,)), hard_linked_dcns=(100,))
    b = DcsMessage("b", DcsKey((8,), (10,)), hard_linked_dcns=(100,))
    asm = DcsContextAssembler()
    assert asm.compute_influence(a, b) == 1.0  # 0.6 + 0.2 + 0.3 capped
    assert asm.compute_influence(DcsMessage("c", DcsKey((8,), (10,))), DcsMessage("d", DcsKey((8,), (10,)))) == 0.2
    assert asm.compute_influence(DcsMessage("c", DcsKey((1,))), DcsMessage("d", DcsKey((7,)))) == 0.3
    assert asm.compute_influence(b, a) == pytest.approx(0.8)  # FIX -> CHAT is no escalation


def _scenario(asm, clock):
    node = asm.find_or_create_dcn(DcsKey((1,), (1,)))
    asm.register(DcsMessage("m1", DcsKey((1,), (1,), (1,)), hard_linked_dcns=(node.dcn_id,)))
    asm.register(DcsMessage("m2", DcsKey((1, 8), (2,), (1,)), hard_linked_dcns=(node.dcn_id,)))
    asm.register(DcsMessage("m3", DcsKey((6,))))
    asm.register(DcsMessage("m4", DcsKey((7,), (1,))))
    asm.register(DcsMessage("m5", DcsKey((7,), (3,), (1,))))
    clock.advance(hours=24)
    return asm.assemble(DcsKey((1,), (1,), (1,)))


def test_decay_fixed_vs_faithful(clock):
    out = _scenario(improved(clock), clock)
    e = math.exp(-1)
    assert ids(out) == ["m1", "m5", "m2", "m4"]
    assert [round(s.score, 6) for s in out] == [round(e, 6), 0.3, round(0.55 * e, 6), 0.2]
    assert [s.decay for s in out] == [pytest.approx(e), 1.0, pytest.approx(e), 1.0]
    clock.now = T0
    out = _scenario(faithful(clock), clock)
    assert ids(out) == ["m1", "m2", "m5", "m4"]  # max(1.0, recency) never lowers a score
    assert [round(s.score, 6) for s in out] == [1.0, 0.55, 0.3, 0.2]


def test_log_entry_format(clock, caplog):
    asm = improved(clock)
    with caplog.at_level(logging.DEBUG, logger="ragbench.dcs"):
        _scenario(asm, clock)
        asm.assemble(DcsKey())
    assert str(asm.log[0]) == ("[DCS 09:00:00.000] DCN=1 Candidates=4 Filtered=4 Strategy=Selective "
                               "TopScores=[m1=0.368, m5=0.300, m2=0.202, m4=0.200]")
    assert str(asm.log[1]) == "[DCS 09:00:00.000] DCN=null Candidates=0 Filtered=0 Strategy=Full TopScores=[none]"
    names = {r.name for r in caplog.records}
    assert {"ragbench.dcs.Assemble", "ragbench.dcs.Register", "ragbench.dcs.DCN"} <= names
    assert any(str(asm.log[0]) in r.getMessage() for r in caplog.records if r.name == "ragbench.dcs.Assemble")


def test_shared_integer_space_collision_only_when_faithful(clock):
    for asm, expected in ((faithful(clock), ["b"]), (improved(clock), [])):
        asm.register(DcsMessage("b", DcsKey((3,), (1,))))  # IMPLEMENTATION in domain BACKEND(1)
        out = asm.assemble(DcsKey((1,)))                     # QUERY(1)
        assert ids(out) == expected
    assert faithful(clock).bucket(1) == []
    asm = faithful(clock)
    asm.register(DcsMessage("x", DcsKey((1,), (1,), (1,))))
    assert asm.bucket(1) == ["x", "x", "x"]  # the source's index keeps repeats


def test_eligibility_threshold_and_max_total(clock):
    asm = improved(clock)
    asm.register(DcsMessage("low", DcsKey(tuple(range(1, 12)), (5,), (3,))))  # 0.5/11 = 0.045
    asm.register(DcsMessage("a", DcsKey((1,))))
    asm.register(DcsMessage("b", DcsKey((1,))))
    assert ids(asm.assemble(DcsKey((1,)))) == ["a", "b"]
    assert asm.log[-1].candidates == 3 and asm.log[-1].filtered == 2
    assert ids(asm.assemble(DcsKey((1,)), max_total=1)) == ["a"]
    assert asm.assemble(DcsKey((1,)), max_total=0) == []
    with pytest.raises(DataError):
        asm.assemble(DcsKey((1,)), max_total=-1)


def test_cap_counts_every_dcn_of_a_message(clock):
    asm = improved(clock, max_per_dcn=1)
    n1, n2 = asm.nodes.create([("i", 1)]), asm.nodes.create([("i", 2)])
    asm.register(DcsMessage("a", DcsKey((1,)), hard_linked_dcns=(n1.dcn_id,)))
    asm.register(DcsMessage("b", DcsKey((1,)), hard_linked_dcns=(n1.dcn_id, n2.dcn_id)))
    asm.register(DcsMessage("c", DcsKey((1,)), hard_linked_dcns=(n2.dcn_id,)))
    assert ids(asm.assemble(DcsKey((1,)))) == ["a", "c"]


def test_influence_propagation_fires_only_when_fixed(clock):
    for asm, linked in ((faithful(clock), ()), (improved(clock), (1,))):
        asm.observe("p", DcsKey((6,), (1,)))           # CHAT + BACKEND -> DCN 1
        clock.advance(minutes=1)
        msg = asm.register(DcsMessage("q", DcsKey((8,), (1,))))  # FIX + BACKEND, no DCN
        # faithful: 0 + 0.2 + 0.3 = 0.5 < 0.6; fixed: 0.6 * J = 0.6/3 + 0.2 + 0.3 = 0.7
        assert msg.hard_linked_dcns == linked
        clock.now = T0
    assert msg.key.dcns == (1,) and asm.bucket(("n", 1)) == ["p", "q"]
    assert asm.nodes.get(1).linked_message_ids == ["p", "q"]


def test_neighbours_are_prior_in_time(clock):
    asm = improved(clock)
    asm.observe("p1", DcsKey((2,), (1,)), timestamp=T0 - timedelta(hours=3))
    asm.observe("p2", DcsKey((4,), (4,)), timestamp=T0 - timedelta(hours=1))
    late = asm.register(DcsMessage("late", DcsKey((2,), (1,)), timestamp=T0 - timedelta(hours=2)))
    assert late.hard_linked_dcns == (1,)  # p1 precedes it in time; p2 (registered last) does not


def test_merge_fixed_updates_keys_and_index_faithful_leaves_them_stale(clock):
    results = {}
    for name, asm in (("faithful", faithful(clock)), ("fixed", improved(clock))):
        asm.nodes.create([1, 2, 3, 4])
        asm.nodes.create([1, 2, 3])
        asm.register(DcsMessage("m1", DcsKey((), (), (1,)), hard_linked_dcns=(1,)))
        asm.register(DcsMessage("m2", DcsKey((), (), (2,)), hard_linked_dcns=(2,)))
        assert asm.merge_similar_dcns() == {2: 1}
        assert asm.get("m2").hard_linked_dcns == (1,)
        results[name] = (asm.get("m2").key.dcns, ids(asm.assemble(DcsKey((), (), (1,)))))
    assert results["faithful"] == ((2,), ["m1"])
    assert results["fixed"] == ((1,), ["m1", "m2"])


def test_bad_input_writes_nothing(clock):
    asm = improved(clock)
    for bad in (DcsMessage(" "), DcsMessage("f", timestamp=T0 + timedelta(seconds=1)),
                DcsMessage("u", DcsKey((1,)), hard_linked_dcns=(42,))):
        with pytest.raises(DataError):
            asm.register(bad)
    with pytest.raises(DataError):
        asm.register("not a message")  # type: ignore[arg-type]
    with pytest.raises(DataError):
        asm.observe("f", DcsKey((1,)), timestamp=T0 + timedelta(hours=1))
    assert len(asm) == 0 and asm.index_items() == [] and len(asm.nodes) == 0
    asm.register(DcsMessage("a", DcsKey((1,)), "first"))
    with pytest.raises(DataError):
        asm.register(DcsMessage("a", DcsKey((2,)), "second"))
    assert asm.get("a").content == "first" and asm.bucket(("i", 2)) == []


def test_faithful_accepts_what_the_source_accepts(clock, caplog):
    asm = faithful(clock)
    with caplog.at_level(logging.DEBUG, logger="ragbench.dcs"):
        asm.register(DcsMessage("u", DcsKey((1,)), hard_linked_dcns=(42,)))
    assert any("orphaned reference to DCN 42" in r.getMessage() for r in caplog.records)
    asm.register(DcsMessage("u", DcsKey((2,)), "again"))
    assert asm.get("u").content == "again" and len(asm) == 1
    assert asm.bucket(1) == ["u"] and asm.bucket(2) == ["u"]


def test_timestamps_naive_and_out_of_order(clock):
    asm = improved(clock)
    a = asm.register(DcsMessage("a", DcsKey((1,)), timestamp=datetime(2025, 1, 15, 8, 0)))
    assert a.timestamp == T0 - timedelta(hours=1)
    asm.register(DcsMessage("b", DcsKey((1,)), timestamp=T0 - timedelta(hours=5)))
    assert [e[2] for e in asm._timeline] == ["b", "a"]
    assert asm.register(DcsMessage("c", DcsKey((1,)))).timestamp == T0


def test_unknown_dcn_in_query_matches_nothing(clock):
    asm = improved(clock)
    asm.register(DcsMessage("a", DcsKey((), (), ())))
    assert asm.assemble(DcsKey((), (), (99,))) == []


def test_bad_config():
    with pytest.raises(ConfigError):
        DcsContextAssembler(DcsConfig(max_per_dcn=0))


def test_assembly_scores_only_candidates(clock, monkeypatch):
    asm = improved(clock)
    for i in range(1000):
        asm.register(DcsMessage(f"chat{i}", DcsKey((6,))))
    for i in range(5):
        asm.register(DcsMessage(f"ins{i}", DcsKey((2,))))
    calls = {"n": 0}
    original = DcsKey.similarity

    def counting(self, other, weights=None):
        calls["n"] += 1
        return original(self, other, weights)

    monkeypatch.setattr(DcsKey, "similarity", counting)
    assert len(asm.assemble(DcsKey((2,)))) == 5
    assert calls["n"] == 5  # the 1000 CHAT messages are never looked at


def test_ten_thousand_turns(clock):
    asm = improved(clock)
    keys = [DcsKey((i % 8 + 1,), (i % 4 + 1,)) for i in range(10_000)]
    for i, k in enumerate(keys):
        asm.observe(f"m{i}", k, timestamp=T0 - timedelta(seconds=10_000 - i))
    out = asm.assemble(DcsKey((1,), (1,)), max_total=50)
    assert len(out) == 20  # one DCN holds every (QUERY, BACKEND) message: the per-DCN cap applies
