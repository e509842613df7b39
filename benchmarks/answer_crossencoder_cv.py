"""Fine-tune all-MiniLM-L6-v2 as an answer verifier, each fold's model scoring only organisations it never saw.

Reads the rows of ``benchmarks/answer_crossencoder_rows.py --out`` and writes, per question, the held-out
probability that the answer's evidence answers it (docs/answers.md, "Session 31"). The golden sets are dealt in
name order into ``--folds`` folds (two: golden, hollinmoor, marrowgate, quenby, sorrelby, vardon against the other
six); each fold's questions are scored by a model trained on the other folds only (``--train-sets N``: on the first
N of them, for a learning curve).

A model reads a pair: the standalone question, and the evidence ("<title and headings>: <sentence>", one or
several). Training pairs, per question of the training sets: the reader's whole answer (1 when it holds the golden
fact, 0 for a should-refuse question or an answer without its fact; skipped when the question names no fact), each
passage sentence holding the fact (1) and up to ``--negatives`` other passage sentences drawn at random (0). The
loss is binary cross-entropy weighted so both classes count the same; AdamW, linear warm-up over the first tenth,
then linear decay. A question is scored on the whole answer (``p_joined``) and on its best sentence (``p_max``).

Run in a throwaway venv outside the repo (torch never enters the project venv; this script does not import ragbench):

    python3 -m venv /tmp/torchenv && /tmp/torchenv/bin/pip install torch==2.13.0 transformers safetensors
    /tmp/torchenv/bin/python benchmarks/answer_crossencoder_cv.py --rows rows.jsonl --out preds.jsonl \\
        --model-dir "$(.venv/bin/python -c 'from ragbench import assets; print(assets.minilm_fp32_dir())')"

About 12 minutes a fold on 2 cores (two epochs over ~4,500 pairs).
"""
from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path
from typing import Any

import torch
from transformers import BertForSequenceClassification, BertTokenizerFast


def evidence(sentences: list[str], contexts: list[str]) -> str:
    return " ".join(f"{c}: {s}" if c else s for s, c in zip(sentences, contexts))


def pairs(rows: list[dict[str, Any]], sets: set[str], negatives: int, seed: int) -> list[tuple[str, str, int]]:
    """The training pairs of ``sets`` (see the module docstring)."""
    rng = random.Random(seed)
    out: list[tuple[str, str, int]] = []
    candidates: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        if r["set"] not in sets:
            continue
        if r["kind"] == "answer":
            row = r["row"]
            if not r["sentences"] or (not row["should_refuse"] and r["answer_fact"] is None):
                continue
            out.append((r["asked"], evidence(r["sentences"], r["contexts"]),
                        int(not row["should_refuse"] and row["fact"])))
        elif r["label"] is not None:
            candidates.setdefault((r["set"], r["qid"]), []).append(r)
    for cands in candidates.values():
        pos = [c for c in cands if c["label"] == 1]
        neg = [c for c in cands if c["label"] == 0]
        rng.shuffle(neg)
        seen: set[tuple[str, str]] = set()
        for c in pos + neg[:negatives]:
            if (c["sentence"], c["context"]) not in seen:
                seen.add((c["sentence"], c["context"]))
                out.append((c["asked"], evidence([c["sentence"]], [c["context"]]), c["label"]))
    return out


def train(model_dir: str, examples: list[tuple[str, str, int]], args: argparse.Namespace) -> tuple[Any, Any]:
    torch.manual_seed(args.seed)
    tok = BertTokenizerFast.from_pretrained(model_dir)
    model = BertForSequenceClassification.from_pretrained(model_dir, num_labels=1)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    steps = int(len(examples) * args.epochs / args.batch)
    warm = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, s / warm) * max(0.0, (steps - s) / steps))
    share = sum(e[2] for e in examples) / len(examples)
    loss_fn = torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor((1 - share) / share))
    rng = random.Random(args.seed)
    model.train()
    step, t0 = 0, time.time()
    while step < steps:
        order = list(range(len(examples)))
        rng.shuffle(order)
        for i in range(0, len(order) - args.batch + 1, args.batch):
            if step >= steps:
                break
            batch = [examples[j] for j in order[i:i + args.batch]]
            enc = tok([b[0] for b in batch], [b[1] for b in batch], truncation="only_second",
                      max_length=args.max_length, padding=True, return_tensors="pt")
            loss = loss_fn(model(**enc).logits.squeeze(-1), torch.tensor([float(b[2]) for b in batch]))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            step += 1
            if step % 100 == 0:
                print(f"  step {step}/{steps} loss {loss.item():.3f} ({time.time() - t0:.0f} s)", flush=True)
    model.eval()
    return tok, model


@torch.no_grad()
def predict(tok: Any, model: Any, rows: list[dict[str, Any]], sets: set[str], max_length: int) -> list[dict]:
    out = []
    for r in rows:
        if r["kind"] != "answer" or r["set"] not in sets or not r["sentences"]:
            continue
        texts = [evidence(r["sentences"], r["contexts"])]
        texts += [evidence([s], [c]) for s, c in zip(r["sentences"], r["contexts"])]
        enc = tok([r["asked"]] * len(texts), texts, truncation="only_second", max_length=max_length,
                  padding=True, return_tensors="pt")
        p = torch.sigmoid(model(**enc).logits.squeeze(-1)).tolist()
        out.append({"set": r["set"], "qid": r["qid"], "p_joined": p[0], "p_max": max(p[1:])})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", required=True)
    ap.add_argument("--out", required=True, help="held-out probabilities (JSON lines)")
    ap.add_argument("--model-dir", required=True, help="all-MiniLM-L6-v2's safetensors folder")
    ap.add_argument("--folds", type=int, default=2)
    ap.add_argument("--epochs", type=float, default=2.0)
    ap.add_argument("--lr", type=float, default=3e-5)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--negatives", type=int, default=6)
    ap.add_argument("--max-length", type=int, default=160)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--train-sets", type=int, default=0,
                    help="train each fold on only the first N of its training sets, in name order (a learning curve)")
    args = ap.parse_args()
    torch.set_num_threads(2)
    rows = [json.loads(line) for line in Path(args.rows).read_text(encoding="utf-8").splitlines()]
    names = sorted({r["set"] for r in rows})
    folds = [set(names[i::args.folds]) for i in range(args.folds)]
    preds: list[dict] = []
    for k, held in enumerate(folds):
        train_sets = set(sorted(set(names) - held)[:args.train_sets or None])
        examples = pairs(rows, train_sets, args.negatives, args.seed)
        print(f"fold {k + 1}/{len(folds)}: training on {len(train_sets)} sets, {len(examples)} pairs "
              f"({sum(e[2] for e in examples)} positive); scoring {', '.join(sorted(held))}", flush=True)
        tok, model = train(args.model_dir, examples, args)
        preds += predict(tok, model, rows, held, args.max_length)
    Path(args.out).write_text("".join(json.dumps(p) + "\n" for p in preds), encoding="utf-8")
    print(f"{len(preds)} held-out questions scored → {args.out}")


if __name__ == "__main__":
    main()
