"""The stacked judge: the text check's verdict and the graded judge's P(yes), combined by two thresholds.

    python benchmarks/answer_stacked.py probe --data DIR… --out FILE.csv [--memo FILE.sqlite]   # judge every answer
    python benchmarks/answer_stacked.py choose --rows FILE.csv [--pair A,B] [--json]             # grid, pooled + LOO
    python benchmarks/answer_stacked.py score --data DIR… --a A --b B [--memo FILE.sqlite]       # one pair, for real

An answer the text check accepts is refused when the judge's P(yes) is below ``a`` (the veto,
``answer.judge_veto_min_yes``); an answer it refuses on its coverage and similarity thresholds is given when P(yes)
reaches ``b`` (``answer.judge_min_yes``, and ``b + 0.05`` when the whole index's best chunk is one the asker may not
read, as the rescue profile's pair). ``a = 0`` is the rescue profile; ``a = b = 0.35`` is close to the judge profile
(which also drops the per-sentence answer-type bar). Every other refusal with a named reason stands.

``probe`` answers every question once in the rescue profile with both bars at 1e-9, so the judge reads every answer
the text check accepted and every threshold refusal (and nearly every one is answered), and keeps per question: the
set, slice, branch (``text``: the check accepted it; ``threshold``: the check refused it on its thresholds;
``fixed``: neither, the judge plays no part), P(yes), the check's coverage and similarity, whether the asker's best
match was outranked by a restricted chunk, and the measures of the question answered and refused. ``choose`` replays
any ``(a, b)`` from that file with no model: the pair with the most questions handled right pooled (ties: the one
nearest the judge profile's (0.35, 0.35)), and the same choice with each organisation left out in turn, scored on
the one left out (docs/answers.md, session 38); and, reported only, a logistic regression over the same signals
chosen the same way. ``score`` answers for real at one pair. With ``probe --rescue-rules all`` (or a list) the
judge also reads the refusals of those named rules (``answer.judge_rescue_rules``), and ``choose`` adds what letting
it overturn each rule's refusals at three bars would change (the pilot of session 38).

The replay treats each question on its own: in a chat chain a vetoed or rescued turn could change what a later turn
carries, so the chosen pair is scored for real afterwards (``score``).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from ragbench.answer.answerability import NAMED_RULES
from ragbench.answer.judge import RESTRICTED_MARGIN
from ragbench.config import with_overrides
from ragbench.eval.answers import answer_config, answer_golden, build_service, build_store, score_answers
from ragbench.eval.golden import load_golden
from ragbench.eval.golden_sets import set_names

PROBE_BAR = 1e-9
#: P(yes) bars of the grid: the veto a and the rescue bar b (1.01: never rescue).
VETO_GRID = tuple(round(x, 2) for x in np.arange(0.0, 0.601, 0.05))
RESCUE_GRID = tuple(round(x, 2) for x in np.arange(0.0, 1.001, 0.05)) + (1.01,)
JUDGE_PROFILE = (0.35, 0.35)
MEASURES = ("RefusalAccuracy", "HandledRight", "FactInAnswer", "CitationPrecision", "AnyCorrectCitation",
            "LeakedDocs", "SecretInAnswer", "InjectionQuoted")


def refused(answer):
    """``answer`` as the refusal a veto (or no rescue) would give."""
    from ragbench.answer.service import REFUSAL_MESSAGE

    return replace(answer, answer=REFUSAL_MESSAGE, refused=True, refusal_reason="judge-rejected", citations=(),
                   decided_by="judge-veto")


def wide(system: str, golden, answers, prompts, chunk_doc) -> pd.DataFrame:
    long = score_answers(system, golden, answers, prompts, chunk_doc)
    table = long.pivot_table(index=["qid", "slice"], columns="measure", values="value", aggfunc="first")
    return table.reindex(columns=list(MEASURES)).reset_index()


def probe(args: argparse.Namespace) -> None:
    from ragbench.retrieval.embedding import make_embedder

    cfg = answer_config(None, "dense")
    # Every threshold refusal is rescued and every text answer read, so any pair can be replayed from the rows.
    overrides = {**stacked_overrides(args.judge, PROBE_BAR, PROBE_BAR, args.memo, args.rescue_rules),
                 "answer.judge_min_yes_restricted": PROBE_BAR, "answer.judge_rules_min_yes": PROBE_BAR}
    pcfg = with_overrides(cfg, overrides)
    embedder = make_embedder(cfg.embedding)
    out = Path(args.out)
    done = set(pd.read_csv(out)["set"]) if out.exists() else set()
    for name, folder in zip(set_names(args.data), args.data, strict=True):
        if name in done:
            print(f"{name}: already in {out}", file=sys.stderr, flush=True)
            continue
        golden = load_golden(folder)
        store = build_store(golden, cfg, embedder)
        chunk_doc = {c.chunk_id: c.doc_id for c in store.chunks()}
        service = build_service(golden, pcfg, "dense", embedder, store=store)
        answers, prompts = answer_golden(service, golden, show_progress=True)
        # which rule refused each question without the judge (a rescued refusal no longer names its rule)
        plain, _ = answer_golden(build_service(golden, cfg, "dense", embedder, store=store), golden) \
            if args.rescue_rules else ({}, {})
        as_refused = {q: (a if a.refused else refused(a)) for q, a in answers.items()}
        ans = wide("answered", golden, answers, prompts, chunk_doc)
        ref = wide("refused", golden, as_refused, prompts, chunk_doc)
        rows = []
        for q in golden.questions:
            a = answers[q.qid]
            rule = plain[q.qid].decided_by.removeprefix("check:") if q.qid in plain else ""
            if a.judge_p_yes is None:
                branch = "fixed"
            elif rule in NAMED_RULES and plain[q.qid].refused:
                branch = "rule:" + rule
            elif (a.refused and a.decided_by.startswith("check:")) or a.decided_by == "judge-rescue":
                branch = "threshold"
            else:
                branch = "text"
            check = a.answerability
            rows.append({"set": name, "qid": q.qid, "branch": branch, "p_yes": a.judge_p_yes,
                         "restricted": a.restricted_gap > 0, "probe_refused": a.refused,
                         "coverage": getattr(check, "coverage", None),
                         "soft_coverage": getattr(check, "soft_coverage", None),
                         "similarity": getattr(check, "similarity", None), "support_ratio": a.support_ratio,
                         "restricted_gap": a.restricted_gap, "restricted_lead": a.restricted_lead})
        table = pd.DataFrame(rows)
        table = table.merge(ans.add_suffix("_ans").rename(columns={"qid_ans": "qid", "slice_ans": "slice"}),
                            on="qid").merge(ref.drop(columns="slice").add_suffix("_ref")
                                            .rename(columns={"qid_ref": "qid"}), on="qid")
        table.to_csv(out, mode="a", header=not out.exists(), index=False)
        print(f"{name}: {len(table)} questions, branches {table['branch'].value_counts().to_dict()}",
              file=sys.stderr, flush=True)


def stacked_overrides(judge: str, a: float, b: float, memo: str = "", rules: str = "") -> dict[str, object]:
    """Config overrides of the stacked judge at ``(a, b)``: the rescue profile with a veto, its judge reading the
    refusals of the named ``rules`` (none by default, as measured in session 38; the profile itself reads
    type-off-topic since session 39)."""
    from ragbench.answer.judge import rescue_overrides

    out = {**rescue_overrides(judge), "answer.judge_veto_min_yes": a, "answer.judge_min_yes": b,
           "answer.judge_min_yes_restricted": min(1.0, b + RESTRICTED_MARGIN), "answer.judge_rescue_rules": rules}
    if memo:
        out["answer.judge_memo"] = memo
    return out


def score_main(args: argparse.Namespace) -> None:
    """Answer every question for real at ``(a, b)`` (chains as chats) and print the pooled measures, scored by eval
    golden's own functions."""
    from ragbench.eval.answers import summarize
    from ragbench.retrieval.embedding import make_embedder

    cfg = answer_config(None, "dense")
    scfg = with_overrides(cfg, stacked_overrides(args.judge, args.a, args.b, args.memo, args.rescue_rules))
    embedder = make_embedder(cfg.embedding)
    tables = []
    for name, folder in zip(set_names(args.data), args.data, strict=True):
        golden = load_golden(folder)
        store = build_store(golden, cfg, embedder)
        chunk_doc = {c.chunk_id: c.doc_id for c in store.chunks()}
        service = build_service(golden, scfg, "dense", embedder, store=store)
        answers, prompts = answer_golden(service, golden, show_progress=True)
        long = score_answers("answer-stacked", golden, answers, prompts, chunk_doc)
        long["qid"] = name + "/" + long["qid"]
        tables.append(long)
    per_q = pd.concat(tables, ignore_index=True)
    summary = summarize(per_q)
    rows = summary[summary["group"].isin(["all", "slice:refuse-acl", "slice:refuse-unanswerable"])]
    wide_q = per_q.pivot_table(index="qid", columns="measure", values="value", aggfunc="first")
    print(f"a={args.a}, b={args.b}: refusal accuracy {int(wide_q['RefusalAccuracy'].sum())}, HandledRight "
          f"{int(wide_q['HandledRight'].sum())} of {len(wide_q)}")
    cols = ["group", "n", *[m for m in MEASURES if m in rows.columns]]
    print(rows[cols].round(3).to_string(index=False))


