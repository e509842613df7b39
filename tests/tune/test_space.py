"""Search-space parsing: every distribution form, and every bad input rejected before a study exists."""
from __future__ import annotations

from pathlib import Path

import pytest

from ragbench.config import field_names
from ragbench.errors import ConfigError
from ragbench.tune.space import Param, load_spec, parse_param, parse_spec
from ragbench.tune.sweep import prepare

from .conftest import require, tiny_spec, write_yaml

optuna = require("optuna", "tune")


@pytest.mark.parametrize("name, text, expected", [
    ("lsh.tables", "int[4, 32]", Param("lsh.tables", "int", 4, 32)),
    ("fusion.rrf_k", "int[10, 100, log]", Param("fusion.rrf_k", "int", 10, 100, log=True)),
    ("chunking.words", "int[20, 120, step=20]", Param("chunking.words", "int", 20, 120, step=20)),
    ("chunking.overlap", "float[0, 0.5]", Param("chunking.overlap", "float", 0.0, 0.5)),
    ("bm25.k1", "float[1e-2, 3, log]", Param("bm25.k1", "float", 0.01, 3.0, log=True)),
    ("dcs.weights.intent", "float[0, 1, step=0.25]", Param("dcs.weights.intent", "float", 0.0, 1.0, step=0.25)),
    ("retrieval.mode", "choice[bm25, dense, hybrid]", Param("retrieval.mode", "choice",
                                                             choices=("bm25", "dense", "hybrid"))),
    ("bm25.stopwords", "choice[true, false]", Param("bm25.stopwords", "choice", choices=(True, False))),
    ("lsh.multiprobe", [0, 1, 2], Param("lsh.multiprobe", "choice", choices=(0, 1, 2))),
])
def test_each_distribution(name, text, expected):
    p = parse_param(name, text)
    assert p == expected
    assert type(p.low) is type(expected.low)  # int bounds stay int, float bounds float


def test_distributions_map_to_optuna():
    assert parse_param("lsh.tables", "int[4, 32]").distribution() == optuna.distributions.IntDistribution(4, 32)
    assert parse_param("bm25.k1", "float[0.1, 2, log]").distribution() == \
        optuna.distributions.FloatDistribution(0.1, 2.0, log=True)
    assert parse_param("retrieval.mode", "choice[bm25, lsh]").distribution() == \
        optuna.distributions.CategoricalDistribution(["bm25", "lsh"])


def test_unknown_field_lists_valid_ones():
    with pytest.raises(ConfigError) as e:
        parse_param("lsh.tabels", "int[4, 32]")
    msg = str(e.value)
    assert "lsh.tabels" in msg and "Did you mean 'lsh.tables'" in msg
    assert all(name in msg for name in field_names())


@pytest.mark.parametrize("name, text, fragment", [
    ("lsh.tables", "int[32, 4]", "is empty"),
    ("chunking.overlap", "float[0.5, 0.1]", "is empty"),
    ("retrieval.mode", "choice[]", "is empty"),
    ("bm25.k1", "float[0, 2, log]", "low > 0"),
    ("bm25.k1", "float[0.1, 2, log, step=0.1]", "cannot be combined"),
    ("lsh.tables", "int[4.5, 32]", "must be integers"),
    ("lsh.tables", "float[4, 32]", "float[…] given for a field of type int"),
    ("retrieval.mode", "int[1, 3]", "int[…] given for a field of type str"),
    ("lsh.tables", "uniform[1, 3]", "cannot read"),
    ("lsh.tables", "int[1]", "needs LOW and HIGH"),
    ("lsh.tables", "int[1, x]", "expected a number"),
    ("lsh.tables", "int[1, 10, cubic]", "unknown option"),
    ("bm25.stopwords", "choice[maybe]", "expected true or false"),
    ("lsh.multiprobe", "choice[1, 1]", "repeats"),
])
def test_bad_distributions(name, text, fragment):
    with pytest.raises(ConfigError, match=None) as e:
        parse_param(name, text)
    assert fragment in str(e.value)


def _base(tmp_path: Path) -> dict:
    return tiny_spec(tmp_path, tmp_path / "data")


