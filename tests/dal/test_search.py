import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ragbench.dal.http import retry_after_seconds
from ragbench.dal.search import DuckDuckGoBackend, SearchLayoutError, parse_results, unwrap_redirect
from ragbench.errors import DataError, NetworkError

from .helpers import make_client

DDG_PAGE = """<html><body><div class="results">
<div class="result results_links result--ad"><a class="result__a" href="https://ads.example/x">Ad</a></div>
<div class="result results_links web-result"><div class="result__body">
 <h2 class="result__title"><a class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Farxiv.org%2Fabs%2F2401.1%3Fv%3D2&amp;rut=ab">A <b>paper</b></a></h2>
 <a class="result__url" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Farxiv.org%2Fabs%2F2401.1%3Fv%3D2">arxiv.org/abs/2401.1</a>
 <a class="result__snippet" href="#">GraphQL <b>reduces</b> bandwidth.</a></div></div>
<div class="result"><h2><a class="result__a" href="https://www.reuters.com/tech/a">Direct link</a></h2></div>
<div class="result"><h2><a class="result__a" href="/relative/path">Relative</a></h2></div>
<div class="result"><a class="result__a" href="https://www.reuters.com/tech/a">Repeat</a></div>
</div></body></html>"""


def test_parse_results_unwraps_and_skips_ads_and_repeats():
    res = parse_results(DDG_PAGE, "https://html.duckduckgo.com/html/")
    assert [(r.url, r.title, r.snippet, r.rank) for r in res] == [
        ("https://arxiv.org/abs/2401.1?v=2", "A paper", "GraphQL reduces bandwidth.", 0),
        ("https://www.reuters.com/tech/a", "Direct link", "", 1),
        ("https://html.duckduckgo.com/relative/path", "Relative", "", 2),
    ]
    assert len(parse_results(DDG_PAGE, max_results=1)) == 1


def test_unwrap_redirect_forms():
    assert unwrap_redirect("//duckduckgo.com/l/?uddg=https%3A%2F%2Fa.org%2Fx%20y&rut=1") == "https://a.org/x y"
    assert unwrap_redirect("https://duckduckgo.com/l/?kh=-1&uddg=http%3A%2F%2Fb.com%2F") == "http://b.com/"
    assert unwrap_redirect("https://c.com/l/page") == "https://c.com/l/page"


def test_no_results_marker_is_an_empty_list_and_a_changed_layout_raises():
    assert parse_results('<html><div class="no-results">No results.</div></html>') == []
    with pytest.raises(SearchLayoutError, match="layout"):
        parse_results("<html><head><title>Are you a robot?</title></head><body>captcha</body></html>")
    with pytest.raises(SearchLayoutError, match="none with an a.result__a"):
        parse_results('<html><div class="result"><span>new design</span></div></html>')


def test_search_against_the_local_server(web):
    backend = DuckDuckGoBackend(web.search_url, make_client())
    results = backend.search("GraphQL REST performance site:arxiv.org", 5)
    assert results and all(r.url.startswith("https://arxiv.org/") for r in results)
    assert len(results) <= 5
    assert backend.search("zzqx nonexistent words") == []
    with pytest.raises(DataError, match="blank"):
        backend.search("  ")


def test_html_without_results_raises_layout_error(web):
    web.add_route("/broken/html/", "<html><body><p>We moved!</p></body></html>")
    backend = DuckDuckGoBackend(web.base + "/broken/html/", make_client())
    with pytest.raises(SearchLayoutError, match="no div.result blocks"):
        backend.search("anything")


def test_429_honours_retry_after_then_succeeds(web, sleeps):
    client = make_client(sleeps)
    res = client.get(web.base + "/site/429.example.com/429")
    assert res.status == 200 and b"Trouble 429" in res.content
    assert sleeps == [1.0]          # Retry-After: 1, not the exponential backoff
    assert client.requests == 2


def test_500_is_retried_with_exponential_backoff_then_fails(web, sleeps):
    client = make_client(sleeps, retries=3, backoff=0.5)
    with pytest.raises(NetworkError, match="after 4 attempt"):
        client.get(web.base + "/site/500.example.com/500")
    assert sleeps == [0.5, 1.0, 2.0]


def test_404_fails_at_once(web, sleeps):
    client = make_client(sleeps)
    with pytest.raises(NetworkError, match="HTTP 404"):
        client.get(web.base + "/site/nowhere.com/x")
    assert sleeps == [] and client.requests == 1


def test_timeout_and_unreachable(web, sleeps):
    with pytest.raises(NetworkError, match="timeout"):
        make_client(sleeps, timeout=0.2, retries=1).get(web.base + "/site/slow.example.com/slow")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(NetworkError, match="connection error"):
        make_client(retries=1).get(f"http://127.0.0.1:{port}/")


def test_rate_limit_waits_between_requests_to_one_host(web, sleeps):
    clock = iter([0.0, 0.25, 1.0, 10.0, 10.0]).__next__   # clock reads: stamp; gap, stamp; gap, stamp
    client = make_client(sleeps, delay=1.0, clock=clock)
    for _ in range(3):
        client.get(web.base + "/html/?q=graphql")
    assert sleeps == [0.75]         # second request came 0.25 s after the first; third 9.75 s later


def test_retry_after_http_date():
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:10 GMT", now=1445412480.0) == 10.0
    assert retry_after_seconds("5") == 5.0 and retry_after_seconds("soon") is None


def test_proxy_from_environment_is_used(monkeypatch):
    seen = []

    class Proxy(BaseHTTPRequestHandler):
        def do_GET(self):
            seen.append(self.path)
            body = b'<html><div class="no-results">none</div></html>'
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{server.server_address[1]}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        backend = DuckDuckGoBackend("http://search.invalid/html/", make_client())
        assert backend.search("q") == []
        assert seen == ["http://search.invalid/html/?q=q"]     # absolute-form request: it went through the proxy
        monkeypatch.setenv("NO_PROXY", "search.invalid")
        with pytest.raises(NetworkError):
            DuckDuckGoBackend("http://search.invalid/html/", make_client(retries=0)).search("q")
        assert len(seen) == 1
    finally:
        server.shutdown()
        server.server_close()
