"""The rescue judge asked to pick (docs/answers.md, session 25): instead of judging one text at a time, the model
reads the reader's ``--depth`` best-ranked sentences numbered together and is asked which one answers the question,
or 0 for none. Its next-token distribution over "0".."N" gives both a decision (1 − P(0)) and a choice (the most
probable sentence). Compared, each golden set left out in turn, with the shipped rescue (session 23: the reader's
answer judged whole, ``rag.judge@v3``).

Every question of each set is answered once under the rescue profile with both thresholds at 0 (every threshold
refusal is answered with the reader's answer, as in ``benchmarks/answer_judge.py --profile rescue``) and the
restricted gap measured but not refusing. For each threshold refusal the row keeps the whole answer's P(yes), fact
and citation, the reader's first ``--depth`` sentences (could each be the answer, holds the fact, cites right) and
the pick distribution. Offline, for τ / τ_restricted in 0.05–0.80, five rules decide the threshold refusals (every
other question keeps the text check's decision):

- ``whole``: P(yes) of the reader's answer ≥ τ → that answer (the shipped rescue);
- ``pick``: 1 − P(0) ≥ τ → the most probable usable sentence;
- ``whole+pick``: P(yes) decides; the answer is the picked sentence (the most probable usable one; the reader's
  answer when none is usable);
- ``whole+both``: P(yes) decides; the answer is the reader's answer with the picked sentence added;
- ``mean``: the mean of P(yes) and 1 − P(0) decides; the answer is the reader's.

Objective: questions handled right (refused when they should be; otherwise answered with the fact), then refusal
accuracy; ties go to the pair nearest the shipped one.

    python benchmarks/rescue_pick.py --data data/golden data/golden_alderbrook … [--depth 6] \\
        [--cache judge.db] [--rows rows.jsonl] [--from-rows rows.jsonl]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass, field, replace
from typing import Any, Callable, MutableMapping

import numpy as np

from ragbench.answer.judge import RESCUE_MIN_YES, RESCUE_MIN_YES_RESTRICTED
from ragbench.config import AnswerConfig, with_overrides
from ragbench.eval.answers import answer_config, answer_golden, build_service, build_store
from ragbench.eval.golden import load_golden
from ragbench.schema import Message

sys.path.insert(0, os.path.dirname(__file__))
from answer_subsets import MemoJudge
from replay_rows import ReplayRow, add_row_options, quoted_doc, replay_rows

GAP = AnswerConfig().restricted_gap
TAUS = [round(float(t), 2) for t in np.arange(0.05, 0.801, 0.05)]
PICK_BODY = """SENTENCES
{numbered}

QUESTION: {question}

Which sentence gives the answer to the QUESTION for exactly what the QUESTION asks about? If none of them does, \
reply 0. Reply with the number only."""


def pick_prompt(question: str, quotes: list[Any]) -> str:
    numbered = "\n".join(f"{i}. (from {q.context.strip() or 'a document'}) {q.sentence.strip()}"
                         for i, q in enumerate(quotes, 1))
    return PICK_BODY.format(numbered=numbered, question=question.strip())


@dataclass
class Sentence:
    usable: bool  # grounded, and no named rule of the check refuses it
    fact: bool  # holds the golden fact
    cites_right: bool  # its document is one a right citation may point at


@dataclass
class Row(ReplayRow):
    """``fact`` of a rescuable row: the reader's answer holds the fact."""

    cites_right: bool  # the answer cites a right document (rescuable rows)
    p_yes: float = 0.0  # the whole answer's P(yes) (rescuable rows)
    probs: list[float] = field(default_factory=list)  # P("0"), P("1"), … of the pick prompt
    sentences: list[Sentence] = field(default_factory=list)


class MemoChoice:
    """``choice_probabilities`` computed once per prompt (kept in ``memo``)."""

    def __init__(self, model: Any, memo: MutableMapping[str, Any]) -> None:
        self.model = model
        self.memo = memo

    def __call__(self, prompt: str, labels: list[str]) -> list[float]:
        key = "pick\x00" + prompt
        if key not in self.memo:
            self.memo[key] = self.model.choice_probabilities([Message("user", prompt)], labels)
        return list(self.memo[key])


