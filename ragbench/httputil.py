"""Small HTTP helpers shared by the network clients (chat models, web search, page fetching)."""
from __future__ import annotations

import email.utils
import time


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """``Retry-After`` as seconds: delta-seconds, or an HTTP date relative to ``now`` (default: the wall clock);
    ``None`` when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))
