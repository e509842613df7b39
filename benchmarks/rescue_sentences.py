"""The rescue profile reading sentence by sentence (``answer.rescue_sentences``, docs/answers.md session 24): how
many of the reader's best-ranked sentences the judge should read, and its thresholds, chosen on all golden sets but
one and reported on the one left out.

Every question of each set is answered once under the rescue profile with the restricted gap measured but not
refusing. For each answer the text check refuses on its thresholds, the judge (``rag.judge@v3``, P(yes) cached per
prompt) reads the reader's ``--depth`` best-ranked sentences one at a time, and each sentence is kept with its
P(yes), its rank, whether it could be the answer (grounded, no named rule of the check refusing it), whether it
holds the golden fact and whether its document is a right citation. Offline then, for N (sentences read) in
1..depth and τ / τ_restricted in 0.05–0.80: the rescue answers with the accepted sentence of highest P(yes) among
the first N, or refuses; every other question keeps the text check's decision. Also printed: where the facts of
the answerable threshold refusals rank, and (a variant the service does not have) quoting the two or three accepted
sentences of highest P(yes). Objective: questions handled right
(refused when they should be; otherwise answered with the fact), then refusal accuracy; ties go to the smaller N and
the thresholds nearest the shipped pair.

    python benchmarks/rescue_sentences.py --data data/golden data/golden_alderbrook … [--depth 8] \
        [--cache judge.db] [--rows rows.jsonl] [--from-rows rows.jsonl]

About 3 s per judged sentence on 2 cores the first time (67 minutes for the twelve sets at depth 8); with
``--cache`` a rerun makes no model calls.
``--from-rows`` skips answering and reads the rows a previous run wrote.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass, field
from typing import MutableMapping

import numpy as np

from ragbench.answer.judge import RESCUE_MIN_YES, RESCUE_MIN_YES_RESTRICTED
from ragbench.config import AnswerConfig, with_overrides
from ragbench.eval.answers import answer_config, answer_golden, build_service, build_store
from ragbench.eval.golden import load_golden

sys.path.insert(0, os.path.dirname(__file__))
from answer_subsets import MemoJudge
from replay_rows import ReplayRow, add_row_options, quoted_doc, replay_rows

GAP = AnswerConfig().restricted_gap
TAUS = [round(float(t), 2) for t in np.arange(0.05, 0.801, 0.05)]


@dataclass
class Sentence:
    rank: int  # the reader's rank (0 = its best)
    p_yes: float
    usable: bool  # grounded, and no named rule of the check refuses it
    fact: bool  # holds the golden fact (or the question names none)
    cites_right: bool  # its document is one a right citation may point at


@dataclass
class Row(ReplayRow):
    """A rescuable row keeps ``refused`` True and ``fact`` False: its sentences decide."""

    sentences: list[Sentence] = field(default_factory=list)


def rows_of(data: str, judge: str, cache: MutableMapping[str, float], depth: int) -> list[Row]:
    """One row per question of ``data`` (see the module docstring)."""
    golden = load_golden(data)
    off = {"answer.judge_mode": "rescue", "answer.judge": judge, "answer.judge_min_yes": 0.0,
           "answer.judge_min_yes_restricted": 0.0, "answer.restricted_gap": 1.0, "answer.rescue_sentences": depth}
    cfg = with_overrides(answer_config(None, "dense"), off)
    from ragbench.retrieval.embedding import make_embedder

    embedder = make_embedder(cfg.embedding)
    service = build_service(golden, cfg, "dense", embedder, store=build_store(golden, cfg, embedder))
    if service.judge is None or not hasattr(service.judge.model, "yes_probability"):
        raise SystemExit(f"answer.judge={judge!r} is not a graded judge (a local llama.cpp model, `make install-llm`).")
    service.judge.model = MemoJudge(service.judge.model, cache)
    by_question = {}  # the standalone question → the judged sentences of its threshold refusal
    read = service.rescue_by_sentence

    def recording(judge_, question, asked, hits, who, restricted, restricted_terms=None):
        quotes = service.rescue_quotes(question, asked, hits, who)
        judged = service.judge_quotes(judge_, asked, quotes)
        by_question[asked] = [(quotes.index(q), p, service.quote_answer(q, question, asked, hits, who,
                                                                         restricted_terms), q) for p, q in judged]
        return read(judge_, question, asked, hits, who, restricted, restricted_terms)

    service.rescue_by_sentence = recording
    answers, _ = answer_golden(service, golden)
    out = []
    for q in golden.questions:
        a = answers[q.qid]
        fact = (q.answer_fact or "").lower()
        judged = by_question.get(a.query)
        row = Row(os.path.basename(data.rstrip("/")), q.qid, q.tag, q.should_refuse, True, judged is not None,
                  a.restricted_gap, False)
        if judged is None:
            row.refused = a.refused
            row.fact = not q.should_refuse and not a.refused and fact in a.answer.lower()
        else:
            for rank, p, reading, quote in judged:
                doc = quoted_doc(service, reading)
                row.sentences.append(Sentence(rank, p, reading is not None,
                                              not q.should_refuse and fact in quote.sentence.lower(),
                                              doc is not None and doc in q.accepted_docs))
        out.append(row)
    return out


def decide(r: Row, n: int, tau: float, tau_r: float, quoted: int = 1) -> tuple[bool, bool, bool | None]:
    """``(refused, handled right, cites right or None)`` for row ``r`` with N = ``n`` and the thresholds. ``quoted``
    > 1 is a variant the service does not have: the answer quotes that many accepted usable sentences of highest
    P(yes) (handled right when any holds the fact; each was checked on its own)."""
    if r.gap >= GAP:
        return True, r.should_refuse, None
    if not r.rescuable:
        handled = r.refused if r.should_refuse else (not r.refused and r.fact)
        return r.refused, handled, None
    threshold = tau_r if r.gap > 0 else tau
    picks = [s for s in r.sentences if s.rank < n and s.p_yes >= threshold and s.usable][:quoted]
    if not picks:
        return True, r.should_refuse, None
    return False, (not r.should_refuse) and any(s.fact for s in picks), picks[0].cites_right


def fact_ranks(rows: list[Row], depth: int) -> dict[str, object]:
    """Where the facts of the answerable threshold refusals are: how many have the fact in a usable sentence among
    the reader's first N, and, of those with it in the first five, for how many the judge's best usable sentence
    there is the fact's."""
    answerable = [r for r in rows if r.rescuable and not r.should_refuse]

    def usable_fact(r: Row, n: int) -> bool:
        return any(s.fact and s.usable and s.rank < n for s in r.sentences)

    in_five = [r for r in answerable if usable_fact(r, 5)]
    best_is_fact = sum(next(s for s in r.sentences if s.rank < 5 and s.usable).fact for r in in_five)
    return {"threshold_refusals": sum(r.rescuable for r in rows), "answerable": len(answerable),
            "fact_in_first_n": {n: sum(usable_fact(r, n) for r in answerable) for n in range(1, depth + 1)},
            "fact_in_first_5": len(in_five), "judges_best_is_the_fact": best_is_fact}


