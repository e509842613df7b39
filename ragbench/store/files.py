"""Text and markdown files as documents for the store (what ``ragbench index`` ingests).

Document id = the file path as given (POSIX form), title = the first markdown ``# heading`` or the file name.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Sequence

from ..errors import DataError
from ..schema import PUBLIC_ACL, Acl, Document
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


def title_of(path: Path, text: str) -> str:
    """The first markdown ``# heading`` of ``text``, else the file name without its suffix."""
    m = _HEADING.search(text)
    return m.group(1).strip() if m else path.stem


def documents_from_files(paths: Sequence[str], acl: Acl = PUBLIC_ACL) -> list[Document]:
    """Every file of :func:`collect_files` read (and checked: UTF-8 text) as a document with ``acl``; all files are
    read before anything is returned, so a bad file fails before a store is touched."""
    docs = []
    for f in collect_files(paths):
        text = read_text_file(f)
        docs.append(Document(doc_id=f.as_posix(), text=text, title=title_of(f, text), source=str(f), acl=acl))
    return docs
