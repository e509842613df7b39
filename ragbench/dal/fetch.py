"""Fetch a web page and extract its main text, title and published date.

Limits: the body is cut at ``max_bytes`` (an enormous page is truncated, and flagged), the text at
``max_text_chars``; binary content (by ``Content-Type`` or by NUL bytes in the head) is rejected; the encoding
comes from the header, the page's own ``<meta charset>`` or detection, and undecodable bytes are rejected.
Published date, first found of: ``<meta property="article:published_time">`` (and the common ``date`` metas),
JSON-LD ``datePublished``, ``<time datetime>``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date

from bs4 import BeautifulSoup, UnicodeDammit

from ..config import DalConfig
from ..errors import DataError
from ..text import content_hash, normalize_whitespace
from .confidence import parse_date
from .http import HttpResult, PoliteClient, UrlRewrite

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset({"text/plain", "text/markdown"})
_DROP = ("script", "style", "noscript", "nav", "header", "footer", "aside", "form", "svg", "iframe")
_DATE_METAS = (("property", "article:published_time"), ("name", "article:published_time"),
               ("itemprop", "datePublished"), ("name", "date"), ("name", "pubdate"), ("name", "publish-date"),
               ("name", "dc.date"), ("name", "citation_publication_date"), ("property", "og:published_time"))


class BinaryContentError(DataError):
    """The response is not text."""


@dataclass(frozen=True)
class FetchedPage:
    url: str
    title: str
    text: str
    published: date | None
    content_hash: str
    truncated: bool = False
    content_type: str = "text/html"


def _lenient_date(value: object) -> date | None:
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        return parse_date(value.strip().replace("/", "-"))
    except DataError:
        return None


def _jsonld_dates(data: object) -> list[str]:
    if isinstance(data, list):
        return [d for item in data for d in _jsonld_dates(item)]
    if isinstance(data, dict):
        found = [data["datePublished"]] if isinstance(data.get("datePublished"), str) else []
        return found + _jsonld_dates(data.get("@graph", []))
    return []


def published_date(soup: BeautifulSoup) -> date | None:
    """The page's publication date from meta tags, JSON-LD or ``<time datetime>``; ``None`` when absent."""
    for attr, name in _DATE_METAS:
        def named(v: str | None, n: str = name) -> bool:
            return bool(v) and str(v).lower() == n

        for tag in soup.find_all("meta", attrs={attr: named}):
            d = _lenient_date(tag.get("content"))
            if d:
                return d
    for script in soup.find_all("script", attrs={"type": "application/ld+json"}):
        try:
            data = json.loads(script.string or "")
        except ValueError:
            continue
        for value in _jsonld_dates(data):
            d = _lenient_date(value)
            if d:
                return d
    for tag in soup.find_all("time"):
        d = _lenient_date(tag.get("datetime"))
        if d:
            return d
    return None


def _title(soup: BeautifulSoup) -> str:
    og = soup.find("meta", attrs={"property": "og:title"})
    if og and og.get("content"):
        return normalize_whitespace(str(og["content"]))
    if soup.title and soup.title.get_text(strip=True):
        return normalize_whitespace(soup.title.get_text())
    h1 = soup.find("h1")
    return normalize_whitespace(h1.get_text()) if h1 else ""


def main_text(soup: BeautifulSoup) -> str:
    """Text of ``<article>``/``<main>`` (else ``<body>``) without navigation and scripts, one block per line."""
    for tag in soup.find_all(_DROP):
        tag.decompose()
    root = soup.find("article") or soup.find("main") or soup.find(None, {"role": "main"}) or soup.body or soup
    lines = (normalize_whitespace(s) for s in root.get_text("\n").split("\n"))
    return "\n".join(line for line in lines if line)


def decode_body(result: HttpResult) -> str:
    """Bytes → text with the declared or detected encoding; raises :class:`DataError` when undecodable."""
    declared = [result.charset] if result.charset else []
    dammit = UnicodeDammit(result.content, known_definite_encodings=declared, is_html=True)
    if dammit.unicode_markup is None:
        raise DataError(f"{result.url}: cannot decode the body (declared charset {result.charset!r}). "
                        "Fix: the page's encoding is broken; skip it.")
    return dammit.unicode_markup


def looks_binary(head: bytes) -> bool:
    return b"\x00" in head[:2048]


class PageFetcher:
    """``fetch(url) -> FetchedPage``; URLs are rewritten by ``rewrite`` before the request (tests, mirrors)."""

    def __init__(self, client: PoliteClient | None = None, rewrite: UrlRewrite | None = None,
                 max_text_chars: int = 100_000) -> None:
        self.client = client
        self.rewrite = rewrite or UrlRewrite()
        self.max_text_chars = max_text_chars
        self.fetches = 0

    @classmethod
    def from_config(cls, cfg: DalConfig, client: PoliteClient | None = None) -> "PageFetcher":
        return cls(client or PoliteClient.from_config(cfg), UrlRewrite(cfg.url_rewrite), cfg.max_text_chars)

    def fetch(self, url: str) -> FetchedPage:
        if self.client is None:
            self.client = PoliteClient()
        self.fetches += 1
        result = self.client.get(self.rewrite(url))
        ctype = result.content_type
        if (ctype and ctype not in HTML_TYPES and ctype not in TEXT_TYPES) or looks_binary(result.content):
            raise BinaryContentError(f"{url}: content type {ctype or '(none)'} is not text; expected HTML or plain "
                                     "text. Fix: binary documents (PDF, images) are not supported; skip it.")
        body = decode_body(result)
        if ctype in TEXT_TYPES:
            text = "\n".join(normalize_whitespace(x) for x in body.splitlines() if x.strip())
            title, published = "", None
        else:
            soup = BeautifulSoup(body, "html.parser")
            title, published = _title(soup), published_date(soup)
            text = main_text(soup)
        truncated = result.truncated or len(text) > self.max_text_chars
        text = text[: self.max_text_chars]
        if not text.strip():
            raise DataError(f"{url}: the page has no text. Fix: nothing to extract; skip it.")
        return FetchedPage(url=url, title=title or url, text=text, published=published,
                           content_hash=content_hash(text), truncated=truncated, content_type=ctype or "text/html")
