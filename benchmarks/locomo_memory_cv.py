"""Choose the conversation-memory settings (:class:`ragbench.retrieval.turns.TurnMemory`) by leaving one LoCoMo
conversation out at a time: for each conversation, the setting with the best evidence recall@10 on the other
conversations is scored on it (:mod:`ragbench.eval.cv` with the conversation as the group).

Grid: BM25 context (turns before / after), dense weight, session weight, stemming; the dense documents are the
turn alone with its date. MiniLM vectors come from the shared embedding cache after the first run.

    python benchmarks/locomo_memory_cv.py /work/shared/data/locomo/locomo_dev.json
"""
from __future__ import annotations

import argparse
import itertools
import sys
import time

import numpy as np
import pandas as pd

from ragbench.config import EmbeddingConfig
from ragbench.eval.cv import cross_validate
from ragbench.eval.datasets import load_locomo
from ragbench.eval.locomo import load_captions
from ragbench.eval.metrics import evidence_recall_at_k
from ragbench.retrieval.factory import make_embedder
from ragbench.retrieval.turns import TurnMemory, TurnText

BASELINE = "bm25 only, 1 before, unstemmed (the old bm25 strategy)"


def grid() -> dict[str, dict]:
    out: dict[str, dict] = {BASELINE: {"how": TurnText(before=1, after=0), "stemmer": "none", "dense_weight": 0.0,
                                       "session_weight": 0.0}}
    for before, after, dw, sw, stem in itertools.product((1, 2, 3), (0, 1), (0.0, 0.5, 1.0), (0.0, 0.5, 1.0, 2.0),
                                                         ("none", "english")):
        name = f"before {before}, after {after}, dense {dw}, session {sw}, stem {stem}"
        out[name] = {"how": TurnText(before=before, after=after), "stemmer": stem, "dense_weight": dw,
                     "session_weight": sw}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--out", default=None, help="write the per-question table (CSV) here")
    args = ap.parse_args()
    convs = load_locomo(args.file)
    caps = load_captions(args.file)
    emb = make_embedder(EmbeddingConfig())
    configs = grid()
    rows: list[dict] = []
    t0 = time.perf_counter()
    for conv in convs:
        mine = {d: c for (sid, d), c in caps.items() if sid == conv.sample_id}
        ids = [t.dia_id for t in conv.turns]
        qvecs = np.asarray(emb.embed([q.question for q in conv.qa]), dtype=np.float32)
        per_q: list[dict] = [{"conversation": conv.sample_id, "qid": i, "category": qa.category}
                             for i, qa in enumerate(conv.qa)]
        for name, params in configs.items():
            mem = TurnMemory(emb if params["dense_weight"] else None, **params).index(conv.turns, mine)
            for qi, qa in enumerate(conv.qa):
                order = mem.rank(qa.question, args.k, qvec=qvecs[qi])
                per_q[qi][name] = evidence_recall_at_k(qa.evidence, [ids[i] for i in order], args.k)
        rows.extend(per_q)
        print(f"{conv.sample_id}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    df = pd.DataFrame(rows)
    if args.out:
        df.to_csv(args.out, index=False)
    names = list(configs)
    scores = df[names].set_axis([f"{c}/{q}" for c, q in zip(df.conversation, df.qid)], axis=0)
    groups = pd.Series(df.conversation.to_numpy(), index=scores.index)
    cv = cross_validate(scores, groups)
    means = scores.mean().sort_values(ascending=False)
    print(f"LoCoMo {args.file}: {len(convs)} conversations, {len(df)} questions, {len(names)} settings, "
          f"evidence recall@{args.k}")
    print(f"\n| setting (top 8 on all conversations) | recall@{args.k} |\n|---|---:|")
    for name, v in means.head(8).items():
        print(f"| {name} | {v:.3f} |")
    print(f"| {BASELINE} | {scores[BASELINE].mean():.3f} |")
    print("\n| held-out conversation | chosen on the other four | fit | held-out recall | baseline on it |")
    print("|---|---|---:|---:|---:|")
    for row in cv.per_fold.itertuples():
        inside = (groups == row.fold).to_numpy()
        print(f"| {row.fold} ({row.queries} q) | {row.chosen} | {row.fit:.3f} | {row.held_out:.3f} | "
              f"{scores.loc[inside, BASELINE].mean():.3f} |")
    print(f"\nleave-one-conversation-out recall@{args.k}: {cv.held_out:.3f} (baseline {scores[BASELINE].mean():.3f})")


if __name__ == "__main__":
    main()
