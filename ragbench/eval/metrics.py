"""Every evaluation measure in one namespace: retrieval measures (:mod:`ragbench.eval.ir_metrics`, equal to
trec_eval's) and RAG measures (:mod:`ragbench.eval.rag_metrics`: citations, refusals, election, evidence, cost)."""
from __future__ import annotations

from .ir_metrics import Measure, aggregate, evaluate, parse_measure, qrels_dict, rankings
from .rag_metrics import (ANY_CORRECT_CITATION, CANDIDATE_RECALL, CITATION_PRECISION, CITATION_RECALL, CONTEXT_TOKENS,
                          ELECTION_F1, ELECTION_PRECISION, ELECTION_RECALL, EVIDENCE_RECALL, MODEL_CALLS,
                          REFUSAL_ACCURACY, RETRIEVAL_EXPECTED, RETRIEVAL_RATE, SUPPORT_RATIO, AnswerGold, RagMeasure,
                          any_correct_citation, candidate_recall, cited_ids, citation_precision, citation_recall,
                          election_f1, election_precision, election_recall, evaluate_answers, evaluate_election,
                          evidence_recall, evidence_recall_at_k, normalize_dia_id, refusal_correct, split_evidence)

__all__ = ["Measure", "aggregate", "evaluate", "parse_measure", "qrels_dict", "rankings", "ANY_CORRECT_CITATION",
           "CANDIDATE_RECALL", "CITATION_PRECISION", "CITATION_RECALL", "CONTEXT_TOKENS", "ELECTION_F1",
           "ELECTION_PRECISION", "ELECTION_RECALL", "EVIDENCE_RECALL", "MODEL_CALLS", "REFUSAL_ACCURACY",
           "RETRIEVAL_EXPECTED", "RETRIEVAL_RATE", "SUPPORT_RATIO", "AnswerGold", "RagMeasure", "any_correct_citation",
           "candidate_recall", "cited_ids", "citation_precision", "citation_recall", "election_f1",
           "election_precision", "election_recall", "evaluate_answers", "evaluate_election", "evidence_recall",
           "evidence_recall_at_k", "normalize_dia_id", "refusal_correct", "split_evidence"]
