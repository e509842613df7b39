"""Permissions after retrieval: a post-filter against a fresh ACL lookup, and the principal registry.

Retrievers enforce ACLs before scoring; the answer layer checks again here, against the store's *current* ACLs
(``store.acl_of``), because an index may be stale (a document re-classified or deleted since it was indexed). The
Enterprise source wrote such a filter but no production path called it, and its store-level check compared only
classifications, ignoring roles and departments (seed-behaviour 3.8). Here the full ``Acl.allows`` rule applies, the
service always calls the filter, and it fails closed: an unknown document, a lookup error, or no principal at all
drops the chunk.
"""
from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Protocol, Sequence

import yaml

from ..errors import DataError, PermissionDenied, RagbenchError, SchemaError
from ..schema import Acl, Hit, Principal

log = logging.getLogger(__name__)


class AclSource(Protocol):
    def acl_of(self, doc_id: str) -> Acl | None: ...


AclLookup = Callable[[str], "Acl | None"]


def _lookup_of(source: "AclSource | AclLookup") -> AclLookup:
    fn = getattr(source, "acl_of", None)
    if callable(fn):
        return fn
    if callable(source):
        return source
    raise TypeError(f"expected a store with acl_of(doc_id) or a callable, found {type(source).__name__}")


def allowed_doc_ids(doc_ids: Iterable[str], principal: Principal | None, source: "AclSource | AclLookup") -> set[str]:
    """The subset of ``doc_ids`` the principal may read according to a fresh lookup (fails closed)."""
    lookup = _lookup_of(source)
    if principal is None:
        return set()
    ok: set[str] = set()
    for doc_id in set(doc_ids):
        try:
            acl = lookup(doc_id)
        except RagbenchError as exc:  # a lookup that fails must not let a chunk through
            log.warning("ACL lookup failed for a candidate (%s); dropping it", type(exc).__name__)
            continue
        if isinstance(acl, Acl) and acl.allows(principal):
            ok.add(doc_id)
    return ok


def post_filter(hits: Sequence[Hit], principal: Principal | None, source: "AclSource | AclLookup") -> list[Hit]:
    """Hits whose document the principal may read now, re-ranked from 0 in their original order.

    ``principal=None`` drops everything: the answer layer never serves an anonymous caller unrestricted."""
    ok = allowed_doc_ids((h.doc_id for h in hits), principal, source)
    kept = [h for h in hits if h.doc_id in ok]
    dropped = len(hits) - len(kept)
    if dropped:
        # Count only: ids or text of forbidden documents must never reach a log.
        log.info("ACL post-filter dropped %d of %d candidates", dropped, len(hits))
    return [replace(h, rank=i) for i, h in enumerate(kept)]


# ---------------------------------------------------------------------------------------------- principals


def principal_from_mapping(user_id: str, data: Mapping[str, Any] | None) -> Principal:
    """A principal from ``{roles, departments, max_classification}`` (``classification`` accepted too)."""
    data = dict(data or {})
    unknown = set(data) - {"user_id", "roles", "departments", "max_classification", "classification"}
    if unknown:
        raise DataError(f"principal {user_id!r}: unknown field(s) {sorted(unknown)}; expected roles, departments, "
                        "max_classification. Fix: remove or rename them.")
    for key in ("roles", "departments"):
        if isinstance(data.get(key), str):
            data[key] = [data[key]]
        if data.get(key) is not None and not isinstance(data[key], (list, tuple)):
            raise DataError(f"principal {user_id!r}: {key} must be a list of strings, found {data[key]!r}.")
    level = data.get("max_classification", data.get("classification", "Public"))
    try:
        return Principal.make(str(data.get("user_id", user_id)), data.get("roles"), data.get("departments"), level)
    except SchemaError as exc:
        raise DataError(f"principal {user_id!r}: {exc}") from None


class PrincipalRegistry:
    """Known principals by user id; looking up anyone else raises :class:`PermissionDenied`."""

    def __init__(self, principals: Mapping[str, Principal] | Iterable[Principal]) -> None:
        items = principals.values() if isinstance(principals, Mapping) else principals
        self._by_id: dict[str, Principal] = {}
        for p in items:
            if p.user_id in self._by_id:
                raise DataError(f"principal {p.user_id!r} is defined twice. Fix: keep one definition.")
            self._by_id[p.user_id] = p

    def __contains__(self, user_id: object) -> bool:
        return user_id in self._by_id

    def __len__(self) -> int:
        return len(self._by_id)

    def ids(self) -> list[str]:
        return sorted(self._by_id)

    def get(self, user_id: str) -> Principal:
        key = (user_id or "").strip()
        if key not in self._by_id:
            raise PermissionDenied(f"unknown principal {user_id!r}; expected one of {self.ids()}. "
                                   "Fix: pass a registered user id (or add it to the principals file).")
        return self._by_id[key]

    @classmethod
    def from_yaml(cls, path: str | Path) -> "PrincipalRegistry":
        """Read ``{principals: {id: {roles, departments, max_classification}}}`` or a list of such mappings with
        ``user_id`` (the top-level ``principals:`` key is optional)."""
        p = Path(path)
        if not p.is_file():
            raise DataError(f"principals file {p} does not exist. Fix: check the path.")
        try:
            data = yaml.safe_load(p.read_text(encoding="utf-8"))
        except UnicodeDecodeError as exc:
            raise DataError(f"principals file {p} is not UTF-8 text (byte offset {exc.start}). Fix: re-encode it "
                            "as UTF-8.") from None
        except yaml.YAMLError as exc:
            raise DataError(f"principals file {p} is not valid YAML: {exc}. Fix: correct the YAML syntax.") from None
        if isinstance(data, Mapping) and "principals" in data:
            data = data["principals"]
        return cls(parse_principals(data, str(p)))


def parse_principals(data: Any, where: str = "principals") -> list[Principal]:
    """Principals from a mapping ``id → fields`` or a list of mappings with ``user_id``."""
    if isinstance(data, Mapping):
        return [principal_from_mapping(str(k), v if isinstance(v, Mapping) else _bad(where, k, v))
                for k, v in data.items()]
    if isinstance(data, list):
        out = []
        for item in data:
            if not isinstance(item, Mapping) or not item.get("user_id"):
                raise DataError(f"{where}: every list item needs a user_id, found {item!r}.")
            out.append(principal_from_mapping(str(item["user_id"]), item))
        return out
    raise DataError(f"{where}: expected a mapping of user id → fields or a list, found {type(data).__name__}.")


def _bad(where: str, key: Any, value: Any) -> Mapping[str, Any]:
    raise DataError(f"{where}: principal {key!r} must map to roles/departments/max_classification, found {value!r}.")
