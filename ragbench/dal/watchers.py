"""Watchers: each lists what a source holds *now*; the pipeline compares that with its state table to find new,
changed and deleted items.

* :class:`FolderWatcher` — files under a folder (glob patterns), ids ``file:<folder name>/<relative path>``.
* :class:`FeedWatcher` — items of an RSS 2.0 or Atom feed, ids ``feed:<guid | id | link>``. A feed is a moving
  window, so items that roll off it are NOT deleted; a malformed feed is a source error and changes nothing.
* :class:`UrlWatcher` — a list of web pages, ids ``url:<url>``; a URL dropped from the list leaves the index.

:func:`watchers_for` turns a list of folders and URLs (as ``ragbench dal watch`` takes them) into watchers.

A scan that failed as a whole (``complete=False``) never triggers deletions.
"""
from __future__ import annotations

import hashlib
import xml.etree.ElementTree as ET
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from bs4 import BeautifulSoup

from ..config import RagbenchConfig
from ..errors import ConfigError, DataError, NetworkError
from ..text import normalize_whitespace
from .entries import SourceError
from .fetch import PageFetcher
from .http import PoliteClient, UrlRewrite


@dataclass(frozen=True)
class RawSource:
    """One item as found: bytes for files (decoded later), text for feeds and pages."""

    source_id: str
    locator: str
    data: bytes | str
    title: str = ""
    name: str = ""  # file name, for content-kind detection
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def raw_hash(self) -> str:
        data = self.data.encode("utf-8") if isinstance(self.data, str) else self.data
        return hashlib.sha256(data + b"\x00" + self.title.encode("utf-8")).hexdigest()


@dataclass
class Scan:
    items: list[RawSource] = field(default_factory=list)
    errors: list[SourceError] = field(default_factory=list)
    complete: bool = True


class Watcher(ABC):
    #: Namespace of this watcher's items in the state table.
    name: str
    #: Whether an item missing from a complete scan is deleted from the index.
    deletes_missing: bool = True

    @abstractmethod
    def scan(self) -> Scan:
        """The items the source holds now."""


class FolderWatcher(Watcher):
    def __init__(self, root: str | Path, patterns: Sequence[str] = ("**/*",), max_bytes: int = 5_000_000,
                 prefix: str | None = None) -> None:
        self.root = Path(root)
        #: Ids are ``file:<prefix>/<relative path>``; the prefix (default: the folder's name) keeps two folders apart.
        self.prefix = prefix if prefix is not None else self.root.resolve().name
        self.patterns = tuple(patterns)
        self.max_bytes = max_bytes
        self.name = f"folder:{self.root.resolve()}"

    def scan(self) -> Scan:
        if not self.root.is_dir():
            return Scan(errors=[SourceError(str(self.root), "watch", "DataError",
                                            f"folder {self.root} does not exist. Fix: check the path.")],
                        complete=False)
        out = Scan()
        root = self.root.resolve()
        paths = sorted({p for pat in self.patterns for p in self.root.glob(pat) if p.is_file()})
        for p in paths:
            rel = p.relative_to(self.root).as_posix()
            sid = f"file:{self.prefix}/{rel}" if self.prefix else f"file:{rel}"
            if any(part.startswith(".") for part in Path(rel).parts):
                continue  # hidden files and folders (.git, editor swap files)
            target = p.resolve()
            if not target.is_relative_to(root):
                # A link out of the watched folder would index whatever it points at (/etc/passwd, a home folder).
                out.errors.append(SourceError(rel, "watch", "SymlinkEscape",
                                              f"{p} links to {target}, outside the watched folder {root}; skipped. "
                                              "Fix: copy the file into the folder, or watch its own folder."))
                continue
            try:
                size = p.stat().st_size
                if size > self.max_bytes:
                    out.errors.append(SourceError(rel, "watch", "TooLarge", f"{size} bytes > limit {self.max_bytes}; "
                                                  "skipped. Fix: split the file or raise the limit."))
                    out.items.append(RawSource(sid, str(p), b"", name=rel, metadata={"skipped": True}))
                    continue
                data = p.read_bytes()
            except OSError as exc:
                out.errors.append(SourceError(rel, "watch", "OSError", str(exc)))
                out.complete = False
                continue
            out.items.append(RawSource(sid, str(p), data, name=rel,
                                       metadata={"path": rel, "bytes": len(data)}))
        return out


def _text(el: ET.Element | None) -> str:
    return "".join(el.itertext()).strip() if el is not None else ""


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _child(el: ET.Element, *names: str) -> ET.Element | None:
    for c in el:
        if _local(c.tag) in names:
            return c
    return None


