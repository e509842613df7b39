"""A trained answer verifier, measured leaving organisations out (docs/answers.md, "Session 31").

Two steps around ``benchmarks/answer_crossencoder_cv.py`` (which fine-tunes all-MiniLM-L6-v2 as a cross-encoder in
a torch venv):

1. ``--out rows.jsonl``: answer every question of the golden sets with the answerability thresholds out of play
   (as ``benchmarks/answer_thresholds.py`` does) and write, per question, its offline-replay row, the standalone
   question and the answer's sentences with their titles and headings; and, per sentence of every passage the
   reader was given, a candidate row labelled 1 when it holds the question's golden fact (0 for every sentence of a
   should-refuse question; unlabelled when the question names no fact).
2. ``--rows rows.jsonl --preds preds.jsonl``: read the verifier's held-out probabilities and report, on the
   questions the thresholds can decide, the AUC for "answerable" of soft coverage, similarity and the verifier, and
   what each way of using the verifier does to refusal accuracy, HandledRight and the refusal slices.

    python benchmarks/answer_crossencoder_rows.py --data data/golden data/golden_* --out rows.jsonl
    /tmp/torchenv/bin/python benchmarks/answer_crossencoder_cv.py --rows rows.jsonl --out preds.jsonl
    python benchmarks/answer_crossencoder_rows.py --rows rows.jsonl --preds preds.jsonl
"""
from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable, Iterator

from answer_thresholds import GAP, OFF, Row, refused, row_of
from sklearn.metrics import roc_auc_score

#: The shipped thresholds (AnswerConfig's answerability_min_coverage / _min_similarity).
SHIPPED = (0.55, 0.62)


def extract(data: str) -> Iterator[dict[str, Any]]:
    """The rows of one golden set (see the module docstring)."""
    from ragbench.config import with_overrides
    from ragbench.eval.answers import answer_config, answer_golden, build_service, build_store
    from ragbench.eval.golden import load_golden
    from ragbench.llm.signals import contexts, heading_trail, paragraph_headings
    from ragbench.retrieval.embedding import make_embedder
    from ragbench.text import split_sentences

    name = Path(data).name
    golden = load_golden(data)
    cfg = with_overrides(answer_config(None, "dense"), OFF)
    embedder = make_embedder(cfg.embedding)
    service = build_service(golden, cfg, "dense", embedder, store=build_store(golden, cfg, embedder))
    answers, _ = answer_golden(service, golden)
    store = service.store

    def trail(chunk: Any) -> list[str]:
        """The title and the headings a stored chunk starts under."""
        doc = store.get_document(chunk.doc_id) if chunk is not None else None
        return [doc.title, *heading_trail(doc.text, chunk.start)] if doc is not None else []

    for q in golden.questions:
        a = answers[q.qid]
        row = row_of(q, a)
        yield {"kind": "answer", "set": name, "qid": q.qid, "asked": a.query, "row": asdict(row),
               "answer_fact": q.answer_fact, "sentences": [s.sentence.text for s in a.sentences],
               "contexts": [contexts(trail(store.get_chunk(s.chunk_id) if s.chunk_id else None))
                            for s in a.sentences]}
        for chunk_id in a.context_chunk_ids:
            chunk = store.get_chunk(chunk_id)
            if chunk is None:
                continue
            base = trail(chunk)
            for start, end, heads in paragraph_headings(chunk.text):
                for sentence in split_sentences(chunk.text[start:end]):
                    if len(sentence.split()) < 3:
                        continue
                    label = 0 if q.should_refuse else (int(q.answer_fact.lower() in sentence.lower())
                                                       if q.answer_fact else None)
                    yield {"kind": "cand", "set": name, "qid": q.qid, "asked": a.query, "sentence": sentence,
                           "context": contexts([*base, *heads]), "label": label}


