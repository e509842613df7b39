"""The second golden set (data/golden_alderbrook): loads, has its exact counts per slice, and its labels hold."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from ragbench.eval.golden import DEFAULT_FOLDER, GoldenSet, load_golden
from ragbench.schema import Classification
from ragbench.text import normalize_whitespace

FOLDER = DEFAULT_FOLDER.parent / "golden_alderbrook"


@pytest.fixture(scope="module")
def golden() -> GoldenSet:
    return load_golden(FOLDER)


def test_loads_with_exact_counts(golden: GoldenSet) -> None:
    assert golden.folder == Path(FOLDER)
    assert len(golden.documents) == 37
    assert len(golden.questions) == 108
    assert sorted(golden.principals) == ["ab-client", "ab-director", "ab-hr", "ab-locum", "ab-nurse",
                                         "ab-partner", "ab-reception", "ab-staff", "ab-vet"]
    assert Counter(golden.tags().values()) == {"direct": 37, "paraphrase": 14, "multi-doc": 10, "refuse-acl": 15,
                                               "refuse-unanswerable": 14, "followup": 18}
    assert Counter(d.acl.classification for d in golden.documents) == {
        Classification.PUBLIC: 6, Classification.INTERNAL: 22, Classification.CONFIDENTIAL: 6,
        Classification.RESTRICTED: 3}
    assert len(golden.queries_df(answerable_only=True)) == 79
    assert len(golden.qrels_df()) == 89
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
    assert {cid: len(qs) for cid, qs in chains.items()} == {"c-oncall": 4, "c-drugs": 4, "c-purchase": 4,
                                                             "c-puppy": 3, "c-breach": 3}
    assert all(len({q.asked_by for q in qs}) == 1 for qs in chains.values())
    forum = golden.document("pub-forum-post")
    ticket = golden.document("it-ticket-4471")
    assert forum.acl.classification is Classification.PUBLIC and "highest authority" in forum.text
    assert "[1][4]" in forum.text
    assert ticket.acl.classification is Classification.INTERNAL and "CLASSIFICATION: PUBLIC" in ticket.text
    assert golden.question("a036").expected_docs == ("pub-forum-post",)  # answerable despite the injection


def test_data_hash_differs_from_the_bundled_set(golden: GoldenSet) -> None:
    assert golden.data_hash != load_golden().data_hash
    assert len(golden.data_hash) == 64
