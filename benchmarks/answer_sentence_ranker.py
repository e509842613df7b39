"""Could a learned combination of the extractive reader's own signals rank the fact's sentence higher?

The reader scores each quotable sentence by hand: ``(lexical + cosine + 0.05) × row weight``, × the conflict
penalty (docs/answers.md, "Reading"). Here every answerable question of two groups of golden sets is answered by the
default system, and for each one the reader's candidate sentences are kept with the signals their score is made of
(``ExtractiveChatModel.signals``): coverage by the sentence alone, with its title and headings, and by the user's
own words only; the cosine; the passage's retrieval share and rank; whether the asked kind of answer is there; a
sibling conflict; table rows, sentence length and position. A sentence is labelled 1 when it holds the golden
``answer_fact``. A logistic regression (scikit-learn, balanced classes) is fitted on one group's sentences and ranks
the other group's, in both directions; reported is how often the fact's sentence comes first and within the first
three, against the shipped score, on the questions where some candidate holds the fact.

    python benchmarks/answer_sentence_ranker.py --first data/golden data/golden_alderbrook … \
        --second data/golden_lowenby data/golden_caddow … [--json]

Session 36 ran it with the twelve sets written before session 33 as ``--first`` and the eleven written blind since as
``--second`` (docs/answers.md).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any, Sequence

import numpy as np

from ragbench.answer import ChatSession
from ragbench.eval.answers import answer_config, build_service
from ragbench.eval.golden import load_golden
from ragbench.llm.base import ChatModel, Completion
from ragbench.llm.context import read_rag_extras, read_rag_meta
from ragbench.llm.extractive import ExtractiveChatModel, SentenceSignals, best_copies
from ragbench.schema import Message

FEATURES = ("own_coverage", "context_coverage", "asked_coverage", "cosine", "passage_share", "passage_rank",
            "typed", "asks_type_missing", "conflict", "table_row", "log_tokens", "log_index")


class SignalTap(ChatModel):
    """Forwards to the extractive reader and keeps the signals of the last grounded request's sentences."""

    def __init__(self, inner: ExtractiveChatModel) -> None:
        self.inner = inner
        self.last: list[SentenceSignals] = []

    @property
    def model_id(self) -> str:  # type: ignore[override]
        return self.inner.model_id

    def complete(self, messages: Sequence[Message]) -> Completion:
        parsed = read_rag_meta(messages)
        if parsed is not None:
            question, passages = parsed
            focus, weights = read_rag_extras(messages)
            self.last = self.inner.signals(question, passages, focus, weights)
        return self.inner.complete(messages)


def features(sig: SentenceSignals, passage_rank: int) -> list[float]:
    return [sig.own_coverage, sig.context_coverage, sig.asked_coverage, sig.cosine, sig.passage_share,
            float(passage_rank), float(sig.typed), float(sig.asks_type and not sig.typed), float(sig.conflict),
            float(" | " in sig.sentence), math.log1p(len(sig.sentence.split())),
            math.log1p(sig.index)]


def groups(folders: Sequence[str]) -> list[dict[str, Any]]:
    """Per answerable question whose candidates include the fact: features, labels and the shipped scores."""
    out: list[dict[str, Any]] = []
    for folder in folders:
        golden = load_golden(folder)
        service = build_service(golden, answer_config(mode="dense"), "dense")
        reader = service.chat_model
        if not isinstance(reader, ExtractiveChatModel):
            raise SystemExit(f"the default reader is {type(reader).__name__}, not the extractive one")
        tap = service.chat_model = SignalTap(reader)
        sessions: dict[str, ChatSession] = {}
        for q in sorted(golden.questions, key=lambda q: (q.chain_id is not None, q.chain_id or "", q.turn or 0)):
            tap.last = []
            if q.chain_id is not None:
                sessions.setdefault(q.chain_id, ChatSession(service, q.asked_by)).ask(q.question)
            else:
                service.answer(q.question, q.asked_by)
            if q.should_refuse or not tap.last or not q.answer_fact:
                continue
            # The copies rank() keeps, scored as it scores them.
            rows = best_copies((sig.sentence, s, sig) for sig in tap.last
                               if (s := reader.sentence_score(sig)) is not None)
            order = {n: r for r, n in enumerate(dict.fromkeys(sig.n for _, sig in
                                                             sorted(rows, key=lambda x: -x[1].passage_share)))}
            fact = q.answer_fact.casefold()
            y = np.array([fact in sig.sentence.casefold() for _, sig in rows])
            if not y.any():
                continue
            out.append({"qid": f"{folder}/{q.qid}", "y": y,
                        "shipped": np.array([s for s, _ in rows]),
                        "X": np.array([features(sig, order[sig.n]) for _, sig in rows])})
        print(f"{folder}: {sum(1 for g in out if g['qid'].startswith(folder + '/'))} questions", file=sys.stderr)
    return out


def top_k(gs: Sequence[dict[str, Any]], scores: Sequence[np.ndarray]) -> tuple[int, int]:
    first = three = 0
    for g, s in zip(gs, scores):
        order = np.argsort(-s, kind="stable")
        first += int(g["y"][order[0]])
        three += int(g["y"][order[:3]].any())
    return first, three


def fit(gs: Sequence[dict[str, Any]]) -> Any:
    from sklearn.linear_model import LogisticRegression

    X = np.vstack([g["X"] for g in gs])
    y = np.concatenate([g["y"] for g in gs])
    return LogisticRegression(C=1.0, max_iter=5000, class_weight="balanced").fit(X, y)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--first", nargs="+", required=True, help="golden folders of the first group")
    ap.add_argument("--second", nargs="+", required=True, help="golden folders of the second group")
    ap.add_argument("--json", action="store_true", help="print one JSON line instead of the table")
    args = ap.parse_args(argv)
    a, b = groups(args.first), groups(args.second)
    report: dict[str, Any] = {}
    for name, train, test in (("first->second", a, b), ("second->first", b, a)):
        model = fit(train)
        learned = top_k(test, [model.decision_function(g["X"]) for g in test])
        shipped = top_k(test, [g["shipped"] for g in test])
        report[name] = {"questions": len(test), "shipped_top1": shipped[0], "shipped_top3": shipped[1],
                        "learned_top1": learned[0], "learned_top3": learned[1],
                        "coefficients": dict(zip(FEATURES, np.round(model.coef_[0], 3).tolist()))}
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"{'trained -> scored':<16} {'questions':>9} {'shipped top-1':>13} {'learned top-1':>13} "
          f"{'shipped top-3':>13} {'learned top-3':>13}")
    for name, r in report.items():
        print(f"{name:<16} {r['questions']:>9} {r['shipped_top1']:>13} {r['learned_top1']:>13} "
              f"{r['shipped_top3']:>13} {r['learned_top3']:>13}")
    for name, r in report.items():
        print(f"{name} coefficients: {r['coefficients']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