def load_rows(path: str) -> tuple[list[dict[str, Any]], dict[tuple[str, str], Row]]:
    """The answer rows of ``path`` and their replay rows by (set, qid)."""
    answers = [r for r in map(json.loads, Path(path).read_text(encoding="utf-8").splitlines())
               if r["kind"] == "answer"]
    replay = {(r["set"], r["qid"]): Row(**{**r["row"], "parts": tuple(tuple(p) for p in r["row"]["parts"])})
              for r in answers}
    return answers, replay


def score(rows: list[tuple[Row, float]], decide: Callable[..., bool]) -> str:
    """Refusal accuracy, HandledRight and the two refusal slices under ``decide`` (True = refuse)."""
    ra = hr = 0
    slices: dict[str, list[bool]] = {"refuse-unanswerable": [], "refuse-acl": []}
    for x, p in rows:
        ref = decide(x, p)
        ra += ref == x.should_refuse
        hr += ref if x.should_refuse else (not ref and x.fact)
        if x.tag in slices:
            slices[x.tag].append(ref)
    n = len(rows)
    return (f"refusal accuracy {ra} ({ra / n:.3f})  HandledRight {hr} ({hr / n:.3f})  "
            f"refuse-unanswerable {sum(slices['refuse-unanswerable']) / len(slices['refuse-unanswerable']):.3f}  "
            f"refuse-acl {sum(slices['refuse-acl']) / len(slices['refuse-acl']):.3f}")


def report(rows_path: str, preds_path: str) -> None:
    answers, replay = load_rows(rows_path)
    preds = {(d["set"], d["qid"]): d for d in map(json.loads, Path(preds_path).read_text().splitlines())}
    c, s = SHIPPED

    def shipped(x: Row) -> bool:
        return refused(x, c, s)

    def decidable(x: Row) -> bool:  # no rule but the thresholds refuses it
        return not x.other and not (GAP > 0 and x.gap >= GAP)

    rows = [(replay[k], preds[k]["p_max"] if k in preds else 1.0) for k in replay]
    band = [(x, preds[k]) for k, x in replay.items() if k in preds and decidable(x)]
    labels = [not x.should_refuse for x, _ in band]
    print(f"{len(rows)} questions; {len(band)} decidable by the thresholds or a verifier, {sum(labels)} answerable")
    for name, f in [("soft coverage", lambda x, p: x.coverage), ("similarity", lambda x, p: x.similarity),
                    ("verifier, best sentence", lambda x, p: p["p_max"]),
                    ("verifier, the whole answer", lambda x, p: p["p_joined"]),
                    ("soft coverage + verifier", lambda x, p: x.coverage + p["p_max"])]:
        print(f"  AUC {name:28s} {roc_auc_score(labels, [f(x, p) for x, p in band]):.3f}")
    print(f"shipped thresholds         {score(rows, lambda x, p: shipped(x))}")
    for t in (0.1, 0.2, 0.3, 0.5):
        print(f"verifier decides, P < {t:<4} {score(rows, lambda x, p, t=t: not decidable(x) or p < t)}")
    for t in (0.5, 0.7, 0.9):
        print(f"rescue, P >= {t:<13} {score(rows, lambda x, p, t=t: shipped(x) and not (decidable(x) and p >= t))}")
    for t in (0.1, 0.2, 0.3):
        print(f"veto, P < {t:<16} {score(rows, lambda x, p, t=t: shipped(x) or p < t)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", nargs="+", help="golden set folders (with --out)")
    ap.add_argument("--out", help="write the rows here (JSON lines)")
    ap.add_argument("--rows", help="rows written by --out (with --preds)")
    ap.add_argument("--preds", help="held-out verifier probabilities from answer_crossencoder_cv.py")
    args = ap.parse_args()
    if args.out:
        if not args.data:
            ap.error("--out needs --data")
        with open(args.out, "w", encoding="utf-8") as fh:
            for data in args.data:
                n = 0
                for rec in extract(data):
                    fh.write(json.dumps(rec) + "\n")
                    n += rec["kind"] == "answer"
                print(f"{Path(data).name}: {n} questions", flush=True)
    elif args.rows and args.preds:
        report(args.rows, args.preds)
    else:
        ap.error("give --data and --out, or --rows and --preds")


if __name__ == "__main__":
    main()
