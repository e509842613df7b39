"""Route dependencies: the authenticated, rate-limited principal and the process state."""
from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from ..schema import Principal
from .auth import Authenticator, AuthError
from .metrics import Metrics
from .problems import Problem
from .ratelimit import RateLimiter, SharedRateLimiter
from .state import ServeState


def state_of(request: Request) -> ServeState:
    return request.app.state.ragbench


def principal(request: Request) -> Principal:
    """The caller, from its token or API key (never from the body); 401 without valid credentials, 429 when its
    bucket is empty."""
    auth: Authenticator = request.app.state.auth
    try:
        who = auth.authenticate(request.headers.get("authorization"), request.headers.get("x-api-key"))
    except AuthError as exc:
        raise Problem(401, exc.detail, headers={"WWW-Authenticate": 'Bearer realm="ragbench"'}) from None
    request.scope.setdefault("state", {})["principal"] = who.user_id
    limiter: RateLimiter | SharedRateLimiter = request.app.state.limiter
    allowed, retry_after = limiter.allow(who.user_id)
    if not allowed:
        metrics: Metrics = request.app.state.metrics
        metrics.rate_limited.inc()
        raise Problem(429, f"rate limit of {int(limiter.capacity)} requests per minute exceeded for this principal; "
                           f"retry after {retry_after} s.", headers={"Retry-After": str(retry_after)})
    return who


#: The authenticated caller of a route: ``who: Caller``.
Caller = Annotated[Principal, Depends(principal)]
