"""Structured decision logs shared by EE-RAG and DCS.

Every decision goes through a Python logger named ``ragbench.dcs.<Label>`` with one of the source's section labels
(Pipeline, Classify, Assemble, DCN, Merge, Influence, Register), so users filter with ordinary logging config, and
renders as the source's line format ``[DCS HH:mm:ss.fff] <Label> > <message>``. :class:`DecisionLog` captures them
for a notebook as a DataFrame.
"""
from __future__ import annotations

import logging
from datetime import datetime, timezone
from typing import Any

LABELS = ("Pipeline", "Classify", "Assemble", "DCN", "Merge", "Influence", "Register", "FunctionHash")
ROOT = "ragbench.dcs"


def decision_logger(label: str) -> logging.Logger:
    """The logger of one section label."""
    if label not in LABELS:
        raise ValueError(f"unknown decision-log label {label!r}; expected one of {LABELS}")
    return logging.getLogger(f"{ROOT}.{label}")


def log_decision(label: str, message: str, **fields: Any) -> None:
    """Log one decision at DEBUG with structured ``fields`` attached to the record (``record.fields``)."""
    decision_logger(label).debug(message, extra={"fields": fields, "label": label})


class DecisionFormatter(logging.Formatter):
    """``[DCS HH:mm:ss.fff] <Label> > <message>`` (UTC)."""

    def format(self, record: logging.LogRecord) -> str:
        t = datetime.fromtimestamp(record.created, tz=timezone.utc)
        label = getattr(record, "label", record.name.rsplit(".", 1)[-1])
        return f"[DCS {t:%H:%M:%S}.{t.microsecond // 1000:03d}] {label} > {record.getMessage()}"


class DecisionLog(logging.Handler):
    """Collects decision records while installed: ``with DecisionLog() as log: ...; log.frame()``."""

    def __init__(self, labels: tuple[str, ...] = LABELS) -> None:
        super().__init__(level=logging.DEBUG)
        self.labels = set(labels)
        self.records: list[logging.LogRecord] = []
        self.setFormatter(DecisionFormatter())
        self._old_level: int | None = None

    def emit(self, record: logging.LogRecord) -> None:
        label = getattr(record, "label", record.name.rsplit(".", 1)[-1])
        if label in self.labels:
            self.records.append(record)

    def __enter__(self) -> "DecisionLog":
        root = logging.getLogger(ROOT)
        self._old_level = root.level
        root.setLevel(logging.DEBUG)
        root.addHandler(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        root = logging.getLogger(ROOT)
        root.removeHandler(self)
        if self._old_level is not None:
            root.setLevel(self._old_level)

    def lines(self) -> list[str]:
        return [self.format(r) for r in self.records]

    def frame(self) -> Any:
        """A DataFrame with columns time, label, message, fields."""
        import pandas as pd

        rows = [{"time": datetime.fromtimestamp(r.created, tz=timezone.utc),
                 "label": getattr(r, "label", r.name.rsplit(".", 1)[-1]),
                 "message": r.getMessage(), "fields": getattr(r, "fields", {})} for r in self.records]
        return pd.DataFrame(rows, columns=["time", "label", "message", "fields"])
