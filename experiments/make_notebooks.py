"""Writes notebooks/10_tune_lsh.ipynb … 14_tune_eerag.ipynb (then execute them with papermill to store outputs):

    python experiments/make_notebooks.py
    for nb in notebooks/1[0-4]_*.ipynb; do papermill --no-progress-bar --cwd notebooks "$nb" "$nb"; done
"""
from __future__ import annotations

from pathlib import Path

import nbformat as nbf

ROOT = Path(__file__).resolve().parents[1]

NOTEBOOKS = {
    "10_tune_lsh": ("golden_lsh.yaml", 12, "Tuning LSH on the golden set",
                    "Random-hyperplane LSH trades recall for speed through its number of tables, bits per table and "
                    "multi-probe depth. This sweep tunes them for nDCG@10 on a seeded 70 % of the golden questions "
                    "(asked as their own principals, so ACLs apply), stops hopeless trials early with Optuna's "
                    "`WilcoxonPruner` (per-question values reported as the trial runs), then confirms the best "
                    "configuration on the held-out 30 % against the base configuration with a paired test."),
    "11_tune_chunking": ("golden_chunking.yaml", 12, "Tuning chunking on the golden set (two objectives)",
                         "The chunking strategy (word windows, sentence packing or fixed-size character windows) "
                         "and its sizes decide both what retrieval can find and how many tokens the top "
                         "chunks put into a prompt. This sweep has two objectives — nDCG@10 (maximise) and the "
                         "context tokens of the top-k chunks (minimise) — so its result is a Pareto front; the "
                         "front's best-nDCG trial is confirmed on the held-out questions."),
    "12_tune_fusion": ("golden_fusion.yaml", 12, "Tuning hybrid fusion on the golden set",
                       "Reciprocal rank fusion of BM25 and the dense ranking has its own knobs (RRF k, per-ranking "
                       "weights, candidate depth) plus BM25's k1 and b. TPE searches them for nDCG@10 with "
                       "per-question Wilcoxon pruning; the best configuration is confirmed on held-out questions."),
    "13_tune_dcs": ("dcs_threads.yaml", 16, "Tuning DCS on labelled conversation threads",
                    "DCS scores earlier messages by intent, continuity node and domain. On the labelled DCS-EE-RAG "
                    "conversation (80 messages, one thread label each) we tune the weights and thresholds for the "
                    "share of each message's assembled context that comes from its own thread. The split is by "
                    "thread: tune on some lines of work, confirm on the others (needs the shared data)."),
    "14_tune_eerag": ("eerag_bench.yaml", 12, "Tuning the EE-RAG elector",
                      "The policy elector decides which surfaced candidates to expand. Two objectives: election F1 "
                      "on the EE-RAG benchmark (maximise) and context tokens (minimise); the split is by benchmark "
                      "case (needs the shared data and the MiniLM model)."),
}