@pytest.mark.parametrize("change, fragment", [
    ({"colour": "red"}, "unknown key(s) colour"),
    ({"metrics": [{"nDCG@10": "up"}]}, "expected maximize or minimize"),
    ({"metrics": []}, "non-empty list"),
    ({"sampler": {"name": "annealing"}}, "unknown sampler 'annealing'"),
    ({"confirm": {"test": "z"}}, "confirm.test must be one of"),
    ({"confirm": {"alpha": 1.5}}, "confirm.alpha must be in (0, 1)"),
    ({"pruner": "hyperband"}, "unknown pruner"),
    ({"metrics": [{"nDCG@10": "max"}, {"latency_ms": "min"}], "pruner": "wilcoxon"}, "needs a single objective"),
    ({"split": {"heldout": 1.5}}, "fraction in (0, 1)"),
    ({"trials": 0}, "trials must be an integer ≥ 1"),
    ({"space": {}}, "'space' must map"),
    ({"name": "bad name!"}, "name must be"),
    ({"base": {"lsh": {"tabels": 3}}}, "unknown config field(s) lsh.tabels"),
])
def test_bad_experiments(tmp_path, change, fragment):
    with pytest.raises(ConfigError) as e:
        parse_spec({**_base(tmp_path), **change})
    assert fragment in str(e.value)


def test_directions_and_defaults(tmp_path):
    spec = parse_spec({**_base(tmp_path), "metrics": [{"nDCG@10": "max"}, {"latency_ms": "minimize"}],
                       "pruner": None})
    assert spec.metrics == (("nDCG@10", "maximize"), ("latency_ms", "minimize"))
    assert spec.pruner == "none"  # multi-objective studies are not pruned
    single = parse_spec({k: v for k, v in _base(tmp_path).items() if k != "pruner"})
    assert single.pruner == "wilcoxon"
    assert single.seed == 3 and single.sampler == "tpe" and dict(single.sampler_options) == {"n_startup_trials": 4}


def test_metric_the_dataset_cannot_produce_fails_before_the_study(tmp_path, tiny_beir):
    path = write_yaml(tmp_path / "exp" / "tiny.yaml",
                      tiny_spec(tmp_path, tiny_beir, metrics=[{"ElectionF1": "maximize"}]))
    spec = load_spec(path)
    with pytest.raises(ConfigError) as e:
        prepare(spec)
    assert "ElectionF1" in str(e.value) and "retrieval objective" in str(e.value)
    assert not (tmp_path / "exp" / "runs").exists()  # nothing was written


def test_dataset_forms_rejected(tmp_path):
    from ragbench.tune.objectives import parse_dataset

    assert parse_dataset("beir:/a/b:train").split == "train"
    assert str(parse_dataset("beir:/a/b:train").path) == "/a/b"
    for bad in ("beir:/a/b", "mnist", "eerag:"):
        with pytest.raises(ConfigError):
            parse_dataset(bad)


def test_load_spec_name_defaults_to_file_stem(tmp_path, tiny_beir):
    data = tiny_spec(tmp_path, tiny_beir)
    del data["name"]
    spec = load_spec(write_yaml(tmp_path / "my-exp.yaml", data))
    assert spec.name == "my-exp"
    assert spec.tuned_path == tmp_path / "runs" / "my-exp" / "tuned.yaml"  # untracked; --promote copies it to:
    assert spec.promoted_path == tmp_path / "tuned" / "my-exp.yaml"


def test_fingerprint_ignores_fields_left_at_their_defaults(tmp_path):
    base = _base(tmp_path)
    plain = parse_spec(base).fingerprint()
    explicit = parse_spec({**base, "base": {**base["base"], "lsh": {"tables": 10}}}).fingerprint()  # 10 = default
    assert plain == explicit
    assert parse_spec({**base, "base": {**base["base"], "lsh": {"tables": 11}}}).fingerprint() != plain
    assert parse_spec({**base, "split": {"heldout": 0.4, "seed": 1}}).fingerprint() != plain


def test_grid_sampler_grid(tmp_path):
    spec = parse_spec({**_base(tmp_path), "sampler": {"name": "grid"},
                       "space": {"llm.temperature": "float[0, 1, step=0.5]", "bm25.stopwords": "choice[true, false]",
                                 "lsh.bits": "int[4, 6]"}})
    assert spec.grid() == {"llm.temperature": [0.0, 0.5, 1.0], "bm25.stopwords": [True, False], "lsh.bits": [4, 5, 6]}
    bad = parse_spec({**_base(tmp_path), "sampler": {"name": "grid"}, "space": {"bm25.k1": "float[0.5, 2]"}})
    with pytest.raises(ConfigError, match="give it a step"):
        bad.grid()
