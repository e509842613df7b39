"""Text and markdown files as documents for the store (what ``ragbench index`` ingests).

Document id = the file path as given (POSIX form), title = the front matter's ``title``, else the first markdown
``# heading``, else the file name. A YAML front-matter block (``---`` lines around a mapping, at the top of a
markdown file: Jekyll, Hugo, Obsidian and the bundled golden format) is metadata, not text: it is kept in the
document's ``metadata["front_matter"]`` and left out of what is chunked and searched, and its ``acl`` (``roles``,
``departments``, ``classification``, as in the golden format, or the same keys at the top level) is the document's
ACL unless the command line gives one.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Sequence

import yaml

from ..errors import DataError, SchemaError
from ..schema import PUBLIC_ACL, Acl, Classification, Document
from ..text import read_text_file

SUFFIXES = (".txt", ".md", ".markdown", ".text")
_HEADING = re.compile(r"^\s{0,3}#\s+(.+?)\s*#*\s*$", re.M)


def collect_files(paths: Sequence[str]) -> list[Path]:
    """Text/markdown files named or found under folders, sorted within each folder; missing paths raise."""
    files: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            files.extend(sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in SUFFIXES))
        elif p.is_file():
            if p.suffix.lower() not in SUFFIXES:
                raise DataError(f"{p}: unsupported file type {p.suffix!r}; expected one of {', '.join(SUFFIXES)}. "
                                "Fix: convert it to text or markdown.")
            files.append(p)
        else:
            raise DataError(f"{p} does not exist. Fix: check the path.")
    if not files:
        raise DataError(f"no text or markdown files found in {list(paths)}. Fix: point at *.txt / *.md files.")
    return list(dict.fromkeys(files))


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """``(front matter, body)`` of a markdown text that opens with a YAML mapping between two ``---`` lines;
    ``({}, text)`` for any other text (a ``---`` rule over prose is not front matter). Values are made JSON-safe
    (dates become ISO strings) so they can be stored."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return {}, text
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        return {}, text
    try:
        meta = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError:
        return {}, text
    if not isinstance(meta, dict) or not meta:
        return {}, text
    return json.loads(json.dumps(meta, default=str)), "\n".join(lines[end + 1:]).lstrip("\n")


def front_matter_acl(meta: dict[str, Any], where: str) -> Acl | None:
    """The ACL a front matter declares (``acl: {roles, departments, classification}``, or those keys at its top
    level), or ``None``; a malformed one is a :class:`DataError` naming the file, never silently public."""
    acl = meta.get("acl")
    if acl is None:
        flat = {k: meta[k] for k in ("roles", "departments", "classification") if k in meta}
        if not flat:
            return None
        acl = flat
    if not isinstance(acl, dict) or not ({"roles", "departments", "classification"} & set(acl)):
        raise DataError(f"{where}: front matter 'acl' must be a mapping with roles, departments and/or "
                        f"classification, found {acl!r}. Fix: write acl: {{roles: [...], departments: [...], "
                        "classification: Internal}, or remove it and pass --roles/--classification.")

    def names(key: str) -> list[str]:
        value = acl.get(key) or []
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise DataError(f"{where}: front matter acl.{key} must be a list of names, found {value!r}. "
                            f"Fix: write {key}: [name, ...].")
        return value

    try:
        # no classification given: Acl.make's default (Internal), never Public
        level = acl["classification"] if "classification" in acl else Classification.INTERNAL
        return Acl.make(names("roles"), names("departments"), level)
    except SchemaError as exc:
        raise DataError(f"{where}: front matter acl: {exc}. Fix: use Public, Internal, Confidential or "
                        "Restricted.") from None


def front_matter_title(meta: dict[str, Any]) -> str | None:
    """The front matter's non-blank ``title``, stripped, or ``None``."""
    title = meta.get("title")
    return title.strip() if isinstance(title, str) and title.strip() else None


def title_of(path: Path, text: str) -> str:
    """The first markdown ``# heading`` of ``text``, else the file name without its suffix."""
    m = _HEADING.search(text)
    return m.group(1).strip() if m else path.stem


def documents_from_files(paths: Sequence[str], acl: Acl | None = PUBLIC_ACL) -> list[Document]:
    """Every file of :func:`collect_files` read (and checked: UTF-8 text) as a document; all files are read before
    anything is returned, so a bad file fails before a store is touched. Its ACL is ``acl``; with ``acl=None`` it is
    the front matter's, and public when the file declares none."""
    docs = []
    for f in collect_files(paths):
        text = read_text_file(f)
        meta, body = split_front_matter(text) if f.suffix.lower() in (".md", ".markdown") else ({}, text)
        if meta and not body.strip():
            raise DataError(f"{f}: the file has front matter but no text after it. Fix: write the document below "
                            "the closing '---', or leave the file out.")
        declared = front_matter_acl(meta, str(f)) if meta else None
        title = front_matter_title(meta) or title_of(f, body).strip()
        docs.append(Document(doc_id=f.as_posix(), text=body, title=title, source=str(f),
                             acl=acl if acl is not None else (declared or PUBLIC_ACL),
                             metadata={"front_matter": meta} if meta else {}))
    return docs
