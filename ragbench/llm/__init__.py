"""Chat models behind one interface. They live at the engine layer because all three seed systems use them
(EE-RAG's elector and digester, RAG-DAL's decomposition and answers, the grounded-answer service)."""
from .base import ChatModel, Completion

__all__ = ["ChatModel", "Completion"]
