"""Fault 5 of issue 13: independent ``ragbench tune`` processes on one journal (the documented way to add workers by
hand) — no trial failed by the other process, no duplicated parameter sets, distinct sampler seeds."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ragbench.tune.space import parse_spec
from ragbench.tune.storage import WorkerSlot, open_storage, process_id
from ragbench.tune.sweep import fail_stale, load_or_create, make_sampler

from .conftest import require, tiny_spec, write_yaml

optuna = require("optuna", "tune")

ROOT = Path(__file__).resolve().parents[2]
SPACE = {"bm25.k1": "float[0.5, 2.0]", "bm25.b": "float[0, 1]"}


def _tune(path: Path, journal: Path, trials: int) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen([sys.executable, "-m", "ragbench.cli", "tune", str(path), "--storage", str(journal),
                             "--trials", str(trials), "--no-mlflow", "--quiet"], cwd=path.parent, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_worker_slots_are_distinct_and_dead_ones_are_taken_over(tmp_path):
    journal = tmp_path / "s.journal"
    with WorkerSlot(journal) as a, WorkerSlot(journal) as b:
        assert (a.index, b.index) == (0, 1)
        assert not a.others_alive() or b.file.read_text() == process_id()  # same process: both "alive"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    Path(f"{journal}.worker-0").write_text(f"{process_id().rpartition(':')[0]}:{dead.stdout.strip()}")
    with WorkerSlot(journal) as c:
        assert c.index == 0 and c.file.read_text() == process_id()  # the dead process's slot is reused
    spec = parse_spec(tiny_spec(tmp_path, tmp_path, space=SPACE, sampler={"name": "random", "seed": 3}), tmp_path)
    dists = {p.name: p.distribution() for p in spec.space}

    def first(*args: int) -> dict:
        return optuna.create_study(sampler=make_sampler(spec, *args)).ask(dists).params

    assert first(0) == first(0) and first(0) != first(1) and first(1) != first(2)  # seed + worker slot
    assert first(0, 7) != first(0) and first(0, 7) == first(0, 7)  # a resumed study does not replay its draws


def test_a_live_trial_of_another_process_is_not_failed(tmp_path, tiny_beir):
    """Process 2 used to mark process 1's RUNNING trial FAIL; process 1 then died with UpdateFinishedTrialError."""
    spec = parse_spec(tiny_spec(tmp_path, tiny_beir, space=SPACE), tmp_path)
    journal = tmp_path / "s.journal"
    study = load_or_create(spec, open_storage(str(journal)))
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        live = study.ask()
        live.set_user_attr("owner", f"{process_id().rpartition(':')[0]}:{other.pid}")
        dead = study.ask()
        dead.set_user_attr("owner", f"{process_id().rpartition(':')[0]}:999999999")
        fresh = study.ask()  # created by another process that has not written its owner yet
        with WorkerSlot(journal) as mine:
            Path(f"{journal}.worker-5").write_text(f"{process_id().rpartition(':')[0]}:{other.pid}")
            assert fail_stale(study, mine) == 1
            states = {t.number: t.state.name for t in study.get_trials(deepcopy=False)}
            assert states == {live.number: "RUNNING", dead.number: "FAIL", fresh.number: "RUNNING"}
    finally:
        other.kill()
        other.wait()
    Path(f"{journal}.worker-5").unlink()
    with WorkerSlot(journal) as mine:  # nobody else alive: both left-over trials are stale now
        assert fail_stale(study, mine) == 2


def test_two_tune_processes_share_one_journal(tmp_path, tiny_beir):
    path = write_yaml(tmp_path / "tiny.yaml", tiny_spec(tmp_path, tiny_beir, space=SPACE, trials=24,
                                                        sampler={"name": "random", "seed": 3}))
    journal = tmp_path / "shared.journal"
    procs = [_tune(path, journal, 24) for _ in range(2)]
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (_, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert "Traceback" not in err
    study = optuna.load_study(study_name="tiny", storage=open_storage(str(journal)))
    trials = study.get_trials(deepcopy=False)
    assert {t.state.name for t in trials} == {"COMPLETE"}              # no FAIL trial from a race
    assert 24 <= len(trials) <= 25                                      # the budget (+1 when both finish at once)
    params = [tuple(sorted(t.params.items())) for t in trials]
    assert len(set(params)) == len(params)                             # no duplicated parameter set
    assert all(t.user_attrs["owner"] for t in trials)                  # each trial names its process
    assert not list(tmp_path.glob("shared.journal.worker-*"))          # slots released
