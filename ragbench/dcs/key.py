"""DcsKey: the three-level structured identifier of a message (intent, DCN, domain) and its weighted Jaccard.

Restates the source's ``DcsKey`` (seed-behaviour 1.2): Jaccard is 1.0 when both sets are empty and 0.0 when
exactly one is, so two keys with no domains and no DCNs share 0.5 of their similarity "for free" — kept, because
the source's tests pin it. The compact form is ``"1,2|3|4,5"`` (intents | domains | DCNs).

Identifiers: the source puts intent, domain and DCN integers into one flat space (intent QUERY=1, domain
BACKEND=1 and DCN 1 are the same index bucket). :meth:`DcsKey.identifiers` reproduces that with
``namespaced=False``; with ``namespaced=True`` each id is tagged by its level (``("i", 1)``, ``("d", 1)``,
``("n", 1)``), which is the fix the improved assembler uses.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Iterable, Sequence

from ..config import DcsWeights
from ..errors import DataError

#: Level tags of namespaced identifiers.
INTENT, DOMAIN, DCN = "i", "d", "n"


def jaccard(a: Iterable[Hashable], b: Iterable[Hashable]) -> float:
    """|A ∩ B| / |A ∪ B| on sets; 1.0 when both are empty, 0.0 when exactly one is (the source's rule)."""
    sa, sb = set(a), set(b)
    if not sa and not sb:
        return 1.0
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)


def _ids(values: Iterable[int], what: str) -> tuple[int, ...]:
    out: list[int] = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int):
            raise DataError(f"DcsKey {what}: expected integer ids, found {v!r}. Fix: pass ints.")
        out.append(int(v))
    return tuple(out)


@dataclass(frozen=True)
class DcsKey:
    """Intent, domain and DCN ids of one message (ordered as given; similarity works on their sets)."""

    intents: tuple[int, ...] = ()
    domains: tuple[int, ...] = ()
    dcns: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "intents", _ids(self.intents, "intents"))
        object.__setattr__(self, "domains", _ids(self.domains, "domains"))
        object.__setattr__(self, "dcns", _ids(self.dcns, "dcns"))

    def similarity(self, other: "DcsKey", weights: DcsWeights | None = None) -> float:
        """``w_i·J(intents) + w_n·J(dcns) + w_d·J(domains)`` (default weights 0.5 / 0.3 / 0.2)."""
        w = weights or DcsWeights()
        return (w.intent * jaccard(self.intents, other.intents) + w.dcn * jaccard(self.dcns, other.dcns)
                + w.domain * jaccard(self.domains, other.domains))

    def identifiers(self, namespaced: bool = False) -> list[Hashable]:
        """Intents, then domains, then DCNs; plain ints (the source's shared space) or ``(level, id)`` pairs."""
        if not namespaced:
            return [*self.intents, *self.domains, *self.dcns]
        pairs: list[Hashable] = [(INTENT, i) for i in self.intents]
        return pairs + [(DOMAIN, d) for d in self.domains] + [(DCN, n) for n in self.dcns]

    def topics(self, namespaced: bool = False) -> list[Hashable]:
        """Distinct intents ∪ domains in order: the topic identifiers a DCN is matched on."""
        items = self.identifiers(namespaced)[: len(self.intents) + len(self.domains)]
        return list(dict.fromkeys(items))

    def with_dcns(self, dcns: Sequence[int]) -> "DcsKey":
        return DcsKey(self.intents, self.domains, tuple(dcns))

    def is_empty(self) -> bool:
        return not (self.intents or self.domains or self.dcns)

    def serialize(self) -> str:
        """``"1,2|3|4,5"``; empty groups stay empty (``"1||"``)."""
        return "|".join(",".join(str(i) for i in g) for g in (self.intents, self.domains, self.dcns))

    @classmethod
    def parse(cls, text: str | None) -> "DcsKey":
        """Inverse of :meth:`serialize`: blank → empty key, missing groups → empty, empty tokens ignored."""
        if text is None or not text.strip():
            return cls()
        parts = text.split("|")
        if len(parts) > 3:
            raise DataError(f"DcsKey text {text!r}: expected at most 3 '|'-separated groups "
                            f"(intents|domains|dcns), found {len(parts)}.")
        groups: list[tuple[int, ...]] = []
        for part in parts + [""] * (3 - len(parts)):
            ids: list[int] = []
            for tok in part.split(","):
                tok = tok.strip()
                if not tok:
                    continue
                try:
                    ids.append(int(tok))
                except ValueError:
                    raise DataError(f"DcsKey text {text!r}: expected integer ids, found {tok!r}. "
                                    "Fix: use the form '1,2|3|4,5'.") from None
            groups.append(tuple(ids))
        return cls(*groups)

    def __str__(self) -> str:
        return self.serialize()