def parse_feed(xml: str | bytes, url: str = "feed") -> list[RawSource]:
    """Items of an RSS 2.0 / RSS 1.0 / Atom document; raises :class:`DataError` when it is not one."""
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as exc:
        raise DataError(f"feed {url} is not well-formed XML ({exc}). Fix: check the feed URL.") from None
    kind = _local(root.tag)
    if kind == "rss":
        channel = _child(root, "channel")
        nodes = [c for c in (channel if channel is not None else []) if _local(c.tag) == "item"]
    elif kind == "RDF":
        nodes = [c for c in root if _local(c.tag) == "item"]
    elif kind == "feed":
        nodes = [c for c in root if _local(c.tag) == "entry"]
    else:
        raise DataError(f"feed {url}: root element <{kind}> is neither <rss> nor <feed>. Fix: give an RSS or Atom "
                        "feed URL.")
    items = []
    for node in nodes:
        title = normalize_whitespace(_text(_child(node, "title")))
        link_el = _child(node, "link")
        link = (link_el.get("href") or _text(link_el)) if link_el is not None else ""
        ident = _text(_child(node, "guid", "id")) or link or title
        body = _text(_child(node, "encoded", "content")) or _text(_child(node, "description", "summary"))
        body = BeautifulSoup(body, "html.parser").get_text("\n") if "<" in body else body
        when = _text(_child(node, "pubDate", "published", "updated", "date"))
        if not ident:
            continue
        items.append(RawSource(f"feed:{ident}", link or url, body, title=title,
                               metadata={"feed": url, "link": link, "published": when}))
    return items


class FeedWatcher(Watcher):
    deletes_missing = False

    def __init__(self, url: str, client: PoliteClient | None = None) -> None:
        self.url = url
        self.client = client
        self.name = f"feed:{url}"

    def scan(self) -> Scan:
        client = self.client or PoliteClient()
        try:
            resp = client.get(self.url)
            return Scan(items=parse_feed(resp.content, self.url))
        except (NetworkError, DataError) as exc:
            return Scan(errors=[SourceError(self.url, "feed", type(exc).__name__, str(exc))], complete=False)


class UrlWatcher(Watcher):
    def __init__(self, urls: Sequence[str], fetcher: PageFetcher | None = None, name: str = "urls") -> None:
        self.urls = list(dict.fromkeys(urls))
        self.fetcher = fetcher or PageFetcher()
        self.name = name

    def scan(self) -> Scan:
        out = Scan()
        for url in self.urls:
            try:
                page = self.fetcher.fetch(url)
            except (NetworkError, DataError) as exc:
                out.errors.append(SourceError(url, "fetch", type(exc).__name__, str(exc)))
                # The URL is still listed: keep its indexed version (a placeholder keeps it out of deletions).
                out.items.append(RawSource(f"url:{url}", url, "", metadata={"skipped": True}))
                continue
            out.items.append(RawSource(f"url:{url}", url, page.text, title=page.title,
                                       metadata={"published": page.published.isoformat() if page.published else ""}))
        return out


def is_feed_url(url: str) -> bool:
    """A URL that names a feed: ending in .rss/.atom/.xml, or with "feed" or "/rss" in its path."""
    path = url.lower().split("?", 1)[0]
    return path.endswith((".rss", ".atom", ".xml")) or "feed" in path or "/rss" in path


def watchers_for(sources: Sequence[str], feeds: Sequence[str], cfg: RagbenchConfig) -> list[Watcher]:
    """Watchers for ``sources`` (folders, feed URLs, page URLs) and ``feeds`` (URLs to read as feeds whatever their
    name): a :class:`FolderWatcher` per folder, a :class:`FeedWatcher` per feed, one :class:`UrlWatcher` for all
    pages, sharing one :class:`PoliteClient` built from ``cfg.dal``. Anything else is a :class:`ConfigError`."""
    client = PoliteClient.from_config(cfg.dal)
    out: list[Watcher] = []
    pages: list[str] = []
    for s in list(sources) + list(feeds):
        if s.startswith(("http://", "https://")):
            if s in feeds or is_feed_url(s):
                out.append(FeedWatcher(s, client))
            else:
                pages.append(s)
        elif Path(s).is_dir():
            out.append(FolderWatcher(s))
        else:
            raise ConfigError(f"{s!r} is neither a folder nor an http(s) URL. Fix: give an existing folder or a URL.")
    if pages:
        out.append(UrlWatcher(pages, PageFetcher(client, UrlRewrite(cfg.dal.url_rewrite), cfg.dal.max_text_chars)))
    return out
