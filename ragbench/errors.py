"""Typed errors. Every message says what was expected, what was found, and the fix."""
from __future__ import annotations

import importlib
from types import ModuleType


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


class MissingExtraError(RagbenchError, ImportError):
    """An optional package is not installed; the message names the ``pip install "ragbench[extra]"`` line."""


def require_extra(module: str, extra: str, purpose: str) -> ModuleType:
    """Import ``module`` of the optional ``extra``, or raise :class:`MissingExtraError` with the install line."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        missing = exc.name or module
        raise MissingExtraError(f"{purpose} needs the Python package {missing!r}, which is not installed. "
                                f'Fix: pip install "ragbench[{extra}]"') from None
