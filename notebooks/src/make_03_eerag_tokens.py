"""Writes notebooks/03_eerag_tokens.ipynb (run it with papermill afterwards to store outputs)."""
import nbformat as nbf

nb = nbf.v4.new_notebook()
cells = []
cells.append(nbf.v4.new_markdown_cell("""# EE-RAG: election quality and token cost

Two measurements of Elective Ephemeral RAG:

1. the source's **EE-RAG benchmark** (26 knowledge entries, 20 cases) with the deterministic policy elector;
2. a **token-cost study**: naive RAG injects the top-k documents in full; EE-RAG shows ~25-token summaries and
   injects only what the elector asks for. We measure evidence recall (a relevant document reaches the model) and
   context tokens across the elector threshold. By default it runs on the bundled golden set (seconds); set
   `corpus` to a BEIR folder (e.g. SciFact) for the full study."""))
cells.append(nbf.v4.new_code_cell("""# Parameters (papermill)
data_dir = None          # shared evaluation data; None: $RAGBENCH_DATA or ../../shared/data
corpus = "golden"        # "golden" or a BEIR folder
split = "train"
k = 5
thresholds = [0.2, 0.3, 0.4, 0.5, 0.6]
max_queries = None
seed = 0""", metadata={"tags": ["parameters"]}))
cells.append(nbf.v4.new_code_cell("""import os
from pathlib import Path

import pandas as pd

from ragbench.config import RagbenchConfig
from ragbench.eval.eerag_bench import run_bench
from ragbench.eval.eerag_tokens import plot_tradeoff, run_token_study, token_study
from ragbench.eval.golden import load_golden

pd.set_option("display.precision", 3)
data = Path(data_dir or os.environ.get("RAGBENCH_DATA") or Path.cwd().resolve().parent.parent / "shared" / "data")
bench_file = data / "dcs_ee_rag" / "eedag_benchmark_v1.json"
print("benchmark file found:", bench_file.is_file())"""))
cells.append(nbf.v4.new_markdown_cell("## 1. The EE-RAG benchmark (policy elector)"))
cells.append(nbf.v4.new_code_cell("""report = run_bench(bench_file)
pd.Series(report.summary).round(3).to_frame("value")"""))
cells.append(nbf.v4.new_code_cell("""report.cases[["case_id", "expected", "elected", "context_tokens", "naive_context_tokens", "model_calls"]]"""))
cells.append(nbf.v4.new_markdown_cell("## 2. Token cost against evidence recall"))
cells.append(nbf.v4.new_code_cell("""cfg = RagbenchConfig(seed=seed)
if corpus == "golden":
    gs = load_golden()
    study = token_study(gs.documents, gs.queries_df(answerable_only=True), gs.qrels_df(), cfg, k=k,
                        thresholds=thresholds, max_queries=max_queries, seed=seed)
else:
    study = run_token_study(corpus, split, cfg, k=k, thresholds=thresholds, max_queries=max_queries, seed=seed)
study.curve.round(3)"""))
cells.append(nbf.v4.new_code_cell("""{key: (round(v, 3) if isinstance(v, float) else v) for key, v in study.headline.items()}"""))
cells.append(nbf.v4.new_code_cell("""# NBVAL_IGNORE_OUTPUT
import tempfile
from IPython.display import Image
png = Path(tempfile.mkdtemp()) / "eerag_tradeoff.png"
plot_tradeoff(study.curve, png)
Image(str(png))"""))
nb["cells"] = cells
nb["metadata"]["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
nbf.write(nb, "notebooks/03_eerag_tokens.ipynb")