def measures(rows: list[Row], n: int, tau: float, tau_r: float, quoted: int = 1) -> dict[str, float]:
    out = [decide(r, n, tau, tau_r, quoted) for r in rows]
    ra = sum(ref == r.should_refuse for (ref, _, _), r in zip(out, rows))
    hr = sum(h for _, h, _ in out)
    rescued = [c for ref, _, c in out if c is not None]
    acl = [ref for (ref, _, _), r in zip(out, rows) if r.tag == "refuse-acl"]
    unans = [ref for (ref, _, _), r in zip(out, rows) if r.tag == "refuse-unanswerable"]
    return {"questions": len(rows), "refusal_right": ra, "handled": hr, "rescued": len(rescued),
            "rescued_citing_right": sum(rescued), "refuse_acl": f"{sum(acl)}/{len(acl)}",
            "refuse_unanswerable": f"{sum(unans)}/{len(unans)}"}


def choose(rows: list[Row], depth: int) -> list[tuple[int, float, float]]:
    """The (N, τ, τ_restricted) with the most questions handled right, then refusal accuracy; the smaller N and the
    pair nearest the shipped one on ties (the first of the returned list)."""
    scored = []
    for n in range(1, depth + 1):
        for t in TAUS:
            for tr in TAUS:
                m = measures(rows, n, t, tr)
                near = abs(t - RESCUE_MIN_YES) + abs(tr - RESCUE_MIN_YES_RESTRICTED)
                scored.append(((-m["handled"], -m["refusal_right"], n, near), (n, t, tr)))
    scored.sort()
    best = scored[0][0][:2]
    return [p for key, p in scored if key[:2] == best]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="+", default=["data/golden"], help="golden folders")
    ap.add_argument("--judge", default="llama", help="the judge's chat model (default: llama)")
    ap.add_argument("--depth", type=int, default=8, help="sentences the judge reads at most (default 8)")
    add_row_options(ap, "judge's P(yes)")
    args = ap.parse_args()
    rows = replay_rows(args, lambda d, cache: rows_of(d, args.judge, cache, args.depth),
                       lambda d: Row(**{**d, "sentences": [Sentence(**s) for s in d["sentences"]]}))
    sets = list(dict.fromkeys(r.set for r in rows))
    shipped = (args.depth, RESCUE_MIN_YES, RESCUE_MIN_YES_RESTRICTED)
    print(json.dumps({"pooled": {f"N={n}": measures(rows, n, RESCUE_MIN_YES, RESCUE_MIN_YES_RESTRICTED)
                                 for n in range(1, args.depth + 1)}}))
    print(json.dumps({"fact_ranks": fact_ranks(rows, args.depth)}))
    print(json.dumps({"quoting_more": {f"N={n} quoted={m}": measures(rows, n, RESCUE_MIN_YES,
                                                                      RESCUE_MIN_YES_RESTRICTED, m)
                                       for n in (4, 6, 8) for m in (1, 2, 3)}}))
    held_total: dict[str, int] = {"refusal_right": 0, "handled": 0}
    for held in sets if len(sets) > 1 else []:
        train = [r for r in rows if r.set != held]
        test = [r for r in rows if r.set == held]
        chosen = choose(train, args.depth)
        m = measures(test, *chosen[0])
        held_total = {k: held_total[k] + m[k] for k in held_total}
        print(json.dumps({"held_out": held, "chosen": chosen[:5], "ties": len(chosen), "held_out_measures": m,
                          "at_shipped_thresholds": measures(test, *shipped)}))
    if len(sets) > 1:
        print(json.dumps({"held_out_total": held_total, "questions": len(rows)}))


if __name__ == "__main__":
    main()
