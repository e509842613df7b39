"""A polite HTTP GET for search and page fetching: per-host rate limiting, timeouts, retries with exponential
backoff on 429 (honouring ``Retry-After``), 5xx and connection errors, a byte limit, and proxies from the
environment (``HTTP_PROXY``/``HTTPS_PROXY``/``NO_PROXY`` via httpx ``trust_env``).

Deadlines: httpx's timeouts bound each network operation, so a server that drips one byte every few seconds never
trips them. Each response therefore has a wall-clock deadline (``response_deadline``, body included), and
``stop_at`` (set by a research run) ends every request and retry at the run's deadline. Failures that a retry cannot
mend — a redirect loop, a body that does not match its ``Content-Encoding``, a deadline — are raised at once.

A :class:`UrlRewrite` maps public URLs to another server (the local test web) while the caller keeps the original
URL, so a source's tier is still decided by its real host name.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping
from urllib.parse import urlsplit

import httpx

from ..config import DalConfig
from ..errors import ConfigError, DataError, NetworkError
from ..httputil import retry_after_seconds

log = logging.getLogger("ragbench.dal.http")

USER_AGENT = "Mozilla/5.0 (compatible; ragbench-dal/0.1; research crawler)"
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True)
class UrlRewrite:
    """``template`` with ``{scheme}``, ``{host}``, ``{path}`` (path with query), e.g.
    ``http://127.0.0.1:8765/site/{host}{path}``; ``None`` leaves URLs alone."""

    template: str | None = None

    def __post_init__(self) -> None:
        if self.template is not None and "{host}" not in self.template:
            raise ConfigError(f"url_rewrite {self.template!r} has no {{host}} field. "
                              "Fix: e.g. 'http://127.0.0.1:8765/site/{host}{path}'.")

    def __call__(self, url: str) -> str:
        if not self.template:
            return url
        parts = urlsplit(url)
        if not parts.hostname:
            return url
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return self.template.format(scheme=parts.scheme or "https", host=parts.hostname.lower(), path=path)


class DeadlineExceeded(NetworkError):
    """A response (body included) or a whole run took longer than its deadline."""


@dataclass(frozen=True)
class HttpResult:
    url: str
    status: int
    headers: Mapping[str, str]
    content: bytes
    truncated: bool

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip().lower()

    @property
    def charset(self) -> str | None:
        for part in self.headers.get("content-type", "").split(";")[1:]:
            key, _, value = part.partition("=")
            if key.strip().lower() == "charset" and value.strip():
                return value.strip().strip('"').lower()
        return None


