"""Research faults of issue 13 against real loopback servers: a page that drips its body (2), redirect loops and
a lying Content-Encoding (3), a search engine on localhost whose result URLs must be fetched as they are, through
HTTP_PROXY (4), and the run deadline."""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable
from urllib.parse import quote, urlsplit

import pytest

from ragbench.cli import main
from ragbench.config import DalConfig, load_config
from ragbench.dal.fetch import PageFetcher
from ragbench.dal.http import DeadlineExceeded, PoliteClient
from ragbench.dal.research import Researcher
from ragbench.dal.search import DuckDuckGoBackend
from ragbench.dal.session import build_researcher
from ragbench.errors import DataError, NetworkError
from ragbench.retrieval.embedding import HashingEmbedder

Q = "How does GraphQL compare to REST for mobile apps?"
PAGE = ("<html><head><title>GraphQL notes</title></head><body><article><p>GraphQL lets mobile clients ask for "
        "exactly the fields they need in one request.</p></article></body></html>")


class Server:
    """A loopback HTTP server whose handlers are plain functions of the request handler; records request paths."""

    def __init__(self) -> None:
        self.routes: dict[str, Callable[[BaseHTTPRequestHandler], None]] = {}
        self.seen: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                server.seen.append(self.path)
                path = urlsplit(self.path).path if self.path.startswith("/") else "PROXY"
                route = server.routes.get(path)
                try:
                    if route is None:
                        send(self, 404, b"not here")
                    else:
                        route(self)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (that is what the deadline tests want)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def send(h: BaseHTTPRequestHandler, status: int, body: bytes, ctype: str = "text/html; charset=utf-8",
         headers: dict[str, str] | None = None) -> None:
    h.send_response(status)
    h.send_header("Content-Type", ctype)
    h.send_header("Content-Length", str(len(body)))
    for k, v in (headers or {}).items():
        h.send_header(k, v)
    h.end_headers()
    h.wfile.write(body)


def drip(h: BaseHTTPRequestHandler) -> None:
    """Announces 1 MB and sends one byte every 0.3 s: each read is quick, the response never ends."""
    h.send_response(200)
    h.send_header("Content-Type", "text/html")
    h.send_header("Content-Length", "1000000")
    h.end_headers()
    for _ in range(200):
        h.wfile.write(b"<")
        h.wfile.flush()
        time.sleep(0.3)


def loop(h: BaseHTTPRequestHandler) -> None:
    send(h, 302, b"", headers={"Location": urlsplit(h.path).path})


def lying_gzip(h: BaseHTTPRequestHandler) -> None:
    send(h, 200, PAGE.encode(), headers={"Content-Encoding": "gzip"})


def results(urls: list[str]) -> Callable[[BaseHTTPRequestHandler], None]:
    """A DuckDuckGo-style results page linking to ``urls`` through the uddg redirect."""
    blocks = "".join(f'<div class="result"><a class="result__a" href="//duckduckgo.com/l/?uddg={quote(u, safe="")}">'
                     f'r{i}</a><a class="result__snippet">GraphQL REST mobile</a></div>' for i, u in enumerate(urls))
    body = f"<html><body>{blocks}</body></html>".encode()
    return lambda h: send(h, 200, body)


@pytest.fixture
def server():
    s = Server()
    yield s
    s.close()


def researcher(search_url: str, **cfg) -> Researcher:
    dal = DalConfig(request_delay=0.0, retries=1, backoff=0.01, timeout=5.0, as_of="2025-06-01",
                    search_url=search_url, **cfg)
    client = PoliteClient.from_config(dal)
    return Researcher(DuckDuckGoBackend(search_url, client), PageFetcher(client), HashingEmbedder(64), dal)


def test_a_dripping_page_ends_at_the_response_deadline(server):
    """Fault 2: a page dripping one byte at a time under a large Content-Length never tripped the read timeout."""
    server.routes["/drip"] = drip
    client = PoliteClient(timeout=5.0, retries=2, delay=0.0, response_deadline=1.0)
    with pytest.raises(DeadlineExceeded, match=r"still arriving after the deadline .*Content-Length 1000000"):
        client.get(server.base + "/drip")
    assert client.requests == 1  # a deadline is not retried: the server would drip again


def test_research_with_dripping_results_finishes_and_records_them(server):
    server.routes["/drip"] = drip
    server.routes["/drip2"] = drip
    server.routes["/html/"] = results([server.base + "/drip", server.base + "/drip2"])
    res = researcher(server.base + "/html/", response_deadline=1.0, max_passes=1).run(Q)
    kinds = [(e.source, e.stage, e.kind) for e in res.report.errors]
    assert kinds == [(server.base + "/drip", "fetch", "DeadlineExceeded"),
                     (server.base + "/drip2", "fetch", "DeadlineExceeded")]
    assert res.report.passes_completed == 1 and res.report.sources_used == 0


