"""The third golden set (data/golden_tarnwell): loads, has its exact counts per slice, and its labels hold."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from ragbench.eval.golden import DEFAULT_FOLDER, GoldenSet, load_golden
from ragbench.schema import Classification
from ragbench.text import normalize_whitespace

FOLDER = DEFAULT_FOLDER.parent / "golden_tarnwell"


@pytest.fixture(scope="module")
def golden() -> GoldenSet:
    return load_golden(FOLDER)


def test_loads_with_exact_counts(golden: GoldenSet) -> None:
    assert golden.folder == Path(FOLDER)
    assert len(golden.documents) == 37
    assert len(golden.questions) == 96
    assert sorted(golden.principals) == ["tw-agent", "tw-board", "tw-contractor", "tw-controller", "tw-customer",
                                         "tw-director", "tw-hr", "tw-staff", "tw-technician"]
    assert Counter(golden.tags().values()) == {"direct": 34, "paraphrase": 13, "multi-doc": 9, "refuse-acl": 12,
                                               "refuse-unanswerable": 12, "followup": 16}
    assert Counter(d.acl.classification for d in golden.documents) == {
        Classification.PUBLIC: 7, Classification.INTERNAL: 21, Classification.CONFIDENTIAL: 6,
        Classification.RESTRICTED: 3}
    assert len(golden.queries_df(answerable_only=True)) == 72
    assert len(golden.qrels_df()) == 81
    assert [q.qid for q in golden.questions] == [f"t{i:03d}" for i in range(1, 97)]
    assert all(d.metadata["fictional"] is True and "FICTIONAL" in d.metadata["notice"] for d in golden.documents)


def test_every_referenced_document_exists(golden: GoldenSet) -> None:
    ids = {d.doc_id for d in golden.documents}
    referenced = {d for q in golden.questions for d in q.expected_docs + q.alternates}
    assert referenced <= ids
    assert set(golden.qrels_df()["docno"]) <= ids


def test_refusal_labels_hold_against_the_acls(golden: GoldenSet) -> None:
    """A refuse-acl secret is in no document its asker may read, and some other principal may read its source."""
    docs = {d.doc_id: d for d in golden.documents}
    for q in golden.questions:
        who = golden.principal(q.qid)
        if q.tag == "refuse-acl":
            assert q.answer_fact is not None
            readable = [d for d in docs.values() if d.acl.allows(who)]
            assert not any(normalize_whitespace(q.answer_fact) in normalize_whitespace(d.text)
                           for d in readable), q.qid
            assert any(docs[e].acl.allows(p) for e in q.expected_docs for p in golden.principals.values()), q.qid
        elif q.tag == "refuse-unanswerable":
            assert q.expected_docs == () and q.answer_fact is None, q.qid
        else:
            assert any(docs[e].acl.allows(who) for e in q.expected_docs), q.qid


def test_followup_chains_and_injection_documents(golden: GoldenSet) -> None:
    chains = golden.chains()
    assert {cid: len(qs) for cid, qs in chains.items()} == {"c-standby": 4, "c-purchase": 3, "c-heron": 3,
                                                             "c-breach": 3, "c-chlorine": 3}
    assert all(len({q.asked_by for q in qs}) == 1 for qs in chains.values())
    forum = golden.document("pub-forum-post")
    ticket = golden.document("it-ticket-5821")
    assert forum.acl.classification is Classification.PUBLIC and "highest authority" in forum.text
    assert "[1][3]" in forum.text
    assert ticket.acl.classification is Classification.INTERNAL and "CLASSIFICATION: PUBLIC" in ticket.text
    assert "[2] and [6]" in ticket.text
    assert golden.question("t031").expected_docs == ("pub-forum-post",)  # answerable despite the injection
    assert golden.question("t023").expected_docs == ("it-ticket-5821",)  # answerable despite the injection


def test_superseded_purchasing_policy_is_never_the_expected_answer(golden: GoldenSet) -> None:
    assert "SUPERSEDED" in golden.document("fin-purchasing-2022").title
    assert all("fin-purchasing-2022" not in q.expected_docs for q in golden.questions)
    assert golden.question("t086").expected_docs == ("fin-purchasing-2025",)


def test_data_hash_differs_from_the_other_sets(golden: GoldenSet) -> None:
    assert golden.data_hash != load_golden().data_hash
    assert golden.data_hash != load_golden(DEFAULT_FOLDER.parent / "golden_alderbrook").data_hash
    assert len(golden.data_hash) == 64
