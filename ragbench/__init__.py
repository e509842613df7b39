"""ragbench: a workbench for retrieval-augmented generation research.

Importing the package is cheap; subpackages load their heavy dependencies on first use.
"""
from __future__ import annotations

from .config import RagbenchConfig, load_config
from .errors import (ConfigError, DataError, ModelError, PermissionDenied, RagbenchError, SchemaError,
                     StoreError)
from .schema import Acl, Chunk, Classification, Document, Hit, Message, Principal

__version__ = "0.1.0"

__all__ = [
    "__version__", "RagbenchConfig", "load_config",
    "RagbenchError", "ConfigError", "DataError", "ModelError", "PermissionDenied", "SchemaError", "StoreError",
    "Acl", "Chunk", "Classification", "Document", "Hit", "Message", "Principal",
]