def rows_of(data: str, judge: str, cache: MutableMapping[str, Any], depth: int) -> list[Row]:
    golden = load_golden(data)
    off = {"answer.judge_mode": "rescue", "answer.judge": judge, "answer.judge_min_yes": 0.0,
           "answer.judge_min_yes_restricted": 0.0, "answer.restricted_gap": 1.0}
    cfg = with_overrides(answer_config(None, "dense"), off)
    from ragbench.retrieval.embedding import make_embedder

    embedder = make_embedder(cfg.embedding)
    service = build_service(golden, cfg, "dense", embedder, store=build_store(golden, cfg, embedder))
    if service.judge is None or not hasattr(service.judge.model, "choice_probabilities"):
        raise SystemExit(f"answer.judge={judge!r} is not a local llama.cpp model (`make install-llm`).")
    choose_ = MemoChoice(service.judge.model, cache)
    service.judge.model = MemoJudge(service.judge.model, cache)
    captured: dict[str, Any] = {}
    read: dict[str, dict[str, Any]] = {}
    check = service.answerability

    def answerability(question: str, query: str, report: Any, hits: Any, who: Any, contexts: Any = None,
                      similarity_route: bool = True, restricted_terms: Any = None) -> Any:
        captured["args"] = (question, query, hits, who, restricted_terms)
        return check(question, query, report, hits, who, contexts, similarity_route, restricted_terms)

    judged = service.judge.judge

    def judging(question: str, sentences: Any, sources: Any = (), min_yes: Any = None) -> Any:
        verdict = judged(question, sentences, sources, min_yes)
        q, asked, hits, who, terms = captured["args"]
        cfg_ = service.cfg
        service.cfg = replace(cfg_, rescue_sentences=depth)
        try:
            quotes = service.rescue_quotes(q, asked, hits, who)
            usable = [service.quote_answer(x, q, asked, hits, who, terms) for x in quotes]
        finally:
            service.cfg = cfg_
        probs = choose_(pick_prompt(asked, quotes), [str(i) for i in range(len(quotes) + 1)]) if quotes else [1.0]
        read[asked] = {"p_yes": verdict.p_yes, "quotes": quotes, "usable": usable, "probs": probs}
        return verdict

    service.answerability = answerability
    service.judge.judge = judging
    answers, _ = answer_golden(service, golden, show_progress=True)
    out = []
    for q in golden.questions:
        a = answers[q.qid]
        fact = (q.answer_fact or "").lower()
        seen = read.get(a.query)
        row = Row(os.path.basename(data.rstrip("/")), q.qid, q.tag, q.should_refuse, a.refused, seen is not None,
                  a.restricted_gap, not q.should_refuse and not a.refused and fact in a.answer.lower(),
                  any(d in q.accepted_docs for d in a.cited_doc_ids))
        if seen is not None:
            row.p_yes = float(seen["p_yes"] or 0.0)
            row.probs = [float(p) for p in seen["probs"]]
            for quote, reading in zip(seen["quotes"], seen["usable"]):
                doc = quoted_doc(service, reading)
                row.sentences.append(Sentence(reading is not None,
                                              not q.should_refuse and fact in quote.sentence.lower(),
                                              doc is not None and doc in q.accepted_docs))
        out.append(row)
    return out


def picked(r: Row) -> Sentence | None:
    """The most probable usable sentence of the pick distribution (ties: the reader's order)."""
    order = sorted(range(1, len(r.probs)), key=lambda i: (-r.probs[i], i))
    return next((r.sentences[i - 1] for i in order if r.sentences[i - 1].usable), None)


Outcome = tuple[bool, bool]  # (refused, handled right)


def rule_whole(r: Row, t: float) -> Outcome:
    if r.p_yes < t:
        return True, r.should_refuse
    return False, not r.should_refuse and r.fact


def rule_pick(r: Row, t: float) -> Outcome:
    s = picked(r)
    if s is None or 1.0 - r.probs[0] < t:
        return True, r.should_refuse
    return False, not r.should_refuse and s.fact


def rule_whole_pick(r: Row, t: float) -> Outcome:
    if r.p_yes < t:
        return True, r.should_refuse
    s = picked(r)
    return False, not r.should_refuse and (s.fact if s is not None else r.fact)


def rule_whole_both(r: Row, t: float) -> Outcome:
    if r.p_yes < t:
        return True, r.should_refuse
    s = picked(r)
    return False, not r.should_refuse and (r.fact or (s is not None and s.fact))


def rule_mean(r: Row, t: float) -> Outcome:
    if 0.5 * (r.p_yes + 1.0 - r.probs[0]) < t:
        return True, r.should_refuse
    return False, not r.should_refuse and r.fact


RULES: dict[str, Callable[[Row, float], Outcome]] = {
    "whole": rule_whole, "pick": rule_pick, "whole+pick": rule_whole_pick, "whole+both": rule_whole_both,
    "mean": rule_mean}


def decide(r: Row, rule: str, tau: float, tau_r: float) -> Outcome:
    if r.gap >= GAP:
        return True, r.should_refuse
    if not r.rescuable:
        return r.refused, r.refused if r.should_refuse else (not r.refused and r.fact)
    return RULES[rule](r, tau_r if r.gap > 0 else tau)


