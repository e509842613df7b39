"""Writes notebooks/06_eerag_conversation.ipynb (run it with papermill afterwards to store outputs)."""
import nbformat as nbf

nb = nbf.v4.new_notebook()
cells = []
cells.append(nbf.v4.new_markdown_cell("""# EE-RAG + DCS on long conversations (LoCoMo)

Each LoCoMo conversation is replayed turn by turn through the conversation system (`ragbench.eerag.conversation`):
every turn becomes memory with a summary, DCS observes it. At each QA question the context is built four ways —
**full-history** (every turn), **top-k** (the retriever's k best turns in full), **eerag** (the summary header, then
the elected turns) and **eerag+dcs** (the same with the DCS boost) — and scored by *evidence recall* (share of the
gold evidence turns present in the context actually sent) against *context tokens*.

By default one conversation (`conv-26`) with a small variant grid runs in about a minute; the documented numbers
(docs/eerag.md) come from `ragbench eerag converse` on all five development conversations."""))
cells.append(nbf.v4.new_code_cell("""# Parameters (papermill)
file = None                # LoCoMo JSON; None: <shared data>/locomo/locomo_dev.json
elector = "policy"         # policy | llm
model = None               # chat model for the llm elector: llama, llama:<name>, openai
k = 10                     # turns in the top-k baseline
retriever = "bm25"
conversations = ["conv-26"]
max_questions = 80
variants = [{"eerag.top_k": 10, "eerag.candidate_k": 20},
            {"eerag.top_k": 10, "eerag.candidate_k": 20, "eerag.summary_tokens": 60}]""",
                                  metadata={"tags": ["parameters"]}))
cells.append(nbf.v4.new_code_cell("""import os
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from ragbench.config import RagbenchConfig, with_overrides
from ragbench.eval.eerag_converse import run_converse, with_loco
from ragbench.llm import make_chat_model

pd.set_option("display.precision", 3)
data = Path(os.environ.get("RAGBENCH_DATA") or Path.cwd().resolve().parent.parent / "shared" / "data")
path = Path(file) if file else data / "locomo" / "locomo_dev.json"
cfg = with_overrides(RagbenchConfig(), {"retrieval.mode": retriever, "eerag.elector": elector})
chat = make_chat_model(model) if model else None
result = with_loco(run_converse(path, cfg, chat_model=chat, k=k, variants=variants, conversations=conversations,
                                max_questions=max_questions))
systems = result.systems()
table = pd.DataFrame({name: {key: v for key, v in s.items() if key != "by_category"} for name, s in systems.items()}).T
table[["evidence_recall", "elected_recall", "context_tokens", "token_share", "model_calls"]]"""))
cells.append(nbf.v4.new_markdown_cell("""`elected_recall` counts only the turns injected after the election (not those whose summary in the header
already shows the whole turn)."""))
cells.append(nbf.v4.new_code_cell("""pd.DataFrame({name: s["by_category"] for name, s in systems.items()}).T"""))
cells.append(nbf.v4.new_markdown_cell("## Recall against tokens"))
cells.append(nbf.v4.new_code_cell("""# NBVAL_IGNORE_OUTPUT
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
for name, s in systems.items():
    if name == "full-history":
        continue
    axes[0].scatter(s["context_tokens"], s["evidence_recall"], label=name)
axes[0].set_xlabel("context tokens (mean)"); axes[0].set_ylabel("evidence recall"); axes[0].legend(fontsize=7)
pq = result.per_question
cat = pq[pq.system.isin(["top-k", "eerag", "eerag+dcs"])].groupby(["category", "system"]).evidence_recall.mean()
cat.unstack().plot.bar(ax=axes[1]); axes[1].set_ylabel("evidence recall"); axes[1].set_title("by LoCoMo category")
fig.tight_layout()
plt.show()"""))
cells.append(nbf.v4.new_markdown_cell("## Does DCS help? (paired, per question)"))
cells.append(nbf.v4.new_code_cell("""tests = {"eerag+dcs vs eerag": result.paired("eerag+dcs", "eerag"),
         "eerag vs top-k": result.paired("eerag", "top-k")}
for i in range(1, len(variants) + 1):
    tests[f"eerag+dcs[{i}] vs eerag[{i}]"] = result.paired(f"eerag+dcs[{i}]", f"eerag[{i}]")
pd.DataFrame(tests).T[["delta", "ci", "p_value", "wins", "ties", "losses"]]"""))
nb["cells"] = cells
nb["metadata"]["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
nbf.write(nb, "notebooks/06_eerag_conversation.ipynb")
