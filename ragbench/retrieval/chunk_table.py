"""The indexed chunks of a retriever and the one place that turns a principal into a mask of readable rows.

Every retriever keeps a :class:`ChunkTable` next to its scoring structure (row ``i`` of the BM25 matrix or the
embedding matrix is chunk ``i`` here). ACLs are stored per row as a small integer code into the list of distinct
ACLs, so a principal's mask costs one ``Acl.allows`` call per distinct ACL plus one numpy gather.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from ..errors import ConfigError, DataError
from ..schema import Acl, Chunk, Hit, Principal

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
        self._row_fields: dict[int, dict] = {}  # row → the Hit fields that do not depend on the query

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
            self.titles.update(titles)
            self._row_fields.clear()  # a title may have changed

    def row_of(self, chunk_id: str) -> int | None:
        return self._ids.get(chunk_id)

    def mask(self, principal: Principal | None) -> np.ndarray | None:
        """Boolean mask of the rows ``principal`` may read; ``None`` means every row (unrestricted caller)."""
        if principal is None:
            return None
        allowed = np.array([acl.allows(principal) for acl in self._acl_list] + [False], dtype=bool)
        # NO_ACL (-1) indexes the trailing False: a document without an ACL is hidden from principals.
        return allowed[self._codes]

    def hits(self, rows: np.ndarray, scores: np.ndarray) -> list[Hit]:
        """Hits for ``rows`` (already in rank order) with their ``scores``.

        Built in batch: each row's constant fields are prepared once (:meth:`_row_fields`) and each Hit's
        ``__dict__`` is filled directly, because the frozen dataclass ``__init__`` (one ``object.__setattr__``
        per field) cost ~4 µs a hit, which at k = 100 was most of a BM25 query. The objects are ordinary,
        equal to ``Hit(...)`` built the usual way."""
        fields = self._row_fields
        new = object.__new__
        out: list[Hit] = []
        for rank, (r, s) in enumerate(zip(rows.tolist(), scores.tolist())):
            d = fields.get(r)
            if d is None:
                d = self._prepare(r)
            h = new(Hit)
            hd = h.__dict__
            hd.update(d)
            hd["score"] = s
            hd["rank"] = rank
            out.append(h)
        return out

    def _prepare(self, row: int) -> dict:
        c = self.chunks[row]
        # Field order as declared, so vars(hit) reads like the dataclass.
        d = self._row_fields[row] = {"chunk_id": c.chunk_id, "doc_id": c.doc_id, "score": 0.0, "rank": 0,
                                     "text": c.text, "title": self.titles.get(c.doc_id, ""), "start": c.start,
                                     "end": c.end}
        return d


def check_k(k: int) -> None:
    """Reject a non-positive or non-integer ``k`` with a typed error."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k <= 0:
        raise ConfigError(f"k must be a positive integer, found {k!r}. Fix: ask for at least one result.")


def top_k(rows: np.ndarray | None, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best ``(rows, scores)``, best first; ties go to the lower row (earlier indexed chunk).

    ``rows=None`` means ``rows = arange(len(scores))``. ``np.argpartition`` keeps this O(n); only the k
    survivors are sorted.
    """
    n = len(scores)
    if n == 0:
        return (np.empty(0, dtype=np.int64) if rows is None else rows[:0]), scores[:0]
    if k < n:
        part = np.argpartition(-scores, k - 1)[:k]
        kth = scores[part].min()
        if np.count_nonzero(scores == kth) != np.count_nonzero(scores[part] == kth):
            # ties straddle the cut: take every tied row so the tie-break below is by row, not partition order
            part = np.flatnonzero(scores >= kth)
    else:
        part = np.arange(n)
    pos = part if rows is None else rows[part]
    order = np.lexsort((pos, -scores[part]))[:k]
    return pos[order], scores[part[order]]
