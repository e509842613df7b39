"""What decided each golden answer: the rule behind every refusal and the route of every answer, counted by outcome.

The answering service records, for evaluation only, the rule that decided each answer
(:attr:`ragbench.answer.service.Answer.decided_by`: ``check:thresholds``, ``check:sibling-word``, ``restricted-gap``,
``check:coverage``, …). Crossed with what the golden question expects, it says where a system's errors come from:
which rule refuses the answerable questions, by which route the questions that should be refused get through, and
which answers lack their golden fact. ``ragbench eval golden`` prints this table per answer system, saves it as
``decisions.csv`` in the run folder and puts it in ``--json`` under ``"decisions"``.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from ..errors import DataError
from .answers import states_fact

#: The outcome columns, in order: a question that should be refused, refused or answered; an answerable one, refused,
#: answered with its golden fact (or answered at all when it names none), or answered without it.
OUTCOMES = ("refused_should_refuse", "answered_should_refuse", "refused_answerable", "answered_fact",
            "answered_no_fact")
#: ``decided_by`` of an answer row that does not record it (a run saved before the column existed).
UNRECORDED = "unrecorded"
COLUMNS = ("decided_by", *OUTCOMES, "right", "n")


def outcome(should_refuse: bool, refused: bool, fact: str | None, answer: str) -> str:
    """The outcome of one question (:data:`OUTCOMES`); ``fact`` is the golden fact (:func:`states_fact`)."""
    if should_refuse:
        return OUTCOMES[0] if refused else OUTCOMES[1]
    if refused:
        return OUTCOMES[2]
    return OUTCOMES[3] if not fact or states_fact(fact, answer) else OUTCOMES[4]


def decision_table(answers: pd.DataFrame, questions: Iterable[Any]) -> pd.DataFrame:
    """``decided_by`` × outcome counts of one system's answer rows (columns :data:`COLUMNS`; ``right`` = refused
    when it should be plus answered with the fact, the HandledRight count), most frequent rule first. ``questions``:
    the golden questions (``qid``, ``should_refuse``, ``answer_fact``); a row whose question is not among them is an
    error."""
    by_qid = {q.qid: q for q in questions}
    unknown = sorted(set(answers["qid"].astype(str)) - set(by_qid))
    if unknown:
        raise DataError(f"answer rows for questions the golden set does not have: {unknown[:5]}. "
                        "Fix: score a run against the golden set it was made on.")
    counts: dict[str, dict[str, int]] = {}
    deciders = answers["decided_by"] if "decided_by" in answers.columns else pd.Series([None] * len(answers))
    for qid, refused, text, decider in zip(answers["qid"].astype(str), answers["refused"], answers["answer"],
                                           deciders, strict=True):
        q = by_qid[qid]
        key = str(decider) if isinstance(decider, str) and decider else UNRECORDED
        row = counts.setdefault(key, dict.fromkeys(OUTCOMES, 0))
        row[outcome(q.should_refuse, bool(refused), q.answer_fact, str(text))] += 1
    rows = [{"decided_by": k, **v, "right": v[OUTCOMES[0]] + v[OUTCOMES[3]], "n": sum(v.values())}
            for k, v in counts.items()]
    table = pd.DataFrame(rows, columns=list(COLUMNS))
    return table.sort_values(["n", "decided_by"], ascending=[False, True], ignore_index=True)


def decisions(answers: dict[str, pd.DataFrame], questions: Iterable[Any]) -> pd.DataFrame:
    """:func:`decision_table` of every answer system, stacked with a leading ``system`` column."""
    qs = list(questions)
    parts = [decision_table(df, qs).assign(system=name) for name, df in sorted(answers.items())]
    if not parts:
        return pd.DataFrame(columns=["system", *COLUMNS])
    table = pd.concat(parts, ignore_index=True)
    return table[["system", *COLUMNS]]


def decisions_json(table: pd.DataFrame) -> dict[str, dict[str, dict[str, int]]]:
    """``{system: {decided_by: {outcome: count, "right": …, "n": …}}}`` of :func:`decisions`."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for row in table.itertuples(index=False):
        values = row._asdict()
        out.setdefault(str(values["system"]), {})[str(values["decided_by"])] = {
            c: int(values[c]) for c in (*OUTCOMES, "right", "n")}
    return out
