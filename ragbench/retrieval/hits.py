"""A retriever's result as a lazy, immutable sequence of :class:`Hit` (issue 17, item 5).

:class:`Hits` holds what a query produced — the ranked rows and their scores, two numpy arrays — plus the chunk
table's per-row field tuples, so creating it costs O(1) whatever k is. A :class:`Hit` is built the first time its
position is read and then cached (``hits[0] is hits[0]``); reading every hit (``list(hits)``, a ``for`` loop)
builds them all in one pass, at the cost an eager list of Hits had. Callers that only need rows and scores
(fusion, evaluation) read :attr:`Hits.rows` / :attr:`Hits.scores` and build nothing.

A Hits compares equal to any sequence (list, tuple, Hits) of equal Hits, slices to a Hits that keeps every hit's
rank (its position in the full result), and pickles as a plain list (the field table it refers to is the whole
index, not something to ship with a result).
"""
from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, Iterator, overload

import numpy as np

from ..schema import Hit

#: Per-row query-independent Hit fields: (chunk_id, doc_id, text, title, start, end).
Fields = tuple[str, str, str, str, int, int]


class _HitBuilder:
    """A not-yet-frozen :class:`Hit`: the same slots, so Python allows turning it into a Hit by ``__class__``
    assignment once every field is written (see :func:`make_hit`). Never escapes this package."""

    __slots__ = Hit.__slots__  # set by @dataclass(slots=True)
    chunk_id: str
    doc_id: str
    score: float
    rank: int
    text: str
    title: str
    start: int
    end: int


def make_hit(f: Fields, score: float, rank: int) -> Hit:
    """``Hit(f[0], f[1], score, rank, f[2], f[3], f[4], f[5])``, built without the dataclass ``__init__``.

    The frozen dataclass ``__init__`` writes each field through ``object.__setattr__`` (~1 µs a hit). Here the
    object is allocated as a :class:`_HitBuilder` (Hit's exact slot layout, without the frozen ``__setattr__``),
    filled by plain attribute stores, and its class then set to :class:`Hit` (Python checks that the layouts
    match): from there on it is an ordinary frozen Hit."""
    h: Any = object.__new__(_HitBuilder)
    h.chunk_id, h.doc_id, h.text, h.title, h.start, h.end = f
    h.score = score
    h.rank = rank
    h.__class__ = Hit
    return h


def build_hits(fields: list[Fields], rows: list[int], scores: list[float], ranks: range) -> list[Hit]:
    """Complete Hits for ``rows`` (ints) with ``scores`` (floats) and ``ranks``, in one pass (as :func:`make_hit`)."""
    new = object.__new__
    out: list[Any] = []
    append = out.append
    for r, s, rank in zip(rows, scores, ranks):
        h = new(_HitBuilder)
        h.chunk_id, h.doc_id, h.text, h.title, h.start, h.end = fields[r]
        h.score = s
        h.rank = rank
        h.__class__ = Hit  # type: ignore[assignment]  # same layout: now a frozen Hit
        append(h)
    return out


def _read_only(a: np.ndarray) -> np.ndarray:
    view = a.view()
    view.flags.writeable = False
    return view


