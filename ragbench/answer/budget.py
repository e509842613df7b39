"""Per-tenant daily budgets, the answer log and user feedback, kept in the knowledge store.

Budget rule (Enterprise source ``UsageBudgetGuard``, seed-behaviour 3.12): per tenant and UTC day, a request is
refused with :class:`BudgetExceeded` when a positive limit is already reached — cost ≥ ``daily_limit_usd``,
requests ≥ ``daily_request_limit`` or tokens ≥ ``daily_token_limit`` (0 disables a limit). Prices are USD per
million tokens (input, output); local models cost 0.
"""
from __future__ import annotations

import json
import logging
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Mapping, Sequence

from ..errors import BudgetExceeded, DataError, PermissionDenied, StoreError

log = logging.getLogger(__name__)

SCHEMA = "answer.ledger"
DDL = """
CREATE TABLE IF NOT EXISTS usage_ledger (
    tenant TEXT NOT NULL,
    day TEXT NOT NULL,
    requests INTEGER NOT NULL DEFAULT 0,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant, day)
);
CREATE TABLE IF NOT EXISTS answer_log (
    answer_id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    tenant TEXT NOT NULL,
    created_at TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    model_id TEXT NOT NULL,
    retrieval_mode TEXT NOT NULL,
    refused INTEGER NOT NULL,
    refusal_reason TEXT,
    support_ratio REAL NOT NULL,
    cited_chunk_ids TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS answer_feedback (
    answer_id TEXT NOT NULL REFERENCES answer_log(answer_id),
    user_id TEXT NOT NULL,
    rating INTEGER NOT NULL,
    comment TEXT NOT NULL,
    created_at TEXT NOT NULL
);
"""

# The rule that decided each logged answer (``Answer.decided_by``), for the operator auditing refusals and feedback;
# a schema of its own so that a store made before it gets the column once.
DECIDED_BY_SCHEMA = "answer.log.decided_by"
DECIDED_BY_DDL = "ALTER TABLE answer_log ADD COLUMN decided_by TEXT;"
_LOG_COLUMNS = ("answer_id", "user_id", "tenant", "created_at", "prompt_version", "model_id", "retrieval_mode",
                "refused", "refusal_reason", "support_ratio", "cited_chunk_ids", "decided_by")

#: USD per million tokens (input, output). Model ids starting with a LOCAL_PREFIXES entry cost 0.
DEFAULT_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "text-embedding-3-small": (0.02, 0.0),
}
LOCAL_PREFIXES = ("extractive", "llama.cpp:", "template", "recording", "local")


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


class PriceBook:
    """Prices per model id; unknown hosted models are priced 0 with a warning (request/token limits still apply)."""

    def __init__(self, prices: Mapping[str, tuple[float, float]] | None = None) -> None:
        self.prices = dict(DEFAULT_PRICES if prices is None else prices)
        for model, pair in self.prices.items():
            if len(pair) != 2 or min(pair) < 0:
                raise DataError(f"price of {model!r} must be (input, output) USD per 1M tokens ≥ 0, found {pair!r}.")
        self._warned: set[str] = set()

    def cost(self, model_id: str, prompt_tokens: int, completion_tokens: int) -> float:
        if model_id.startswith(LOCAL_PREFIXES):
            return 0.0
        if model_id not in self.prices:
            if model_id not in self._warned:
                self._warned.add(model_id)
                log.warning("no price for model %r; counting its cost as 0", model_id)
            return 0.0
        p_in, p_out = self.prices[model_id]
        return (prompt_tokens * p_in + completion_tokens * p_out) / 1_000_000


@dataclass(frozen=True)
class Usage:
    tenant: str
    day: str
    requests: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def _check_tenant(tenant: str) -> str:
    if not isinstance(tenant, str) or not tenant.strip():
        raise DataError(f"tenant must be a non-blank string, found {tenant!r}.")
    return tenant.strip()