@dataclass
class PoliteClient:
    """GET with rate limiting and retries. ``sleep`` and ``clock`` are injectable so tests never wait."""

    timeout: float = 20.0
    retries: int = 3
    backoff: float = 0.5
    delay: float = 1.0
    max_bytes: int = 2_000_000
    max_retry_after: float = 60.0
    response_deadline: float = 60.0
    #: ``timer()`` time at which every request must end (a research run's deadline); ``None``: no limit.
    stop_at: float | None = None
    user_agent: str = USER_AGENT
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic   # the rate limiter's clock
    timer: Callable[[], float] = time.monotonic   # the deadlines' clock
    transport: httpx.BaseTransport | None = None
    requests: int = 0
    _last: dict[str, float] = field(default_factory=dict)
    _client: httpx.Client | None = None

    @classmethod
    def from_config(cls, cfg: DalConfig, **kw) -> "PoliteClient":
        return cls(timeout=cfg.timeout, retries=cfg.retries, backoff=cfg.backoff, delay=cfg.request_delay,
                   max_bytes=cfg.max_page_bytes, response_deadline=cfg.response_deadline, **kw)

    def _http(self) -> httpx.Client:
        if self._client is None:
            self._client = httpx.Client(timeout=self.timeout, follow_redirects=True, trust_env=True,
                                        headers={"User-Agent": self.user_agent,
                                                 "Accept": "text/html,application/xhtml+xml,*/*;q=0.8"},
                                        transport=self.transport)
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def _wait_turn(self, host: str) -> None:
        # One request per `delay` seconds per host: being blocked costs more than waiting.
        last = self._last.get(host)
        if last is not None and self.delay > 0:
            gap = self.clock() - last
            if gap < self.delay:
                self.sleep(self.delay - gap)
        self._last[host] = self.clock()

    def _limit(self, url: str) -> float:
        """Seconds the next response may take: the response deadline, cut to what is left before ``stop_at``."""
        if self.stop_at is None:
            return self.response_deadline
        left = self.stop_at - self.timer()
        if left <= 0:
            raise DeadlineExceeded(f"GET {url} not started: the run's deadline has passed. Fix: raise "
                                   "dal.run_deadline, or ask a narrower question.")
        return min(self.response_deadline, left)

    def get(self, url: str, params: Mapping[str, str] | None = None) -> HttpResult:
        """GET ``url``; raises :class:`NetworkError` after the last retry, or at once on a 4xx other than 429, a
        redirect loop or a deadline; :class:`DataError` when the body cannot be decoded."""
        host = urlsplit(url).netloc
        attempts = self.retries + 1
        for attempt in range(attempts):
            self._wait_turn(host)
            limit = self._limit(url)
            self.requests += 1
            wait = self.backoff * (2 ** attempt)
            started = self.timer()
            try:
                with self._http().stream("GET", url, params=params, timeout=min(self.timeout, limit)) as resp:
                    if resp.status_code in RETRY_STATUSES:
                        problem = f"HTTP {resp.status_code}"
                        if resp.status_code == 429:
                            ra = retry_after_seconds(resp.headers.get("retry-after"))
                            if ra is not None:
                                wait = min(ra, self.max_retry_after)
                    elif resp.status_code >= 400:
                        raise NetworkError(f"GET {url} answered HTTP {resp.status_code}; expected 200. "
                                           "Fix: check the URL; the page may be gone or forbidden.")
                    else:
                        return self._read(url, resp, started + limit)
            except httpx.TimeoutException as exc:
                if self.timer() - started >= limit - 1e-3 and limit < self.timeout:
                    raise DeadlineExceeded(f"GET {url}: no complete response within the deadline of {limit:.1f} s. "
                                           "Fix: raise dal.response_deadline / dal.run_deadline, or skip the "
                                           "host.") from None
                problem = f"timeout after {self.timeout} s ({type(exc).__name__})"
            except httpx.TooManyRedirects:
                raise NetworkError(f"GET {url} redirects in a loop (more than {self._http().max_redirects} "
                                   "redirects). Fix: the site is misconfigured; check the URL in a browser or skip "
                                   "it.") from None
            except httpx.TransportError as exc:
                problem = f"connection error ({type(exc).__name__}: {exc})"
            except (httpx.HTTPError, httpx.InvalidURL, httpx.StreamError) as exc:
                raise NetworkError(f"GET {url} failed: {type(exc).__name__}: {exc}. Fix: check the URL.") from None
            if attempt + 1 < attempts:
                if self.stop_at is not None and self.timer() + wait >= self.stop_at:
                    break  # no time left for another attempt
                log.info("GET %s: %s; retry %d/%d in %.2f s", url, problem, attempt + 1, self.retries, wait)
                self.sleep(wait)
        raise NetworkError(f"GET {url} failed after {attempt + 1} attempt(s): {problem}. "
                           "Fix: check the host is reachable (proxy settings: HTTP_PROXY/HTTPS_PROXY) or retry later.")

    def _read(self, url: str, resp: httpx.Response, deadline: float) -> HttpResult:
        chunks: list[bytes] = []
        size = 0
        truncated = False
        stream = resp.iter_bytes()
        while True:
            try:
                chunk = next(stream)
            except StopIteration:
                break
            except httpx.DecodingError as exc:
                raise DataError(f"GET {url}: the body does not match its Content-Encoding "
                                f"({resp.headers.get('content-encoding', '?')}): {exc}. Fix: the server is "
                                "misconfigured; skip the page.") from None
            chunks.append(chunk)
            size += len(chunk)
            if size >= self.max_bytes:
                truncated = True  # enormous page: keep the head, drop the rest
                break
            if self.timer() > deadline:
                raise DeadlineExceeded(f"GET {url}: the body was still arriving after the deadline ({size} bytes "
                                       f"read, Content-Length {resp.headers.get('content-length', 'unknown')}). "
                                       "Fix: the server is too slow; raise dal.response_deadline or skip the host.")
        body = b"".join(chunks)[: self.max_bytes]
        return HttpResult(str(resp.url), resp.status_code, {k.lower(): v for k, v in resp.headers.items()},
                          body, truncated)
