"""An OpenAI-compatible chat endpoint over httpx (OpenAI, llama.cpp server, Ollama, vLLM, …).

``POST {base_url}/v1/chat/completions`` with temperature 0. Transient failures (HTTP 429 and 5xx, connection
errors, timeouts) are retried with exponential backoff; a ``Retry-After`` header is honoured but capped, so a
server cannot park the caller for minutes. When every attempt fails the caller gets a :class:`NetworkError`; a
reply that is not the expected JSON shape is a :class:`ModelError`.
"""
from __future__ import annotations

import logging
import os
import time
from typing import Any, Callable, Sequence

import httpx

from ..errors import ConfigError, ModelError, NetworkError
from ..httputil import retry_after_seconds
from ..schema import Message
from ..text import count_tokens
from .base import ChatModel, Completion

log = logging.getLogger(__name__)

RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


class OpenAIChatModel(ChatModel):
    """Chat completions from an OpenAI-compatible server.

    ``base_url``, ``model`` and ``api_key`` default to ``$OPENAI_BASE_URL``, ``$OPENAI_MODEL`` and
    ``$OPENAI_API_KEY``. A base URL that already ends in ``/v1`` is used as is. ``max_retries`` counts retries
    after the first attempt; the delay before retry ``i`` (from 0) is ``min(max_backoff, backoff * 2**i)`` unless
    the server sent ``Retry-After`` (then that, capped at ``max_backoff``).
    """

    def __init__(self, base_url: str | None = None, model: str | None = None, api_key: str | None = None,
                 timeout: float = 30.0, max_retries: int = 3, backoff: float = 0.5, max_backoff: float = 8.0,
                 max_tokens: int | None = 512, temperature: float = 0.0,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.base_url = base_url
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.sleep = sleep

    def __repr__(self) -> str:  # never print the key
        return f"OpenAIChatModel(base_url={self._url()!r}, model={self._model()!r})"

    # ------------------------------------------------------------------------------------------ settings

    def _url(self) -> str:
        base = self.base_url or os.environ.get("OPENAI_BASE_URL")
        if not base:
            raise ConfigError("no OpenAI-compatible base URL: expected base_url= or $OPENAI_BASE_URL, found neither. "
                              "Fix: e.g. export OPENAI_BASE_URL=http://127.0.0.1:8080")
        base = base.rstrip("/")
        if not base.startswith(("http://", "https://")):
            raise ConfigError(f"base URL must start with http:// or https://, found {base!r}. Fix: add the scheme.")
        return base + ("/chat/completions" if base.endswith("/v1") else "/v1/chat/completions")

    def _model(self) -> str:
        model = self.model or os.environ.get("OPENAI_MODEL")
        if not model:
            raise ConfigError("no model name: expected model= or $OPENAI_MODEL, found neither. "
                              "Fix: e.g. export OPENAI_MODEL=gpt-4o-mini")
        return model

    @property
    def model_id(self) -> str:  # type: ignore[override]
        return self.model or os.environ.get("OPENAI_MODEL") or "openai"

    def _check(self) -> None:
        if self.max_retries < 0 or self.timeout <= 0 or self.backoff < 0 or self.max_backoff < 0:
            raise ConfigError(f"expected timeout > 0 and max_retries, backoff, max_backoff ≥ 0, found timeout="
                              f"{self.timeout}, max_retries={self.max_retries}, backoff={self.backoff}, "
                              f"max_backoff={self.max_backoff}. Fix: pass valid values.")

    # ------------------------------------------------------------------------------------------ calls

    def complete(self, messages: Sequence[Message]) -> Completion:
        self._check()
        url, model = self._url(), self._model()
        if not messages:
            raise ModelError("no messages to send. Fix: pass at least one user message.")
        payload: dict[str, Any] = {"model": model, "temperature": self.temperature,
                                   "messages": [{"role": m.role, "content": m.content} for m in messages]}
        if self.max_tokens:
            payload["max_tokens"] = self.max_tokens
        key = self.api_key or os.environ.get("OPENAI_API_KEY")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        response = self._post(url, payload, headers)
        return self._parse(response, messages, model)

    def _post(self, url: str, payload: dict[str, Any], headers: dict[str, str]) -> httpx.Response:
        attempts = self.max_retries + 1
        last = ""
        with httpx.Client(timeout=httpx.Timeout(self.timeout)) as client:
            for attempt in range(attempts):
                retry_after: float | None = None
                try:
                    response = client.post(url, json=payload, headers=headers)
                except httpx.TransportError as exc:  # connection refused, DNS, timeouts, broken reads
                    last = f"{type(exc).__name__}: {exc}"
                else:
                    if response.status_code not in RETRY_STATUS:
                        return response
                    last = f"HTTP {response.status_code}"
                    retry_after = retry_after_seconds(response.headers.get("Retry-After"))
                if attempt + 1 < attempts:
                    delay = retry_after if retry_after is not None else self.backoff * 2 ** attempt
                    delay = min(self.max_backoff, max(0.0, delay))
                    log.warning("chat request to %s failed (%s); retry %d/%d in %.2fs", url, last, attempt + 1,
                                self.max_retries, delay)
                    self.sleep(delay)
        raise NetworkError(f"chat server {url} did not answer after {attempts} attempt(s); last failure: {last}. "
                           "Fix: check that the server is running and OPENAI_BASE_URL is right, or raise "
                           "timeout / max_retries.")

    def _parse(self, response: httpx.Response, messages: Sequence[Message], model: str) -> Completion:
        if response.status_code >= 400:
            hint = " Fix: check OPENAI_API_KEY." if response.status_code in (401, 403) else \
                " Fix: check the model name and request."
            raise ModelError(f"chat server answered HTTP {response.status_code}: {response.text[:200]!r}.{hint}")
        try:
            data = response.json()
        except ValueError:
            raise ModelError(f"chat server reply is not JSON: {response.text[:200]!r}. Fix: check that the "
                             "base URL points at an OpenAI-compatible /v1/chat/completions endpoint.") from None
        try:
            choice = data["choices"][0]
            text = choice["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise ModelError(f"chat server reply lacks choices[0].message.content: {str(data)[:200]!r}. "
                             "Fix: use an OpenAI-compatible endpoint.") from None
        if text is None:
            text = ""
        if not isinstance(text, str):
            raise ModelError(f"choices[0].message.content must be a string, found {type(text).__name__}.")
        usage = data.get("usage") if isinstance(data, dict) else None
        usage = usage if isinstance(usage, dict) else {}
        prompt_tokens = usage.get("prompt_tokens")
        completion_tokens = usage.get("completion_tokens")
        if not isinstance(prompt_tokens, int) or isinstance(prompt_tokens, bool):
            prompt_tokens = sum(count_tokens(m.content) for m in messages)
        if not isinstance(completion_tokens, int) or isinstance(completion_tokens, bool):
            completion_tokens = count_tokens(text)
        finish = choice.get("finish_reason") if isinstance(choice, dict) else None
        return Completion(text, prompt_tokens, completion_tokens, model, str(finish or "stop"))


