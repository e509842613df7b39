"""The grounded-answer layer (Enterprise RAG Knowledge Assistant, seed-behaviour 3): ACL post-filter, versioned
prompts, grounding, citations, follow-up rewriting, budgets and the answering service."""
from .acl import PrincipalRegistry, allowed_doc_ids, parse_principals, post_filter
from .answerability import AnswerabilityReport, PermittedTermWeights, assess
from .budget import AnswerLog, BudgetLedger, PriceBook, Usage
from .chat import ChatSession
from .citations import Citation, build_citations
from .grounding import GroundingReport, SentenceSupport, split_answer, verify
from .prompts import PromptConflict, PromptRegistry, PromptTemplate, prompt_hash
from .rewriter import rewrite
from .service import REFUSAL_REASONS, Answer, AnsweringService

__all__ = ["PrincipalRegistry", "allowed_doc_ids", "parse_principals", "post_filter", "AnswerabilityReport",
           "PermittedTermWeights", "assess", "AnswerLog", "BudgetLedger",
           "PriceBook", "Usage", "ChatSession", "Citation", "build_citations", "GroundingReport", "SentenceSupport",
           "split_answer", "verify", "PromptConflict", "PromptRegistry", "PromptTemplate", "prompt_hash", "rewrite",
           "REFUSAL_REASONS", "Answer", "AnsweringService"]
