"""The grounded-answer assistant as ``ragbench ask`` and ``ragbench chat`` open it.

By default it answers over a golden folder (the bundled ``data/golden``), indexed on first use into
``.ragbench/golden-answers.db`` (:data:`DEFAULT_STORE`, under the current directory) with the answer
configuration of :func:`ragbench.eval.answers.answer_config`; with ``store`` it answers over that store, whose
principals come from a ``principals`` YAML file (else from the golden set). It lives in ``eval/`` because the
default corpus, its principals and its store are the golden set's.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..config import RagbenchConfig

DEFAULT_STORE = Path(".ragbench") / "golden-answers.db"


def open_service(cfg: RagbenchConfig, principal: str, *, mode: str | None = None, model: str | None = None,
                 store: str | None = None, data: str | None = None, principals: str | None = None,
                 tenant: str | None = None) -> tuple[Any, Any, RagbenchConfig]:
    """``(service, principal, cfg)``: the :class:`~ragbench.answer.AnsweringService` these options describe, the
    :class:`~ragbench.schema.Principal` named ``principal`` (an unknown one raises ``PermissionDenied`` before any
    work) and the configuration actually used (``cfg`` with the answer settings of ``mode`` and ``model``).

    ``mode`` is the retrieval mode (default: the answer mode), ``model`` the chat model (default
    ``answer.chat_model``), ``data`` the golden folder (default: the bundled one), ``tenant`` the budget tenant.
    The caller closes ``service.store``."""
    from ..answer import AnsweringService, BudgetLedger, PrincipalRegistry
    from ..config import with_overrides
    from ..llm import make_chat_model
    from ..retrieval.embedding import make_embedder
    from ..retrieval.retriever import needs_embedder, normalize_mode, retriever_from_store
    from ..store import KnowledgeStore
    from .answers import ANSWER_MODE, answer_config, build_store
    from .golden import DEFAULT_FOLDER, load_golden

    mode = normalize_mode(mode or ANSWER_MODE)
    cfg = answer_config(cfg, mode)
    if model:
        cfg = with_overrides(cfg, {"answer.chat_model": model})
    golden = load_golden(data or DEFAULT_FOLDER) if store is None or principals is None else None
    if principals:
        registry = PrincipalRegistry.from_yaml(principals)
    else:
        assert golden is not None  # loaded above when no registry file is given
        registry = PrincipalRegistry(golden.principals)
    who = registry.get(principal)  # unknown → PermissionDenied before any work
    embedder = make_embedder(cfg.embedding) if needs_embedder(mode) or cfg.answer.extractive_semantic else None
    if store is None:
        DEFAULT_STORE.parent.mkdir(parents=True, exist_ok=True)
        kb = KnowledgeStore.open(DEFAULT_STORE)
        if len(kb) == 0:
            kb.close()
            build_store(golden, cfg, embedder, path=str(DEFAULT_STORE)).close()
            kb = KnowledgeStore.open(DEFAULT_STORE)
    else:
        kb = KnowledgeStore.open(store)
    retriever = retriever_from_store(kb, mode, cfg, embedder)
    a = cfg.answer
    budget = BudgetLedger(kb, a.daily_limit_usd, a.daily_request_limit, a.daily_token_limit)
    service = AnsweringService(kb, retriever, make_chat_model(a, embedder=embedder), cfg, embedder=embedder,
                               principals=registry, budget=budget, tenant=tenant)
    return service, who, cfg
