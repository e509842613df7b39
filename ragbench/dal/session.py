"""Wiring for the CLI and notebooks: build a :class:`Researcher` from a config, run it, and write the report,
the knowledge entries and the grounded prompt to a folder."""
from __future__ import annotations

import ipaddress
import json
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit

from ..config import RagbenchConfig
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


def loopback_rewrite(search_url: str) -> str | None:
    """The test-web convention: a search endpoint on a loopback address serves its pages under
    ``/site/<host>/<path>`` of the same server (public hosts never live on loopback)."""
    parts = urlsplit(search_url)
    try:
        if parts.hostname and (parts.hostname == "localhost" or ipaddress.ip_address(parts.hostname).is_loopback):
            return f"{parts.scheme}://{parts.netloc}/site/{{host}}{{path}}"
    except ValueError:
        return None
    return None


def build_researcher(cfg: RagbenchConfig, embedder: Embedder | None = None, hub: KnowledgeHub | None = None,
                     chat_model: ChatModel | None = None, show_progress: bool = False) -> Researcher:
    dal = cfg.dal
    if dal.url_rewrite is None and loopback_rewrite(dal.search_url):
        dal = replace(dal, url_rewrite=loopback_rewrite(dal.search_url))
    if embedder is None:
        from ..retrieval.embedding import make_embedder

        embedder = make_embedder(cfg.embedding)
    client = PoliteClient.from_config(dal)
    return Researcher(DuckDuckGoBackend(dal.search_url, client),
                      PageFetcher(client, UrlRewrite(dal.url_rewrite), dal.max_text_chars), embedder, dal,
                      chat_model=chat_model, hub=hub, show_progress=show_progress)


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
