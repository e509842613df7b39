"""A local test web: ~75 generated pages on real-looking hosts across the three tiers, served from one HTTP
server on 127.0.0.1 together with a DuckDuckGo-style ``/html/`` search endpoint over them.

Addressing: a page of host ``arxiv.org`` at path ``/abs/2504.01010`` is served at
``http://127.0.0.1:PORT/site/arxiv.org/abs/2504.01010``; search results link to its public URL
``https://arxiv.org/abs/2504.01010`` (wrapped in DuckDuckGo's ``//duckduckgo.com/l/?uddg=…`` redirect), and the
page fetcher maps it back with ``UrlRewrite(web.url_rewrite)``. So the tier still comes from the public host.

Planted content (dates relative to :data:`AS_OF`):
* "How does GraphQL compare to REST for mobile apps?" — five sub-topics, each with five tier-1, three tier-2 and
  three tier-3 pages; tier-1/2 pages restate the same facts (agreement), one tier-3 page per sub-topic
  contradicts a fact (a conflicting number or a negation), one is stale (400 days), one undated; one tier-1 page
  per sub-topic is undated (timeless). A mirror host republishes one arXiv page verbatim (content duplicate).
* "What are the best practices for fine-tuning LLMs?" — well covered core concepts, thin implementation
  details, and two sub-topics with a single tier-3 page each (they end unresolvable).
* Trouble pages (tier 3, found by searching "trouble"): 429 then OK, always 500, slow, binary, enormous,
  truncated body.
``TestWeb(tier1=False)`` leaves every tier-1 page out, to show that research needs more passes without them.
Tests add their own documents with :meth:`TestWeb.add_route`.
"""
from __future__ import annotations

import contextlib
import html
import json
import math
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, quote, urlsplit

from ..text import tokenize
from .decompose import content_words
from .tiers import DEFAULT_POLICY, SourceTier, host_matches

AS_OF = date(2025, 6, 1)
GRAPHQL_QUESTION = "How does GraphQL compare to REST for mobile apps?"
FINETUNE_QUESTION = "What are the best practices for fine-tuning LLMs?"

T1_HOSTS = ("arxiv.org", "www.nature.com", "dl.acm.org", "ieeexplore.ieee.org", "cs.stanford.edu", "www.nist.gov",
            "web.mit.edu")
T2_HOSTS = ("www.reuters.com", "techcrunch.com", "www.wired.com", "www.theverge.com", "www.bbc.com")
T3_HOSTS = ("someblog.com", "www.reddit.com", "news.ycombinator.com", "stackoverflow.com", "medium.com",
            "devforum.io")

# (label, agreeing facts, contradicting statement, extra words that make the page findable)
GRAPHQL_TOPICS = (
    ("GraphQL features for mobile clients",
     ("GraphQL lets mobile clients request exactly the fields they need in one query, one of its core features.",
      "GraphQL fundamentals build on a strongly typed schema that describes every field a client can request.",
      "Subscriptions are GraphQL features that push real-time updates to mobile apps over one connection."),
     "GraphQL does not let mobile clients request exactly the fields they need in one query, despite its features.",
     "typed schema"),
    ("REST optimization for mobile",
     ("REST fundamentals map each resource to a URL and use standard HTTP verbs such as GET and POST.",
      "REST optimization with gzip compression shrinks mobile payloads by 70 percent.",
      "REST optimization patterns for mobile include pagination and conditional requests with ETags."),
     "REST optimization with gzip compression shrinks mobile payloads by 20 percent.",
     "resource design"),
    ("GraphQL and REST performance",
     ("In mobile performance benchmarks GraphQL reduced bandwidth by 40 percent compared with REST.",
      "REST keeps an advantage in caching performance because GET requests are cached by proxies and CDNs.",
      "GraphQL lowered latency on slow mobile networks by replacing several REST round trips, saving bandwidth."),
     "In mobile performance benchmarks GraphQL reduced bandwidth by 10 percent compared with REST.",
     "benchmark comparison"),
    ("Developer tooling for GraphQL and REST",
     ("GraphQL developer tooling such as GraphiQL and code generators gives mobile teams typed clients.",
      "REST developer tooling is mature, with OpenAPI generators producing clients for iOS and Android.",
      "Developer surveys report that GraphQL tooling shortens the time mobile developers spend on integration."),
     "Developer surveys report that GraphQL tooling does not shorten the time mobile developers spend on "
     "integration.",
     "team workflow"),
    ("GraphQL and REST adoption in production",
     ("GraphQL adoption in production mobile apps includes Shopify, GitHub and Airbnb.",
      "REST remains the most common API style in production, used by 80 percent of public mobile APIs.",
      "Case studies of production GraphQL adoption report fewer mobile API versions to maintain."),
     "REST remains the most common API style in production, used by 45 percent of public mobile APIs.",
     "case study"),
)
FILLER = ("The full method is described in the appendix.", "Feedback from readers is welcome.",
          "Figures were checked by a second reviewer.")
