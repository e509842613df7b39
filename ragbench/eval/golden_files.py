"""Reading the files of a golden folder (:mod:`ragbench.eval.golden`): UTF-8 text, YAML with the line of every
key, ``principals.yaml`` and the ``docs/*.md`` documents with their front matter, and the hash of the data files.

Every problem is a :class:`DataError` naming the file, the 1-based line and the field, with the fix
(:func:`fail`); the questions, which need the corpus and the principals, are checked in :mod:`ragbench.eval.golden`.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import yaml

from ..errors import DataError
from ..schema import Acl, Classification, Document, Principal
from ..text import read_text_file

_DOC_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_CLASSES = [c.name.title() for c in Classification]


# ------------------------------------------------------------------------------------------------- helpers


def fail(path: Path, line: int, fieldname: str, problem: str, fix: str) -> DataError:
    """The error for ``path:line``, field ``fieldname``: what is wrong and how to fix it."""
    return DataError(f"{path}:{line}: field {fieldname!r}: {problem}. Fix: {fix}.")


def _line_map(node: yaml.Node | None, offset: int, prefix: tuple = ()) -> dict[tuple, int]:
    """Path (keys / list indices) → 1-based line, from a composed YAML node tree."""
    lines: dict[tuple, int] = {}
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            path = prefix + (key.value,)
            lines[path] = key.start_mark.line + 1 + offset
            lines.update(_line_map(value, offset, path))
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            lines[prefix + (i,)] = item.start_mark.line + 1 + offset
            lines.update(_line_map(item, offset, prefix + (i,)))
    return lines


def _parse_yaml(text: str, path: Path, offset: int, what: str) -> tuple[Any, dict[tuple, int]]:
    try:
        data = yaml.safe_load(text)
        lines = _line_map(yaml.compose(text), offset)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = (mark.line + 1 + offset) if mark is not None else 1 + offset
        raise fail(path, line, what, f"invalid YAML ({getattr(exc, 'problem', exc)})",
                   "correct the YAML syntax (indentation, quotes, colons)") from None
    return data, lines


def _iso(value: Any) -> str:
    """A YAML date or timestamp as an ISO 8601 string; anything else JSON cannot hold is a :class:`TypeError`."""
    if isinstance(value, dt.date):  # a datetime is a date too
        return value.isoformat()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _str_list(value: Any, path: Path, line: int, name: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise fail(path, line, name, f"expected a list of non-empty strings, found {value!r}",
                   "write a YAML/JSON list such as [employee] or []")
    return list(value)


def _classification(value: Any, path: Path, line: int, name: str) -> Classification:
    if not isinstance(value, str) or value.strip().title() not in _CLASSES:
        raise fail(path, line, name, f"unknown classification {value!r}", f"use one of {_CLASSES}")
    return Classification.parse(value)


# ------------------------------------------------------------------------------------------------- principals


def load_principals(path: Path) -> dict[str, Principal]:
    if not path.is_file():
        raise fail(path, 0, "principals", "file not found", "create principals.yaml (see data/golden/README.md)")
    data, lines = _parse_yaml(read_text_file(path), path, 0, "principals")
    if not isinstance(data, dict) or not isinstance(data.get("principals"), list) or not data["principals"]:
        raise fail(path, 1, "principals", "expected a top-level 'principals:' list with at least one entry",
                   "start the file with 'principals:' followed by '- user_id: …' items")
    out: dict[str, Principal] = {}
    for i, item in enumerate(data["principals"]):
        at = lines.get(("principals", i), 1)
        if not isinstance(item, dict):
            raise fail(path, at, "principals", f"entry {i} is {type(item).__name__}, not a mapping",
                       "write each principal as a mapping with user_id, roles, departments, max_classification")
        for key in ("user_id", "roles", "departments", "max_classification"):
            if key not in item:
                raise fail(path, at, key, "missing", f"add '{key}:' to this principal")
        line = lambda k: lines.get(("principals", i, k), at)  # noqa: E731, B023 - tiny lookup, used in this iteration
        uid = item["user_id"]
        if not isinstance(uid, str) or not uid.strip():
            raise fail(path, line("user_id"), "user_id", f"expected a non-empty string, found {uid!r}",
                       "give the principal an id such as eval-staff")
        if uid in out:
            raise fail(path, line("user_id"), "user_id", f"duplicate principal {uid!r}",
                       "give every principal a unique user_id")
        roles = _str_list(item["roles"], path, line("roles"), "roles")
        depts = _str_list(item["departments"], path, line("departments"), "departments")
        level = _classification(item["max_classification"], path, line("max_classification"),
                                "max_classification")
        out[uid] = Principal.make(uid, roles, depts, level)
    return out


# ------------------------------------------------------------------------------------------------- documents


def _load_document(path: Path, folder: Path) -> tuple[Document, int]:
    """One Markdown document; returns it with the line of its ``id`` field (for duplicate reports)."""
    text = read_text_file(path)
    all_lines = text.splitlines()
    if not all_lines or all_lines[0].strip() != "---":
        raise fail(path, 1, "front matter", "the file does not start with a '---' line",
                   "begin the file with a YAML front-matter block between two '---' lines")
    try:
        end = next(i for i in range(1, len(all_lines)) if all_lines[i].strip() == "---")
    except StopIteration:
        raise fail(path, 1, "front matter", "no closing '---' line",
                   "close the front matter with a '---' line before the body") from None
    meta, lines = _parse_yaml("\n".join(all_lines[1:end]), path, 1, "front matter")
    if not isinstance(meta, dict):
        raise fail(path, 2, "front matter", f"expected a mapping, found {type(meta).__name__}",
                   "write 'key: value' lines between the '---' markers")
    line = lambda *k: lines.get(k, 2)  # noqa: E731
    for key in ("id", "title", "department", "acl", "fictional"):
        if key not in meta:
            raise fail(path, 2, key, "missing from the front matter", f"add '{key}:' to the front matter")
    doc_id = meta["id"]
    if not isinstance(doc_id, str) or not _DOC_ID.match(doc_id):
        raise fail(path, line("id"), "id", f"expected letters, digits, '.', '_' or '-', found {doc_id!r}",
                   "use an id such as hr-leave")
    for key in ("title", "department"):
        if not isinstance(meta[key], str) or not meta[key].strip():
            raise fail(path, line(key), key, f"expected a non-empty string, found {meta[key]!r}",
                       f"give the document a {key}")
    if meta["fictional"] is not True:
        raise fail(path, line("fictional"), "fictional", f"expected true, found {meta['fictional']!r}",
                   "golden documents must be invented; set 'fictional: true'")
    acl = meta["acl"]
    if not isinstance(acl, dict):
        raise fail(path, line("acl"), "acl", f"expected a mapping, found {acl!r}",
                   "write acl: {roles: [...], departments: [...], classification: Internal}")
    for key in ("roles", "departments", "classification"):
        if key not in acl:
            raise fail(path, line("acl"), f"acl.{key}", "missing", f"add '{key}:' under acl")
    roles = _str_list(acl["roles"], path, line("acl", "roles"), "acl.roles")
    depts = _str_list(acl["departments"], path, line("acl", "departments"), "acl.departments")
    level = _classification(acl["classification"], path, line("acl", "classification"), "acl.classification")
    body = "\n".join(all_lines[end + 1:]).strip()
    if not body:
        raise fail(path, end + 2, "body", "the document has no text after the front matter",
                   "write the document body below the closing '---'")
    # YAML reads an unquoted "valid_from: 2025-04-01" as a date; the store keeps JSON, so dates become ISO strings
    try:
        metadata = json.loads(json.dumps({k: v for k, v in meta.items() if k not in ("id", "title", "acl")},
                                         default=_iso, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise fail(path, 2, "front matter", f"a value cannot be stored ({exc})",
                   "quote the value as a string, or write a number, true/false, a list or a mapping") from None
    doc = Document(doc_id=doc_id, text=body, title=meta["title"].strip(),
                   source=path.relative_to(folder).as_posix(), acl=Acl.make(roles, depts, level),
                   metadata=metadata)
    return doc, line("id")


def load_documents(folder: Path) -> list[Document]:
    files = sorted((folder / "docs").glob("*.md"))
    if not files:
        raise fail(folder / "docs", 0, "documents", "no *.md documents found",
                   "put one Markdown file per document under docs/")
    docs: list[Document] = []
    seen: dict[str, Path] = {}
    for path in files:
        doc, id_line = _load_document(path, folder)
        if doc.doc_id in seen:
            raise fail(path, id_line, "id", f"duplicate document id {doc.doc_id!r} (also in {seen[doc.doc_id]})",
                       "give every document a unique id")
        seen[doc.doc_id] = path
        docs.append(doc)
    return docs


# ------------------------------------------------------------------------------------------------- hash


def hash_files(folder: Path) -> str:
    """sha256 of the data files (documents, principals, questions; the README is left out), names included."""
    h = hashlib.sha256()
    for path in sorted((folder / "docs").glob("*.md")) + [folder / "principals.yaml", folder / "questions.jsonl"]:
        h.update(path.relative_to(folder).as_posix().encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()
