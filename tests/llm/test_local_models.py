"""Local GGUF models: ``llama`` / ``llama:<name>`` resolution, install hints, and the verified atomic assembly."""
from __future__ import annotations

import hashlib

import pytest

from ragbench.errors import ConfigError, ModelError
from ragbench.llm import local
from ragbench.llm.factory import make_chat_model


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGBENCH_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "models"


def test_llama_prefers_qwen_when_installed(cache, monkeypatch):
    monkeypatch.setattr(local, "_smollm2_path", lambda: cache / "smol.gguf")
    smol = local.resolve_local_model("llama")
    assert smol == cache / "smol.gguf"  # Qwen absent: the fallback
    cache.mkdir(parents=True)
    (cache / local.QWEN_FILE).write_bytes(b"GGUF")
    assert local.resolve_local_model("llama") == cache / local.QWEN_FILE
    assert local.resolve_local_model("llama:smollm2-135m") == cache / "smol.gguf"
    assert local.resolve_local_model("llama:qwen") == cache / local.QWEN_FILE
    model = make_chat_model("llama:qwen2.5-coder-1.5b")
    assert model.model_id == "llama.cpp:qwen2.5-coder-1.5b-instruct-q4_k_m"


def test_missing_model_names_the_install_command(cache, monkeypatch):
    monkeypatch.setattr(local, "_smollm2_path", lambda: None)
    with pytest.raises(ModelError, match="make install-llm"):
        local.resolve_local_model("llama")
    with pytest.raises(ModelError, match="make install-llm"):
        make_chat_model("llama:qwen")
    with pytest.raises(ConfigError, match="unknown local model 'gpt5'"):
        local.resolve_local_model("llama:gpt5")


def test_assemble_checks_hash_and_writes_atomically(tmp_path):
    parts = []
    for i, data in enumerate([b"abc", b"def", b"g"]):
        p = tmp_path / f"part{i}.bin"
        p.write_bytes(data)
        parts.append(p)
    good = hashlib.sha256(b"abcdefg").hexdigest()
    dest = tmp_path / "out" / "model.gguf"
    with pytest.raises(ModelError, match="expected 0000"):
        local.assemble(parts, dest, "0000", 7)
    assert not dest.exists() and list(dest.parent.iterdir()) == []  # no partial file left behind
    with pytest.raises(ModelError, match="assembled 7 bytes, expected 8"):
        local.assemble(parts, dest, good, 8)
    assert local.assemble(parts, dest, good, 7) == dest
    assert dest.read_bytes() == b"abcdefg" and list(dest.parent.iterdir()) == [dest]
