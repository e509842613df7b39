"""Helpers of the DAL tests: the local test web (one server per module), polite clients that never
sleep for real, and a table-driven fake embedder for hand-computed similarities."""
from __future__ import annotations

from dataclasses import replace
from typing import Sequence

import numpy as np

from ragbench.config import DalConfig
from ragbench.dal.fetch import PageFetcher
from ragbench.dal.http import PoliteClient, UrlRewrite
from ragbench.dal.research import Researcher
from ragbench.dal.search import DuckDuckGoBackend, SearchBackend, SearchResult
from ragbench.llm.base import ChatModel, Completion
from ragbench.dal.testweb import AS_OF, TestWeb
from ragbench.retrieval.base import Embedder
from ragbench.retrieval.embedding import HashingEmbedder


class TableEmbedder(Embedder):
    """Vectors looked up in a table (normalised); unknown texts raise, so a test cannot pass by accident."""

    model_id = "table"

    def __init__(self, table: dict[str, Sequence[float]]) -> None:
        self.table = {k: np.asarray(v, dtype=np.float32) for k, v in table.items()}
        self.dim = len(next(iter(self.table.values())))
        self.calls = 0

    @property
    def sha256(self) -> str:
        return "0" * 64

    def embed(self, texts, show_progress: bool = False) -> np.ndarray:
        self.calls += 1
        rows = np.stack([self.table[t] for t in texts])
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


class Sleeps(list):
    def __call__(self, seconds: float) -> None:
        self.append(round(seconds, 3))


def make_client(sleeps: Sleeps | None = None, **kw) -> PoliteClient:
    params = dict(timeout=2.0, retries=2, backoff=0.01, delay=0.0, sleep=sleeps if sleeps is not None else Sleeps())
    params.update(kw)
    return PoliteClient(**params)


def dal_config(web: TestWeb, **overrides) -> DalConfig:
    cfg = DalConfig(as_of=AS_OF.isoformat(), request_delay=0.0, retries=1, backoff=0.01, timeout=2.0,
                    search_url=web.search_url, url_rewrite=web.url_rewrite)
    return replace(cfg, **overrides)


def make_researcher(web: TestWeb, embedder: Embedder | None = None, search=None, hub=None, chat_model=None,
                    **overrides) -> Researcher:
    cfg = dal_config(web, **overrides)
    client = make_client(timeout=cfg.timeout, retries=cfg.retries)
    return Researcher(search or DuckDuckGoBackend(cfg.search_url, client),
                      PageFetcher(client, UrlRewrite(cfg.url_rewrite), cfg.max_text_chars),
                      embedder or HashingEmbedder(), cfg, chat_model=chat_model, hub=hub)


class FakeChat(ChatModel):
    """Returns canned replies in order and records the messages it was given."""

    model_id = "fake-chat"

    def __init__(self, *replies: str, error: Exception | None = None) -> None:
        self.replies = list(replies)
        self.error = error
        self.seen: list = []

    def complete(self, messages) -> Completion:
        self.seen.append(list(messages))
        if self.error is not None:
            raise self.error
        text = self.replies.pop(0)
        return Completion(text, sum(len(m.content.split()) for m in messages), len(text.split()), self.model_id)


class ListSearch(SearchBackend):
    """A search backend with fixed results per query (a missing query raises the given error)."""

    def __init__(self, results: dict[str, list[str]], default: list[str] | None = None,
                 error: Exception | None = None) -> None:
        self.results, self.default, self.error = results, default, error

    def search(self, query: str, max_results: int = 10) -> list[SearchResult]:
        urls = self.results.get(query, self.default)
        if urls is None:
            raise self.error
        return [SearchResult(u, u, "", i) for i, u in enumerate(urls[:max_results])]
