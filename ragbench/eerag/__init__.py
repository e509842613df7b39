"""Elective Ephemeral RAG: summary-first candidates, model-elected expansion, transient injection, conversation
isolation and optional silent digestion, with ``[RAG:xxxxxxxx]`` audit tags and a two-phase audit."""
from .election import build_header, filter_elected, parse_retrieve_ids
from .electors import ELECTOR_SYSTEM_PROMPT, PolicyElector
from .hooks import ContextSelector
from .pipeline import EeragPipeline, EeragResult
from .session import TransientSession
from .summarize import ExtractiveSummarizer, LlmSummarizer

__all__ = ["EeragPipeline", "EeragResult", "TransientSession", "PolicyElector", "ELECTOR_SYSTEM_PROMPT",
           "ContextSelector", "ExtractiveSummarizer", "LlmSummarizer", "build_header", "parse_retrieve_ids",
           "filter_elected"]
