"""The stage contracts every system is built from, one verb each, at the foundation layer so that the store, the
retrieval stack, the chat models and the seed systems can all name them without importing each other:

* ``Chunker.chunk(document) -> list[Chunk]``;
* ``Embedder.embed(texts) -> float32 (n, dim)``, each row L2-normalised (a zero row stays zero);
* ``Retriever.index(chunks, acls, titles)`` then ``.search(query, k, principal) -> Sequence[Hit]``; ACLs are enforced
  *before* scoring, so a forbidden chunk never influences ranks, normalisation or fusion (``principal=None`` is an
  unrestricted caller);
* ``ChatModel.complete(messages) -> Completion``.

Constructors only store their arguments, under the argument's own name, and do no work (scikit-learn's rule);
:meth:`Params.get_params` reads them back from the constructor signature, which is what identifies a stage in a
store signature, in MLflow params and in provenance. Constructor argument names equal the config field names
(``config.py``) they are built from.
"""
from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from .schema import Acl, Chunk, Document, Hit, Message, Principal, hits_to_run, validate


class Params:
    """``get_params()`` from the constructor signature: every named ``__init__`` argument is read back from the
    attribute of the same name (a missing attribute is a programming error and raises ``AttributeError``)."""

    @classmethod
    def param_names(cls) -> list[str]:
        """The constructor's argument names, in signature order (``*args`` / ``**kwargs`` excluded)."""
        sig = inspect.signature(cls.__init__)
        return [p.name for p in sig.parameters.values() if p.name != "self"
                and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """``{argument: value}``; with ``deep`` a nested stage's parameters follow as ``argument__name`` keys."""
        out: dict[str, Any] = {}
        for name in self.param_names():
            value = getattr(self, name)
            out[name] = value
            if deep and isinstance(value, Params):
                out.update((f"{name}__{k}", v) for k, v in value.get_params(deep=True).items())
        return out

    def __repr__(self) -> str:
        return self.param_signature()

    def param_signature(self) -> str:
        """``ClassName(a=1, b='x', …)`` from :meth:`get_params` (nested stages by their own signature): a stable,
        human-readable identity of the stage's settings."""
        parts = []
        for name, value in self.get_params(deep=False).items():
            parts.append(f"{name}={value.param_signature() if isinstance(value, Params) else repr(value)}")
        return f"{type(self).__name__}({', '.join(parts)})"


def stage_signature(stage: object) -> str:
    """A stage's :meth:`Params.param_signature`; for anything else (a plain callable system, or a stage whose
    constructor arguments are not stored under their names) its qualified name."""
    if isinstance(stage, Params):
        try:
            return stage.param_signature()
        except AttributeError:
            pass
    return str(getattr(stage, "__qualname__", type(stage).__qualname__))


def embedders_of(stage: object) -> list[Embedder]:
    """The embedders a stage holds (itself, or nested constructor arguments such as a hybrid's vector half), outermost
    first; [] when it holds none or its parameters cannot be read back."""
    if isinstance(stage, Embedder):
        return [stage]
    try:
        params = stage.get_params(deep=True) if isinstance(stage, Params) else {}
    except AttributeError:
        return []
    return [v for v in params.values() if isinstance(v, Embedder)]


class Embedder(Params, ABC):
    """Text → unit vectors."""

    #: Identifies the model and its settings (pooling, max length); embeddings are cached under it.
    model_id: str
    dim: int

    @property
    @abstractmethod
    def sha256(self) -> str:
        """SHA-256 of the model weights (or of the embedder's definition for model-free embedders)."""

    @abstractmethod
    def embed(self, texts: Sequence[str], show_progress: bool = False) -> np.ndarray:
        """float32 ``(len(texts), dim)``, L2-normalised rows."""


class Chunker(Params, ABC):
    """Document → chunks."""

    @abstractmethod
    def chunk(self, document: Document) -> list[Chunk]:
        """Chunks with character spans into ``document.text`` and stable ids."""

    def validate(self) -> None:
        """Raise :class:`ragbench.errors.ConfigError` for a bad parameter (nothing to check by default)."""


class Retriever(Params, ABC):
    """Ranks indexed chunks for a query."""

    name: str = "retriever"

    @abstractmethod
    def index(self, chunks: Sequence[Chunk], acls: Mapping[str, Acl] | None = None,
              titles: Mapping[str, str] | None = None, show_progress: bool = False) -> "Retriever":
        """Index chunks; ``acls`` and ``titles`` map ``doc_id`` to the document's ACL and title
        (a document missing from ``acls`` is visible only to unrestricted callers). Returns ``self``."""

    @abstractmethod
    def search(self, query: str, k: int = 10, principal: Principal | None = None) -> Sequence[Hit]:
        """Top ``k`` chunks the principal may read, best first, ranks from 0: a list, or a lazy
        :class:`~ragbench.retrieval.hits.Hits` (BM25, dense) — a read-only sequence; ``list(...)`` to change it."""

    def run(self, queries: Any, k: int = 100, principal: Principal | None = None,
            show_progress: bool = False) -> Any:
        """Run a ``qid, query`` table → a ``qid, docno, score, rank`` table at document level
        (a document's score is its best chunk's)."""
        import pandas as pd
        from tqdm.auto import tqdm

        validate(queries[[c for c in queries.columns if c in ("qid", "query", "conversation_id", "turn")]],
                 "queries")
        rows: list[dict[str, Any]] = []
        it = zip(queries["qid"].astype(str), queries["query"].astype(str))
        for qid, query in tqdm(it, total=len(queries), disable=not show_progress, desc=f"{self.name} run"):
            # Over-fetch chunks so that k distinct documents survive aggregation.
            hits = self.search(query, k=k * 4, principal=principal)
            rows.extend(hits_to_run(qid, hits)[:k])
        return pd.DataFrame(rows, columns=["qid", "docno", "score", "rank"])


@dataclass(frozen=True)
class Completion:
    """A model reply with its token accounting."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    model_id: str
    finish_reason: str = "stop"


class ChatModel(ABC):
    """Anything that turns a list of ``Message(role, content)`` (roles ``system``, ``user``, ``assistant``)
    into a :class:`Completion`. Implementations must be deterministic when their temperature is 0."""

    model_id: str = "chat-model"

    @abstractmethod
    def complete(self, messages: Sequence[Message]) -> Completion:
        """Answer the conversation; raise :class:`ragbench.errors.ModelError` on a malformed reply or
        :class:`ragbench.errors.NetworkError` when a server cannot be reached."""
