"""JSON log lines carrying the request id.

The request id lives in a context variable set by the middleware; :class:`JsonFormatter` adds it to every record
formatted while a request (or a research job started by one) runs, so one ``grep`` finds everything a request did.
Log lines hold ids and numbers only, never question or document text.
"""
from __future__ import annotations

import contextvars
import json
import logging
import re
import uuid
from datetime import UTC, datetime
from typing import Any

REQUEST_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar("ragbench_request_id", default=None)
#: Accepted incoming ``X-Request-ID`` values; anything else is replaced (ids end up in logs and headers).
_VALID_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
# Record attributes that are not fields of a line (uvicorn's color_message duplicates msg with terminal escapes).
_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime", "taskName", "color_message"}


def request_id_from(header: str | None) -> str:
    """The caller's id when it is a short token of safe characters, else a new random one."""
    if header and _VALID_ID.match(header):
        return header
    return uuid.uuid4().hex


def current_request_id() -> str | None:
    return REQUEST_ID.get()


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, msg, pid, request_id and any ``extra=`` fields."""

    def format(self, record: logging.LogRecord) -> str:
        ts = datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")
        out: dict[str, Any] = {"ts": ts, "level": record.levelname, "logger": record.name,
                               "msg": record.getMessage(), "pid": record.process}  # which worker wrote it
        rid = getattr(record, "request_id", None) or REQUEST_ID.get()
        if rid:
            out["request_id"] = rid
        for key, value in vars(record).items():
            if key not in _STANDARD and key not in out and not key.startswith("_"):
                out[key] = value if isinstance(value, (str, int, float, bool, type(None))) else str(value)
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False)


def log_config(level: str = "INFO") -> dict[str, Any]:
    """A ``logging.config.dictConfig`` for uvicorn and ragbench: JSON on stderr; uvicorn's access log is off
    (the middleware writes one line per request instead, with the request id)."""
    handler = {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}
    return {
        "version": 1, "disable_existing_loggers": False,
        "formatters": {"json": {"()": "ragbench.serve.logs.JsonFormatter"}},
        "handlers": {"stderr": handler},
        "loggers": {"uvicorn": {"handlers": ["stderr"], "level": level, "propagate": False},
                    "uvicorn.error": {"handlers": ["stderr"], "level": level, "propagate": False},
                    "uvicorn.access": {"handlers": [], "level": "WARNING", "propagate": False},
                    "ragbench": {"handlers": ["stderr"], "level": level, "propagate": False}},
    }
