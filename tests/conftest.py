"""Shared fixtures. Tests needing the shared evaluation data find ../shared/data (or $RAGBENCH_DATA) and skip
with a clear reason when it is absent."""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def shared_data_dir() -> Path | None:
    env = os.environ.get("RAGBENCH_DATA")
    for cand in ([Path(env)] if env else []) + [ROOT.parent / "shared" / "data"]:
        if cand.is_dir():
            return cand
    return None


def extra(module: str, name: str) -> object:
    """``module`` of the optional extra ``name``, or the calling test skipped with the extra's install line."""
    return pytest.importorskip(module, reason=f'the {name} extra is not installed: pip install "ragbench[{name}]"')


@pytest.fixture(scope="session")
def mlflow_installed() -> bool:
    """Whether MLflow (the ``track`` extra) can be imported: evaluating commands then log a run and report its id,
    and without it they report ``mlflow_run_id: null`` and keep their results."""
    return importlib.util.find_spec("mlflow") is not None


@pytest.fixture(scope="session")
def shared_data() -> Path:
    d = shared_data_dir()
    if d is None:
        pytest.skip("shared evaluation data not found: set RAGBENCH_DATA or place it at ../shared/data")
    return d


def isolate(tmp_path_factory, monkeypatch) -> None:
    """Keep the embedding cache and MLflow store of tests out of the user's folders (every test gets this; a fixture
    of a wider scope, which runs before it, calls it with its own ``pytest.MonkeyPatch``)."""
    cache = tmp_path_factory.getbasetemp() / "ragbench-cache"
    cache.mkdir(exist_ok=True)
    monkeypatch.setenv("RAGBENCH_CACHE", str(cache))
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "sqlite:///" + str(tmp_path_factory.getbasetemp() / "mlflow.db"))


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    isolate(tmp_path_factory, monkeypatch)
