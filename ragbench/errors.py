"""Typed errors. Every message says what was expected, what was found, and the fix."""
from __future__ import annotations


class RagbenchError(Exception):
    """Base class of every error ragbench raises on purpose."""


class ConfigError(RagbenchError, ValueError):
    """A configuration value or file is invalid."""


class SchemaError(RagbenchError, ValueError):
    """A table (DataFrame) has missing or extra columns, or bad values."""


class DataError(RagbenchError, ValueError):
    """Input data (corpus, queries, qrels, golden files, documents) is malformed."""


class StoreError(RagbenchError):
    """The SQLite knowledge store cannot be opened or written."""


class ModelError(RagbenchError):
    """An embedding or chat model cannot be loaded or answered badly."""


class PermissionDenied(RagbenchError):
    """A principal may not perform the requested action (or is unknown)."""


class BudgetExceeded(RagbenchError):
    """A tenant's daily request, token or cost budget is used up."""


class NetworkError(RagbenchError):
    """A remote server could not be reached or answered with an error after retries."""


class TrackingError(RagbenchError):
    """MLflow tracking failed; results were still saved locally."""


def expect(condition: bool, error: type[RagbenchError], message: str) -> None:
    """Raise ``error(message)`` unless ``condition`` holds (user input is checked with raise, never assert)."""
    if not condition:
        raise error(message)