def decide(rows: pd.DataFrame, a: float, b: float, rules: Mapping[str, float] | None = None) -> np.ndarray:
    """Whether each question is answered under the pair ``(a, b)``; ``rules``: the named rules whose refusals the
    judge also reads (a probe with ``--rescue-rules``), each with its rescue bar (the rest stay refused)."""
    p = rows["p_yes"].to_numpy(float)
    restricted = rows["restricted"].to_numpy(bool)
    bar = np.where(restricted, b + RESTRICTED_MARGIN, b)
    branch = rows["branch"].to_numpy(str)
    fixed = ~rows["probe_refused"].to_numpy(bool)
    out = np.where(branch == "text", p >= a, np.where(branch == "threshold", p >= bar, fixed))
    for rule in {x for x in branch if x.startswith("rule:")}:
        bar_r = (rules or {}).get(rule.removeprefix("rule:"))
        mask = branch == rule
        out[mask] = False if bar_r is None else (p >= np.where(restricted, bar_r + RESTRICTED_MARGIN, bar_r))[mask]
    return out


def rules_report(rows: pd.DataFrame, a: float, b: float) -> pd.DataFrame:
    """Each named rule's refusals read by the judge at a few bars, against none: the change in the counts."""
    base = score(rows, a, b)
    out = []
    for rule in sorted({x.removeprefix("rule:") for x in rows["branch"] if x.startswith("rule:")}):
        n = int((rows["branch"] == "rule:" + rule).sum())
        for bar in (0.35, 0.5, 0.7):
            got = score(rows, a, b, {rule: bar})
            out.append({"rule": rule, "refusals": n, "bar": bar,
                        **{k: int(got[k] - base[k]) for k in ("RefusalAccuracy", "HandledRight", "refuse-acl",
                                                              "refuse-unanswerable")}})
    return pd.DataFrame(out)


