"""Config helpers: validation, dotted overrides, stable hashing, YAML round trip."""
from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest

from ragbench.config import (DcsWeights, LshConfig, RagbenchConfig, config_hash, dump_config, field_names, flatten,
                             from_dict, load_config, with_overrides)
from ragbench.errors import ConfigError

OVERRIDES = {"dcs.weights.intent": 0.4, "lsh.tables": 12, "chunking.strategy": "sentences"}


def test_unknown_field_is_rejected_listing_the_valid_ones() -> None:
    with pytest.raises(ConfigError) as err:
        from_dict(RagbenchConfig, {"lsh": {"tabels": 3}})
    msg = str(err.value)
    assert "lsh.tabels" in msg
    assert "Valid fields: lsh.tables, lsh.bits, lsh.multiprobe, lsh.seed, lsh.rerank." in msg
    with pytest.raises(ConfigError, match="unknown config field"):
        from_dict(RagbenchConfig, {"nonsense": 1})


def test_with_overrides_on_dotted_names_changes_only_those_fields() -> None:
    base = RagbenchConfig()
    cfg = with_overrides(base, {"dcs.weights.intent": "0.4", "lsh.tables": "12", "fusion.rerank": "yes"})
    assert cfg.dcs.weights == DcsWeights(intent=0.4, dcn=0.3, domain=0.2)
    assert cfg.lsh == LshConfig(tables=12, bits=8, multiprobe=0, seed=None)
    assert cfg.fusion.rerank is True
    assert base.dcs.weights.intent == 0.5 and base.lsh.tables == 10  # the original is untouched
    changed = {k for k, v in flatten(cfg).items() if flatten(base)[k] != v}
    assert changed == {"dcs.weights.intent", "lsh.tables", "fusion.rerank"}


def test_with_overrides_rejects_unknown_names_with_a_suggestion() -> None:
    with pytest.raises(ConfigError) as err:
        with_overrides(RagbenchConfig(), {"dcs.weights.intnet": 0.1})
    assert "Did you mean 'dcs.weights.intent'?" in str(err.value)
    assert "dcs.weights.dcn" in str(err.value)


@pytest.mark.parametrize("key, value", [
    ("lsh.tables", "1.5"), ("lsh.tables", True), ("lsh.tables", "1e400"), ("lsh.tables", "ten"),
    ("fusion.rerank_weight", "nan"), ("fusion.rerank_weight", False), ("fusion.rerank", "maybe"),
    ("chunking.strategy", 3),
])
def test_wrongly_typed_values_are_rejected(key: str, value: object) -> None:
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        with_overrides(RagbenchConfig(), {key: value})


def test_numeric_strings_and_whole_floats_are_coerced() -> None:
    cfg = with_overrides(RagbenchConfig(), {"lsh.tables": 12.0, "lsh.bits": "1e1", "fusion.rerank_weight": 1})
    assert (cfg.lsh.tables, cfg.lsh.bits, cfg.fusion.rerank_weight) == (12, 10, 1.0)
    assert isinstance(cfg.fusion.rerank_weight, float)


def test_field_names_are_the_flat_dotted_names() -> None:
    names = field_names()
    assert "dcs.weights.intent" in names and "lsh.tables" in names and "seed" in names
    assert len(names) == len(set(names)) == len(flatten(RagbenchConfig()))


def test_config_hash_is_sha256_of_canonical_json() -> None:
    expected = hashlib.sha256(b'{"a":[1,2],"b":{"c":0.5}}').hexdigest()[:16]
    assert config_hash({"b": {"c": 0.5}, "a": [1, 2]}) == expected


def test_config_hash_depends_on_values_only() -> None:
    a = with_overrides(RagbenchConfig(), OVERRIDES)
    b = from_dict(RagbenchConfig, {"dcs": {"weights": {"intent": 0.4}}, "lsh": {"tables": 12},
                                   "chunking": {"strategy": "sentences"}})
    assert config_hash(a) == config_hash(b)
    assert config_hash(a) != config_hash(RagbenchConfig())
    assert config_hash(with_overrides(a, {"lsh.seed": 43})) != config_hash(a)


def test_config_hash_is_stable_across_processes() -> None:
    code = ("from ragbench.config import RagbenchConfig, config_hash, with_overrides;"
            f"print(config_hash(with_overrides(RagbenchConfig(), {OVERRIDES!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONHASHSEED": "123", "PATH": ""})
    assert out.stdout.strip() == config_hash(with_overrides(RagbenchConfig(), OVERRIDES))


def test_yaml_round_trip_keeps_every_value_and_the_hash(tmp_path) -> None:
    cfg = with_overrides(RagbenchConfig(), {**OVERRIDES, "fusion.rerank_weight": 1e-7, "seed": 7})
    path = tmp_path / "sub" / "cfg.yaml"
    dump_config(cfg, path)
    back = load_config(path)
    assert back == cfg
    assert config_hash(back) == config_hash(cfg)


def test_load_config_yaml_with_partial_and_empty_sections_and_overrides(tmp_path) -> None:
    path = tmp_path / "cfg.yaml"
    path.write_text("lsh:\n  bits: 6\ndcs:\nseed: 1\n", encoding="utf-8")
    cfg = load_config(path, overrides={"lsh.tables": 4})
    assert (cfg.lsh.bits, cfg.lsh.tables, cfg.seed) == (6, 4, 1)
    assert cfg.dcs == RagbenchConfig().dcs


@pytest.mark.parametrize("content, match", [
    ("- a\n- b\n", "expected a mapping at the top level"),
    ("lsh: [1, 2]\n", "lsh: expected a mapping"),
    ("lsh: {bits: 6\n", "not valid YAML"),
    ("lsh:\n  bitz: 6\n", "lsh.bitz"),
])
def test_load_config_rejects_bad_files(tmp_path, content: str, match: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError, match=match):
        load_config(path)


def test_load_config_missing_file_names_the_path(tmp_path) -> None:
    with pytest.raises(ConfigError, match="nope.yaml"):
        load_config(tmp_path / "nope.yaml")


def test_list_fields_accept_yaml_lists_and_comma_strings() -> None:
    fields = {f: v for f, v in flatten(RagbenchConfig()).items() if isinstance(v, tuple)}
    if not fields:
        pytest.skip("no tuple-typed config field defined")
    name = sorted(fields)[0]
    assert flatten(with_overrides(RagbenchConfig(), {name: "a.com, b.org"}))[name] == ("a.com", "b.org")
    assert flatten(with_overrides(RagbenchConfig(), {name: ["x.com"]}))[name] == ("x.com",)
    with pytest.raises(ConfigError, match="expected a list"):
        with_overrides(RagbenchConfig(), {name: 3})
