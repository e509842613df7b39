from datetime import date

import pytest

from ragbench.dal.fetch import BinaryContentError, PageFetcher, published_date
from ragbench.dal.http import UrlRewrite
from ragbench.errors import ConfigError, DataError, NetworkError
from bs4 import BeautifulSoup

from .helpers import make_client

ARTICLE = """<!doctype html><html><head><title>Page title</title>
<meta property="og:title" content="The OG title"></head>
<body><nav>Home | Menu</nav><header>Site header</header>
<article><h1>Heading</h1><p>First   paragraph.</p><script>var x = 1;</script><p>Second paragraph.</p></article>
<aside>Related links</aside><footer>Copyright</footer></body></html>"""


def fetcher(web, **kw):
    return PageFetcher(make_client(**kw), UrlRewrite(web.url_rewrite))


def test_main_text_title_and_rewrite(web):
    web.add_route("/site/docs.example.org/guide", ARTICLE)
    page = fetcher(web).fetch("https://docs.example.org/guide")
    assert page.url == "https://docs.example.org/guide"          # the public URL is kept
    assert page.title == "The OG title"
    assert page.text == "Heading\nFirst paragraph.\nSecond paragraph."
    assert page.published is None and not page.truncated


@pytest.mark.parametrize("head,body,expected", [
    ('<meta property="article:published_time" content="2025-05-02T10:00:00+02:00">', "", date(2025, 5, 2)),
    ('<meta name="citation_publication_date" content="2024/11/30">', "", date(2024, 11, 30)),
    ('<script type="application/ld+json">{"@graph": [{"@type": "WebPage"}, {"datePublished": "2023-01-09"}]}'
     "</script>", "", date(2023, 1, 9)),
    ("", '<time datetime="2022-07-04T12:00">July 4</time>', date(2022, 7, 4)),
    ('<script type="application/ld+json">not json</script>', "<time>no attribute</time>", None),
])
def test_published_date_sources(head, body, expected):
    soup = BeautifulSoup(f"<html><head>{head}</head><body>{body}</body></html>", "html.parser")
    assert published_date(soup) == expected


def test_generated_pages_carry_their_dates(web):
    f = fetcher(web)
    dated = [p for p in web.pages.values() if p.published and not p.behaviour][:6]   # all three date styles
    assert {p.date_style for p in dated} == {0, 1, 2}
    for p in dated:
        assert f.fetch(p.url).published == p.published


def test_binary_is_rejected(web):
    with pytest.raises(BinaryContentError, match="application/pdf"):
        fetcher(web).fetch("https://binary.example.com/binary")
    web.add_route("/site/x.example.com/nul", b"<html>\x00\x00binary", content_type="text/html")
    with pytest.raises(BinaryContentError):
        fetcher(web).fetch("https://x.example.com/nul")


def test_enormous_page_is_truncated(web):
    page = PageFetcher(make_client(max_bytes=200_000), UrlRewrite(web.url_rewrite),
                       max_text_chars=5_000).fetch("https://huge.example.com/huge")
    assert page.truncated and len(page.text) == 5_000
    assert page.title == "Trouble huge"


def test_truncated_body_is_a_network_error(web):
    with pytest.raises(NetworkError, match="connection error"):
        fetcher(web, retries=1).fetch("https://truncated.example.com/truncated")


def test_encodings(web):
    latin = "<html><head><title>Caf\xe9</title></head><body><p>Cr\xe8me br\xfbl\xe9e.</p></body></html>"
    web.add_route("/site/enc.example.com/latin1", latin.encode("latin-1"), "text/html; charset=iso-8859-1")
    web.add_route("/site/enc.example.com/meta", ('<html><head><meta charset="iso-8859-1"><title>Caf\xe9</title>'
                                                 "</head><body><p>\xe9t\xe9.</p></body></html>").encode("latin-1"),
                  "text/html")
    web.add_route("/site/enc.example.com/plain", "line one\r\n\r\nline two\n".encode("utf-8"),
                  "text/plain; charset=utf-8")
    f = fetcher(web)
    assert f.fetch("https://enc.example.com/latin1").text == "Crème brûlée."
    assert f.fetch("https://enc.example.com/meta").title == "Café"
    plain = f.fetch("https://enc.example.com/plain")
    assert plain.text == "line one\nline two" and plain.title == "https://enc.example.com/plain"


def test_empty_page_is_a_data_error(web):
    web.add_route("/site/empty.example.com/", "<html><body><nav>only nav</nav></body></html>")
    with pytest.raises(DataError, match="no text"):
        fetcher(web).fetch("https://empty.example.com/")


def test_url_rewrite():
    rw = UrlRewrite("http://127.0.0.1:9/site/{host}{path}")
    assert rw("https://WWW.Nature.com/a/b?x=1") == "http://127.0.0.1:9/site/www.nature.com/a/b?x=1"
    assert rw("https://arxiv.org") == "http://127.0.0.1:9/site/arxiv.org/"
    assert UrlRewrite()("https://a.org/x") == "https://a.org/x"
    with pytest.raises(ConfigError, match="host"):
        UrlRewrite("http://127.0.0.1:9/site/")
