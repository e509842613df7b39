"""``ragbench ask "QUESTION" --as PRINCIPAL``: a grounded, cited answer (or a refusal) as a principal.

By default it answers over the bundled golden corpus (``data/golden``), indexed on first use into
``.ragbench/golden-answers-<key>.db`` (one store per golden folder and index setting) with sentence chunks and
MiniLM embeddings (:mod:`ragbench.eval.assistant`); ``--store`` points at another store (then ``--principals``
gives its principals file). Each answer is logged as an MLflow run (experiment ``ragbench-ask``). With ``--json``
stdout is one JSON line with ``answer, refused, refusal_reason, citations [{doc_id, title, chunk_id, start, end}],
support_ratio, prompt_version, model_id`` (plus retrieval_mode, context_tokens, answer_id, error, unanswered_parts,
judge_p_yes — the judge's P(yes) when a graded judge read the answer, else null — and mlflow_run_id). A multi-part
question answered in part lists the parts no sentence answers. ``--explain`` adds why (``explain``: the rule that
decided, the answerability check's signals, the sentences it read; :meth:`ragbench.answer.service.Answer.explain`).
"""
from __future__ import annotations

import argparse
from typing import Any

from ._common import Output, add_common_options, add_model_option, add_retriever_option, load_cfg, parse_sets

EXPERIMENT = "ragbench-ask"


def add_common(p: argparse.ArgumentParser) -> None:
    """Options shared by ``ask`` and ``chat``."""
    p.add_argument("--as", dest="principal", required=True, metavar="PRINCIPAL", help="user id to answer as")
    p.add_argument("--store", default=None,
                   help="knowledge store holding indexed documents (default: .ragbench/golden-answers-<key>.db, "
                        "the --data golden folder, indexed on first use)")
    add_retriever_option(p, default=None, help="retrieval mode: bm25, dense, lsh, hybrid (default: dense)")
    add_model_option(p, help="chat model: extractive | openai | llama (default: answer.chat_model)")
    p.add_argument("--data", default=None, help="golden folder (default: the bundled data/golden)")
    p.add_argument("--principals", default=None, help="principals YAML (default: the golden set's)")
    p.add_argument("--tenant", default=None, help="budget tenant (default: answer.tenant)")
    p.add_argument("--judge", default=None, metavar="MODEL",
                   help="the judge profile: this local model (llama) decides whether the answer answers the "
                        "question (docs/answers.md; about 1-2 s per question)")
    p.add_argument("--rescue", default=None, metavar="MODEL",
                   help="the rescue profile: the text check decides, and this local model (llama) reads only the "
                        "answers it refused on coverage and similarity (docs/answers.md)")
    p.add_argument("--explain", action="store_true",
                   help="also say why: the rule that decided, the answerability check's signals and the sentences "
                        "it read (JSON: an 'explain' object). For the operator: it says what a refusal's wording "
                        "never does, such as a restricted passage ranking first")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ask", help="answer a question with citations, as a principal")
    p.add_argument("question", metavar="QUESTION", help="the question")
    add_common(p)
    add_common_options(p, json_help="print the answer as exactly one JSON line on stdout")
    p.set_defaults(func=run)


def service_for(args: argparse.Namespace) -> tuple[Any, Any, Any]:
    """``(service, principal, cfg)`` for the options of :func:`add_common` (``ask`` and ``chat``)."""
    from ..eval.assistant import open_service

    return open_service(load_cfg(args), args.principal, mode=args.retriever, model=args.model, store=args.store,
                        data=args.data, principals=args.principals, tenant=args.tenant, judge=args.judge,
                        rescue=args.rescue, user_set=list(parse_sets(args.set)))


def answer_lines(answer: Any) -> list[str]:
    """The human-readable answer: text, refusal, citations, provenance."""
    lines = [answer.answer]
    if answer.refused:
        lines.append(f"(refused: {answer.refusal_reason}" + (f"; {answer.error}" if answer.error else "") + ")")
    lines += [f"(not answered: {part})" for part in getattr(answer, "unanswered_parts", ())]
    lines += [f"  [{c.n}] {c.title} ({c.doc_id}, chars {c.start}-{c.end})" for c in answer.citations]
    lines.append(f"  prompt {answer.prompt_version} · model {answer.model_id} · {answer.retrieval_mode} · "
                 f"support {answer.support_ratio:.2f}")
    return lines


def explain_lines(answer: Any) -> list[str]:
    """The human-readable :meth:`~ragbench.answer.service.Answer.explain`: the deciding rule, the check's signals,
    the sentences it read."""
    why = answer.explain()
    lines = [f"  decided by {why['decided_by']} · query: {why['query']}"]
    if why["restricted_gap"] or why["restricted_lead"]:
        lines.append(f"  restricted gap {why['restricted_gap']:.3f} · restricted lead {why['restricted_lead']:.3f}")
    if why["judge_p_yes"] is not None:
        lines.append(f"  judge P(yes) {why['judge_p_yes']:.3f}")
    check = why["check"]
    if check is not None:
        kind = check["expected_type"] or "open"
        lines.append(f"  check: coverage {check['coverage']:.2f} (soft {check['soft_coverage']:.2f}) · similarity "
                     f"{check['similarity']:.2f} · type {kind} ({'found' if check['type_found'] else 'not found'})")
        if check["reason"]:
            lines.append(f"  check {'passed' if check['answerable'] else 'refused'}: {check['reason']}")
        lines += [f"    part {'answered' if p['answerable'] else 'refused'}: {p['text']}"
                  + (f" ({p['reason']})" if p["reason"] else "") for p in check["parts"]]
    lines += [f"  read [{s['chunk_id']}] {s['text']}" for s in why["sentences"]]
    return lines


def run(args: argparse.Namespace) -> int:
    from ..provenance import text_hash
    from ..retrieval.factory import stage_signatures
    from ..tracking import record_run

    out = Output(args)
    service, principal, cfg = service_for(args)
    try:
        answer = service.answer(args.question, principal)
    finally:
        service.store.close()
    out.text(*answer_lines(answer))
    if args.explain:
        out.text(*explain_lines(answer))
    rec = record_run(EXPERIMENT, "ask", cfg,
                     {"refused": float(answer.refused), "support_ratio": answer.support_ratio,
                      "context_tokens": answer.context_tokens, "citations": len(answer.citations)},
                     params={"ask": {"question": args.question, "principal": args.principal,
                                     "retriever": answer.retrieval_mode, "model_id": answer.model_id,
                                     "prompt_version": answer.prompt_version}},
                     data_hash=text_hash(args.question), enabled=not args.no_mlflow,
                     tags={"dataset": "ask", "refusal_reason": answer.refusal_reason},
                     stages=stage_signatures(cfg, [answer.retrieval_mode],
                                             embedder=service.embedder or False))
    out.text(f"  mlflow run: {rec.run_id or rec.skipped or 'not logged'}")
    if rec.error:
        out.error(rec.error)
    out.json({**answer.to_json(), "mlflow_run_id": rec.run_id,
              **({"explain": answer.explain()} if args.explain else {})})
    return 1 if rec.error else 0
