"""The indexed chunks of a retriever and the one place that turns a principal into a mask of readable rows.

Every retriever keeps a :class:`ChunkTable` next to its scoring structure (row ``i`` of the BM25 matrix or the
embedding matrix is chunk ``i`` here). ACLs are stored per row as a small integer code into the list of distinct
ACLs, so a principal's mask costs one ``Acl.allows`` call per distinct ACL plus one numpy gather.
"""
from __future__ import annotations

from typing import Iterable, Mapping, Sequence

import numpy as np

from ..errors import ConfigError, DataError
from ..schema import Acl, Chunk, Hit, Principal
from .hits import Fields, Hits, make_hit

#: ACL code of a chunk whose document has no ACL: visible to unrestricted callers only.
NO_ACL = -1


class ChunkTable:
    """Append-only table of chunks with their document ACLs and titles."""

    def __init__(self) -> None:
        self.chunks: list[Chunk] = []
        self.titles: dict[str, str] = {}
        self._ids: dict[str, int] = {}
        self._acl_list: list[Acl] = []
        self._acl_code: dict[Acl, int] = {}
        self._codes = np.empty(0, dtype=np.int32)
        # row → the Hit fields that do not depend on the query: (chunk_id, doc_id, text, title, start, end)
        self._fields: list[Fields] = []
        self._docs: set[str] = set()  # doc ids with at least one row (to know when a title change touches rows)

    def __len__(self) -> int:
        return len(self.chunks)

    def validate_new(self, chunks: Sequence[Chunk]) -> None:
        """Raise :class:`DataError` (before anything is added) when a chunk id repeats or is already indexed."""
        seen: set[str] = set()
        for c in chunks:
            if not isinstance(c, Chunk):
                raise DataError(f"expected Chunk records, found {type(c).__name__}. "
                                "Fix: pass ragbench.schema.Chunk objects.")
            if c.chunk_id in seen or c.chunk_id in self._ids:
                raise DataError(f"duplicate chunk id {c.chunk_id!r}. Fix: chunk ids must be unique; "
                                "de-duplicate the input or build a new index.")
            seen.add(c.chunk_id)

    def add(self, chunks: Sequence[Chunk], acls: Mapping[str, Acl] | None = None,
            titles: Mapping[str, str] | None = None) -> None:
        """Append chunks (call :meth:`validate_new` first); the ACL of each row is looked up by ``doc_id``."""
        acls = acls or {}
        codes = np.empty(len(chunks), dtype=np.int32)
        for i, c in enumerate(chunks):
            acl = acls.get(c.doc_id)
            if acl is None:
                codes[i] = NO_ACL
            else:
                code = self._acl_code.get(acl)
                if code is None:
                    code = self._acl_code[acl] = len(self._acl_list)
                    self._acl_list.append(acl)
                codes[i] = code
            self._ids[c.chunk_id] = len(self.chunks)
            self.chunks.append(c)
        self._codes = np.concatenate([self._codes, codes])
        if titles:
            retitled = {d for d, t in titles.items() if d in self._docs and self.titles.get(d, "") != t}
            self.titles.update(titles)
            if retitled:  # rare: a later add() renamed an indexed document; its rows' titles change
                self._fields = [f if f[1] not in retitled else (*f[:3], self.titles[f[1]], *f[4:])
                                for f in self._fields]
        get_title = self.titles.get
        self._fields.extend((c.chunk_id, c.doc_id, c.text, get_title(c.doc_id, ""), c.start, c.end) for c in chunks)
        self._docs.update(c.doc_id for c in chunks)

    def row_of(self, chunk_id: str) -> int | None:
        return self._ids.get(chunk_id)

    def mask(self, principal: Principal | None) -> np.ndarray | None:
        """Boolean mask of the rows ``principal`` may read; ``None`` means every row (unrestricted caller)."""
        if principal is None:
            return None
        allowed = np.array([acl.allows(principal) for acl in self._acl_list] + [False], dtype=bool)
        # NO_ACL (-1) indexes the trailing False: a document without an ACL is hidden from principals.
        return allowed[self._codes]

    def hits(self, rows: np.ndarray, scores: np.ndarray) -> Hits:
        """The hits for ``rows`` (already in rank order) with their ``scores``, as a lazy :class:`Hits` (O(1) to
        create; each ordinary, frozen :class:`Hit` equal to ``Hit(chunk_id, doc_id, score, rank, text, title,
        start, end)`` is built on first read). ``.tolist()`` gives an eager list."""
        return Hits(self._fields, rows, scores)


def rescored(ranked: Iterable[tuple[Hit, float]]) -> list[Hit]:
    """Copies of the hits with new scores and ranks 0, 1, … in the given order (every other field kept), built
    by :func:`~ragbench.retrieval.hits.make_hit`; equal to ``dataclasses.replace(hit, score=score, rank=rank)``."""
    return [make_hit((h.chunk_id, h.doc_id, h.text, h.title, h.start, h.end), float(s), rank)
            for rank, (h, s) in enumerate(ranked)]


def check_k(k: int) -> None:
    """Reject a non-positive or non-integer ``k`` with a typed error."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k <= 0:
        raise ConfigError(f"k must be a positive integer, found {k!r}. Fix: ask for at least one result.")


def top_k(rows: np.ndarray | None, scores: np.ndarray, k: int, positive: bool = False
          ) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best ``(rows, scores)``, best first; ties go to the lower row (earlier indexed chunk).

    ``rows=None`` means ``rows = arange(len(scores))``; ``positive=True`` ranks only scores > 0. ``np.partition``
    finds the k-th best score in O(n); every score at least as good (the k best and any rows tied with the k-th)
    is then sorted by (score descending, row), so the tie-break is by row whatever the partition order.
    """
    n = len(scores)
    if n == 0:
        return (np.empty(0, dtype=np.int64) if rows is None else rows[:0]), scores[:0]
    part: np.ndarray | None = None
    if k < n:
        kth = np.partition(scores, n - k)[n - k]
        if not positive or kth > 0:
            part = np.flatnonzero(scores >= kth)
    if part is None:  # every score competes (fewer than k, or fewer than k positive ones)
        part = np.flatnonzero(scores > 0) if positive else np.arange(n)
    pos = part if rows is None else rows[part]
    best = scores[part]
    order = np.lexsort((pos, -best))[:k]
    return pos[order], best[order]
