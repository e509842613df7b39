"""One pure-ASGI middleware for every request: request id, body-size limit, security headers, metrics and the
access log line.

* ``X-Request-ID``: the caller's (when it is a short safe token) or a new one; echoed on the response and present
  in every log line written while the request runs.
* Bodies over ``max_body_bytes`` get a 413 problem: at once when ``Content-Length`` says so, otherwise as soon as the
  streamed body crosses the limit (the route never sees it).
* Errors that escape the routes become a 500 problem here, so even they carry the request id.
"""
from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.exceptions import HTTPException

from .logs import REQUEST_ID, request_id_from
from .metrics import Metrics
from .problems import MEDIA_TYPE, problem_body

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

access_log = logging.getLogger("ragbench.serve.access")
log = logging.getLogger("ragbench.serve")

SECURITY_HEADERS = [(b"x-content-type-options", b"nosniff"), (b"x-frame-options", b"DENY"),
                    (b"referrer-policy", b"no-referrer"), (b"cache-control", b"no-store")]


class BodyTooLarge(HTTPException):
    """Raised from ``receive`` (an HTTPException, so FastAPI's body parser passes it on as a 413)."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"request bodies are limited to {limit} bytes (serve.max_body_bytes).")


class RequestMiddleware:
    def __init__(self, app: ASGIApp, metrics: Metrics, max_body_bytes: int) -> None:
        self.app = app
        self.metrics = metrics
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        rid = request_id_from(headers.get("x-request-id"))
        token = REQUEST_ID.set(rid)
        scope.setdefault("state", {})["request_id"] = rid
        started = time.perf_counter()
        status = {"code": 500, "sent": False}
        rid_header = (b"x-request-id", rid.encode("latin-1"))

        async def send_wrapped(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = int(message["status"])
                status["sent"] = True
                message["headers"] = list(message.get("headers", [])) + [rid_header] + SECURITY_HEADERS
            await send(message)

        seen = 0

        async def receive_limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body_bytes:
                    raise BodyTooLarge(self.max_body_bytes)
            return message

        try:
            length = headers.get("content-length")
            if length is not None and length.isdigit() and int(length) > self.max_body_bytes:
                await self._problem(send_wrapped, 413, BodyTooLarge(self.max_body_bytes).detail)
            else:
                await self.app(scope, receive_limited, send_wrapped)
        except BodyTooLarge as exc:
            if not status["sent"]:
                await self._problem(send_wrapped, 413, exc.detail)
        except Exception:
            log.exception("unhandled error")
            if not status["sent"]:
                await self._problem(send_wrapped, 500, f"unexpected server error; see the server log for request "
                                                       f"{rid}.")
        finally:
            elapsed = time.perf_counter() - started
            route = getattr(scope.get("route"), "path", None) or "unmatched"
            self.metrics.observe(route, scope.get("method", ""), status["code"], elapsed)
            access_log.info("request", extra={"method": scope.get("method"), "path": scope.get("path"),
                                              "route": route, "status": status["code"],
                                              "duration_ms": round(elapsed * 1000, 2),
                                              "principal": scope["state"].get("principal")})
            REQUEST_ID.reset(token)

    @staticmethod
    async def _problem(send: Send, status: int, detail: str) -> None:
        body = json.dumps(problem_body(status, detail)).encode("utf-8")
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", MEDIA_TYPE.encode()), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
