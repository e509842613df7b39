"""A core-only install: the suite collects with every optional extra absent (their tests skip with the install
line), and ragbench names the missing extra with its exact ``pip install`` line instead of a raw
``ModuleNotFoundError``. ``make test-core`` runs the whole fast suite that way."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ragbench import cli
from ragbench.errors import MissingExtraError, require_extra
from ragbench.eval import golden_run
from ragbench.eval.plots import pyplot

ROOT = Path(__file__).resolve().parents[1]


def test_the_suite_collects_without_the_optional_extras() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "tests/core_only.py", "--collect-only", "-q", "-rs"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "error" not in proc.stdout.splitlines()[-1]
    assert 'the tune extra is not installed: pip install "ragbench[tune]"' in proc.stdout
    assert 'the notebooks extra is not installed: pip install "ragbench[notebooks]"' in proc.stdout
    assert "tests/test_factory.py::test_tuner_and_cli_build_identical_systems" in proc.stdout
    assert "tests/tune/test_sweep.py::" not in proc.stdout  # skipped as a module: optuna is blocked


def test_require_extra_names_the_install_line() -> None:
    with pytest.raises(MissingExtraError) as info:
        require_extra("ragbench_no_such_package", "tune", "tuning")
    assert str(info.value) == ("tuning needs the Python package 'ragbench_no_such_package', which is not installed. "
                               'Fix: pip install "ragbench[tune]"')
    assert isinstance(info.value, ImportError)  # callers that catch ImportError keep working
    assert require_extra("json", "tune", "tuning").__name__ == "json"


def test_eval_golden_without_matplotlib_prints_the_install_line(tmp_path, capsys, monkeypatch) -> None:
    for name in ("matplotlib", "matplotlib.pyplot"):
        monkeypatch.setitem(sys.modules, name, None)  # import now fails as if matplotlib were not installed
    with pytest.raises(MissingExtraError, match=r'Fix: pip install "ragbench\[track\]"'):
        pyplot()
    monkeypatch.setattr(golden_run, "answer_systems", lambda golden, cfg, retrievers, *systems: {})
    code = cli.main(["eval", "golden", "--no-mlflow", "--out", str(tmp_path / "run"), "--set",
                     "embedding.model=hashing", "--set", "embedding.cache=false"])
    err = capsys.readouterr().err
    assert code != 0
    assert ("error: the result bar chart needs the Python package 'matplotlib', which is not installed. "
            'Fix: pip install "ragbench[track]"') in err
    assert "Traceback" not in err
