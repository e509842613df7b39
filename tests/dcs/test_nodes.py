import math
from datetime import timedelta

import pytest

from ragbench.dcs.nodes import DcnNode, DcnStore, recency
from ragbench.errors import ConfigError

from .conftest import T0


def test_recency_is_an_e_folding_time_not_a_half_life():
    assert recency(T0, T0, 24) == 1.0
    assert recency(T0, T0 + timedelta(hours=24), 24) == pytest.approx(math.exp(-1))  # 0.368, not 0.5
    assert recency(T0, T0 + timedelta(hours=48), 24) == pytest.approx(0.1353352832)
    assert recency(T0, T0 + timedelta(hours=72), 24) == pytest.approx(0.0497870684)
    assert recency(T0, T0 + timedelta(hours=12), 12) == pytest.approx(math.exp(-1))
    assert recency(T0 + timedelta(hours=5), T0, 24) == 1.0  # a future reference counts as age 0
    assert recency(T0, T0 + timedelta(days=900), float("inf")) == 1.0


def test_bad_decay_hours():
    with pytest.raises(ConfigError):
        DcnStore(decay_hours=0)


def test_find_or_create_touches_without_updating_topics(clock):
    store = DcnStore(clock)
    n1 = store.find_or_create([1, 2])
    assert (n1.dcn_id, n1.topics, n1.created_at) == (1, [1, 2], T0)
    clock.advance(hours=1)
    again = store.find_or_create([2, 3])  # J = 1/3 >= 0.1
    assert again is n1 and n1.topics == [1, 2] and n1.last_referenced_at == T0 + timedelta(hours=1)
    n2 = store.find_or_create([4])
    assert n2.dcn_id == 2 and len(store) == 2


def test_best_match_strictly_greater_and_recency_weighted(clock):
    store = DcnStore(clock)
    store.create([1, 2, 3])
    store.create([1])
    assert store.find_or_create([1]).dcn_id == 2  # J 1.0 beats 1/3
    store2 = DcnStore(clock)
    store2.create([1])
    store2.create([1])
    assert store2.best_match([1])[0].dcn_id == 1  # first wins ties
    clock.advance(hours=72)  # 1/3 * 0.0498 < 0.1 -> a new node
    assert store.best_match([1, 3])[0] is None
    assert store.find_or_create([1, 3]).dcn_id == 3


def test_absorb():
    a = DcnNode(1, [1, 2], T0, T0, ["m1"])
    b = DcnNode(2, [2, 3], T0 - timedelta(hours=1), T0 + timedelta(hours=2), ["m2", "m1"])
    a.absorb(b)
    assert a.topics == [1, 2, 3] and a.linked_message_ids == ["m1", "m2"]
    assert a.created_at == T0 - timedelta(hours=1) and a.last_referenced_at == T0 + timedelta(hours=2)


def test_merge_threshold_and_grown_topics(clock):
    store = DcnStore(clock)
    store.create([1, 2, 3])
    store.create([1, 2, 3, 4])  # J = 3/4 -> merged into 1, whose topics grow to [1, 2, 3, 4]
    store.create([2, 3, 4])     # J with the original [1,2,3] is 0.5; with the grown set 0.75
    store.create([9])
    assert store.merge_similar() == {2: 1, 3: 1}
    assert [n.dcn_id for n in store] == [1, 4] and store.get(1).topics == [1, 2, 3, 4]


def test_merge_below_threshold_and_keeper_is_lower_id(clock):
    store = DcnStore(clock)
    store.create([1, 2, 3, 4])
    store.create([1, 2])  # J = 0.5
    assert store.merge_similar() == {}
    other = DcnStore(clock)
    other.add(DcnNode(5, [7], T0, T0, ["x"]))
    other.add(DcnNode(3, [7], T0, T0, ["y"]))
    assert other.merge_similar() == {5: 3}
    assert other.get(3).linked_message_ids == ["y", "x"] and other.next_id == 6
