"""The DCS-EE-RAG source's QA benchmark (``ragbench eval qa FILE``): a chat model answers short questions, each
prompted with the few most similar other questions as worked examples, and each reply is graded by substring.

File: JSON Lines, one item per line::

    {"question": "...", "answer": ["..."], "answer_and_def_correct_predictions": ["..."],
     "def_correct_predictions": ["..."], "poss_correct_predictions": ["..."], "def_incorrect_predictions": ["..."]}

Prompt (seed-behaviour 1.11): optionally ``Here are some relevant examples:`` followed by ``Q:``/``A:`` lines of
the ``few_shot`` most similar other items (dot product of normalised question embeddings; ties by file order),
then ``Question: …`` / ``Answer:``. Grading (case-insensitive substring, in this priority): a string of
``answer_and_def_correct_predictions`` (or, when that list is empty, of ``answer`` + ``def_correct_predictions``)
→ ``Correct``; of ``def_incorrect_predictions`` → ``DefinitelyWrong``; of ``poss_correct_predictions`` →
``PossiblyCorrect``; else ``Indeterminate``. Rates are percentages; the source's pass thresholds are Correct ≥ 50,
PossiblyCorrect ≥ 10, DefinitelyWrong ≤ 10, Indeterminate ≤ 30. ``QaScore`` per item = Correct + 0.5·Possibly −
2·Wrong (the source auto-tuner's third score), so its mean ranks configurations.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DataError
from ..text import read_text_file

OUTCOMES = ("Correct", "PossiblyCorrect", "DefinitelyWrong", "Indeterminate")
#: The source's PASS thresholds: (outcome, "min" | "max", percent).
THRESHOLDS = (("Correct", "min", 50.0), ("PossiblyCorrect", "min", 10.0), ("DefinitelyWrong", "max", 10.0),
              ("Indeterminate", "max", 30.0))
EXAMPLES_HEADER = "Here are some relevant examples:"
_LISTS = ("answer", "answer_and_def_correct_predictions", "def_correct_predictions", "poss_correct_predictions",
          "def_incorrect_predictions")


@dataclass(frozen=True)
class QaItem:
    qid: str
    question: str
    answer: tuple[str, ...]
    correct: tuple[str, ...]          # answer_and_def_correct_predictions (or answer + def_correct)
    possibly: tuple[str, ...]
    wrong: tuple[str, ...]


@dataclass
class QaResult:
    per_item: pd.DataFrame            # qid, question, reply, outcome, prompt_tokens, completion_tokens
    rates: dict[str, float]           # outcome → percent
    verdict: dict[str, bool] = field(default_factory=dict)   # outcome → meets the source's threshold
    model_id: str = ""

    @property
    def passed(self) -> bool:
        return all(self.verdict.values())

    def per_query(self) -> pd.DataFrame:
        """Long ``qid, measure, value``: one 0/1 indicator per outcome and ``QaScore``."""
        rows = []
        for r in self.per_item.itertuples(index=False):
            for o in OUTCOMES:
                rows.append((r.qid, o, float(r.outcome == o)))
            rows.append((r.qid, "QaScore", score(r.outcome)))
        return pd.DataFrame(rows, columns=["qid", "measure", "value"])


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DataError(f"{where}: expected a list of strings, found {value!r}.")
    return tuple(v for v in value if v.strip())


def load_qa(path: str | Path) -> list[QaItem]:
    """Read a QA JSONL file (blank lines skipped); every problem names the line."""
    p = Path(path)
    if not p.is_file():
        raise DataError(f"QA file {p} does not exist. Fix: check the path (the bundled one is data/qa/sample.jsonl).")
    items: list[QaItem] = []
    for n, line in enumerate(read_text_file(p).splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{p}:{n}: not JSON ({exc.msg}). Fix: one JSON object per line.") from None
        if not isinstance(raw, dict) or not str(raw.get("question") or "").strip():
            raise DataError(f"{p}:{n}: expected an object with a non-empty 'question'.")
        lists = {k: _strings(raw.get(k), f"{p}:{n} field {k}") for k in _LISTS}
        correct = lists["answer_and_def_correct_predictions"] or lists["answer"] + lists["def_correct_predictions"]
        if not correct:
            raise DataError(f"{p}:{n}: no correct answer (answer / answer_and_def_correct_predictions). Fix: add one.")
        items.append(QaItem(str(raw.get("id") or f"q{n}"), str(raw["question"]).strip(), lists["answer"], correct,
                            lists["poss_correct_predictions"], lists["def_incorrect_predictions"]))
    if not items:
        raise DataError(f"QA file {p} holds no questions.")
    return items


def grade(reply: str, item: QaItem) -> str:
    """The outcome of a reply (module doc: substring match in priority order)."""
    text = reply.casefold()

    def has(options: Sequence[str]) -> bool:
        return any(o.casefold() in text for o in options)

    if has(item.correct):
        return "Correct"
    if has(item.wrong):
        return "DefinitelyWrong"
    if has(item.possibly):
        return "PossiblyCorrect"
    return "Indeterminate"


def score(outcome: str) -> float:
    """Correct + 0.5·Possibly − 2·Wrong, per item."""
    return {"Correct": 1.0, "PossiblyCorrect": 0.5, "DefinitelyWrong": -2.0}.get(outcome, 0.0)


def examples(items: Sequence[QaItem], vectors: np.ndarray, k: int) -> list[list[int]]:
    """For each item, the indices of the ``k`` most similar other items (dot product; ties by file order)."""
    if k <= 0:
        return [[] for _ in items]
    sims = vectors @ vectors.T
    out = []
    for i in range(len(items)):
        order = [j for j in np.argsort(-sims[i], kind="stable") if j != i]
        out.append([int(j) for j in order[:k]])
    return out


def prompt(item: QaItem, shots: Sequence[QaItem]) -> str:
    lines = []
    if shots:
        lines.append(EXAMPLES_HEADER)
        for s in shots:
            lines += [f"Q: {s.question}", f"A: {(s.answer or s.correct)[0]}"]
        lines.append("")
    lines += [f"Question: {item.question}", "Answer:"]
    return "\n".join(lines)


def run_qa(items: Sequence[QaItem], chat_model: Any, embedder: Any = None, few_shot: int = 3,
           show_progress: bool = False, only: set[str] | None = None) -> QaResult:
    """Ask every item (or those whose qid is in ``only``; examples may come from all) with ``few_shot`` examples
    chosen by ``embedder`` (none without one) and grade the replies."""
    from tqdm.auto import tqdm

    from ..schema import Message

    vectors = np.asarray(embedder.embed([it.question for it in items]), dtype=np.float32) if embedder and few_shot \
        else np.zeros((len(items), 1), dtype=np.float32)
    shots = examples(items, vectors, few_shot if embedder is not None else 0)
    rows = []
    asked = [i for i, it in enumerate(items) if only is None or it.qid in only]
    for i in tqdm(asked, desc="qa", disable=not show_progress):
        item = items[i]
        reply = chat_model.complete([Message("user", prompt(item, [items[j] for j in shots[i]]))])
        rows.append({"qid": item.qid, "question": item.question, "reply": reply.text,
                     "outcome": grade(reply.text, item), "prompt_tokens": reply.prompt_tokens,
                     "completion_tokens": reply.completion_tokens})
    if not rows:
        raise DataError("run_qa: no question to ask. Fix: check the file and the question selection.")
    per_item = pd.DataFrame(rows)
    n = len(per_item)
    rates = {o: 100.0 * float((per_item["outcome"] == o).sum()) / n for o in OUTCOMES}
    rates["QaScore"] = float(per_item["outcome"].map(score).mean())
    verdict = {o: (rates[o] >= t if kind == "min" else rates[o] <= t) for o, kind, t in THRESHOLDS}
    return QaResult(per_item, rates, verdict, getattr(chat_model, "model_id", ""))