class BudgetLedger:
    """Daily usage per tenant in the store; :meth:`check` before a request, :meth:`record` after it."""

    def __init__(self, store: Any, daily_limit_usd: float = 10.0, daily_request_limit: int = 500,
                 daily_token_limit: int = 0, prices: PriceBook | None = None,
                 clock: Callable[[], datetime] = _utc_now) -> None:
        if daily_limit_usd < 0 or daily_request_limit < 0 or daily_token_limit < 0:
            raise DataError("budget limits must be ≥ 0 (0 disables a limit), found "
                            f"{daily_limit_usd}, {daily_request_limit}, {daily_token_limit}.")
        self.store = store
        self.daily_limit_usd = daily_limit_usd
        self.daily_request_limit = daily_request_limit
        self.daily_token_limit = daily_token_limit
        self.prices = prices or PriceBook()
        self.clock = clock
        store.ensure_schema(SCHEMA, DDL, 1)

    def _day(self) -> str:
        return self.clock().astimezone(timezone.utc).strftime("%Y-%m-%d")

    def usage(self, tenant: str, day: str | None = None) -> Usage:
        tenant, day = _check_tenant(tenant), day or self._day()
        rows = self.store.query("SELECT requests, prompt_tokens, completion_tokens, cost_usd FROM usage_ledger "
                                "WHERE tenant = ? AND day = ?", (tenant, day))
        if not rows:
            return Usage(tenant, day, 0, 0, 0, 0.0)
        r = rows[0]
        return Usage(tenant, day, int(r[0]), int(r[1]), int(r[2]), float(r[3]))

    def check(self, tenant: str) -> Usage:
        """Raise :class:`BudgetExceeded` when the tenant has used up any of today's limits."""
        u = self.usage(tenant)
        over = []
        if self.daily_limit_usd > 0 and u.cost_usd >= self.daily_limit_usd:
            over.append(f"cost {u.cost_usd:.4f} USD ≥ {self.daily_limit_usd} USD")
        if self.daily_request_limit > 0 and u.requests >= self.daily_request_limit:
            over.append(f"requests {u.requests} ≥ {self.daily_request_limit}")
        if self.daily_token_limit > 0 and u.tokens >= self.daily_token_limit:
            over.append(f"tokens {u.tokens} ≥ {self.daily_token_limit}")
        if over:
            raise BudgetExceeded(f"tenant {u.tenant!r} reached its daily budget on {u.day} (UTC): "
                                 f"{'; '.join(over)}. Fix: wait for the next UTC day or raise the answer.daily_* "
                                 "limits.")
        return u

    def record(self, tenant: str, model_id: str, prompt_tokens: int, completion_tokens: int) -> float:
        """Add one request and its tokens; returns its cost in USD."""
        tenant = _check_tenant(tenant)
        if prompt_tokens < 0 or completion_tokens < 0:
            raise DataError(f"token counts must be ≥ 0, found {prompt_tokens} and {completion_tokens}.")
        cost = self.prices.cost(model_id, prompt_tokens, completion_tokens)
        with self.store.transaction() as conn:
            conn.execute(
                "INSERT INTO usage_ledger (tenant, day, requests, prompt_tokens, completion_tokens, cost_usd) "
                "VALUES (?, ?, 1, ?, ?, ?) ON CONFLICT (tenant, day) DO UPDATE SET requests = requests + 1, "
                "prompt_tokens = prompt_tokens + excluded.prompt_tokens, "
                "completion_tokens = completion_tokens + excluded.completion_tokens, "
                "cost_usd = cost_usd + excluded.cost_usd",
                (tenant, self._day(), int(prompt_tokens), int(completion_tokens), cost))
        return cost


class AnswerLog:
    """Which answer was given to whom (ids and scores only, never text), what decided it, and the feedback on it."""

    def __init__(self, store: Any) -> None:
        self.store = store
        store.ensure_schema(SCHEMA, DDL, 1)
        try:
            store.ensure_schema(DECIDED_BY_SCHEMA, DECIDED_BY_DDL, 1)
        except StoreError:
            # Another process added the column between this one's version check and its ALTER: nothing to do.
            if "decided_by" not in {str(r[1]) for r in store.query("PRAGMA table_info(answer_log)")}:
                raise

    def add(self, user_id: str, tenant: str, prompt_version: str, model_id: str, retrieval_mode: str,
            refused: bool, refusal_reason: str | None, support_ratio: float,
            cited_chunk_ids: Sequence[str], answer_id: str | None = None, decided_by: str | None = None) -> str:
        """Log one answer; ``decided_by``: the rule that decided it (``Answer.decided_by``; ``None`` unknown)."""
        answer_id = answer_id or uuid.uuid4().hex
        with self.store.transaction() as conn:
            conn.execute(f"INSERT INTO answer_log ({', '.join(_LOG_COLUMNS)}) VALUES "
                         f"({', '.join('?' * len(_LOG_COLUMNS))})",
                         (answer_id, user_id, tenant, _utc_now().isoformat(), prompt_version, model_id,
                          retrieval_mode, int(refused), refusal_reason, float(support_ratio),
                          json.dumps(list(cited_chunk_ids)), decided_by or None))
        return answer_id

    def get(self, answer_id: str) -> dict[str, Any] | None:
        rows = self.store.query(f"SELECT {', '.join(_LOG_COLUMNS)} FROM answer_log WHERE answer_id = ?",
                                (answer_id,))
        if not rows:
            return None
        row = dict(zip(_LOG_COLUMNS, tuple(rows[0])))
        row["refused"] = bool(row["refused"])
        row["cited_chunk_ids"] = json.loads(row["cited_chunk_ids"])
        return row

    def feedback(self, answer_id: str, user_id: str, rating: int, comment: str = "") -> None:
        """Store a rating (1–5) and comment; only the principal who got the answer may rate it."""
        if isinstance(rating, bool) or not isinstance(rating, int) or not 1 <= rating <= 5:
            raise DataError(f"rating must be an integer from 1 to 5, found {rating!r}.")
        if not isinstance(comment, str):
            raise DataError(f"comment must be a string, found {type(comment).__name__}.")
        entry = self.get(answer_id)
        if entry is None:
            raise DataError(f"unknown answer id {answer_id!r}. Fix: use the answer_id of an Answer.")
        if entry["user_id"] != user_id:
            raise PermissionDenied(f"user {user_id!r} may not rate answer {answer_id!r}: it was given to another "
                                   "user. Fix: rate your own answers.")
        with self.store.transaction() as conn:
            conn.execute("INSERT INTO answer_feedback VALUES (?, ?, ?, ?, ?)",
                         (answer_id, user_id, rating, comment, _utc_now().isoformat()))

    def feedback_for(self, answer_id: str) -> list[tuple[int, str]]:
        return [(int(r[0]), str(r[1])) for r in self.store.query(
            "SELECT rating, comment FROM answer_feedback WHERE answer_id = ? ORDER BY rowid", (answer_id,))]