def measures(rows: list[Row], rule: str, tau: float, tau_r: float) -> dict[str, Any]:
    out = [decide(r, rule, tau, tau_r) for r in rows]
    acl = [ref for (ref, _), r in zip(out, rows) if r.tag == "refuse-acl"]
    unans = [ref for (ref, _), r in zip(out, rows) if r.tag == "refuse-unanswerable"]
    return {"refusal_right": sum(ref == r.should_refuse for (ref, _), r in zip(out, rows)),
            "handled": sum(h for _, h in out), "refuse_acl": f"{sum(acl)}/{len(acl)}",
            "refuse_unanswerable": f"{sum(unans)}/{len(unans)}"}


def choose(rows: list[Row], rule: str) -> list[tuple[float, float]]:
    scored = []
    for t in TAUS:
        for tr in TAUS:
            m = measures(rows, rule, t, tr)
            near = abs(t - RESCUE_MIN_YES) + abs(tr - RESCUE_MIN_YES_RESTRICTED)
            scored.append(((-m["handled"], -m["refusal_right"], near), (t, tr)))
    scored.sort()
    best = scored[0][0][:2]
    return [p for key, p in scored if key[:2] == best]


def pick_stats(rows: list[Row]) -> dict[str, Any]:
    """For the answerable threshold refusals: how often the fact is in a usable sentence read, and how often the
    pick (and the reader's first usable sentence) is the fact's; the AUC of 1 − P(0) and of P(yes) for answerable."""
    answerable = [r for r in rows if r.rescuable and not r.should_refuse]
    with_fact = [r for r in answerable if any(s.fact and s.usable for s in r.sentences)]
    first = [next((s for s in r.sentences if s.usable), None) for r in with_fact]
    rescuable = [r for r in rows if r.rescuable]

    def auc(score: Callable[[Row], float]) -> float:
        pos = [score(r) for r in rescuable if not r.should_refuse]
        neg = [score(r) for r in rescuable if r.should_refuse]
        pairs = [(p > n) + 0.5 * (p == n) for p in pos for n in neg]
        return round(sum(pairs) / len(pairs), 3) if pairs else float("nan")

    return {"threshold_refusals": len(rescuable), "answerable": len(answerable),
            "fact_in_a_usable_sentence": len(with_fact),
            "pick_is_the_fact": sum(bool((s := picked(r)) and s.fact) for r in with_fact),
            "readers_first_is_the_fact": sum(bool(s and s.fact) for s in first),
            "readers_answer_has_the_fact": sum(r.fact for r in answerable),
            "auc_pick": auc(lambda r: 1.0 - r.probs[0]), "auc_whole": auc(lambda r: r.p_yes),
            "auc_mean": auc(lambda r: 0.5 * (r.p_yes + 1.0 - r.probs[0]))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="+", default=["data/golden"], help="golden folders")
    ap.add_argument("--judge", default="llama", help="the judge's chat model (default: llama)")
    ap.add_argument("--depth", type=int, default=6, help="sentences the pick prompt numbers (default 6, at most 9)")
    add_row_options(ap, "model's verdicts")
    args = ap.parse_args()
    if not 1 <= args.depth <= 9:
        raise SystemExit(f"--depth {args.depth}: the pick prompt numbers 1 to 9 sentences. Fix: pass 1–9.")
    rows = replay_rows(args, lambda d, cache: rows_of(d, args.judge, cache, args.depth),
                       lambda d: Row(**{**d, "sentences": [Sentence(**s) for s in d["sentences"]]}))
    print(json.dumps({"pick_stats": pick_stats(rows)}))
    shipped = (RESCUE_MIN_YES, RESCUE_MIN_YES_RESTRICTED)
    print(json.dumps({"at_shipped_thresholds": {rule: measures(rows, rule, *shipped) for rule in RULES}}))
    sets = list(dict.fromkeys(r.set for r in rows))
    for rule in RULES:
        chosen = choose(rows, rule)
        print(json.dumps({"rule": rule, "in_sample": chosen[:3],
                          "in_sample_measures": measures(rows, rule, *chosen[0])}))
        total = {"refusal_right": 0, "handled": 0}
        for held in sets if len(sets) > 1 else []:
            chosen = choose([r for r in rows if r.set != held], rule)
            m = measures([r for r in rows if r.set == held], rule, *chosen[0])
            total = {k: total[k] + m[k] for k in total}
            print(json.dumps({"rule": rule, "held_out": held, "chosen": chosen[:3], "ties": len(chosen),
                              "measures": m}))
        if len(sets) > 1:
            print(json.dumps({"rule": rule, "held_out_total": total, "questions": len(rows)}))


if __name__ == "__main__":
    main()
