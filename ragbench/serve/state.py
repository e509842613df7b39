"""What one server process holds: the store, one answering service per retrieval mode (built on first use or by
the warm-up), the embedder, the research hub index, the research jobs and the EE-RAG conversations.

Services are built under a per-mode lock, so concurrent first requests build once. Everything that must be the
same for every worker (chat sessions, answer log, feedback, research jobs, the hub) lives in SQLite.
"""
from __future__ import annotations

import logging
import threading
from typing import Any

from ..answer import AnsweringService, BudgetLedger
from ..config import RagbenchConfig, with_overrides
from ..dal.hub import KnowledgeHub
from ..dal.session import build_researcher
from ..eerag.memory import is_memory
from ..errors import ConfigError
from ..llm import make_chat_model, make_token_scorer
from ..llm.memo import with_memo
from ..retrieval.embedding import make_embedder
from ..retrieval.retriever import MODES, make_retriever, needs_embedder, normalize_mode, store_vectors, vector_part
from ..store import KnowledgeStore
from .hubindex import HubIndex
from .jobs import ResearchJobs
from .settings import ServeConfig, ServeSettings
from .tracing import Tracer

log = logging.getLogger("ragbench.serve")


def document_retriever(store: KnowledgeStore, mode: str, cfg: RagbenchConfig, embedder: Any) -> Any:
    """A retriever of ``mode`` over the store's documents — not over EE-RAG conversation memory, which the
    conversation system keeps in the same store (as ``memory:*`` documents whose Restricted ACL no principal
    satisfies): one principal's conversation must never be an answer or a search hit for anyone, so they are
    left out of the index as well as failing the ACL check."""
    chunks = [c for c in store.chunks() if not is_memory(c.doc_id)]
    retriever = make_retriever(mode, cfg, embedder)
    vec = vector_part(retriever)
    kwargs: dict[str, Any] = {}
    if vec is not None:
        kwargs["vectors"] = store_vectors(store, [c.chunk_id for c in chunks], vec.embedder, [c.text for c in chunks])
    return retriever.index(chunks, store.acls(), store.titles(), **kwargs)


class ServeState:
    def __init__(self, settings: ServeSettings, tracer: Tracer | None = None) -> None:
        self.settings = settings
        self.serve: ServeConfig = settings.serve_config()
        self.default_mode = normalize_mode(self.serve.retriever)
        self.cfg: RagbenchConfig = settings.research_config(self.default_mode)
        self.tracer = tracer or Tracer()
        self.store = KnowledgeStore.open(settings.store)
        self.hub_store = KnowledgeStore.open(settings.hub) if settings.hub else self.store
        self.hub = KnowledgeHub(self.hub_store)
        self._services: dict[str, Any] = {}
        self._locks = {m: threading.Lock() for m in MODES}
        self._embedder: Any = None
        self._embedder_lock = threading.Lock()
        self._hub_index: Any = None
        self._hub_lock = threading.Lock()
        self._jobs: Any = None
        self.ready = threading.Event()
        self.warm_error: str | None = None

    # ------------------------------------------------------------------------------------------ parts

    def embedder(self) -> Any:
        with self._embedder_lock:
            if self._embedder is None:
                self._embedder = make_embedder(self.cfg.embedding)
            return self._embedder

    def service(self, mode: str | None = None) -> Any:
        """The answering service of ``mode`` (default: ``serve.retriever``)."""
        mode = normalize_mode(mode or self.default_mode)
        found = self._services.get(mode)
        if found is not None:
            return found
        with self._locks[mode]:
            if mode not in self._services:
                self._services[mode] = self._build_service(mode)
            return self._services[mode]

    def _build_service(self, mode: str) -> Any:
        cfg = self.settings.research_config(mode)
        embedder = self.embedder() if needs_embedder(mode) or cfg.answer.extractive_semantic else None
        retriever = document_retriever(self.store, mode, cfg, embedder)
        model = make_chat_model(cfg.answer, embedder=embedder)
        a = cfg.answer
        budget = (BudgetLedger(self.store, a.daily_limit_usd, a.daily_request_limit, a.daily_token_limit)
                  if self.serve.budget else None)
        log.info("answering service ready", extra={"mode": mode, "chunks": self.store.chunk_count()})
        # The optional judge and reranker are local models (answer.judge, answer.rerank); each call holds the model's
        # lock, so concurrent requests take turns on them. answer.judge_memo keeps the judge's verdicts.
        judge = with_memo(make_chat_model(a.judge) if a.judge else None, a.judge_memo)
        return AnsweringService(self.store, self.tracer.wrap_retriever(retriever), self.tracer.wrap_model(model), cfg,
                                embedder=embedder, budget=budget, log_answers=True, judge=judge,
                                reranker=make_token_scorer(a.rerank))

    def hub_index(self) -> Any:
        with self._hub_lock:
            if self._hub_index is None:
                embedder = self.embedder() if needs_embedder("hybrid") else None
                self._hub_index = HubIndex(self.hub, embedder, self.cfg, self.serve.hub_refresh_seconds)
            return self._hub_index

    def jobs(self) -> Any:
        with self._hub_lock:
            if self._jobs is None:
                self._jobs = ResearchJobs(self.hub_store, self._research, self.serve.research_workers,
                                          on_done=lambda: self.hub_index().refresh(force=True),
                                          lease_seconds=self.serve.research_lease_seconds)
            return self._jobs

    def _research(self, question: str, max_passes: int) -> dict[str, Any]:
        cfg = with_overrides(self.cfg, {"dal.max_passes": max_passes})
        researcher = build_researcher(cfg, embedder=self.embedder(), hub=self.hub)
        return researcher.run(question).report.to_dict()

    # ------------------------------------------------------------------------------------------ lifecycle

    def warm(self) -> None:
        """Build the default service and the hub index; /readyz turns 200 when done."""
        try:
            self.store.query("SELECT 1")
            if self.store.chunk_count() == 0:
                raise ConfigError(f"store {self.settings.store} holds no chunks. Fix: serve --data DIR or a store "
                                  "filled by `ragbench index`.")
            self.service(self.default_mode)
            self.hub_index().refresh(force=True)
            self.jobs().expire()  # jobs left open by a worker that died before this one started
            self.ready.set()
        except Exception as exc:  # noqa: BLE001 - /readyz reports any warm-up failure
            self.warm_error = f"{type(exc).__name__}: {exc}"
            log.error("warm-up failed", extra={"error": self.warm_error})

    def close(self) -> None:
        if self._jobs is not None:
            self._jobs.shutdown()
        self.tracer.shutdown()
        if self.hub_store is not self.store:
            self.hub_store.close()
        self.store.close()