def score(rows: pd.DataFrame, a: float, b: float, rules: Mapping[str, float] | None = None) -> dict[str, float]:
    """Pooled counts and means of ``rows`` under ``(a, b)`` (means over the questions where a measure applies)."""
    answered = decide(rows, a, b, rules)
    out: dict[str, float] = {"a": a, "b": b, "questions": len(rows)}
    for m in MEASURES:
        v = np.where(answered, rows[m + "_ans"].to_numpy(float), rows[m + "_ref"].to_numpy(float))
        ok = ~np.isnan(v)
        out[m] = float(v[ok].sum()) if m in ("RefusalAccuracy", "HandledRight", "LeakedDocs", "SecretInAnswer",
                                              "InjectionQuoted") else (float(v[ok].mean()) if ok.any() else math.nan)
    for tag in ("refuse-acl", "refuse-unanswerable"):
        mask = (rows["slice"] == tag).to_numpy()
        v = np.where(answered, rows["RefusalAccuracy_ans"].to_numpy(float),
                     rows["RefusalAccuracy_ref"].to_numpy(float))[mask]
        out[tag] = float(v.sum())
    return out


def choose(rows: pd.DataFrame) -> tuple[float, float]:
    """The grid pair with the most questions handled right (ties: nearest the judge profile's pair)."""
    best = None
    for a in VETO_GRID:
        for b in RESCUE_GRID:
            hr = score(rows, a, b)["HandledRight"]
            key = (-hr, math.dist((a, b), JUDGE_PROFILE), a, b)
            best = key if best is None or key < best else best
    assert best is not None
    return best[2], best[3]


