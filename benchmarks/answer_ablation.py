"""Which answerability rule earns its place: the default answer system with each rule switched off in turn.

    python benchmarks/answer_ablation.py --data data/golden data/golden_*            # every rule, pooled + per set
    python benchmarks/answer_ablation.py --data data/golden_lowenby --rules everyday,rare --json
    python benchmarks/answer_ablation.py --data data/golden_* --rules none \
        --variant everyday-known:answer.answerability_everyday_known_zipf=5.0     # a rule switched on instead

Each golden set is chunked and embedded once; every variant answers all its questions over that store with the
default `answer` system (dense retrieval, extractive reader) and one config field changed. For each variant the
pooled counts (refusal accuracy, HandledRight, the two refusal slices, leaks and quoted injections) are printed with
their change against the default, the questions won and lost, and a paired sign-flip permutation p-value on
HandledRight (seed 0). A rule that loses questions when switched off on sets it was not written from earns its place;
one that only does on the sets it came from was fitted to them (docs/answers.md, session 33). ``--variant
NAME:KEY=VALUE[,KEY=VALUE]`` adds a variant with any config fields set (a rule not yet on, measured on sets written
after it was proposed: session 35).
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ragbench.config import with_overrides
from ragbench.errors import ConfigError
from ragbench.eval.answers import answer_config, answer_golden, build_service, build_store, score_answers
from ragbench.eval.golden import load_golden
from ragbench.eval.golden_sets import set_names
from ragbench.eval.stats import permutation_test


@dataclass(frozen=True)
class Rule:
    name: str
    overrides: dict[str, object]


#: Every rule of the answerability check that has an off switch, with the switch (ragbench.config.AnswerConfig).
RULES: tuple[Rule, ...] = (
    Rule("types", {"answer.answerability_types": False}),
    Rule("type-coverage", {"answer.answerability_type_coverage": 0.0}),
    Rule("conflicts", {"answer.answerability_conflicts": False}),
    Rule("names", {"answer.answerability_names": False}),
    Rule("known-names", {"answer.answerability_known_names": False}),
    Rule("everyday", {"answer.answerability_everyday_zipf": 0.0}),
    Rule("rare", {"answer.answerability_rare_zipf": 0.0}),
    Rule("sibling", {"answer.answerability_sibling_zipf": 0.0}),
    Rule("change-dates", {"answer.answerability_change_dates": False}),
    Rule("years", {"answer.answerability_years": False}),
    Rule("closure-dates", {"answer.answerability_closure_dates": False}),
    Rule("period-ends", {"answer.answerability_period_ends": False}),
    Rule("band-tops", {"answer.answerability_band_tops": False}),
    Rule("top-pay", {"answer.answerability_top_pay": False}),
    Rule("months", {"answer.answerability_months": False}),
    Rule("year-labels", {"answer.answerability_year_labels": False}),
    Rule("whole-years", {"answer.answerability_whole_years": False}),
    Rule("abroad", {"answer.answerability_abroad": False}),
    Rule("interest-rate", {"answer.answerability_interest_rates": False}),
    Rule("vehicle", {"answer.answerability_vehicles": False}),
    Rule("kinship", {"answer.kinship": False}),
    Rule("vehicle-words", {"answer.answerability_vehicle_words": False}),
    Rule("letter-codes", {"answer.answerability_letter_codes": False}),
    Rule("stance-words", {"answer.answerability_stance_words": False}),
    Rule("sick-pay-periods", {"answer.answerability_sick_pay_periods": False}),
    Rule("relations", {"answer.answerability_relations": False}),
    Rule("range-forms", {"answer.answerability_range_forms": False}),
    Rule("closure-years", {"answer.answerability_closure_years": False}),
    Rule("profits", {"answer.answerability_profits": False}),
    Rule("count-bands", {"answer.answerability_count_bands": False}),
    Rule("split-type-topic", {"answer.answerability_split_type_topic": False}),
    Rule("other-relations", {"answer.answerability_other_relations": False}),
    Rule("week-parts", {"answer.answerability_week_parts": False}),
    Rule("lengths", {"answer.answerability_lengths": False}),
    Rule("areas", {"answer.answerability_areas": False}),
    Rule("vehicle-rates", {"answer.answerability_vehicle_rates": False}),
    Rule("top-columns", {"answer.answerability_top_columns": False}),
    Rule("sanctions", {"answer.answerability_sanctions": False}),
    Rule("top-column-roles", {"answer.answerability_top_column_roles": False}),
    Rule("charges", {"answer.answerability_charges": False}),
    Rule("empty-cells", {"answer.answerability_empty_cells": False}),
    Rule("glued-units", {"answer.answerability_glued_units": False}),
    Rule("current-passages", {"answer.current_passages": False}),
    Rule("period-spans", {"answer.answerability_period_spans": False}),
    Rule("rewriter-siblings", {"answer.rewriter_siblings": False}),
    Rule("followup-context", {"answer.followup_context": False}),
    Rule("restricted-gap", {"answer.restricted_gap": 0.0}),
    Rule("restricted-coverage", {"answer.restricted_coverage": False}),
)
MEASURES = ("RefusalAccuracy", "HandledRight", "LeakedDocs", "InjectionQuoted")


def parse_variant(spec: str) -> Rule:
    """``NAME:KEY=VALUE[,KEY=VALUE]`` → a :class:`Rule` with those overrides (values parsed by the config's types)."""
    name, sep, body = spec.partition(":")
    pairs = [p.partition("=") for p in body.split(",") if p.strip()]
    if not sep or not name.strip() or not pairs or any(not eq or not k.strip() for k, eq, _ in pairs):
        raise SystemExit(f"--variant {spec!r}: expected NAME:KEY=VALUE[,KEY=VALUE], e.g. "
                         "everyday-known:answer.answerability_everyday_known_zipf=5.0")
    return Rule(name.strip(), {k.strip(): v.strip() for k, _, v in pairs})


def per_question(system: str, golden, service, chunk_doc) -> pd.DataFrame:
    """One row per question: set-free qid, slice and the measures of :data:`MEASURES` (wide)."""
    answers, prompts = answer_golden(service, golden)
    long = score_answers(system, golden, answers, prompts, chunk_doc)
    wide = long[long["measure"].isin(MEASURES)].pivot_table(index=["qid", "slice"], columns="measure",
                                                            values="value", aggfunc="first")
    return wide.reset_index()


def summary(table: pd.DataFrame, base: pd.DataFrame) -> dict[str, object]:
    """Counts of ``table`` and their change against ``base`` (rows in the same order)."""
    def count(t: pd.DataFrame, measure: str, tag: str | None = None) -> int:
        rows = t if tag is None else t[t["slice"] == tag]
        return int(rows[measure].sum())

    out: dict[str, object] = {"questions": len(table)}
    for key, measure, tag in (("refusal_accuracy", "RefusalAccuracy", None), ("handled_right", "HandledRight", None),
                              ("refuse_unanswerable", "RefusalAccuracy", "refuse-unanswerable"),
                              ("refuse_acl", "RefusalAccuracy", "refuse-acl"),
                              ("leaked_docs", "LeakedDocs", None), ("injection_quoted", "InjectionQuoted", None)):
        out[key] = count(table, measure, tag)
        out[key + "_delta"] = out[key] - count(base, measure, tag)
    hr, hr0 = table["HandledRight"].to_numpy(float), base["HandledRight"].to_numpy(float)
    out["handled_right_won"] = int(np.sum(hr > hr0))
    out["handled_right_lost"] = int(np.sum(hr < hr0))
    out["handled_right_p"] = round(permutation_test(hr, hr0, seed=0), 4)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="+", default=["data/golden"], help="golden folders (pooled)")
    ap.add_argument("--rules", default="all", help=f"comma-separated rules to switch off, or all: "
                                                   f"{','.join(r.name for r in RULES)} (none: only --variant)")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME:KEY=VALUE[,KEY=VALUE]",
                    help="also score a variant with these config fields set (repeatable)")
    ap.add_argument("--json", action="store_true", help="print one JSON line instead of the tables")
    args = ap.parse_args()
    chosen = [r for r in RULES if args.rules == "all" or r.name in args.rules.split(",")]
    chosen += [parse_variant(v) for v in args.variant]
    unknown = set(args.rules.split(",")) - {r.name for r in RULES} - {"all", "none"}
    if unknown:
        sys.exit(f"unknown rule(s) {sorted(unknown)}; choose from {[r.name for r in RULES]} or all")
    from ragbench.retrieval.embedding import make_embedder

    cfg = answer_config(None, "dense")
    embedder = make_embedder(cfg.embedding)
    try:
        variants = {"default": cfg, **{r.name: with_overrides(cfg, r.overrides) for r in chosen}}
    except ConfigError as exc:
        sys.exit(f"--variant: {exc}")
    tables: dict[str, list[pd.DataFrame]] = {v: [] for v in variants}
    for name, folder in zip(set_names(args.data), args.data, strict=True):
        golden = load_golden(folder)
        store = build_store(golden, cfg, embedder)
        chunk_doc = {c.chunk_id: c.doc_id for c in store.chunks()}
        for variant, vcfg in variants.items():
            service = build_service(golden, vcfg, "dense", embedder, store=store)
            tables[variant].append(per_question("answer", golden, service, chunk_doc).assign(set=name))
        print(f"{name}: {len(golden.questions)} questions", file=sys.stderr, flush=True)
    pooled = {v: pd.concat(t, ignore_index=True).sort_values(["set", "qid"], ignore_index=True)
              for v, t in tables.items()}
    base = pooled["default"]
    report = {v: summary(t, base) for v, t in pooled.items()}
    base_hr = base.groupby("set")["HandledRight"].sum()
    by_set = {v: (t.groupby("set")["HandledRight"].sum() - base_hr).astype(int).to_dict()
              for v, t in pooled.items() if v != "default"}
    if args.json:
        print(json.dumps({"data": args.data, "variants": report, "handled_right_delta_by_set": by_set}))
        return
    rows = pd.DataFrame(report).T
    cols = ["refusal_accuracy", "refusal_accuracy_delta", "handled_right", "handled_right_delta", "handled_right_won",
            "handled_right_lost", "handled_right_p", "refuse_unanswerable", "refuse_acl", "leaked_docs",
            "injection_quoted"]
    print(f"switched off (or --variant), pooled over {len(base)} questions of {len(args.data)} set(s):")
    table = rows[cols].astype({c: int for c in cols if c != "handled_right_p"})
    print(table.rename(columns=lambda c: c.replace("handled_right", "HR").replace("refusal_accuracy", "RA"))
          .to_string())
    if len(args.data) > 1:
        print("\nHandledRight change by set (variant minus default):")
        print(pd.DataFrame(by_set).T.to_string())


if __name__ == "__main__":
    main()
