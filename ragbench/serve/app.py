"""The FastAPI application: :func:`create_app` (used by tests and the command) and :func:`app_from_env` (the
factory every uvicorn worker calls; it reads the settings the command put in ``RAGBENCH_SERVE_SETTINGS``)."""
from __future__ import annotations

import logging
import os
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from .. import __version__
from . import problems
from .auth import Authenticator
from .metrics import Metrics
from .middleware import RequestMiddleware
from .page import router as page_router
from .ratelimit import make_limiter
from .routes_answer import router as answer_router
from .routes_hub import router as hub_router
from .routes_ops import router as ops_router
from .settings import SECRET_ENV, ServeSettings
from .state import ServeState
from .tracing import Tracer

log = logging.getLogger("ragbench.serve")


def authenticator(settings: ServeSettings, secret: str | None = None) -> Authenticator:
    """The token / API-key checker of ``settings``; ``secret`` defaults to ``$RAGBENCH_JWT_SECRET``. Raises
    :class:`~ragbench.errors.ConfigError` when there is no way to authenticate or a key file is missing."""
    serve = settings.serve_config()
    return Authenticator.from_files(secret if secret is not None else os.environ.get(SECRET_ENV), serve.jwt_public_key,
                                    serve.jwt_issuer, serve.jwt_audience, serve.api_keys, serve.jwt_leeway_seconds)


def create_app(settings: ServeSettings, secret: str | None = None, warm_in_background: bool = True) -> FastAPI:
    """An app over ``settings``. Configuration errors (no way to authenticate, a missing key file, a bad config)
    raise here, before anything listens."""
    serve = settings.serve_config()
    auth = authenticator(settings, secret)
    tracer = Tracer().setup(serve.otlp_endpoint)
    state = ServeState(settings, tracer)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if warm_in_background:
            threading.Thread(target=state.warm, name="warm-up", daemon=True).start()
        else:
            state.warm()
        log.info("serving", extra={"store": settings.store, "hub": settings.hub, "retriever": state.default_mode,
                                   "pid": os.getpid()})
        yield
        state.close()
        limiter.close()

    app = FastAPI(title="ragbench", version=__version__, lifespan=lifespan,
                  description="Grounded answers with permissions, the research hub and EE-RAG chat (docs/serve.md).")
    metrics = Metrics(decided_by=serve.decided_by_metrics)
    app.state.ragbench = state
    app.state.auth = auth
    app.state.limiter = limiter = make_limiter(settings.store, serve.rate_limit_per_minute)
    app.state.metrics = metrics
    problems.install(app)
    for router in (page_router, ops_router, answer_router, hub_router):
        app.include_router(router)
    _include_eerag(app)
    app.add_middleware(RequestMiddleware, metrics=metrics, max_body_bytes=serve.max_body_bytes)
    return app


def _include_eerag(app: FastAPI) -> None:
    try:
        from .routes_eerag import router
    except ImportError:  # the EE-RAG conversation system is not available in this build
        return
    app.include_router(router)


def app_from_env() -> FastAPI:
    """The uvicorn factory: ``uvicorn ragbench.serve.app:app_from_env --factory``."""
    return create_app(ServeSettings.from_env())
