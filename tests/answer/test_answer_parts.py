"""Grounding, citations, the follow-up rewriter, ACL post-filter and principal registry."""
from __future__ import annotations

import pytest

from ragbench.answer import (PrincipalRegistry, build_citations, parse_principals, post_filter, rewrite,
                             split_answer, verify)
from ragbench.answer.rewriter import extract_subject, rewrite_subject, subject_terms, swapped_member
from ragbench.errors import ConfigError, DataError, PermissionDenied, StoreError
from ragbench.schema import Acl, Classification, Hit, Message

from .helpers import BOARD, ENG, GUEST, HR, PTO, make_store

A = Hit("ca", "doc-a", 0.9, 0, PTO, "Doc A", 0, len(PTO))
B = Hit("cb", "doc-b", 0.5, 1, ENG, "Doc B", 10, 20)
C = Hit("cc", "doc-c", 0.4, 2, BOARD, "Doc C", 5, 9)


# ------------------------------------------------------------------------------------------------ grounding


def test_split_answer_masks_markers_and_attaches_them_to_the_sentence_they_follow():
    s = split_answer("Employees receive 25 days [1]. Deploys freeze at 14:00. [2] Pool is £3.5 million [1, 3].")
    assert [(x.text, x.markers) for x in s] == [("Employees receive 25 days .", (1,)),
                                               ("Deploys freeze at 14:00.", (2,)),
                                               ("Pool is £3.5 million .", (1, 3))]
    assert s[1].start == 31 and s[1].end == 55
    assert split_answer("[2] Leading marker.")[0].markers == (2,)


def test_lexical_support_per_sentence_against_its_cited_chunk():
    # S1 {employees, receive, 25, days} ⊂ A → 1.0 ; S2 {moon, made, cheese} → 0.
    r = verify("Employees receive 25 days [1]. The moon is made of cheese [1].", [A, B], min_support=0.3)
    assert [(x.chunk_id, x.score, x.supported) for x in r.sentences] == [("ca", 1.0, True), (None, 0.0, False)]
    assert r.support_ratio == 0.5 and r.supporting_chunk_ids == ["ca"]
    # The same true sentence citing the wrong chunk is not supported: only B is checked.
    wrong = verify("Employees receive 25 days [2].", [A, B], min_support=0.3)
    assert wrong.support_ratio == 0.0 and wrong.sentences[0].score == 0.0


def test_markers_are_not_words_and_a_trailing_marker_is_not_a_sentence():
    # Seed flaw: "[2]" after the last full stop became a sentence with token "2" (and "1" counted as a word).
    r = verify("Hotfixes need two reviewers. [2]", [A, B], min_support=1.0)
    assert len(r.sentences) == 1 and r.sentences[0].score == 1.0 and r.support_ratio == 1.0


def test_unmarked_sentences_use_the_cited_chunks_then_all_chunks():
    r = verify("Deploys are frozen after 14:00 on Fridays.", [A, B], min_support=0.5)
    assert r.sentences[0].chunk_id == "cb" and r.support_ratio == 1.0
    r2 = verify("Deploys are frozen after 14:00 on Fridays. Employees receive 25 days [1].", [A, B], 0.5)
    assert [x.chunk_id for x in r2.sentences] == [None, "ca"] and r2.support_ratio == 0.5


def test_grounding_edge_cases():
    assert verify("", [A]).support_ratio == 0.0 and verify("Text.", []).sentences == ()
    assert verify("The. [1]", [A]).sentences == ()  # only stop words
    with pytest.raises(ConfigError):
        verify("x", [A], method="nli")
    with pytest.raises(ConfigError):
        verify("x", [A], method="embedding")


