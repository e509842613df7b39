import numpy as np
import pytest

from ragbench.dcs.classifier import (Domain, EmbeddingClusterClassifier, Intent, PatternClassifier, is_escalation,
                                     word_forms)
from ragbench.dcs.key import DcsKey
from ragbench.errors import ConfigError, DataError, ModelError

SRC = PatternClassifier("source")
IMP = PatternClassifier("improved")


def test_readme_example_has_no_domain():
    assert SRC.classify("How do I fix the auth bug?") == DcsKey((1, 8), ())


def test_multi_label_in_evaluation_order_chat_last():
    key = SRC.classify("Hi, what is wrong with the design? Let's fix it")
    assert key.intents == (Intent.QUERY, Intent.CORRECTION, Intent.DESIGN, Intent.FIX, Intent.CHAT)
    assert SRC.classify("thanks, explain this").intents == (1, 6)


def test_fallbacks():
    for text in ("", "   \n"):
        assert SRC.classify(text) == DcsKey((6,), ())
        assert IMP.classify(text) == DcsKey((6,), ())
    assert SRC.classify("Rust ownership rules") == DcsKey((6,), ())


def test_domains_multi_label():
    key = SRC.classify("Deploy the React page to AWS with a SQL database")
    assert key.domains == (Domain.BACKEND, Domain.FRONTEND, Domain.INFRASTRUCTURE)
    assert key.intents == (6,)


def test_whole_word_case_insensitive():
    assert SRC.classify("HOW").intents == (1,)
    assert SRC.classify("whatever shower").intents == (6,)
    assert SRC.classify("This is his house").intents == (6,)
    assert IMP.classify("This is his house").intents == (6,)


def test_source_misses_word_forms_improved_matches_them():
    text = "The JWT token refresh is failing with errors"
    assert SRC.classify(text) == DcsKey((6,), ())
    assert IMP.classify(text) == DcsKey((5, 8), ())
    assert SRC.classify("we deployed the bugs") == DcsKey((6,), ())
    assert IMP.classify("we deployed the bugs") == DcsKey((8,), (3,))
    assert IMP.classify("I am setting up the pipelines").intents == (2,)
    assert SRC.classify("That\u2019s not right").intents == (6,)
    assert IMP.classify("That\u2019s not right").intents == (5,)


def test_word_forms_rules():
    assert "bugged" in word_forms("bug") and "debugging" in word_forms("debug")
    assert "configuring" in word_forms("configure") and "studies" in word_forms("study")
    assert "crashes" in word_forms("crash") and "built" in word_forms("build")
    assert word_forms("hi") == ["hi"] and word_forms("when") == ["when"]


def test_is_escalation():
    assert is_escalation([Intent.CHAT], [Intent.DESIGN])
    assert is_escalation([Intent.QUERY], [Intent.FIX])
    assert not is_escalation([Intent.DESIGN], [Intent.CHAT])
    assert not is_escalation([Intent.QUERY], [Intent.CLARIFICATION])
    assert is_escalation([Intent.FIX, Intent.CLARIFICATION], [Intent.INSTRUCTION])
    assert SRC.is_escalation([6], [7])


def test_bad_input():
    with pytest.raises(ConfigError):
        PatternClassifier("fancy")
    with pytest.raises(DataError):
        SRC.classify(None)  # type: ignore[arg-type]


class LetterEmbedder:
    """Two orthogonal directions by first letter: a deterministic toy embedder."""

    model_id, dim, sha256 = "letters", 2, "0"

    def embed(self, texts, show_progress=False):
        return np.array([[1.0, 0.0] if t.startswith("a") else [0.0, 1.0] for t in texts], dtype=np.float32)


def test_embedding_cluster_classifier():
    clf = EmbeddingClusterClassifier(LetterEmbedder(), n_clusters=2, seed=0, base=SRC)
    with pytest.raises(ModelError):
        clf.classify("alpha")
    clf.fit(["alpha", "apple", "beta", "banana"])
    a, b = clf.classify("avocado fix"), clf.classify("berry")
    assert a.domains != b.domains and {a.domains[0], b.domains[0]} == {1, 2}
    assert clf.classify("apple").domains == a.domains
    assert a.intents == (8,)  # from the base classifier
    assert clf.is_escalation([6], [8])
    as_intent = EmbeddingClusterClassifier(LetterEmbedder(), 2, 0, level="intent").fit(["a", "ab", "b", "bc"])
    assert as_intent.classify("a").domains == () and len(as_intent.classify("a").intents) == 1
    assert not as_intent.is_escalation([1], [2])


def test_embedding_cluster_classifier_bad_input():
    with pytest.raises(DataError):
        EmbeddingClusterClassifier(LetterEmbedder(), n_clusters=3).fit(["a", "b"])
    with pytest.raises(ConfigError):
        EmbeddingClusterClassifier(LetterEmbedder(), n_clusters=1, level="dcn").fit(["a"])
