"""Dynamic Context Selection: route conversation context through intent / DCN / domain identifiers.

``faithful=True`` in :class:`ragbench.config.DcsConfig` reproduces the source (DCS-EE-RAG) with its flaws; the
default fixes them (see :mod:`ragbench.dcs.assembler`). Any :class:`Classifier` can supply the keys.
"""
from __future__ import annotations

from .assembler import DcsContextAssembler, DcsLogEntry, DcsMessage, ScoredMessage
from .classifier import (Classifier, Domain, EmbeddingClusterClassifier, Intent, PatternClassifier, is_escalation,
                         make_classifier)
from .key import DcsKey, jaccard
from .nodes import DcnNode, DcnStore, recency
from .persistence import load_conversation, save_conversation
from .selector import DcsContextSelector

__all__ = [
    "Classifier", "DcnNode", "DcnStore", "DcsContextAssembler", "DcsContextSelector", "DcsKey", "DcsLogEntry",
    "DcsMessage", "Domain", "EmbeddingClusterClassifier", "Intent", "PatternClassifier", "ScoredMessage",
    "is_escalation", "jaccard", "load_conversation", "make_classifier", "recency", "save_conversation",
]