def build(stem: str, experiment: str, trials: int, title: str, intro: str) -> nbf.NotebookNode:
    nb = nbf.v4.new_notebook()
    cells = [nbf.v4.new_markdown_cell(f"# {title}\n\n{intro}\n\nThe search space lives in "
                                      f"`experiments/{experiment}`; `ragbench tune experiments/{experiment}` runs "
                                      "the full budget from the command line (journal storage, MLflow, tuned YAML).")]
    cells.append(nbf.v4.new_code_cell(
        f'experiment = "{experiment}"  # a file in experiments/\n'
        f"trials = {trials}\n"
        "seed = 42             # the sampler's seed: the same seed gives the same trials\n"
        "workers = 1\n"
        'storage = ":memory:"  # or a journal file / postgresql:// URL to keep (and resume) the study\n'
        "log_mlflow = False", metadata={"tags": ["parameters"]}))
    cells.append(nbf.v4.new_code_cell(
        "import dataclasses\n"
        "import tempfile\n"
        "import warnings\n"
        "from pathlib import Path\n\n"
        "import pandas as pd\n"
        "from IPython.display import Image, display\n\n"
        "# tqdm's notebook bar needs ipywidgets; without it tqdm warns once at import (the sweep runs silently anyway).\n"
        'warnings.filterwarnings("ignore", message="IProgress not found")\n\n'
        "from ragbench.provenance import project_root\n"
        "from ragbench.tune.run import run_study\n"
        "from ragbench.tune.space import load_spec, spec_to_dict\n\n"
        'pd.set_option("display.precision", 4)\n'
        'pd.set_option("display.width", 160)\n'
        'spec = load_spec(project_root() / "experiments" / experiment)\n'
        "# Results go to a scratch folder: the committed experiments/tuned/ files come from `ragbench tune`.\n"
        "spec = dataclasses.replace(spec, seed=seed, trials=trials, folder=Path(tempfile.mkdtemp(prefix=\"tune-\")))\n"
        'print(f"{spec.name}: {spec.description}")\n'
        'print("metrics:", ", ".join(f"{m} ({d})" for m, d in spec.metrics), "| sampler:", spec.sampler,\n'
        '      "| pruner:", spec.pruner, "| trials:", spec.trials)\n'
        'pd.Series(spec_to_dict(spec)["space"], name="distribution").to_frame()'))
    cells.append(nbf.v4.new_markdown_cell("## The sweep"))
    cells.append(nbf.v4.new_code_cell(
        "res = run_study(spec, workers=workers, storage=storage, track=log_mlflow)\n"
        'print(f"{res.trials} trials:", ", ".join(f"{n} {s.lower()}" for s, n in res.states.items()))\n'
        'print(f"best trial #{res.best_trial}")\n'
        "pd.Series(res.best_params, name=\"best value\").to_frame()"))
    cells.append(nbf.v4.new_code_cell(
        'trials_df = pd.read_csv(res.study_dir / "trials.csv")\n'
        'cols = ["number", "state"] + [c for c in trials_df.columns if c.startswith(("value:", "param:"))]\n'
        "trials_df[cols].round(4)"))
    if stem in ("11_tune_chunking", "14_tune_eerag"):
        cells.append(nbf.v4.new_markdown_cell("## The Pareto front"))
        cells.append(nbf.v4.new_code_cell('pd.DataFrame(res.pareto).round(4)'))
        cells.append(nbf.v4.new_code_cell('display(Image(str(res.study_dir / "pareto.png")))'))
    cells.append(nbf.v4.new_markdown_cell("## Optimisation history and parameter importance"))
    cells.append(nbf.v4.new_code_cell(
        'for png in ("history.png", "importance.png"):\n'
        "    if (res.study_dir / png).exists():\n"
        "        display(Image(str(res.study_dir / png)))"))
    cells.append(nbf.v4.new_markdown_cell(
        "## Held-out confirmation\n\nThe best configuration and the base configuration on the held-out split; "
        "the p-value is a paired sign-flip permutation test on the primary metric (t-test and Wilcoxon next to it)."))
    cells.append(nbf.v4.new_code_cell(
        'conf = res.summary["confirmation"]\n'
        'print(f"{conf[\'metric\']}: tuning {res.tune_score:.4f} | held-out tuned {res.heldout_score:.4f} vs base "\n'
        '      f"{res.baseline_heldout_score:.4f} (n = {conf[\'n\']}, wins/ties/losses {conf[\'wins\']}/{conf[\'ties\']}/"\n'
        '      f"{conf[\'losses\']})")\n'
        'pd.Series({k: conf[k] for k in ("p_value", "t_p", "wilcoxon_p", "ci_low", "ci_high")}).round(4).to_frame("value")'))
    cells.append(nbf.v4.new_code_cell('pd.DataFrame(conf["means"]).round(4)'))
    nb["cells"] = cells
    nb["metadata"]["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


if __name__ == "__main__":
    for stem, (experiment, trials, title, intro) in NOTEBOOKS.items():
        nbf.write(build(stem, experiment, trials, title, intro), ROOT / "notebooks" / f"{stem}.ipynb")
        print("wrote", ROOT / "notebooks" / f"{stem}.ipynb")
