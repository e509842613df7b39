"""Web search: the :class:`SearchBackend` contract and a DuckDuckGo HTML backend.

The HTML endpoint (``https://html.duckduckgo.com/html/?q=…``) lists results as ``div.result`` blocks with the title
link ``a.result__a``, the snippet ``a.result__snippet`` (or ``div.result__snippet``) and the display URL
``a.result__url``. Links usually go through a redirect, ``//duckduckgo.com/l/?uddg=<percent-encoded target>&rut=…``;
we unwrap it. A page with neither results nor DuckDuckGo's "no results" marker means the layout changed, which
raises a :class:`SearchLayoutError` rather than silently returning nothing.
"""
from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from dataclasses import dataclass
from urllib.parse import parse_qs, urljoin, urlsplit

from bs4 import BeautifulSoup

from ..config import DalConfig
from ..errors import DataError
from .http import PoliteClient

log = logging.getLogger("ragbench.dal.search")

DEFAULT_SEARCH_URL = "https://html.duckduckgo.com/html/"


class SearchLayoutError(DataError):
    """The search page did not have the expected structure."""


@dataclass(frozen=True)
class SearchResult:
    url: str
    title: str
    snippet: str = ""
    rank: int = 0


class SearchBackend(ABC):
    """``search(query, max_results) -> list[SearchResult]`` (best first); raises NetworkError / DataError."""

    name: str = "search"

    @abstractmethod
    def search(self, query: str, max_results: int = 10) -> list[SearchResult]:
        """Results for ``query``; an empty list when the engine found nothing."""


def unwrap_redirect(href: str, base: str = DEFAULT_SEARCH_URL) -> str:
    """The target of a DuckDuckGo redirect link (``…/l/?uddg=<encoded>``), or ``href`` made absolute."""
    href = (href or "").strip()
    absolute = urljoin(base, href)
    parts = urlsplit(absolute)
    if parts.path.rstrip("/").endswith("/l") or parts.path == "/l/":
        target = parse_qs(parts.query).get("uddg")
        if target and target[0]:
            return target[0]
    return absolute


_NO_RESULTS_MARKERS = ("div.no-results", ".no-results", "div.result--no-result")


def parse_results(html: str, base_url: str = DEFAULT_SEARCH_URL, max_results: int = 10) -> list[SearchResult]:
    """Parse a DuckDuckGo HTML results page. Raises :class:`SearchLayoutError` when the page has no results and no
    "no results" marker (layout changed, or a block/captcha page)."""
    soup = BeautifulSoup(html, "html.parser")
    blocks = soup.select("div.result")
    results: list[SearchResult] = []
    seen: set[str] = set()
    for block in blocks:
        if "result--ad" in (block.get("class") or []):
            continue  # sponsored links are not sources
        link = block.select_one("a.result__a")
        if link is None or not link.get("href"):
            continue
        url = unwrap_redirect(str(link["href"]), base_url)
        if not url.startswith(("http://", "https://")) or url in seen:
            continue
        seen.add(url)
        snippet_el = block.select_one("a.result__snippet") or block.select_one(".result__snippet")
        results.append(SearchResult(url=url, title=link.get_text(" ", strip=True),
                                    snippet=snippet_el.get_text(" ", strip=True) if snippet_el else "",
                                    rank=len(results)))
        if len(results) >= max_results:
            break
    if results:
        return results
    if any(soup.select_one(m) for m in _NO_RESULTS_MARKERS):
        return []
    if blocks:
        raise SearchLayoutError(f"search page at {base_url} has {len(blocks)} div.result block(s) but none with an "
                                "a.result__a link. Fix: the page layout changed; update ragbench.dal.search.")
    title = soup.title.get_text(strip=True) if soup.title else "(no title)"
    raise SearchLayoutError(f"search page at {base_url} (title {title!r}) has no div.result blocks and no "
                            "'no results' marker: expected DuckDuckGo's HTML results layout. Fix: check "
                            "dal.search_url, or the endpoint changed its layout / served a block page.")


class DuckDuckGoBackend(SearchBackend):
    """GET ``{base_url}?q=<query>`` and parse the HTML results page."""

    name = "duckduckgo-html"

    def __init__(self, base_url: str = DEFAULT_SEARCH_URL, client: PoliteClient | None = None) -> None:
        self.base_url = base_url
        self.client = client
        self.queries = 0

    @classmethod
    def from_config(cls, cfg: DalConfig, client: PoliteClient | None = None) -> "DuckDuckGoBackend":
        return cls(cfg.search_url, client or PoliteClient.from_config(cfg))

    def search(self, query: str, max_results: int = 10) -> list[SearchResult]:
        if not query or not query.strip():
            raise DataError("search query is blank. Fix: give a non-empty query.")
        if self.client is None:
            self.client = PoliteClient()
        self.queries += 1
        resp = self.client.get(self.base_url, params={"q": query.strip()})
        html = resp.content.decode(resp.charset or "utf-8", errors="replace")
        results = parse_results(html, self.base_url, max_results)
        log.debug("search %r → %d result(s)", query, len(results))
        return results
