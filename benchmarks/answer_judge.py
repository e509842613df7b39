"""The judge profile (docs/answers.md): how well the local judge's P(yes) separates answerable questions from
those to refuse, against the text check's coverage and cosine, and its threshold chosen on all golden sets but
one and reported on the one left out.

Every question of each set is answered once under the judge profile (coverage and similarity thresholds 0) with
the judge (``answer.judge``, default ``llama``) accepting everything (``judge_min_yes`` 0) and the restricted gap
measured but not refusing; the service's own judge call (``rag.judge@v3``) gives each answer's P(yes), and the
answerability report its soft coverage and similarity. Offline then:

* **AUC** of soft coverage, similarity and P(yes) for "answerable" on the questions these signals decide (not
  refused for another reason, restricted gap below its configured value);
* **judge only** (the profile: text thresholds 0): refused ⇔ refused for another reason, or restricted gap ≥ its
  configured value, or P(yes) < τ, for τ in 0.05–0.80; τ is chosen on all sets but one pooled (questions handled
  right, or ``--objective refusal``) and reported on the one left out, with the refuse slices; then the same with
  two thresholds, τ when the index's best chunk is readable by the asker and τ_restricted when it is not
  (restricted gap above 0: ``answer.judge_min_yes_restricted``).

    python benchmarks/answer_judge.py --data data/golden data/golden_alderbrook data/golden_tarnwell \
        [--judge llama] [--objective refusal] [--cache judge.db] [--template FILE]

``--profile rescue`` measures the rescue profile instead: every question answered once with the default text check
and its thresholds, the judge reading only the answers those thresholds refused and accepting them all; offline,
refused ⇔ refused for another reason, or restricted gap ≥ its configured value, or judged with P(yes) below the
threshold (the same τ and τ / τ_restricted choices).

``--template FILE`` scores another judge template (its text, with ``{context}`` and ``{question}``) in place of
the shipped one, registered as the store's active ``rag.judge``: the prompt variants of docs/answers.md.

About 1-2 s per answered question on 2 cores (one forward pass each); ``--cache`` keeps P(yes) per prompt.
"""
from __future__ import annotations

import argparse
import json
import os
import shelve
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import MutableMapping

import numpy as np
from sklearn.metrics import roc_auc_score

from ragbench.answer.judge import JUDGE_NAME
from ragbench.config import AnswerConfig, with_overrides
from ragbench.eval.answers import answer_config, answer_golden, build_service, build_store
from ragbench.eval.golden import load_golden

sys.path.insert(0, os.path.dirname(__file__))
from answer_subsets import MemoJudge

#: The judge profile with the judge accepting everything and the restricted gap measured, not refusing.
OFF = {"answer.answerability_min_coverage": 0.0, "answer.answerability_min_similarity": 0.0,
       "answer.restricted_gap": 1.0, "answer.judge_mode": "verdict", "answer.judge_min_yes": 0.0,
       "answer.judge_min_yes_restricted": 0.0}
GAP = AnswerConfig().restricted_gap
TAUS = [round(float(t), 2) for t in np.arange(0.05, 0.801, 0.05)]


@dataclass(frozen=True)
class Row:
    tag: str
    should_refuse: bool
    other: bool  # refused before the judge (answer type, sibling code, unknown name, retrieval, grounding)
    gap: float
    soft: float
    similarity: float
    p_yes: float | None  # the judge's P(yes) of the would-be answer (None: nothing reached the judge)
    fact: bool  # answerable, and the answer holds the golden fact (or the question names none)

    @property
    def decided(self) -> bool:
        """Decided by the signals compared here (not refused before them)."""
        return not self.other and self.gap < GAP and self.p_yes is not None


#: The rescue profile with the judge accepting every threshold refusal and the restricted gap measured, not refusing.
RESCUE_OFF = {"answer.judge_mode": "rescue", "answer.judge_min_yes": 0.0, "answer.judge_min_yes_restricted": 0.0,
              "answer.restricted_gap": 1.0}


def features(data: str, judge: str, cache: MutableMapping[str, float], template: str | None = None,
             profile: str = "judge") -> list[Row]:
    """One row per question of ``data``: the judge profile's (``profile="judge"``: every answer the named rules
    let through is judged) or the rescue profile's (``"rescue"``: only the text check's threshold refusals are)."""
    golden = load_golden(data)
    off = OFF if profile == "judge" else RESCUE_OFF
    cfg = with_overrides(answer_config(None, "dense"), {**off, "answer.judge": judge})
    from ragbench.retrieval.embedding import make_embedder

    embedder = make_embedder(cfg.embedding)
    service = build_service(golden, cfg, "dense", embedder, store=build_store(golden, cfg, embedder))
    if service.judge is None or not hasattr(service.judge.model, "yes_probability"):
        raise SystemExit(f"answer.judge={judge!r} is not a graded judge (a local llama.cpp model, `make install-llm`).")
    service.judge.model = MemoJudge(service.judge.model, cache)
    if template is not None:
        service.judge.registry.register(JUDGE_NAME, "variant", template)
    # The service judges every answer that passes the other checks (at min_yes 0 it accepts them all); its P(yes)
    # is kept per (standalone question, sentences).
    seen: dict[tuple[str, tuple[str, ...]], float | None] = {}
    judge_once = service.judge.judge

    def judged(question: str, sentences, sources=(), min_yes=None):
        verdict = judge_once(question, sentences, sources, min_yes)
        seen[(question, tuple(sentences))] = verdict.p_yes
        return verdict

    service.judge.judge = judged
    answers, _ = answer_golden(service, golden)
    rows = []
    for q in golden.questions:
        a = answers[q.qid]
        check = a.answerability
        p_yes = seen.get((a.query, tuple(s.sentence.text for s in a.sentences))) if not a.refused else None
        rows.append(Row(q.tag, q.should_refuse, a.refused, a.restricted_gap,
                        check.soft_coverage if check is not None else 0.0,
                        check.similarity if check is not None else 0.0, p_yes,
                        not q.should_refuse and (not q.answer_fact or q.answer_fact.lower() in a.answer.lower())))
    return rows


