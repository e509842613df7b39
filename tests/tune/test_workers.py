"""Several worker processes sharing one study: exactly the budget, no lost or duplicated trials — through a journal
file and through a real PostgreSQL server."""
from __future__ import annotations

import pytest

from ragbench.tune.space import parse_spec
from ragbench.tune.storage import open_storage
from ragbench.tune.sweep import optimize, prepare, shares

from .conftest import require, tiny_spec

optuna = require("optuna", "tune")

SPACE = {"bm25.k1": "float[0.5, 2.0]", "bm25.b": "float[0, 1]", "bm25.stopwords": "choice[true, false]"}


def test_shares_split_the_budget_exactly():
    assert shares(7, 2) == [4, 3]
    assert shares(1, 4) == [1]
    assert shares(0, 2) == []
    assert sum(shares(10, 3)) == 10


def _check(url: str, n: int) -> None:
    study = optuna.load_study(study_name="tiny", storage=open_storage(url))
    trials = study.get_trials(deepcopy=False)
    assert sorted(t.number for t in trials) == list(range(n))           # none lost, none duplicated
    assert all(t.state.name in ("COMPLETE", "PRUNED") for t in trials)
    assert len({t._trial_id for t in trials}) == n


def test_two_workers_on_a_journal_file_make_exactly_n_trials(tmp_path, tiny_beir):
    spec = parse_spec(tiny_spec(tmp_path, tiny_beir, space=SPACE, trials=7), tmp_path)
    url = str(tmp_path / "shared.journal")
    study = optimize(spec, prepare(spec), url, 7, workers=2)
    assert len(study.trials) == 7
    _check(url, 7)
    # Resuming with a larger budget and two workers adds exactly the difference.
    optimize(spec, prepare(spec), url, 10, workers=2)
    _check(url, 10)


@pytest.mark.postgres
def test_two_workers_share_a_study_through_postgresql(tmp_path, tiny_beir, postgres_url):
    spec = parse_spec(tiny_spec(tmp_path, tiny_beir, space=SPACE, trials=6), tmp_path)
    study = optimize(spec, prepare(spec), postgres_url, 6, workers=2)
    assert len(study.trials) == 6
    _check(postgres_url, 6)