KINDS = {SourceTier.TIER_1: "paper", SourceTier.TIER_2: "news report", SourceTier.TIER_3: "forum post"}


@dataclass
class Page:
    host: str
    path: str
    title: str
    text: str
    published: date | None = None
    date_style: int = 0
    behaviour: str = ""  # "", 429, 500, slow, binary, huge, truncated

    @property
    def url(self) -> str:
        return f"https://{self.host}{self.path}"

    def html(self) -> str:
        when = self.published.isoformat() if self.published else ""
        head = ""
        if when and self.date_style == 0:
            head = f'<meta property="article:published_time" content="{when}T09:00:00Z">'
        elif when and self.date_style == 2:
            head = ('<script type="application/ld+json">'
                    + json.dumps({"@context": "https://schema.org", "@type": "Article", "datePublished": when})
                    + "</script>")
        time_tag = f'<time datetime="{when}">{when}</time>' if when and self.date_style == 1 else ""
        paras = "".join(f"<p>{html.escape(p)}</p>" for p in self.text.split("\n"))
        return (f'<!doctype html><html><head><meta charset="utf-8"><title>{html.escape(self.title)}</title>{head}'
                f'</head><body><nav><a href="/">Home</a> | <a href="/about">About</a></nav><article>'
                f"<h1>{html.escape(self.title)}</h1>{time_tag}{paras}</article>"
                f"<footer>Copyright {html.escape(self.host)}</footer></body></html>")


def _days(n: int | None) -> date | None:
    return None if n is None else AS_OF - timedelta(days=n)


def _graphql_pages() -> list[Page]:
    pages: list[Page] = []
    for k, (label, facts, contra, extra) in enumerate(GRAPHQL_TOPICS):
        intro = f"This {{kind}} examines GraphQL and REST APIs for mobile apps, with a {extra} angle."
        t1_days = (3, 12, 25, 40, None)
        for i in range(5):
            host = T1_HOSTS[(k + i) % len(T1_HOSTS)]
            chosen = facts if i % 2 == 0 else tuple(f for j, f in enumerate(facts) if j != i % 3)
            text = "\n".join([intro.format(kind="paper"), *chosen, FILLER[i % 3]])
            pages.append(Page(host, f"/papers/{k}{i}-{label.lower().replace(' ', '-')}", f"{label} (study {i + 1})",
                              text, _days(t1_days[i]), (k + i) % 3))
        for i in range(3):
            host = T2_HOSTS[(k + i) % len(T2_HOSTS)]
            chosen = tuple(f for j, f in enumerate(facts) if j != (i + 1) % 3)
            text = "\n".join([intro.format(kind="news report"), *chosen, FILLER[(i + 1) % 3]])
            pages.append(Page(host, f"/tech/2025/{k}{i}-{label.lower().replace(' ', '-')}", f"{label}: what to know",
                              text, _days((2, 8, 15)[i]), (k + i + 1) % 3))
        t3 = [(contra, facts[1], 6), (facts[0], None, 400), (facts[0], facts[2], None)]
        for i, (a, b, age) in enumerate(t3):
            host = T3_HOSTS[(k + i) % len(T3_HOSTS)]
            text = "\n".join(x for x in [intro.format(kind="forum post"), a, b, FILLER[2]] if x)
            pages.append(Page(host, f"/t/{k}{i}-{label.lower().replace(' ', '-')}", f"{label}? My experience",
                              text, _days(age), i % 3))
    mirror = pages[0]
    pages.append(Page("mirror.someblog.net", "/copy" + mirror.path, mirror.title, mirror.text, None))
    return pages


