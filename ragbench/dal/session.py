"""Wiring for the CLI and notebooks: build a :class:`Researcher` from a config, run it, and write the report,
the knowledge entries and the grounded prompt to a folder."""
from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

from ..config import RagbenchConfig
from ..errors import ConfigError
from ..llm.base import ChatModel
from ..retrieval.base import Embedder
from .fetch import PageFetcher
from .http import PoliteClient, UrlRewrite
from .hub import KnowledgeHub
from .answer import ResearchAnswer, render, research_answer
from .prompt import grounded_prompt
from .research import Researcher, ResearchResult
from .search import DuckDuckGoBackend

JSON_KEYS = ("passes_completed", "sources_used", "is_complete", "sub_topics", "gaps", "unresolvable")


def site_rewrite(search_url: str) -> str:
    """The test-web convention, for an explicit ``--url-rewrite`` without a template: pages are served by the
    search server under ``/site/<host>/<path>``. Never implied: a search engine on localhost (a self-hosted
    metasearch, a company proxy) returns real URLs that must be fetched as they are."""
    parts = urlsplit(search_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"--url-rewrite without a template needs an http(s) search URL, found {search_url!r}. "
                          "Fix: give --search-url, or a template such as 'http://127.0.0.1:8765/site/{host}{path}'.")
    return f"{parts.scheme}://{parts.netloc}/site/{{host}}{{path}}"


def build_researcher(cfg: RagbenchConfig, embedder: Embedder | None = None, hub: KnowledgeHub | None = None,
                     chat_model: ChatModel | None = None, show_progress: bool = False) -> Researcher:
    """A researcher for ``cfg.dal``; page URLs are rewritten only when ``dal.url_rewrite`` is set."""
    dal = cfg.dal
    if embedder is None:
        from ..retrieval.embedding import make_embedder

        embedder = make_embedder(cfg.embedding)
    client = PoliteClient.from_config(dal)
    return Researcher(DuckDuckGoBackend(dal.search_url, client),
                      PageFetcher(client, UrlRewrite(dal.url_rewrite), dal.max_text_chars), embedder, dal,
                      chat_model=chat_model, hub=hub, show_progress=show_progress)


def failed(result: ResearchResult) -> list[str]:
    """Why a run counts as failed (exit status 1): every search failed, or the run deadline cut it short.
    Pages that could not be fetched are the web's normal state and are only listed in the report."""
    return [e.message for e in result.report.errors if e.kind in ("AllSearchesFailed", "RunDeadline")]


def write_outputs(result: ResearchResult, out: str | Path, chat_model: ChatModel | None = None,
                  answer: "ResearchAnswer | None" = None) -> dict[str, Path]:
    """``report.json``, ``report.yaml``, ``report.txt``, ``entries.json``, ``prompt.txt`` (and, with an answer or
    a chat model to answer with, ``answer.txt`` — the answer and the claims each sentence rests on — and
    ``answer.json``)."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {name: folder / name for name in ("report.json", "report.yaml", "report.txt", "entries.json",
                                              "prompt.txt")}
    paths["report.json"].write_text(result.report.to_json(), encoding="utf-8")
    paths["report.yaml"].write_text(result.report.to_yaml(), encoding="utf-8")
    paths["report.txt"].write_text(result.report.render() + "\n", encoding="utf-8")
    paths["entries.json"].write_text(json.dumps([e.to_dict() for e in result.entries], indent=2,
                                                ensure_ascii=False), encoding="utf-8")
    prompt = grounded_prompt(result) if result.facts_by_source() else ""
    paths["prompt.txt"].write_text(prompt, encoding="utf-8")
    if answer is None and chat_model is not None and prompt:
        answer = research_answer(result, chat_model)
    if answer is not None:
        paths["answer.txt"] = folder / "answer.txt"
        paths["answer.txt"].write_text(render(answer) + "\n", encoding="utf-8")
        paths["answer.json"] = folder / "answer.json"
        paths["answer.json"].write_text(json.dumps(answer.to_dict(), indent=2, ensure_ascii=False), encoding="utf-8")
    return paths


def json_line(result: ResearchResult) -> str:
    summary = result.report.summary_dict()
    return json.dumps({k: summary[k] for k in JSON_KEYS}, ensure_ascii=False)