def load_rows(path: str) -> pd.DataFrame:
    """The probe's rows, one per question (a file written before the pivot kept only real (qid, slice) pairs
    holds every qid × slice pair; the ones with no measure are dropped)."""
    rows = pd.read_csv(path).dropna(subset=["RefusalAccuracy_ans", "RefusalAccuracy_ref"])
    if rows.duplicated(["set", "qid"]).any():
        raise SystemExit(f"{path}: a question appears twice; probe each set once")
    return rows.reset_index(drop=True)


FEATURES = ("p_yes", "soft_coverage", "similarity", "text_accepted")


def logistic_loo(rows: pd.DataFrame) -> dict[str, float]:
    """Reported, not shipped: a logistic regression over P(yes), soft coverage, similarity and the text check's
    verdict, trained on the other organisations' judged questions (label: answering handles it right, refusing
    does not, or the reverse; questions where both or neither do carry no signal), answering at p >= 0.5."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    in_family = rows["branch"].isin(["text", "threshold"]).to_numpy()
    judged = rows[in_family].copy()
    judged["text_accepted"] = (judged["branch"] == "text").astype(float)
    x_all = judged[list(FEATURES)].astype(float).fillna(0.0).to_numpy()
    diff = (judged["HandledRight_ans"] - judged["HandledRight_ref"]).to_numpy(float)
    # outside the family: as the probe left them, a named rule's refusal (a --rescue-rules probe) refused
    answered = decide(rows, 0.0, 1.01)
    hr = float(np.where(answered, rows["HandledRight_ans"], rows["HandledRight_ref"])[~in_family].sum())
    ra = float(np.where(answered, rows["RefusalAccuracy_ans"], rows["RefusalAccuracy_ref"])[~in_family].sum())
    sets = judged["set"].to_numpy()
    if len(np.unique(sets)) < 2:
        return {"questions": float(len(rows)), "RefusalAccuracy": math.nan, "HandledRight": math.nan}
    for name in np.unique(sets):
        train = (sets != name) & (diff != 0)
        model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
        model.fit(x_all[train], (diff[train] > 0).astype(int))
        test = sets == name
        go = model.predict_proba(x_all[test])[:, 1] >= 0.5
        t = judged[test]
        hr += float(np.where(go, t["HandledRight_ans"], t["HandledRight_ref"]).sum())
        ra += float(np.where(go, t["RefusalAccuracy_ans"], t["RefusalAccuracy_ref"]).sum())
    return {"questions": float(len(rows)), "RefusalAccuracy": ra, "HandledRight": hr}


def choose_main(args: argparse.Namespace) -> None:
    rows = load_rows(args.rows)
    pair = choose(rows) if not args.pair else tuple(float(x) for x in args.pair.split(","))
    report: dict[str, object] = {"chosen_pooled": pair}
    corners = {"default": (0.0, 1.01), "rescue": (0.0, 0.35), "judge-like": JUDGE_PROFILE, "chosen": pair}
    report["pooled"] = {k: score(rows, *v) for k, v in corners.items()}
    folds, held = {}, []
    for name in sorted(rows["set"].unique()):
        train, test = rows[rows["set"] != name], rows[rows["set"] == name]
        fold_pair = choose(train)
        folds[name] = fold_pair
        held.append(test.assign(answered=decide(test, *fold_pair)))
    report["folds"] = folds
    loo = pd.concat(held)
    loo_score = {"questions": len(loo)}
    for m in ("RefusalAccuracy", "HandledRight"):
        v = np.where(loo["answered"], loo[m + "_ans"], loo[m + "_ref"])
        loo_score[m] = float(np.nansum(v))
    for m in ("FactInAnswer", "CitationPrecision"):
        v = np.where(loo["answered"], loo[m + "_ans"], loo[m + "_ref"]).astype(float)
        loo_score[m] = float(np.nanmean(v))
    for tag in ("refuse-acl", "refuse-unanswerable"):
        t = loo[loo["slice"] == tag]
        loo_score[tag] = float(np.where(t["answered"], t["RefusalAccuracy_ans"], t["RefusalAccuracy_ref"]).sum())
    report["leave_one_organisation_out"] = loo_score
    report["logistic_leave_one_organisation_out"] = logistic_loo(rows)
    by_rule = rules_report(rows, *pair)
    if not by_rule.empty:
        report["rules"] = by_rule.to_dict("records")
    if args.json:
        print(json.dumps(report))
        return
    how = "given" if args.pair else f"chosen on all {rows['set'].nunique()} sets pooled"
    print(f"{how}: a={pair[0]}, b={pair[1]}")
    print(pd.DataFrame(report["pooled"]).T.round(3).to_string())
    print("\neach organisation left out: the pair chosen on the others")
    print(pd.Series({k: f"a={v[0]}, b={v[1]}" for k, v in folds.items()}).to_string())
    print("\nscored on the organisation left out, pooled:", {k: round(v, 3) for k, v in loo_score.items()})
    print("a logistic regression instead of the pair, the same way:",
          {k: round(v, 3) for k, v in report["logistic_leave_one_organisation_out"].items()})
    if not by_rule.empty:
        print("\nthe judge also reading one named rule's refusals (change against the chosen pair alone):")
        print(by_rule.to_string(index=False))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("probe", help="answer every question with the judge reading every answer; append rows")
    p.add_argument("--data", nargs="+", required=True, help="golden folders")
    p.add_argument("--out", required=True, help="CSV file to append to (sets already in it are skipped)")
    p.add_argument("--judge", default="llama", help="the judge model (default llama)")
    p.add_argument("--memo", default="", help="answer.judge_memo file (verdicts kept across runs)")
    p.add_argument("--rescue-rules", default="", help="answer.judge_rescue_rules of the probe (the pilot: all)")
    c = sub.add_parser("choose", help="replay the grid from the probe's rows")
    c.add_argument("--rows", required=True, help="the probe's CSV file")
    c.add_argument("--json", action="store_true", help="print one JSON object")
    c.add_argument("--pair", default="", metavar="A,B", help="replay at this pair instead of the pooled choice "
                                                             "(the rule table is measured against it)")
    s = sub.add_parser("score", help="answer for real at one pair and print the pooled measures")
    s.add_argument("--data", nargs="+", required=True, help="golden folders (pooled)")
    s.add_argument("--a", type=float, required=True, help="the veto bar (answer.judge_veto_min_yes)")
    s.add_argument("--b", type=float, required=True, help="the rescue bar (answer.judge_min_yes)")
    s.add_argument("--judge", default="llama", help="the judge model (default llama)")
    s.add_argument("--memo", default="", help="answer.judge_memo file")
    s.add_argument("--rescue-rules", default="", help="answer.judge_rescue_rules (default none, as in session 38)")
    args = ap.parse_args()
    {"probe": probe, "choose": choose_main, "score": score_main}[args.command](args)


if __name__ == "__main__":
    main()