def _finetune_pages() -> list[Page]:
    core = ("Fine-tuning adapts a pretrained LLM to a task, and its core concepts are the base model, the data and "
            "the loss.",
            "A common definition of parameter-efficient fine-tuning is updating under 1 percent of LLM weights.")
    impl = ("A sound implementation of LLM fine-tuning holds out a validation set and stops early.",
            "In practice, fine-tuning LLMs with LoRA adapters starts from a learning rate near 0.0002.")
    alt = "Retrieval is often compared with fine-tuning LLMs as alternatives for adding knowledge."
    recent = "The latest fine-tuning recipes for LLMs mix synthetic data with human data."
    intro = "This {kind} discusses fine-tuning large language models (LLMs)."
    spec: list[tuple[str, str, tuple[str, ...], int]] = []
    spec += [(h, "/ft/core", core, 5 + 7 * i) for i, h in enumerate(("arxiv.org", "www.nature.com", "web.mit.edu",
                                                                    "dl.acm.org", "www.wired.com", "techcrunch.com"))]
    spec += [(h, "/ft/impl", impl, 10 + 5 * i) for i, h in enumerate(("www.reuters.com", "www.theverge.com",
                                                                      "www.bbc.com", "someblog.com", "medium.com"))]
    spec += [("www.reddit.com", "/ft/alternatives", (alt,), 20), ("devforum.io", "/ft/recent", (recent,), 500)]
    pages = []
    for host, path, facts, age in spec:
        kind = KINDS[DEFAULT_POLICY.classify("https://" + host)]
        pages.append(Page(host, path, f"Fine-tuning LLMs: {path.rsplit('/', 1)[-1]}",
                          "\n".join([intro.format(kind=kind), *facts, FILLER[0]]), _days(age), age % 3))
    return pages


def _trouble_pages() -> list[Page]:
    text = "This trouble page exists to test error handling."
    return [Page(f"{b}.example.com", f"/{b}", f"Trouble {b}", text, None, behaviour=b)
            for b in ("429", "500", "slow", "binary", "huge", "truncated")]


@dataclass
class Route:
    body: bytes
    content_type: str = "text/html; charset=utf-8"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


