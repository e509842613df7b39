"""Conversation memory retrieval: turn documents with neighbouring turns, and TurnMemory's fused ranking."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from ragbench.errors import ConfigError
from ragbench.retrieval.embedding import HashingEmbedder
from ragbench.retrieval.turns import TurnMemory, TurnText, turn_documents


@dataclass(frozen=True)
class T:
    dia_id: str
    speaker: str
    text: str
    session: int
    date: str


TURNS = [T("D1:1", "Ann", "I adopted a puppy called Rex.", 1, "8 May 2023"),
         T("D1:2", "Bob", "How old is he?", 1, "8 May 2023"),
         T("D1:3", "Ann", "He is three months old.", 1, "8 May 2023"),
         T("D2:1", "Bob", "I ran a marathon in Boston.", 2, "1 June 2023"),
         T("D2:2", "Ann", "Running that far is amazing.", 2, "1 June 2023")]


def test_turn_documents_neighbours_stay_in_the_session():
    docs = turn_documents(TURNS, TurnText(before=1, after=1, date=False))
    assert docs[2] == "Bob: How old is he? Ann: He is three months old."  # no later turn in session 1
    assert docs[3] == "Bob: I ran a marathon in Boston. Ann: Running that far is amazing."  # no earlier one
    assert turn_documents(TURNS, TurnText(before=0, speaker=False))[0] == "(8 May 2023) I adopted a puppy called Rex."
    caps = {"D2:2": "a photo of runners"}
    assert turn_documents(TURNS, TurnText(before=0, date=False), caps)[4].endswith("[shares a photo of runners]")
    assert turn_documents(TURNS, TurnText(before=0, date=False, captions=False), caps)[4].endswith("amazing.")
    with pytest.raises(ConfigError, match="before/after"):
        turn_documents(TURNS, TurnText(before=-1))


def test_keyword_only_memory_uses_stemming_and_context():
    mem = TurnMemory(None, TurnText(before=1, after=0, date=False), dense_weight=0.0, session_weight=0.0).index(TURNS)
    # "runs" only matches after stemming ("ran" does not stem to "run", "running" does)
    assert mem.rank("who runs", 1).tolist() == [4]
    # the short answer D1:3 carries the question before it: "old" appears in both D1:2 and D1:3
    top2 = set(mem.rank("how old is Rex", 2).tolist())
    assert top2 == {1, 2}
    s = mem.scores("how old")
    k = 60
    # RRF over the BM25 ranking only: the best turn gets 1/(k + 1)
    assert s.max() == pytest.approx(1 / (k + 1))
    assert mem.rank("   ").tolist() == [0, 1, 2, 3, 4] and not mem.scores("   ").any()


def test_session_term_lifts_every_turn_of_the_matching_session():
    plain = TurnMemory(None, TurnText(before=0, date=False), dense_weight=0.0, session_weight=0.0).index(TURNS)
    boosted = TurnMemory(None, TurnText(before=0, date=False), dense_weight=0.0, session_weight=1.0).index(TURNS)
    a, b = plain.scores("marathon"), boosted.scores("marathon")
    # only session 2 mentions a marathon: its two turns get + 1/(60 + 1), session 1's turns nothing
    assert (b - a)[3:] == pytest.approx([1 / 61, 1 / 61]) and not (b - a)[:3].any()
    assert boosted.rank("marathon", 2).tolist() == [3, 4]


def test_dense_part_adds_a_second_ranking():
    emb = HashingEmbedder(64)
    mem = TurnMemory(emb, TurnText(before=0, date=False), dense_weight=1.0).index(TURNS)
    kw_only = TurnMemory(None, TurnText(before=0, date=False), dense_weight=0.0).index(TURNS)
    s, s_kw = mem.scores("marathon Boston"), kw_only.scores("marathon Boston")
    assert np.all(s >= s_kw) and s.sum() > s_kw.sum()
    # every turn is in the dense ranking (5 turns ≤ candidate_k): the weights add up to Σ 1/(60 + r)
    assert s.sum() - s_kw.sum() == pytest.approx(sum(1 / (60 + r) for r in range(1, 6)))
    # the dense documents are written per dense_how (default: the turn alone, with its date)
    assert mem.dense.table.chunks[1].text == "(8 May 2023) Bob: How old is he?"
    with pytest.raises(ConfigError, match="needs an embedder"):
        TurnMemory(None).index(TURNS)