def test_run_deadline_stops_research_with_a_report(server, tmp_path, capsys):
    urls = [f"{server.base}/drip{i}" for i in range(6)]
    for u in urls:
        server.routes[urlsplit(u).path] = drip
    server.routes["/html/"] = results(urls)
    cfg = tmp_path / "c.yaml"
    cfg.write_text("dal: {request_delay: 0, retries: 0, timeout: 5, response_deadline: 1.0, run_deadline: 2.5}\n"
                   "embedding: {model: hashing, cache: false}\n")
    out = tmp_path / "out"
    code = main(["research", Q, "--search-url", server.base + "/html/", "--config", str(cfg), "--out", str(out),
                 "--json", "--quiet"])
    captured = capsys.readouterr()
    assert code == 1 and "dal.run_deadline = 2.5 s" in captured.err
    report = json.loads((out / "report.json").read_text())
    kinds = [e["kind"] for e in report["errors"]]
    assert kinds.count("RunDeadline") == 1 and set(kinds) == {"RunDeadline", "DeadlineExceeded"}
    assert 1 <= kinds.count("DeadlineExceeded") <= 3 and report["passes_completed"] == 1
    assert json.loads(captured.out.strip().splitlines()[-1])["sources_used"] == 0


def test_redirect_loop_and_lying_gzip_are_source_errors(server):
    """Fault 3: httpx.TooManyRedirects and httpx.DecodingError crashed the run and lost the report."""
    server.routes["/loop"] = loop
    server.routes["/gzip"] = lying_gzip
    server.routes["/ok"] = lambda h: send(h, 200, PAGE.encode())
    client = PoliteClient(timeout=5.0, retries=2, delay=0.0)
    with pytest.raises(NetworkError, match="redirects in a loop"):
        client.get(server.base + "/loop")
    with pytest.raises(DataError, match=r"does not match its Content-Encoding \(gzip\)"):
        client.get(server.base + "/gzip")
    server.routes["/html/"] = results([server.base + p for p in ("/loop", "/gzip", "/ok")])
    res = researcher(server.base + "/html/", max_passes=1).run(Q)
    assert [(e.source.rsplit("/", 1)[-1], e.kind) for e in res.report.errors] == [("loop", "NetworkError"),
                                                                                 ("gzip", "DataError")]
    assert [s.url for s in res.sources] == [server.base + "/ok"]


def test_search_url_in_a_redirect_loop_exits_1_with_the_report(server, tmp_path, capsys):
    server.routes["/html/"] = loop
    out = tmp_path / "out"
    cfg = tmp_path / "c.yaml"
    cfg.write_text("dal: {request_delay: 0}\nembedding: {model: hashing, cache: false}\n")
    code = main(["research", Q, "--search-url", server.base + "/html/", "--config", str(cfg), "--max-passes", "1",
                 "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert code == 1 and "error: all 5 searches failed" in err and "redirects in a loop" in err
    report = json.loads((out / "report.json").read_text())
    assert [e["kind"] for e in report["errors"]] == ["NetworkError"] * 5 + ["AllSearchesFailed"]


def test_local_search_engine_urls_are_fetched_as_returned_through_the_proxy(server, monkeypatch):
    """Fault 4: with a loopback search URL, result URLs were rewritten to /site/<host><path> on the search server
    and HTTP_PROXY was never used for pages."""
    proxy = Server()
    try:
        proxy.routes["PROXY"] = lambda h: send(h, 200, PAGE.encode())
        for var in ("ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy", "http_proxy"):
            monkeypatch.delenv(var, raising=False)
        monkeypatch.setenv("HTTP_PROXY", proxy.base)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
        pages = ["http://docs.public-example.org/graphql", "http://blog.example.net/rest-vs-graphql"]
        server.routes["/html/"] = results(pages)
        cfg = load_config(overrides={"dal.search_url": server.base + "/html/", "dal.request_delay": 0,
                                     "dal.max_passes": 1, "embedding.model": "hashing"})
        res = build_researcher(cfg, embedder=HashingEmbedder(64)).run(Q)   # what `ragbench research` runs
        assert sorted(set(proxy.seen)) == sorted(pages)              # pages went to their hosts, via the proxy
        assert all(p.startswith("/html/") for p in server.seen)      # the search server served searches only
        assert res.report.errors == [] and [s.url for s in res.sources] == [pages[0]]  # pages[1]: same text
    finally:
        proxy.close()
