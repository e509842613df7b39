"""The grounded-answer assistant as ``ragbench ask`` and ``ragbench chat`` open it.

By default it answers over a golden folder (the bundled ``data/golden``), indexed on first use into
``.ragbench/golden-answers-<key>.db`` (:func:`default_store`, under the current directory) with the answer
configuration of :func:`ragbench.eval.answers.answer_config`. The key hashes the folder's ``data_hash`` with the
chunking and embedding settings, so another folder or another index setting gets its own store instead of
silently answering over a stale one. With ``store`` it answers over that store (it must hold documents), whose
principals come from a ``principals`` YAML file (else from the golden set). It lives in ``eval/`` because the
default corpus, its principals and its store are the golden set's.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Collection
from pathlib import Path
from typing import Any

from ..config import RagbenchConfig
from ..errors import DataError

#: Where the default stores live (one per golden folder and index setting, see :func:`default_store`).
STORE_DIR = Path(".ragbench")


def default_store(data_hash: str, cfg: RagbenchConfig) -> Path:
    """``.ragbench/golden-answers-<key>.db`` for a golden set (its ``data_hash``) indexed with ``cfg``'s chunking
    and embedding settings."""
    key = json.dumps([data_hash, dataclasses.asdict(cfg.chunking), dataclasses.asdict(cfg.embedding)],
                     sort_keys=True, default=str)
    return STORE_DIR / f"golden-answers-{hashlib.sha256(key.encode('utf-8')).hexdigest()[:12]}.db"


def open_service(cfg: RagbenchConfig, principal: str, *, mode: str | None = None, model: str | None = None,
                 store: str | None = None, data: str | None = None, principals: str | None = None,
                 tenant: str | None = None, judge: str | None = None,
                 rescue: str | None = None, user_set: Collection[str] = ()) -> tuple[Any, Any, RagbenchConfig]:
    """``(service, principal, cfg)``: the :class:`~ragbench.answer.AnsweringService` these options describe, the
    :class:`~ragbench.schema.Principal` named ``principal`` (an unknown one raises ``PermissionDenied`` before any
    work) and the configuration actually used (``cfg`` with the answer settings of ``mode`` and ``model``).

    ``mode`` is the retrieval mode (default: the answer mode), ``model`` the chat model (default
    ``answer.chat_model``), ``data`` the golden folder (default: the bundled one), ``tenant`` the budget tenant,
    ``judge`` a chat model for the judge profile (:func:`ragbench.answer.judge.judge_overrides`; ``answer.judge``
    alone adds the judge on the configured thresholds), ``rescue`` one for the rescue profile
    (:func:`ragbench.answer.judge.rescue_overrides`); ``user_set`` the ``--set`` keys, which keep their values under
    either profile. The caller closes ``service.store``."""
    from ..answer import AnsweringService, BudgetLedger, PrincipalRegistry
    from ..config import with_overrides
    from ..llm import make_chat_model, make_token_scorer
    from ..retrieval.embedding import make_embedder
    from ..retrieval.retriever import needs_embedder, normalize_mode, retriever_from_store
    from ..store import KnowledgeStore
    from .answers import ANSWER_MODE, answer_config, build_store, judge_config, make_judge
    from .golden import DEFAULT_FOLDER, load_golden

    mode = normalize_mode(mode or ANSWER_MODE)
    cfg = answer_config(cfg, mode)
    if model:
        cfg = with_overrides(cfg, {"answer.chat_model": model})
    cfg = judge_config(cfg, judge, rescue, user_set)
    golden = load_golden(data or DEFAULT_FOLDER) if store is None or principals is None else None
    if principals:
        registry = PrincipalRegistry.from_yaml(principals)
    else:
        assert golden is not None  # loaded above when no registry file is given
        registry = PrincipalRegistry(golden.principals)
    who = registry.get(principal)  # unknown → PermissionDenied before any work
    embedder = make_embedder(cfg.embedding) if needs_embedder(mode) or cfg.answer.extractive_semantic else None
    if store is None:
        assert golden is not None  # loaded above when no store is given
        path = default_store(golden.data_hash, cfg)
        path.parent.mkdir(parents=True, exist_ok=True)
        kb = KnowledgeStore.open(path)
        if len(kb) == 0:
            kb.close()
            build_store(golden, cfg, embedder, path=str(path)).close()
            kb = KnowledgeStore.open(path)
    else:
        if not Path(store).is_file():
            raise DataError(f"knowledge store {store!r} does not exist. Fix: index documents into it first "
                            "(ragbench index FILES… --store PATH), or omit --store to answer over the golden folder.")
        kb = KnowledgeStore.open(store)
        if len(kb) == 0:
            kb.close()
            raise DataError(f"knowledge store {store!r} holds no documents, so every answer would be refused. "
                            "Fix: index documents into it first (ragbench index FILES… --store PATH), or omit --store "
                            "to answer over the golden folder.")
    retriever = retriever_from_store(kb, mode, cfg, embedder)
    a = cfg.answer
    budget = BudgetLedger(kb, a.daily_limit_usd, a.daily_request_limit, a.daily_token_limit)
    reader = make_chat_model(a, embedder=embedder)
    service = AnsweringService(kb, retriever, reader, cfg, embedder=embedder, principals=registry, budget=budget,
                               tenant=tenant, judge=make_judge(a, reader), reranker=make_token_scorer(a.rerank))
    return service, who, cfg