def test_embedding_support_uses_cosine():
    import numpy as np

    class Emb:
        def embed(self, texts, show_progress=False):
            # "leave"-ish texts point one way, the rest another: cosines 1 and 0.
            return np.array([[1.0, 0.0] if ("days" in t or "Full-time" in t) else [0.0, 1.0] for t in texts],
                            dtype=np.float32)

    r = verify("Staff get plenty of days. Unrelated words here.", [A], method="embedding", embedder=Emb(),
               min_similarity=0.5)
    assert [x.score for x in r.sentences] == [1.0, 0.0] and r.support_ratio == 0.5


# ------------------------------------------------------------------------------------------------ citations


def test_citations_from_markers_in_first_appearance_order():
    cites = build_citations("x [1] y [3] z [1].", [A, B, C])
    assert [(c.n, c.doc_id, c.title, c.start, c.end) for c in cites] == [(1, "doc-a", "Doc A", 0, len(PTO)),
                                                                       (3, "doc-c", "Doc C", 5, 9)]
    assert cites[0].to_json() == {"doc_id": "doc-a", "title": "Doc A", "chunk_id": "ca", "start": 0,
                                  "end": len(PTO)}


def test_out_of_range_and_garbage_markers_are_ignored():
    assert [c.doc_id for c in build_citations("a [99] b [xyz] c [0] d [2].", [A, B])] == ["doc-b"]


def test_fallback_to_supporting_chunks_in_context_order():
    answer = "Hotfixes need two reviewers. Employees receive 25 days."
    report = verify(answer, [A, B], 0.5)
    assert [c.doc_id for c in build_citations(answer, [A, B], report)] == ["doc-a", "doc-b"]
    assert build_citations("Nothing supported here.", [A, B], verify("Nothing supported here.", [A, B])) == []
    assert build_citations("no markers", [A]) == []


# ------------------------------------------------------------------------------------------------ rewriter


def test_rewriter_pronoun_takes_the_subject_of_the_previous_question():
    h = [Message("user", "Tell me about paid time off"), Message("assistant", "25 days [1].")]
    assert rewrite("What is it capped at?", h) == "What is it capped at? (referring to paid time off)"


def test_rewriter_continuations_and_fallbacks():
    h = [Message("user", "How many sick days?")]
    assert rewrite("what about carry-over?", h) == "How many sick days?; what about carry-over?"
    assert rewrite("And for contractors", h) == "How many sick days?; And for contractors"
    assert rewrite("  Plain question?  ", h) == "Plain question?"
    assert rewrite("What is it?", []) == "What is it?"
    # No " about "/" of " and no word longer than 3 characters ("Hi?" is 3): the whole previous question.
    assert rewrite("Is that so?", [Message("user", "Hi?")]) == "Is that so? (Hi?)"
    assert rewrite("Is that so?", [Message("user", "Why?")]) == "Is that so? (referring to Why)"
    assert extract_subject("What is the cap of hotel rooms in London?") == "hotel rooms in London"
    assert extract_subject("When are production deployments allowed?") == "deployments allowed"


# ------------------------------------------------------------------------------------------------ ACLs


def test_post_filter_uses_a_fresh_lookup_and_fails_closed():
    store = make_store()
    hits = [Hit(c.chunk_id, c.doc_id, 1.0 - i / 10, i, c.text) for i, c in enumerate(store.chunks())]
    order = [h.doc_id for h in hits]
    assert [h.doc_id for h in post_filter(hits, HR, store)] == [d for d in order if d in ("conduct", "pto")]
    assert [h.rank for h in post_filter(hits, HR, store)] == [0, 1]
    assert [h.doc_id for h in post_filter(hits, GUEST, store)] == ["conduct"]
    assert post_filter(hits, None, store) == []
    assert sorted(order) == ["board", "conduct", "eng", "pto"]
    store.delete_document("pto")  # revoked after indexing: the stale hit must go
    assert [h.doc_id for h in post_filter(hits, HR, store)] == ["conduct"]

    def broken(doc_id):
        raise StoreError("db gone")

    assert post_filter(hits, HR, broken) == []