class Hits(Sequence[Hit]):
    """The ranked hits of one query, built on first read. Equal to ``[Hit(chunk_id, doc_id, score, rank, text,
    title, start, end), ...]`` for the rows in rank order.

    ``fields[row]`` holds a row's query-independent fields; ``rows`` (ints) and ``scores`` (floats) are in rank
    order. The arrays are kept, not copied: the caller hands them over and must not change them afterwards.
    """

    __slots__ = ("_fields", "_rows", "_scores", "_ranks", "_cache", "_list")

    _cache: list[Any] | None  # Hit or None, indexed by rank; shared by every slice of the same result
    _list: list[Hit] | None  # every hit of this result (or slice), once read in full

    def __init__(self, fields: list[Fields], rows: np.ndarray, scores: np.ndarray) -> None:
        if len(rows) != len(scores):
            raise ValueError(f"Hits needs one score per row: {len(rows)} rows, {len(scores)} scores. "
                             "Fix: pass the rows and scores of one ranking (e.g. topk()'s pair).")
        self._fields = fields
        self._rows = rows
        self._scores = scores
        self._ranks = range(len(rows))  # a slice keeps the ranks of the full result (range slicing composes)
        self._cache = None  # allocated on the first read of one hit or the first slice; a full read fills it
        self._list = None

    # ------------------------------------------------------------------------------------------- arrays

    @property
    def rows(self) -> np.ndarray:
        """Row of each hit in the retriever's chunk table, rank order (read-only)."""
        return _read_only(self._rows)

    @property
    def scores(self) -> np.ndarray:
        """Score of each hit, rank order (read-only; ``hits[i].score == float(hits.scores[i])``)."""
        return _read_only(self._scores)

    @property
    def ranks(self) -> range:
        """Rank of each hit: ``range(len(hits))``, or the ranks in the full result for a slice."""
        return self._ranks

    def chunk_ids(self) -> list[str]:
        """The hits' chunk ids in rank order, without building the hits."""
        fields = self._fields
        return [fields[r][0] for r in self._rows.tolist()]

    # ------------------------------------------------------------------------------------------- sequence

    def __len__(self) -> int:
        return len(self._ranks)

    @overload
    def __getitem__(self, index: int) -> Hit: ...

    @overload
    def __getitem__(self, index: slice) -> "Hits": ...

    def __getitem__(self, index: int | slice) -> "Hit | Hits":
        if isinstance(index, slice):
            return self._slice(index)
        try:
            i = operator.index(index)
        except TypeError:
            raise TypeError(f"Hits indices must be integers or slices, not {type(index).__name__}") from None
        n = len(self._ranks)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"Hits index {index} out of range ({n} hits)")
        rank = self._ranks[i]
        cache = self._cache
        if cache is None:  # only a full result (never a slice) has no cache yet: its ranks are 0 … n − 1
            cache = self._cache = [None] * n
        h = cache[rank]
        if h is None:
            h = cache[rank] = make_hit(self._fields[int(self._rows[i])], float(self._scores[i]), rank)
        return h

    def _slice(self, s: slice) -> "Hits":
        ranks = self._ranks[s]
        if ranks == self._ranks:  # the whole result (hits[:k] with k ≥ len): immutable, so itself
            return self
        if self._cache is None:  # a full result: the slice shares its cache, which must exist first
            self._cache = [None] * len(self._ranks)
        view = object.__new__(Hits)
        view._fields = self._fields
        view._rows = self._rows[s]
        view._scores = self._scores[s]
        view._ranks = ranks
        view._cache = self._cache
        view._list = None
        return view

    def tolist(self) -> list[Hit]:
        """Every hit, as a new plain list (the hits themselves are the cached ones)."""
        return list(self._all())

    def _all(self) -> list[Hit]:
        if self._list is not None:
            return self._list
        cache = self._cache
        if cache is None:  # a full result, nothing read yet: build all in one pass; the list is the cache
            built = build_hits(self._fields, self._rows.tolist(), self._scores.tolist(), self._ranks)
            self._cache = self._list = built
            return built
        out: list[Hit] = []
        fields = self._fields
        for r, s, rank in zip(self._rows.tolist(), self._scores.tolist(), self._ranks):
            h = cache[rank]
            if h is None:
                h = cache[rank] = make_hit(fields[r], s, rank)
            out.append(h)
        self._list = out
        return out

    def __iter__(self) -> Iterator[Hit]:
        return iter(self._all())

    def __reversed__(self) -> Iterator[Hit]:
        return reversed(self._all())

    def __contains__(self, value: object) -> bool:
        return value in self._all()

    # ------------------------------------------------------------------------------------------- value semantics

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if isinstance(other, Sequence) and not isinstance(other, (str, bytes, bytearray, memoryview)):
            return len(self) == len(other) and self._all() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal to lists, which are unhashable

    def __repr__(self) -> str:
        return f"Hits({self._all()!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # A plain list: the field table this result refers to is the whole index.
        return (list, (self.tolist(),))

    def __copy__(self) -> "Hits":
        return self  # immutable