def refused(r: Row, tau: float, tau_restricted: float | None = None) -> bool:
    """The profile's decision at ``tau``, or at ``tau_restricted`` when the index's best chunk is restricted for
    the asker (restricted gap above 0; default: ``tau``)."""
    threshold = tau_restricted if tau_restricted is not None and r.gap > 0 else tau
    return r.other or r.gap >= GAP or (r.p_yes is not None and r.p_yes < threshold)


def measures(rows: list[Row], tau: float, tau_restricted: float | None = None) -> dict[str, float]:
    def share(picked: list[bool]) -> float:
        return round(float(np.mean(picked)), 3) if picked else float("nan")

    ref = [refused(r, tau, tau_restricted) for r in rows]
    return {"refusal_accuracy": share([x == r.should_refuse for x, r in zip(ref, rows)]),
            "handled": share([x if r.should_refuse else (not x and r.fact) for x, r in zip(ref, rows)]),
            "refuse_acl": share([x for x, r in zip(ref, rows) if r.tag == "refuse-acl"]),
            "refuse_unanswerable": share([x for x, r in zip(ref, rows) if r.tag == "refuse-unanswerable"])}


def aucs(rows: list[Row]) -> dict[str, float]:
    decided = [r for r in rows if r.decided]
    y = [not r.should_refuse for r in decided]
    return {name: round(float(roc_auc_score(y, [get(r) for r in decided])), 3)
            for name, get in (("soft_coverage", lambda r: r.soft), ("similarity", lambda r: r.similarity),
                              ("p_yes", lambda r: r.p_yes))} | {"questions": len(decided)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="+", default=["data/golden", "data/golden_alderbrook"], help="golden folders")
    ap.add_argument("--judge", default="llama", help="the judge's chat model (default: llama)")
    ap.add_argument("--objective", choices=("handled", "refusal"), default="handled",
                    help="what τ maximises on the sets it is chosen on (default: questions handled right)")
    ap.add_argument("--cache", metavar="PATH", help="keep the judge's P(yes) per prompt in this shelve file")
    ap.add_argument("--template", metavar="FILE", help="score this judge template instead of the shipped one")
    ap.add_argument("--profile", choices=("judge", "rescue"), default="judge",
                    help="judge: the judge reads every answer (text thresholds 0); rescue: the text check decides and "
                         "the judge reads only its threshold refusals")
    args = ap.parse_args()
    template = Path(args.template).read_text(encoding="utf-8") if args.template else None
    key = "handled" if args.objective == "handled" else "refusal_accuracy"
    cache: MutableMapping[str, float] = shelve.open(args.cache) if args.cache else {}
    try:
        sets = {d: features(d, args.judge, cache, template, args.profile) for d in args.data}
    finally:
        if isinstance(cache, shelve.Shelf):
            cache.close()
    for d, rows in sets.items():
        print(json.dumps({"data": d, "auc_answerable": aucs(rows)}))
    for d, rows in sets.items():
        print(json.dumps({"data": d, "judge_only": {str(t): measures(rows, t) for t in TAUS}}))
    pairs = [(t, tr) for t in TAUS for tr in TAUS]
    for held in (sets if len(sets) > 1 else []):
        pooled = [r for d, rows in sets.items() if d != held for r in rows]
        scores = {t: measures(pooled, t)[key] for t in TAUS}
        chosen = [t for t, v in scores.items() if v == max(scores.values())]
        print(json.dumps({"held_out": held, "objective": args.objective, "chosen_tau": chosen,
                          "held_out_measures": {str(t): measures(sets[held], t) for t in chosen}}))
        # Two thresholds: one when the index's best chunk is readable by the asker, one when it is not.
        both = {p: measures(pooled, *p)[key] for p in pairs}
        chosen2 = [p for p, v in both.items() if v == max(both.values())]
        print(json.dumps({"held_out": held, "objective": args.objective, "chosen_tau_and_tau_restricted": chosen2,
                          "held_out_measures": {f"{t}/{tr}": measures(sets[held], t, tr) for t, tr in chosen2}}))


if __name__ == "__main__":
    main()
