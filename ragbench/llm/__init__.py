"""Chat models behind one interface. They live at the engine layer because all three seed systems use them
(EE-RAG's elector and digester, RAG-DAL's decomposition and answers, the grounded-answer service).

``OpenAIChatModel`` (httpx) and ``LlamaCppChatModel`` are imported on first access, so importing this package
stays light."""
from typing import Any

from .base import ChatModel, Completion
from .context import REFUSAL_MESSAGE, Passage, rag_meta, read_rag_meta, strip_markers
from .extractive import ExtractiveChatModel
from .factory import CHAT_MODELS, chat_model_for, make_chat_model, make_token_scorer

__all__ = ["ChatModel", "Completion", "ExtractiveChatModel", "OpenAIChatModel", "LlamaCppChatModel",
           "make_chat_model", "make_token_scorer", "chat_model_for", "CHAT_MODELS", "Passage", "rag_meta",
           "read_rag_meta", "strip_markers", "REFUSAL_MESSAGE"]


def __getattr__(name: str) -> Any:
    if name == "OpenAIChatModel":
        from .openai import OpenAIChatModel

        return OpenAIChatModel
    if name == "LlamaCppChatModel":
        from .llama import LlamaCppChatModel

        return LlamaCppChatModel
    raise AttributeError(f"module 'ragbench.llm' has no attribute {name!r}")