class TestWeb:
    """Start with ``with TestWeb() as web:``; ``web.search_url``, ``web.url_rewrite``, ``web.requests``."""

    __test__ = False  # not a pytest test class

    def __init__(self, tier1: bool = True, slow_seconds: float = 2.0, huge_bytes: int = 3_000_000) -> None:
        pages = _graphql_pages() + _finetune_pages() + _trouble_pages()
        if not tier1:
            pages = [p for p in pages if DEFAULT_POLICY.classify(p.url) != SourceTier.TIER_1]
        self.pages: dict[tuple[str, str], Page] = {(p.host, p.path): p for p in pages}
        self.routes: dict[str, Route] = {}
        self.requests: list[str] = []
        self.slow_seconds = slow_seconds
        self.huge_bytes = huge_bytes
        self._hits: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._docs = [(p, Counter(tokenize(p.title + " " + p.text, stopwords=True))) for p in pages]
        n = len(self._docs)
        df = Counter(t for _, tf in self._docs for t in tf)
        self._idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}

    # ------------------------------------------------------------------------------------------ lifecycle
    def start(self) -> "TestWeb":
        web = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                web._handle(self)

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> "TestWeb":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base(self) -> str:
        if self._server is None:
            raise RuntimeError("TestWeb is not running; use `with TestWeb() as web:`")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def search_url(self) -> str:
        return self.base + "/html/"

    @property
    def url_rewrite(self) -> str:
        return self.base + "/site/{host}{path}"

    def add_route(self, path: str, body: bytes | str, content_type: str = "text/html; charset=utf-8",
                  status: int = 200, headers: dict[str, str] | None = None) -> str:
        """Serve ``body`` at ``path``; returns the full local URL."""
        data = body.encode("utf-8") if isinstance(body, str) else body
        self.routes[path] = Route(data, content_type, status, dict(headers or {}))
        return self.base + path

    def page_fetches(self) -> int:
        """How many page requests (``/site/…``) the server answered."""
        return sum(1 for r in self.requests if r.startswith("/site/"))

    # ------------------------------------------------------------------------------------------ search
    def search(self, query: str, limit: int = 30) -> list[Page]:
        """BM25-like ranking over title and text; ``site:`` operands (joined by OR) restrict hosts."""
        sites = [w[5:].lower() for w in query.split() if w.lower().startswith("site:")]
        rest = " ".join(w for w in query.replace('"', " ").split()
                        if not w.lower().startswith(("site:", "filetype:")) and w != "OR")
        terms = content_words(rest)
        scored = []
        for page, tf in self._docs:
            if page.behaviour and "trouble" not in terms:
                continue
            if sites and not any(host_matches(page.host, s if "." in s else "." + s) for s in sites):
                continue
            score = sum(self._idf.get(t, 0.0) * tf[t] / (tf[t] + 1.2) for t in terms)
            if score > 0:
                scored.append((score, page.url, page))
        scored.sort(key=lambda s: (-s[0], s[1]))
        return [p for _, _, p in scored[:limit]]

    def results_html(self, query: str) -> str:
        pages = self.search(query)
        if not pages:
            return ('<html><head><title>DuckDuckGo</title></head><body><div class="no-results">No results.</div>'
                    "</body></html>")
        blocks = []
        for p in pages:
            link = "//duckduckgo.com/l/?uddg=" + quote(p.url, safe="") + "&amp;rut=test"
            blocks.append(f'<div class="result results_links web-result"><div class="links_main result__body">'
                          f'<h2 class="result__title"><a rel="nofollow" class="result__a" href="{link}">'
                          f"{html.escape(p.title)}</a></h2>"
                          f'<a class="result__url" href="{link}">{html.escape(p.host + p.path)}</a>'
                          f'<a class="result__snippet" href="{link}">{html.escape(p.text[:160])}</a></div></div>')
        return (f"<html><head><title>{html.escape(query)} at DuckDuckGo</title></head><body>"
                f'<div id="links" class="results">{"".join(blocks)}</div></body></html>')

    # ------------------------------------------------------------------------------------------ serving
    def _send(self, h: BaseHTTPRequestHandler, status: int, body: bytes, ctype: str,
              headers: dict[str, str] | None = None, length: int | None = None) -> None:
        h.send_response(status)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(body) if length is None else length))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        try:
            h.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(h.path)
        with self._lock:
            self.requests.append(parts.path)
            self._hits[parts.path] += 1
            hits = self._hits[parts.path]
        if parts.path in self.routes:
            r = self.routes[parts.path]
            return self._send(h, r.status, r.body, r.content_type, r.headers)
        if parts.path == "/html/":
            q = parse_qs(parts.query).get("q", [""])[0]
            return self._send(h, 200, self.results_html(q).encode("utf-8"), "text/html; charset=utf-8")
        if parts.path.startswith("/site/"):
            host, _, rest = parts.path[len("/site/"):].partition("/")
            page = self.pages.get((host, "/" + rest))
            if page is not None:
                return self._serve_page(h, page, hits)
        self._send(h, 404, b"<html><body>Not found</body></html>", "text/html; charset=utf-8")

    def _serve_page(self, h: BaseHTTPRequestHandler, page: Page, hits: int) -> None:
        body = page.html().encode("utf-8")
        b = page.behaviour
        if b == "429" and hits == 1:
            return self._send(h, 429, b"slow down", "text/plain", {"Retry-After": "1"})
        if b == "500":
            return self._send(h, 500, b"server error", "text/plain")
        if b == "slow":
            time.sleep(self.slow_seconds)
        if b == "binary":
            return self._send(h, 200, b"%PDF-1.7\x00\x01\x02binary\x00" * 64, "application/pdf")
        if b == "huge":
            para = "<p>" + "Filler words about trouble pages repeat here. " * 40 + "</p>"
            huge = page.html().replace("</article>", para * (self.huge_bytes // len(para) + 1) + "</article>")
            return self._send(h, 200, huge.encode("utf-8"), "text/html; charset=utf-8")
        if b == "truncated":
            return self._send(h, 200, body[:200], "text/html; charset=utf-8", length=len(body) + 5000)
        self._send(h, 200, body, "text/html; charset=utf-8")


@contextlib.contextmanager
def maybe_testweb(on: bool) -> Iterator[TestWeb | None]:
    """The local test web while the block runs when ``on`` (``--testweb`` of research and serve), else ``None``."""
    if not on:
        yield None
        return
    with TestWeb() as web:
        yield web


def main(argv: list[str] | None = None) -> int:
    """``python -m ragbench.dal.testweb``: serve the test web until Ctrl-C."""
    import argparse

    parser = argparse.ArgumentParser(description="serve the RAG-DAL local test web")
    parser.add_argument("--no-tier1", action="store_true", help="leave out every tier-1 page")
    args = parser.parse_args(argv)
    with TestWeb(tier1=not args.no_tier1) as web:
        print(f"search URL:  {web.search_url}\nURL rewrite: {web.url_rewrite}\npages: {len(web.pages)}", flush=True)
        print(f'try: ragbench research "{GRAPHQL_QUESTION}" --search-url {web.search_url} --url-rewrite '
              f"--as-of {AS_OF}", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            return 0


if __name__ == "__main__":
    raise SystemExit(main())
