"""Kinship words: a closed class, so a family word of the question can be matched by its family, not its spelling.

A bereavement or carer question says "my grandad", "my nan", "my wife"; the policy says "a grandparent", "your spouse
or partner". Word cosines rank such pairs no higher than near-topic neighbours, and WordNet's synsets put "nan" with
"grandma" and "naan" but never with "grandparent" (a hypernym, which the synonym switch does not follow), so the
classes are listed here: each word belongs to one family relation, and a word is matched by any word of the same
relation. The list also gives the capitalised forms of address ("Mum", "Grandad") that are not names
(:func:`ragbench.answer.answerability.names`).
"""
from __future__ import annotations

import re
from collections.abc import Iterable

from ..llm.signals import stem

#: Kinship words written with a capital when they stand for one's own relative ("If Mum ends up on a ward", "see
#: Dad"): common nouns used as a form of address, not the name of an entity a document could mention.
ADDRESS_FORMS: frozenset[str] = frozenset(
    "mum mam mom mummy mommy dad daddy nan nana nanna gran granny grandma grandmother grandad granddad grandpa "
    "grandfather auntie aunty aunt uncle".split())

#: One family relation per line: every word of a line stands for the same relation. "partner" is a spouse's word
#: here; a business partner is matched only by "partner" itself, which an exact match already covers.
_RELATIONS: tuple[str, ...] = (
    "grandparent grandparents grandmother grandmothers grandfather grandfathers grandma grandpa grandad granddad "
    "gran granny nan nana nanna",
    "parent parents mother father mum mam mom mummy mommy dad daddy",
    "spouse spouses wife husband partner",
    "child children son sons daughter daughters",
    "grandchild grandchildren grandson grandsons granddaughter granddaughters",
    "sibling siblings brother brothers sister sisters",
    "aunt aunts auntie aunty uncle uncles",
)


def _index(lines: tuple[str, ...]) -> dict[str, int]:
    """Word and stem → the index of the line (the relation) that lists it."""
    out: dict[str, int] = {}
    for i, line in enumerate(lines):
        for w in line.split():
            out[w] = i
            out.setdefault(stem(w), i)
    return out


def _lookup(index: dict[str, int], word: str) -> int | None:
    w = word.lower()
    return index.get(w, index.get(stem(w)))


_RELATION_OF = _index(_RELATIONS)
_STEMS: tuple[frozenset[str], ...] = tuple(frozenset(stem(w) for w in line.split()) for line in _RELATIONS)


def relation(word: str) -> int | None:
    """The family relation ``word`` names (an index into the relations), or ``None`` for a word outside them."""
    return _lookup(_RELATION_OF, word)


def relation_stems(word: str) -> frozenset[str]:
    """The stems of every word naming the family relation ``word`` names (empty outside the relations)."""
    r = relation(word)
    return frozenset() if r is None else _STEMS[r]


def same_relation_in(word: str, candidates: Iterable[str]) -> bool:
    """Does one of ``candidates`` name the family relation ``word`` names ("grandparent" for "grandad")?"""
    r = relation(word)
    return r is not None and any(relation(c) == r for c in candidates)


#: Relations a leave table lists beside the kinship classes, for telling one relation from another only: a cousin is
#: no aunt, and a niece no grandchild (the coverage match above keeps to its own classes).
_LISTED_RELATIONS: tuple[str, ...] = (*_RELATIONS, "cousin cousins", "niece nieces nephew nephews")
_LISTED_OF = _index(_LISTED_RELATIONS)
_KIN_WORD = re.compile(r"[A-Za-z]+")
#: A row for everyone else ("Any other relative", "other family members", "anyone else"): it answers any relation.
_ANY_RELATION = re.compile(r"\b(?:any\s+other|other|another|wider|extended)\s+(?:close\s+)?(?:relatives?|family"
                           r"(?:\s+members?)?|relations?|person|people|dependants?)\b|\banyone\s+else\b", re.IGNORECASE)


#: Relations outside the family that leave tables list beside it ("a close friend's funeral | 1 day", "the death of a
#: pet | 1 day unpaid"): a friend is no relative, and a pet is no person at all.
_OTHER_RELATIONS: tuple[str, ...] = ("friend friends", "pet pets dog dogs cat cats puppy puppies kitten kittens")
_WITH_OTHERS_OF = _index((*_LISTED_RELATIONS, *_OTHER_RELATIONS))
_FRIEND = len(_LISTED_RELATIONS)  # the friend line's index; the pet line follows it
#: A row for anyone at all ("anyone else", "any other person"): it answers a friend, though not a pet.
_ANY_PERSON = re.compile(r"\b(?:anyone|anybody|someone|somebody)\s+else\b|\b(?:any\s+)?other\s+(?:person|people)\b",
                         re.IGNORECASE)


def relations_named(text: str, others: bool = False) -> dict[int, str]:
    """The family relations ``text`` names (kinship classes, cousins, nieces and nephews): relation → first word.
    With ``others``, a friend and a pet count as relations too."""
    index = _WITH_OTHERS_OF if others else _LISTED_OF
    out: dict[int, str] = {}
    for w in _KIN_WORD.findall(text):
        r = _lookup(index, w)
        if r is not None:
            out.setdefault(r, w)
    return out


def unlisted_relations(asked: str, answer: str, others: bool = False) -> list[str]:
    """The relations ``asked`` names that ``answer`` leaves out of its own list of relations: ``["cousin"]`` for
    "bereavement leave for a cousin" answered with the rows for parents, grandparents, aunts and uncles. None
    unless the answer names at least two other relations and has no row for everyone else ("any other relative").
    With ``others``, a friend or a pet asked about counts too ("when my dog dies" against the same rows): a row for
    any other relative answers neither, a row for anyone else answers a friend."""
    named = relations_named(answer, others)
    if len(named) < 2:
        return []
    any_relative = _ANY_RELATION.search(answer) is not None
    if any_relative and not others:
        return []
    any_person = any_relative and _ANY_PERSON.search(answer) is not None
    out = []
    for r, w in relations_named(asked, others).items():
        if r in named:
            continue
        if r < _FRIEND and any_relative or r == _FRIEND and any_person:
            continue
        out.append(w)
    return out