def test_roles_and_departments_count_not_only_classification():
    # Seed flaw: the store-level check compared classifications only.
    acl = Acl.make(["board"], [], "Restricted")
    cleared = HR.__class__.make("x", ["employee"], ["hr"], Classification.RESTRICTED)
    assert not acl.allows(cleared)
    hit = Hit("c", "board", 1.0, 0, BOARD)
    assert post_filter([hit], cleared, lambda d: acl) == []


def test_principal_registry_yaml_forms_and_unknown_principal(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("principals:\n  alice: {roles: [employee], departments: hr, max_classification: Internal}\n"
                 "  bob: {classification: Public}\n", encoding="utf-8")
    reg = PrincipalRegistry.from_yaml(f)
    alice = reg.get("alice")
    assert (alice.roles, alice.departments, alice.max_classification) == \
        (frozenset({"employee"}), frozenset({"hr"}), Classification.INTERNAL)
    assert reg.ids() == ["alice", "bob"] and "bob" in reg and len(reg) == 2
    with pytest.raises(PermissionDenied, match="unknown principal 'carol'"):
        reg.get("carol")
    lst = parse_principals([{"user_id": "dan", "roles": ["x"]}])
    assert lst[0].user_id == "dan" and lst[0].max_classification == Classification.PUBLIC


@pytest.mark.parametrize("text, match", [
    ("principals: [: bad", "not valid YAML"),
    ("principals:\n  a: {roles: [x], colour: red}\n", "unknown field"),
    ("principals:\n  a: {max_classification: Secret}\n", "classification"),
    ("principals:\n  - {roles: [x]}\n", "user_id"),
    ("principals: 3\n", "expected a mapping"),
    ("principals:\n  - {user_id: a}\n  - {user_id: a}\n", "twice"),
])
def test_principal_registry_bad_files(tmp_path, text, match):
    f = tmp_path / "p.yaml"
    f.write_text(text, encoding="utf-8")
    with pytest.raises(DataError, match=match):
        PrincipalRegistry.from_yaml(f)


def test_missing_principals_file(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        PrincipalRegistry.from_yaml(tmp_path / "none.yaml")


def test_subject_rewriter_carries_the_chain_topic_not_junk():
    first = "Under the current purchasing policy, how much can a clinic manager approve on their own?"
    h = [Message("user", first, {"query": first}), Message("assistant", "EUR 2,000 [1]")]
    # the seed carries "their own"; the subject rewriter the previous question's content words
    assert rewrite("And above that, how many quotes are needed?", h) == \
        "And above that, how many quotes are needed? (referring to their own)"
    second = rewrite_subject("And above that, how many quotes are needed?", h)
    assert second == ("And above that, how many quotes are needed? "
                      "(referring to current purchasing policy clinic manager approve)")
    # turn 3 still knows the topic; words the follow-up already has are not repeated
    h += [Message("user", "And above that, how many quotes are needed?", {"query": second}),
          Message("assistant", "two quotes [1]")]
    third = "Who approves it over 12,000?"
    assert rewrite_subject(third, h) == f"{third} (referring to above quotes needed current purchasing policy)"
    light = {"abov": 0.1, "need": 0.2}
    assert rewrite_subject(third, h, lambda t: light.get(t, 1.0)) == \
        f"{third} (referring to quotes current purchasing policy clinic manager)"
    # not a follow-up, or no history: unchanged
    assert rewrite_subject("  Plain question?  ", h) == "Plain question?"
    assert rewrite_subject("What is it?", []) == "What is it?"
    # Possessive and object pronouns refer back too ("Can I pay for hers by tapping my card?").
    assert rewrite_subject("Can I pay for hers?", h) == \
        "Can I pay for hers? (referring to above quotes needed current purchasing policy)"


def test_the_subject_carries_no_contraction_fragments():
    # The tokenizer leaves "doesn" of "doesn't" and "isn" of "isn't": they are not the chain's topic.
    prev = "And what happens if your operative doesn't turn up? I'll be in, it isn't my fault."
    assert subject_terms(prev, "And if it was my fault, will I pay?") == ["operative", "turn"]


def test_subject_terms_keep_the_heaviest_in_order():
    weight = {"annual": 1.0, "leav": 0.5, "full": 3.0, "staff": 0.2, "day": 0.1}.get
    prev = "How many days of annual leave do full-time staff get?"
    # "time" is in the follow-up ("part-time"), "many"/"do"/"get" are question-form words
    assert subject_terms(prev, "And for part-time?") == ["days", "annual", "leave", "full", "staff"]
    assert subject_terms(prev, "And for part-time?", lambda t: weight(t, 0.0), max_terms=2) == ["annual", "full"]
    assert subject_terms(prev, "What about annual leave?") == ["days", "full", "time", "staff"]


def test_subject_terms_leave_out_the_code_the_follow_up_swaps():
    prev = "If my walk-round check finds a P2 defect, by when does it have to be repaired?"
    # "And a P3?" asks the same of another member of the P family: P2 is not its subject.
    assert subject_terms(prev, "And a P3?") == ["walk", "round", "check", "finds", "defect", "repaired"]
    # A follow-up without a code of that family keeps it (the first six words, without weights).
    assert subject_terms(prev, "And on a Sunday?") == ["walk", "round", "check", "finds", "p2", "defect"]


def test_subject_terms_carry_only_words_the_documents_know():
    prev = "How much does the Long Stay car park cost for one day if I just turn up?"
    known = {"long", "stay", "car", "park", "cost", "day"}
    # "turn" is in no readable document: carried, it matches no passage and (by IDF) would weigh the most
    # ("long" is a question-form word: "how long")
    assert subject_terms(prev, "And for a week?") == ["stay", "car", "park", "cost", "day", "turn"]
    assert subject_terms(prev, "And for a week?", known=known) == ["stay", "car", "park", "cost", "day"]
    # a word with a digit is an identifier or amount: kept whatever the documents say
    assert subject_terms("What is the P2 target for 2026?", "And for P3?", known=set()) == ["2026"]
    h = [Message("user", prev, {"query": prev}), Message("assistant", "£19.00 [1]")]
    assert rewrite_subject("And for a week?", h, known=known) == \
        "And for a week? (referring to stay car park cost day)"


def test_a_follow_up_swapping_a_day_relation_month_or_size_does_not_carry_the_one_it_replaces():
    prev = "How much is an escape room for 3 people on a Tuesday?"
    assert subject_terms(prev, "and on a saturday?") == ["escape", "room", "3", "people", "tuesday"]
    assert subject_terms(prev, "and on a saturday?", siblings=True) == ["escape", "room", "3", "people"]
    # a day inside the span asked before narrows it: "weekend" stays
    assert subject_terms("What is the standby payment for a weekend?", "And the Sunday night of it?",
                         siblings=True) == ["standby", "payment", "weekend"]
    # a weekday is Monday to Friday, a weeknight Monday to Thursday: Friday night replaces a weeknight
    assert swapped_member("weekday", "and saturdays?") and not swapped_member("weekday", "and a friday?")
    assert swapped_member("weeknight", "and friday night?")
    # family relations by kinship class: "nan" replaces "dad", "mum" does not (the same relation)
    assert subject_terms("My dad died. How much bereavement leave do I get?", "and for my nan?",
                         siblings=True) == ["died", "bereavement", "leave"]
    assert not swapped_member("dad", "And my partner's mum?")
    assert swapped_member("august", "And in October?") and not swapped_member("august", "And may I bring a dog?")
    assert swapped_member("medium", "what about the large room?")
    # a word of no closed class, or a follow-up naming none of its class, is carried
    assert not swapped_member("room", "and a saturday?") and not swapped_member("tuesday", "how long is it?")
    h = [Message("user", prev, {"query": prev}), Message("assistant", "£66 [1]")]
    assert rewrite_subject("and on a saturday?", h, siblings=True) == \
        "and on a saturday? (referring to escape room 3 people)"
