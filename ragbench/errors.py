"""Typed errors. Every message says what was expected, what was found, and the fix.

``exit_status`` is the command-line exit status an error ends a command with (``ragbench.cli.main``; docs/design.md
"Exit statuses"): 2 for bad input (the command refused to run; fix the file or option the message names), 1 for a
failure outside the input (a server, a model, tracking) that a later run may not meet.
"""
from __future__ import annotations

import importlib
from types import ModuleType

#: Exit statuses of every command: success; the job ran but recorded failures (failed trials, source errors, an
#: unreachable server); bad input (a typed error names the file or field and the fix; nothing ran).
EXIT_OK, EXIT_FAILURES, EXIT_BAD_INPUT = 0, 1, 2


class RagbenchError(Exception):
    """Base class of every error ragbench raises on purpose."""

    exit_status: int = EXIT_BAD_INPUT


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

    exit_status = EXIT_FAILURES


class PermissionDenied(RagbenchError):
    """A principal may not perform the requested action (or is unknown)."""


class BudgetExceeded(RagbenchError):
    """A tenant's daily request, token or cost budget is used up."""

    exit_status = EXIT_FAILURES


class NetworkError(RagbenchError):
    """A remote server could not be reached or answered with an error after retries."""

    exit_status = EXIT_FAILURES


class TrackingError(RagbenchError):
    """MLflow tracking failed; results were still saved locally."""

    exit_status = EXIT_FAILURES


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
