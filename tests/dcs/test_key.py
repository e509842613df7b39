import pytest

from ragbench.config import DcsWeights
from ragbench.dcs.key import DcsKey, jaccard
from ragbench.errors import DataError


def test_source_tests():
    k = DcsKey((1, 2), (3,), (4, 5))
    assert k.similarity(k) == 1.0
    assert DcsKey().similarity(DcsKey()) == 1.0
    assert DcsKey().similarity(DcsKey((1,), (2,), (3,))) == 0.0
    assert jaccard([1, 2], [2, 3]) == pytest.approx(1 / 3)
    assert k.serialize() == "1,2|3|4,5"


def test_empty_set_rules_give_free_weight():
    # intents disjoint (0), both domain and dcn sets empty (1 each) -> 0.3 + 0.2
    assert DcsKey((1,)).similarity(DcsKey((2,))) == pytest.approx(0.5)
    assert jaccard([], [1]) == 0.0 and jaccard([], []) == 1.0


def test_weighted_similarity_hand_computed():
    a, b = DcsKey((1, 2), (3,), (4,)), DcsKey((2,), (3,), (5,))
    assert a.similarity(b) == pytest.approx(0.5 * 0.5 + 0.3 * 0 + 0.2 * 1)
    assert a.similarity(b, DcsWeights(intent=1.0, dcn=0.0, domain=0.0)) == pytest.approx(0.5)


def test_serialisation_round_trip_and_empty_groups():
    assert DcsKey((1,)).serialize() == "1||"
    assert DcsKey.parse("1,2|3|4,5") == DcsKey((1, 2), (3,), (4, 5))
    assert DcsKey.parse("  ") == DcsKey() and DcsKey.parse(None) == DcsKey()
    assert DcsKey.parse("7") == DcsKey((7,))
    assert DcsKey.parse("1,,2||") == DcsKey((1, 2))
    assert DcsKey.parse(DcsKey((3,), (), (9, 10)).serialize()) == DcsKey((3,), (), (9, 10))


@pytest.mark.parametrize("text", ["a|b", "1|2|3|4", "1.5||"])
def test_parse_rejects_bad_text(text):
    with pytest.raises(DataError):
        DcsKey.parse(text)


def test_identifiers_shared_space_vs_namespaced():
    k = DcsKey((1,), (1,), (1,))
    assert k.identifiers() == [1, 1, 1]
    assert k.identifiers(namespaced=True) == [("i", 1), ("d", 1), ("n", 1)]
    assert DcsKey((1, 8), (1,)).topics() == [1, 8]
    assert DcsKey((1, 8), (1,)).topics(True) == [("i", 1), ("i", 8), ("d", 1)]


def test_non_integer_ids_rejected():
    with pytest.raises(DataError):
        DcsKey(("1",))
    with pytest.raises(DataError):
        DcsKey((True,))
