"""The answerability check: salient terms, permitted-corpus IDF, coverage, answer types, the verdict, and the
service's ``unanswerable-question`` refusal — all on hand-made texts with hand-computed values."""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from ragbench.answer import AnsweringService, PrincipalRegistry
from ragbench.answer.answerability import (PermittedTermWeights, TermWeights, assess, assess_answer, coverage,
                                           expected_type, has_type, names, salient_terms, stem, term_set)
from ragbench.config import AnswerConfig
from ragbench.errors import ConfigError
from ragbench.llm import REFUSAL_MESSAGE, ExtractiveChatModel
from ragbench.schema import Acl, Document, Principal

from .helpers import FixedModel, bm25_for, make_store

OFFICE = "Staff may work from the office on any weekday. The office opens at 08:00."
PETS = "Staff may bring a calm dog to the office on Fridays."
SECRET = "The zebraquartz bonus pool is 2 million pounds."
DOCS = [Document("office", OFFICE, "Office rules", acl=Acl.make([], [], "Public")),
        Document("pets", PETS, "Pets at work", acl=Acl.make(["employee"], [], "Internal")),
        Document("bonus", SECRET, "Board bonus", acl=Acl.make(["board"], [], "Restricted"))]
STAFF = Principal.make("staff", ["employee"], [], "Internal")
GUEST = Principal.make("guest", ["guest"], [], "Public")


def test_stem_and_salient_terms():
    assert [stem(w) for w in ("approves", "approved", "policies", "reconciles", "days", "2024", "bus")] == \
        ["approv", "approv", "policy", "reconcil", "day", "2024", "bus"]
    assert stem("approve") == stem("approving") == "approv" and stem("processes") == stem("process") == "process"
    # Stop words and question words ("can", "my", "how", "many") go; order of first appearance stays.
    assert salient_terms("Can I bring my dog to the office? How many dogs?") == ["bring", "dog", "offic"]
    # A superlative asks for a bound, as "maximum" does: "no more than 100 ml" answers "the biggest container".
    assert salient_terms("What is the biggest container of liquid I can take?") == ["container", "liquid", "take"]
    assert salient_terms("How many?") == []
    assert term_set("Dogs are welcome.") == {"dog", "welcom"}


def test_term_weights_and_coverage_exact():
    w = TermWeights.from_texts([OFFICE, PETS])  # N = 2
    assert w.n_docs == 2 and w.df["offic"] == 2 and w.df["dog"] == 1
    assert w("offic") == pytest.approx(math.log(3 / 2.5))
    assert w("dog") == pytest.approx(math.log(3 / 1.5))
    assert w("unicorn") == pytest.approx(math.log(3 / 0.5))
    terms = salient_terms("Can I bring my dog to the office?")  # bring (df 1), dog (1), office (2)
    wb, wd, wo = math.log(2), math.log(2), math.log(1.2)
    assert coverage(terms, term_set(OFFICE), w) == pytest.approx(wo / (wb + wd + wo))  # 0.1162
    assert coverage(terms, term_set("A dog in the office."), w) == pytest.approx((wd + wo) / (wb + wd + wo))
    assert coverage(terms, term_set(PETS), w) == 1.0
    assert coverage([], set(), w) == 1.0


@pytest.mark.parametrize("question, kind", [
    ("Who approves a refund?", "person"),
    ("And whom do I tell?", "person"),
    ("What is the name of the chief executive?", "person"),
    ("How much does the canteen charge for lunch?", "money"),
    ("How much leave do I get?", "number"),
    ("How long are logs kept?", "number"),
    ("What is the minimum password length?", "number"),
    ("What commission rate applies?", "percent"),
    ("What is the salary band for L4?", "money"),
    ("Tell me about the budget process", None),
    ("When is the summer party?", "time"),
    ("What time does the office open?", "time"),
    ("Can I bring my dog?", None),
    ("What is the phone number of the Wrenfield clinic?", "phone"),
    ("What temperature should the vaccine fridge be kept at?", "temperature"),
    ("How cold must the freezer temperature be?", "temperature"),
    ("What is the mileage rate per kilometre?", "percent"),
    ("Up to what amount can a clinic manager approve a purchase?", "number"),
    ("What is the response time for a P3 ticket?", "number"),
    ("What is the notice period for a resignation?", "number"),
    ("What is the age limit for the scheme?", "number"),
    # The kind named right after the question word beats a later noun (a date is asked, not a price).
    ("By what date must the business plan for the price review be submitted?", "time"),
    ("Which day is the fee paid?", "time"),
    # Opening hours are clock times; "open" alone asks nothing of a kind.
    ("What are the opening hours of the Dunmere library?", "time"),
    ("Is the library open on Sundays?", None),
    # A commission or a discount is a share or a sum.
    ("What commission do spa therapists earn on retail sales?", "percent"),
    ("What discount do staff get on their own pets?", "percent"),
    # "How much is/are …?" asks a price, unless a measured quantity or a span of time is named.
    ("How much is afternoon tea at The Quayside?", "money"),
    ("How much is Tarnwell paying to buy Ashcombe Valley Water Company?", "money"),
    ("How much will the Express Drop-off cost from April 2026?", "money"),
    ("How much is the notice period?", "number"),
    ("How much is it to park a car at the zoo for the day?", "number"),
    ("How much unused annual leave can part-time staff carry over?", "number"),
])
def test_expected_type(question, kind):
    assert expected_type(question) == kind


def test_has_type():
    assert has_type("Approved by the Financial Controller.", "person", "Who approves cards?")
    assert not has_type("A purchase order must be approved.", "person", "Who approves?")
    # A role the question already names is not an answer to it.
    assert not has_type("The manager decides.", "person", "Who replaces the manager?")
    assert has_type("Lunch is £4.50.", "money") and not has_type("Lunch is 92 per cent organic.", "money")
    assert has_type("Up to 12 per cent.", "percent") and has_type("Rate: 5%.", "percent")
    commission = "What commission do therapists earn?"
    assert has_type("Therapists earn £2 a sale.", "percent", commission) and has_type("You get £5 off.", "percent",
                                                                                     "What discount do I get?")
    assert not has_type("Commission is paid at the rate in your contract.", "percent", commission)
    assert not has_type("You get £5 off.", "percent", "What rate applies?")
    assert has_type("Twice a year.", "number") and not has_type("Ask your manager.", "number")
    # A number word inside a hyphenated compound names a kind, not a quantity; digits always count.
    assert not has_type("Two-step verification is required.", "number")
    assert not has_type("A one-off payment.", "number")
    assert has_type("Twenty-five days.", "number") and has_type("A 2-step check.", "number")
    assert has_type("In April.", "time") and has_type("Add them when a change touches secrets.", "time")
    assert has_type("Anything at all.", None)
    # Shaped values: a street number is no phone number, a count is no temperature; a rate may be per unit.
    assert has_type("Call 01632 960 123.", "phone") and not has_type("Wrenfield Clinic, 3 Orchard Parade.", "phone")
    assert has_type("Kept between 2 and 8 °C.", "temperature") and has_type("Store at 4C.", "temperature")
    assert not has_type("Temperatures are recorded daily.", "temperature")
    assert has_type("€0.39 per kilometre.", "percent") and has_type("£12/hour.", "percent")
    assert has_type("| Rehearsal Room 1 | 60 | £45 an hour |", "percent") and has_type("35p a mile.", "percent")
    assert not has_type("At 10:00 a member of staff opens the doors.", "percent")  # "a" + no unit: no rate
    assert not has_type("For the first 5,000 km.", "percent")
    with pytest.raises(ConfigError):
        has_type("x", "colour")


class TwoAxes:
    """Exact cosines: texts with a 'dog' word point to axis 0, texts with 'office'/'weekday' to axis 1 (both:
    the normalised diagonal), anything else to axis 2."""

    model_id = "two-axes"
    dim = 3

    def embed(self, texts, show_progress=False):
        out = np.zeros((len(texts), 3), dtype=np.float32)
        for i, t in enumerate(texts):
            words = set(t.lower().replace("?", " ").replace(".", " ").split())
            out[i, 0] = float(bool(words & {"dog", "dogs"}))
            out[i, 1] = float(bool(words & {"office", "weekday"}))
            if not out[i].any():
                out[i, 2] = 1.0
            out[i] /= np.linalg.norm(out[i])
        return out


def test_assess_verdicts_and_reasons():
    w = TermWeights.from_texts([OFFICE, PETS])
    q = "Can I bring my dog to the office?"
    wb, wd, wo = math.log(2), math.log(2), math.log(1.2)
    # Related-topic sentence: coverage wo/(wb+wd+wo) = 0.1162, cosine 1/√2 = 0.7071 < 0.75 → refused.
    r = assess(q, q, ["Staff may work from the office on any weekday."], ["Office rules"], w, TwoAxes(),
               min_coverage=0.5, min_similarity=0.75)
    assert (r.answerable, r.expected_type, r.type_found) == (False, None, True)
    assert r.coverage == pytest.approx(wo / (wb + wd + wo)) and r.similarity == pytest.approx(2 ** -0.5)
    assert r.reason == "coverage 0.12 < 0.5 and similarity 0.71 < 0.75"
    # A paraphrase that shares only "office" but points the same way (cosine 1.0) is answerable on similarity.
    ok = assess(q, q, ["Dogs can come to the office."], [], w, TwoAxes(), min_coverage=0.6, min_similarity=0.75)
    assert ok.answerable and ok.similarity == pytest.approx(1.0)
    # With the similarity route closed (a passage the asker may not read covers more), coverage must answer.
    closed = assess(q, q, ["Dogs can come to the office."], [], w, TwoAxes(), min_coverage=0.6, min_similarity=0.75,
                    similarity_route=False)
    assert (closed.answerable, closed.reason) == (False, "coverage 0.56 < 0.6 (coverage decides)")
    assert assess(q, q, ["Dogs can come to the office."], [], w, TwoAxes(), min_coverage=0.5, min_similarity=0.75,
                  similarity_route=False).answerable
    assert ok.coverage == pytest.approx((wd + wo) / (wb + wd + wo))  # "dogs" meets "dog"; "come" is no term
    assert assess(q, q, [PETS], [], w, None, 0.5, 0.75).coverage == 1.0
    # Without an embedder only coverage counts; the document title counts as covered text.
    assert assess(q, q, ["Bring it along."], ["Dogs in the office"], w, None, 0.5, 0.75).answerable
    # The answer type comes from the question as typed; the query only feeds coverage and similarity.
    who = assess("Who opens the office?", "Who opens the office?", ["The office opens at 08:00."], [], w, None,
                 0.0, 0.0)
    assert (who.answerable, who.expected_type, who.type_found, who.reason) == \
        (False, "person", False, "no person in the answer")
    assert assess("Who opens the office?", "x", ["The office opens at 08:00."], [], w, None, 0.0, 0.0,
                  check_type=False).answerable
    assert assess(q, q, ["  "], [], w).reason == "no answer sentences"


def test_permitted_weights_count_only_readable_documents_and_follow_changes():
    store = make_store(DOCS)
    weights = PermittedTermWeights(store)
    guest, staff = weights.for_principal(GUEST), weights.for_principal(STAFF)
    assert (guest.n_docs, staff.n_docs) == (1, 2)
    # The Restricted document's words count for nobody here: "zebraquartz" weighs as an unseen term.
    assert guest("zebraquartz") == pytest.approx(math.log(2 / 0.5)) and "zebraquartz" not in staff.df
    assert staff.df["dog"] == 1 and "dog" not in guest.df
    assert weights.for_principal(STAFF) is staff  # cached
    assert weights.document_terms(["office", "nosuch"]) == term_set("Office rules " + OFFICE)
    store.delete_document("pets")
    assert weights.for_principal(STAFF).n_docs == 1  # the store changed: recounted
    assert weights.document_terms(["pets"]) == set()


def _service(store, model, embedder=None, **cfg):
    return AnsweringService(store, bm25_for(store), model, AnswerConfig(**cfg), embedder,
                            principals=PrincipalRegistry([STAFF, GUEST]))


def _refused_by_default(docs, question: str, said: str, rule: str, switch: str, **cfg):
    """The guest's ``question``, answered by a model saying ``said`` over ``docs``, is refused by ``rule`` under the
    default config (thresholds and the restricted gap aside) and answered from ``docs`` with ``switch`` off; returns
    the refused answer."""
    base = dict(restricted_gap=0.0, answerability_min_coverage=0.0, **cfg)
    a = _service(make_store(docs), FixedModel(said), **base).answer(question, "guest")
    assert (a.refused, a.refusal_reason, a.decided_by) == (True, "unanswerable-question", f"check:{rule}")
    off = _service(make_store(docs), FixedModel(said), **base, **{switch: False}).answer(question, "guest")
    assert (off.refused, [c.doc_id for c in off.citations]) == (False, [d.doc_id for d in docs])
    return a


def test_service_refuses_an_answer_that_does_not_address_the_question():
    store = make_store(DOCS)
    # The guest may read only the office rules; BM25 finds them via "office"; the reply is grounded but off-topic.
    # The pets rule the guest may not read is the index's best match: by default refused before reading.
    gap = _service(store, ExtractiveChatModel()).answer("Can I bring my dog to the office?", "guest")
    assert (gap.refused, gap.refusal_reason, gap.citations) == (True, "insufficient-retrieval", ())
    bm25 = bm25_for(store)
    best, mine = (bm25.search("Can I bring my dog to the office?", k=1, principal=p)[0] for p in (None, GUEST))
    assert (best.doc_id, mine.doc_id) == ("pets", "office")
    assert gap.restricted_gap == pytest.approx(1 - mine.score / best.score) and gap.restricted_gap >= 0.3
    # The answerability check alone (restricted gap off) refuses it too.
    a = _service(store, ExtractiveChatModel(), restricted_gap=0.0).answer("Can I bring my dog to the office?",
                                                                          "guest")
    assert (a.refused, a.refusal_reason, a.answer, a.citations) == \
        (True, "unanswerable-question", REFUSAL_MESSAGE, ())
    # N = 1 readable document: bring and dog unseen (ln 4 each), office in it (ln(2 / 1.5)); only office covered.
    assert a.support_ratio == 1.0 and a.answerability.coverage == pytest.approx(math.log(2 / 1.5) / (
        2 * math.log(4) + math.log(2 / 1.5)))
    # The employee may read the pets rule, which covers bring, dog and office: answered and cited.
    b = _service(store, ExtractiveChatModel()).answer("Can I bring my dog to the office?", "staff")
    assert not b.refused and [c.doc_id for c in b.citations] == ["pets"]
    assert b.answer == "Staff may bring a calm dog to the office on Fridays. [1]" and b.answerability.coverage == 1.0
    # Switched off, the off-topic reply goes out as before.
    off = _service(store, ExtractiveChatModel(), answerability=False, restricted_gap=0.0).answer(
        "Can I bring my dog to the office?", "guest")
    assert not off.refused and off.answerability is None and [c.doc_id for c in off.citations] == ["office"]


def test_service_refuses_an_answer_from_documents_that_never_name_the_asked_venue():
    venues = [Document("foh", "Lyric: ushers are called 60 minutes before curtain up. Corbel Hall: ushers are "
                       "called 75 minutes before the start.", "Front of house", acl=Acl.make([], [], "Public")),
              Document("hire", "The Thimble seats 138 and hires for £950 a day.", "Room hire",
                       acl=Acl.make([], [], "Public")),
              Document("bar", "The Lyric bar opens an hour before the show.", "Bars", acl=Acl.make([], [], "Public"))]
    store = make_store(venues)
    q = "How long before the start are ushers called in the Thimble?"
    a = _service(store, FixedModel("Lyric: ushers are called 60 minutes before curtain up [1]."),
                 restricted_gap=0.0, answerability_min_coverage=0.0).answer(q, "guest")
    assert (a.refused, a.refusal_reason) == (True, "unanswerable-question")
    assert a.answerability.reason == "names Thimble, which the answer's documents never mention"
    off = _service(store, FixedModel("Lyric: ushers are called 60 minutes before curtain up [1]."),
                   restricted_gap=0.0, answerability_min_coverage=0.0,
                   answerability_known_names=False).answer(q, "guest")
    assert (off.refused, off.refusal_reason, off.answerability.reason) == (False, None, None)
    assert [c.doc_id for c in off.citations] == ["foh"]


def test_service_keeps_the_weight_of_an_everyday_word_a_top_restricted_passage_uses():
    move = Document("move", "The office move starts in May and costs the team nothing.", "Office move",
                    acl=Acl.make([], [], "Public"))
    paper = Document("paper", "The office move is expected to cost 2 million pounds.", "Board paper",
                     acl=Acl.make(["board"], [], "Restricted"))
    q = "How much is the office move expected to cost?"
    said = FixedModel("The office move starts in May and costs the team nothing [1].")
    with_paper = _service(make_store([move, paper]), said, restricted_gap=0.0, answerability_min_coverage=0.0)
    assert "expect" in with_paper.restricted_terms(with_paper.restricted_passages(q, GUEST))
    kept = with_paper.answer(q, "guest").answerability
    alone = _service(make_store([move]), said, restricted_gap=0.0, answerability_min_coverage=0.0)
    assert alone.restricted_passages(q, GUEST) == []
    dropped = alone.answer(q, "guest").answerability
    # "expected" (Zipf 4.96) weighs nothing when no restricted passage uses it: the rest is covered
    assert dropped.coverage == 1.0 and kept.coverage < 1.0


def test_service_type_check_and_config_errors():
    store = make_store(DOCS)
    # A grounded sentence without any role cannot answer "who".
    a = _service(store, FixedModel("The office opens at 08:00 [1].")).answer("Who opens the office?", "guest")
    assert (a.refused, a.refusal_reason, a.answerability.reason) == \
        (True, "unanswerable-question", "no person in the answer")
    with pytest.raises(ConfigError, match="answerability_min_coverage"):
        _service(store, ExtractiveChatModel(), answerability_min_coverage=1.5).answer("Office?", "guest")


def test_names_are_capitalised_words_inside_a_sentence():
    assert names("What price is Alderbrook paying for Fenwick Street Animal Clinic?") == \
        ["Alderbrook", "Fenwick", "Street", "Animal", "Clinic"]
    # sentence-initial words, "I"-forms, one- and two-letter words, days and months are not names
    assert names("Can I use the PC on Sunday? I'm on call. What about X-rayed dogs in April?") == []
    assert names("What is the CEO's individual LTIP award? Is the guest Wi-Fi open?") == ["CEO's", "LTIP", "Wi-Fi"]
    # a capitalised stop word belongs to the name around it ("The Quayside"): the index has no "the" to find
    assert names("Where is the fire assembly point at The Quayside, Of The Sea?") == ["Quayside", "Sea"]
    # a kinship word standing for one's own relative is a form of address, not a name; the name after it is one
    assert names("If Mum ends up on a ward, do we pay? Can I bring Grandad's dog to see Dad and Uncle Ruari?") == \
        ["Ruari"]


def test_a_name_no_readable_document_mentions_is_unanswerable():
    w = TermWeights.from_texts([OFFICE, PETS])
    q = "What is the office policy for Fenwick dogs?"
    r = assess(q, q, ["Dogs are welcome in the office on Fridays."], [], w, None, 0.0, 0.0)
    assert (r.answerable, r.reason) == (False, "asks about Fenwick, which no readable document mentions")
    assert assess(q, q, ["Dogs are welcome in the office on Fridays."], [], w, None, 0.0, 0.0,
                  check_names=False).answerable
    # a name the readable corpus knows is no reason to refuse
    known = TermWeights.from_texts([OFFICE, PETS, "Fenwick dogs stay home."])
    assert assess(q, q, ["Dogs are welcome in the office on Fridays."], [], known, None, 0.0, 0.0).answerable


def test_a_name_typed_without_its_accent_is_the_documents_name():
    w = TermWeights.from_texts([OFFICE, PETS, "The Café by the lake opens at 9am."])
    sentence = ["The Café by the lake opens at 9am."]
    for q in ("When does the Cafe by the lake open?", "When does the Café by the lake open?"):
        r = assess(q, q, sentence, [], w, None, 0.0, 0.0)
        assert (r.answerable, r.reason) == (True, None)
    q = "When does the Cafe by the lake open?"
    assert salient_terms(q) == salient_terms("When does the Café by the lake open?") == ["cafe", "lake", "open"]


def test_a_known_name_the_quoted_documents_never_mention_makes_the_answer_a_siblings():
    """"Thimble" is a venue the corpus knows; an answer quoting the Lyric's document (which never names the Thimble)
    is about another venue."""
    lyric = "Lyric: ushers are called 60 minutes before curtain up at Sorrelby."
    thimble = "The Thimble seats 138 people."
    other = ["Sorrelby Playhouse box office opens at 10:00.", "Sorrelby staff may park free.", OFFICE]
    w = TermWeights.from_texts([lyric, thimble, *other])
    q = "How long before the start are ushers called for a show in the Thimble?"
    quoted = term_set(lyric)
    r = assess(q, q, [lyric], [], w, None, 0.0, 0.0, document_terms=quoted)
    assert (r.answerable, r.reason) == (False, "names Thimble, which the answer's documents never mention")
    assert r.splittable and not r.on_thresholds
    # without the quoted documents' terms, or with the name among them, nothing is said
    assert assess(q, q, [lyric], [], w, None, 0.0, 0.0).answerable
    assert assess(q, q, [lyric], [], w, None, 0.0, 0.0, document_terms=quoted | {"thimbl"}).answerable
    assert assess(q, q, [lyric], [], w, None, 0.0, 0.0, check_names=False, document_terms=quoted).answerable
    # Even the organisation's own name counts: the quoted documents must name it somewhere.
    own = "When are ushers called at Sorrelby before curtain up?"
    ushers = ["Ushers are called 60 minutes before curtain up."]
    assert assess(own, own, ushers, [], w, None, 0.0, 0.0, document_terms=term_set(OFFICE)).reason == \
        "names Sorrelby, which the answer's documents never mention"
    assert assess(own, own, ushers, [], w, None, 0.0, 0.0, document_terms=term_set(other[0])).answerable


def test_a_kinship_word_the_quoted_documents_never_mention_is_no_absent_name():
    """A forum post knows "Mum"; the fees list quoted never says it. "Mum" stands for the asker's mother, so the
    answer is not about a sibling of anything asked (stennock S005 and S029 at its first contact)."""
    fees = "Hospital stays: the full weekly fee is paid for 21 days, then 80% of it."
    forum = "Mum settled in well at the home."
    w = TermWeights.from_texts([fees, forum, OFFICE])
    quoted = term_set(fees)
    q = "If Mum is in hospital for over three weeks, what fee is paid?"
    assert assess(q, q, [fees], [], w, None, 0.0, 0.0, document_terms=quoted).answerable
    # the same sentence with a venue's name in that place is refused as before
    named = "If Thimble is in hospital for over three weeks, what fee is paid?"
    w2 = TermWeights.from_texts([fees, "Thimble settled in well at the home.", OFFICE])
    assert assess(named, named, [fees], [], w2, None, 0.0, 0.0, document_terms=quoted).reason == \
        "names Thimble, which the answer's documents never mention"


def test_everyday_words_no_document_contains_weigh_nothing_in_coverage():
    """"expected" (Zipf 4.96) is the asker's phrasing; "ferret" (3.01) names what the documents lack. A word a
    restricted passage among the question's top uses keeps its weight: it may be the restricted topic."""
    from ragbench.answer.answerability import zipf

    assert (zipf("expected"), zipf("ferret"), zipf("zebraquartz")) == (4.96, 3.01, 0.0)
    w = TermWeights.from_texts([OFFICE, PETS])
    said = ["The office opens at 08:00."]
    q = "When is the office expected to open?"
    office, opens, unseen = math.log(3 / 2.5), math.log(3 / 1.5), math.log(3 / 0.5)
    assert assess(q, q, said, [], w, None, 0.0, 0.0).coverage == pytest.approx((office + opens) /
                                                                               (office + opens + unseen))
    assert assess(q, q, said, [], w, None, 0.0, 0.0, everyday_zipf=4.5).coverage == 1.0
    assert assess(q, q, said, [], w, None, 0.0, 0.0, everyday_zipf=5.0).coverage < 1.0  # 4.96 < 5
    assert assess(q, q, said, [], w, None, 0.0, 0.0, everyday_zipf=4.5,
                  restricted_terms={"expect"}).coverage < 1.0
    rare = "When is the office ferret expected to open?"
    r = assess(rare, rare, said, [], w, None, 0.0, 0.0, everyday_zipf=4.5)
    assert r.coverage == pytest.approx((office + opens) / (office + opens + unseen))  # ferret weighs, expected not


def test_everyday_words_the_documents_contain_weigh_nothing_when_switched_on():
    """``everyday_known_zipf`` (off by default, session 35): a word the documents do contain weighs nothing when it is
    that common ("work" 5.96, "dog" 5.1, "staff" 5.08; "weekday" 3.31 keeps its weight), unless a restricted top
    passage uses it; a question of nothing but such words has nothing left to cover."""
    from ragbench.answer.answerability import zipf

    assert (zipf("work"), zipf("dog"), zipf("staff"), zipf("weekday")) == (5.96, 5.1, 5.08, 3.31)
    w = TermWeights.from_texts([OFFICE, PETS])
    said = ["Staff may bring a calm dog to the office on Fridays."]
    q = "Which weekday can staff work with a dog?"
    staff, once = math.log(3 / 2.5), math.log(3 / 1.5)  # staff is in both documents; work, dog, weekday in one
    assert assess(q, q, said, [], w, None, 0.0, 0.0).coverage == pytest.approx((staff + once) / (staff + 3 * once))
    assert assess(q, q, said, [], w, None, 0.0, 0.0, everyday_known_zipf=5.5).coverage == \
        pytest.approx((staff + once) / (staff + 2 * once))  # only "work" is that common
    assert assess(q, q, said, [], w, None, 0.0, 0.0, everyday_known_zipf=5.0).coverage == 0.0  # "weekday" alone
    assert assess(q, q, said, [], w, None, 0.0, 0.0, everyday_known_zipf=5.5, restricted_terms={"work"}).coverage \
        == pytest.approx((staff + once) / (staff + 3 * once))
    plain = "Can staff bring a dog?"
    office = ["Staff may work from the office on any weekday."]
    assert assess(plain, plain, office, [], w, None, 0.0, 0.0).coverage < 1.0
    assert assess(plain, plain, office, [], w, None, 0.0, 0.0, everyday_known_zipf=5.0).coverage == 1.0


def test_a_rare_word_no_readable_document_contains_is_unanswerable():
    """"motorbike" (Zipf 3.19) names a thing the documents lack; "expected" (4.96) is phrasing; a verb form
    ("faked") and a word only of the asker's setting are left out, since paraphrases swap them freely."""
    from ragbench.answer.answerability import rare_thing, zipf

    assert (zipf("motorbike"), zipf("faked")) == (3.19, 3.35)
    assert [rare_thing(x, 4.0) for x in ("motorbike", "Motorbike", "faked", "typing", "expected", "19-year", "hers")] \
        == [True, True, False, False, False, False, False]
    w = TermWeights.from_texts([OFFICE, PETS])
    said = ["Staff may bring a calm dog to the office on Fridays."]
    q = "May staff bring a motorbike to the office on Fridays?"
    r = assess(q, q, said, [], w, None, 0.0, 0.0, rare_zipf=4.0)
    assert (r.answerable, r.reason, r.splittable) == \
        (False, "asks about the rare word motorbike, which no readable document contains", True)
    assert assess(q, q, said, [], w, None, 0.0, 0.0).answerable  # off: only reported
    assert assess(q, q, said, [], w, None, 0.0, 0.0, rare_zipf=3.0).answerable  # 3.19 is not below 3.0
    # A slip of the asker's is no missing thing: "offise" is one letter from the documents' "office".
    typo = "May staff bring a dog to the offise on Fridays?"
    assert assess(typo, typo, said, [], w, None, 0.0, 0.0, rare_zipf=4.0).answerable
    for asked in ("May staff who faked a dog bring it to the office on Fridays?",
                  # a word in a verb's place ("if I misplace", "can I nip") is a verb whatever its form
                  "May staff bring a dog to the office on Fridays if we motorbike in?",
                  "I ride a motorbike. May staff bring a dog to the office on Fridays?",
                  "May staff bring a dog to the office on Fridays, not counting the motorbike?"):
        assert assess(asked, asked, said, [], w, None, 0.0, 0.0, rare_zipf=4.0).answerable, asked


def test_a_word_for_a_sanction_is_known_by_a_stated_outcome():
    """Heddlestow B026's shape (session 60): "What sanction was given in case PC-0931?" refused because no readable
    document says "sanction" (Zipf 3.43); the case record states the outcome itself, "Final written warning"."""
    from ragbench.answer.answerability import names_sanction, rule_of

    said = ["Result | Final written warning; it stays on file for 18 months |."]
    w = TermWeights.from_texts([OFFICE, PETS, said[0] + " case PC-0931 given"])
    q = "What sanction was given in case PC-0931?"
    off = assess(q, q, said, ["Case PC-0931"], w, None, 0.0, 0.0, rare_zipf=4.0)
    assert (off.answerable, rule_of(off.reason)) == (False, "rare-word")
    assert assess(q, q, said, ["Case PC-0931"], w, None, 0.0, 0.0, rare_zipf=4.0, sanctions=True).answerable
    # a sentence of the record that states no outcome leaves the word rare
    other = ["The hearing took place on 2 September 2026 for case PC-0931."]
    r = assess(q, q, other, ["Case PC-0931"], w, None, 0.0, 0.0, rare_zipf=4.0, sanctions=True)
    assert (r.answerable, rule_of(r.reason)) == (False, "rare-word")
    assert [names_sanction(x, t) for x, t in (
        ("sanction", "Final written warning; it stays current for 18 months."), ("Sanctions", "He was dismissed."),
        ("punishment", "A first written warning, to remain on his file for 9 months."),
        ("sanction", "Outcome: no further action."), ("sanction", "Suspended on full pay pending the hearing."),
        ("sanction", "A warning light shows on the panel."), ("penalty", "Final written warning"),
        ("sanction", "The hearing took place on 2 September."))] == [True, True, True, True, True, False, False, False]


def test_a_contraction_typed_without_its_apostrophe_is_no_rare_word():
    """"whats" (Zipf 3.88) and "dont" are "what's" and "don't" without the apostrophe, question form and not a thing
    the documents lack (mardleby W012 at its first contact was refused for "whats"); "motorbike" still refuses."""
    from ragbench.answer.answerability import zipf

    assert zipf("whats") < 4.0 and zipf("dont") < 5.0
    w = TermWeights.from_texts([OFFICE, PETS])
    said = ["Staff may bring a calm dog to the office on Fridays."]
    for asked in ("whats the day staff can bring a dog to the office", "why dont staff bring a dog to the office",
                  "hows a dog allowed in the office on Fridays"):
        r = assess(asked, asked, said, [], w, None, 0.0, 0.0, rare_zipf=4.0)
        assert (r.answerable, r.reason) == (True, None), asked
    q = "whats the rule on a motorbike in the office on Fridays"
    assert assess(q, q, said, [], w, None, 0.0, 0.0, rare_zipf=4.0).reason == \
        "asks about the rare word motorbike, which no readable document contains"


def test_one_edit_and_misspellings():
    from ragbench.answer.answerability import misspelling, one_edit

    # 2 deletions, 1 swap, 2 × 25 substitutions, 3 × 26 insertions of which 2 repeat ("aab", "abb")
    assert len(one_edit("ab")) == 2 + 1 + 50 + 76
    assert {"a", "b", "ba", "abc", "xab", "ac"} <= one_edit("ab") and "ab" not in one_edit("ab")
    vocabulary = {stem(w): 1 for w in ("annual", "passwords", "nurses", "certain", "leave")}
    assert [misspelling(w, vocabulary) for w in ("anual", "Paswords", "nursery", "curtains", "leav", "motorbike")] == \
        [True, True, False, False, False, False]


def test_a_graded_code_no_readable_document_mentions_is_unanswerable():
    """"Level 5" is one identifier: its "5" is in every document, the code in none the asker may read."""
    courses = "Level 2 courses cost £1,800. Level 3 courses cost £2,650. Each course lasts 5 terms."
    w = TermWeights.from_texts([OFFICE, PETS, courses])
    said = ["Adult courses cost £2,650."]
    q = "What is the fee for a Level 5 course?"
    r = assess(q, q, said, [], w, None, 0.0, 0.0)
    assert (r.answerable, r.reason) == (False, "asks about Level 5, which no readable document mentions")
    # With a sibling in the answer, the code rule names it first.
    assert assess(q, q, ["Level 3 courses cost £2,650."], [], w, None, 0.0, 0.0).reason == \
        "answers another level5≠level3"
    ok = "What is the fee for a Level 3 course?"
    assert assess(ok, ok, said, [], w, None, 0.0, 0.0).answerable
    # Told in the setting only, the code describes the asker.
    told = "I passed a Level 5 diploma. What is the fee for a level 3 course?"
    assert assess(told, told, said, [], w, None, 0.0, 0.0).answerable


def test_the_check_refuses_an_unhyphenated_counted_kind_its_answer_gives_siblings_of():
    """Pennyholt U063 (session 48): "a 12 kWp solar system" asked, the 4 to 10 kWp rows quoted."""
    rows = ["4 kWp | 10 | £6,190 |.", "6 kWp | 14 | £7,840 |.", "10 kWp | 24 | £11,250 |."]
    w = TermWeights.from_texts([OFFICE, PETS, " ".join(rows) + " solar system price"])
    q = "How much is a 12 kWp solar system?"
    r = assess(q, q, rows, ["Solar system prices"], w, None, 0.0, 0.0)
    assert (r.answerable, r.reason) == (False, "answers another 12-kwp≠10-kwp")
    ok = "How much is a 6 kWp solar system?"
    assert assess(ok, ok, rows, ["Solar system prices"], w, None, 0.0, 0.0).answerable


def test_a_name_or_number_only_in_the_askers_setting_is_no_reason_to_refuse():
    """"I'm 19 and at college." and "… the conference in York …" tell the asker's situation; the documents need not
    mention 19 or York. A name or number in the sentence that asks still must be readable."""
    w = TermWeights.from_texts([OFFICE, PETS])
    said = ["Staff may bring a calm dog to the office on Fridays."]
    told = "I'm 19 and my dog is from York. Can I bring my dog to the office?"
    r = assess(told, told, said, [], w, None, 0.0, 0.0)
    assert (r.answerable, r.reason) == (True, None)
    asked = "Can I bring my York dog to the office on day 19?"
    r = assess(asked, asked, said, [], w, None, 0.0, 0.0)
    assert (r.answerable, r.reason) == (False, "asks about 19, York, which no readable document mentions")
    # Named in the setting and asked about again: still asked.
    again = "My dog is from York. Can York dogs come to the office?"
    assert assess(again, again, said, [], w, None, 0.0, 0.0).reason == \
        "asks about York, which no readable document mentions"


def test_coverage_counts_what_is_asked_not_the_askers_setting():
    """"My dog is elderly and anxious." describes the asker; coverage is of "Can I bring my dog to the office?", so a
    sentence about dogs at the office covers the question in full. A one-sentence question keeps every term, and a
    setting is counted when the asking sentence has no terms of its own ("What now?")."""
    w = TermWeights.from_texts([OFFICE, PETS])
    said = ["Staff may bring a calm dog to the office on Fridays."]
    told = "My dog is elderly and anxious. Can I bring my dog to the office?"
    assert salient_terms(told) == ["dog", "elder", "anxious", "bring", "offic"]
    r = assess(told, told, said, [], w, None, 1.0, 1.0)
    assert (r.coverage, r.answerable) == (1.0, True)
    whole = "Can I bring my elderly and anxious dog to the office?"
    r = assess(whole, whole, said, [], w, None, 1.0, 1.0)
    # "elderly" and "anxious" are in no document (weight ln(3/0.5) each); "bring", "dog", "office" are covered.
    wo, wn = math.log(3 / 0.5), math.log(3 / 0.5)
    covered = sum(w(t) for t in ("bring", "dog", "offic"))
    assert r.coverage == pytest.approx(covered / (covered + wo + wn)) and not r.answerable
    bare = "My dog is elderly and anxious. What now?"
    r = assess(bare, bare, said, [], w, None, 1.0, 1.0)
    assert r.coverage == pytest.approx(w("dog") / (w("dog") + wo + wn)) and not r.answerable


def test_a_clause_the_question_sets_aside_is_neither_covered_nor_a_sibling():
    """"…, not counting bank holidays?" does not ask about bank holidays: its words weigh nothing in coverage, and
    "public holidays" in the answer is no sibling of them."""
    from ragbench.llm.signals import conflicts, without_exclusions

    q = "How many days of leave do I get each year, not counting bank holidays?"
    assert without_exclusions(q) == "How many days of leave do I get each year,  . ?"
    assert without_exclusions("Can I work from my kitchen table instead of coming in?") == \
        "Can I work from my kitchen table  . ?"
    said = ["Staff receive 26 days of leave each year plus the public holidays."]
    assert conflicts(q.replace(", not counting", " and"), said[0]) == ["bank holiday≠public holiday"]
    assert conflicts(q, said[0]) == []
    w = TermWeights.from_texts([said[0], OFFICE])
    r = assess(q, q, said, [], w, None, 1.0, 1.0)
    assert (r.coverage, r.conflicts) == (1.0, ())
    # Asked about, "bank" is a word no document holds: coverage falls.
    plain = "How many days of bank holiday leave do I get each year?"
    assert assess(plain, plain, said, [], w, None, 1.0, 1.0).coverage < 1.0


def test_a_multi_part_question_is_answered_when_one_part_is():
    """The whole two-part question covers too little (the second part asks about something the staff member cannot
    read), its first part is covered in full: a partial answer, the unanswered part named in the JSON."""
    store = make_store(DOCS)
    q = "Can I bring my dog to the office, and what is the zebraquartz bonus pool?"
    svc = _service(store, ExtractiveChatModel(), restricted_gap=0.0, answerability_min_coverage=0.6)
    a = svc.answer(q, "staff")
    assert not a.refused and a.answer == "Staff may bring a calm dog to the office on Fridays. [1]"
    check = a.answerability
    assert check.answerable and check.coverage < 0.6  # the whole question alone would be refused
    assert [(text, r.answerable, r.coverage) for text, r in check.parts] == [
        ("Can I bring my dog to the office", True, 1.0), ("what is the zebraquartz bonus pool?", False, 0.0)]
    assert a.unanswered_parts == ("what is the zebraquartz bonus pool?",)
    assert a.to_json()["unanswered_parts"] == ["what is the zebraquartz bonus pool?"]
    from ragbench.commands.ask import answer_lines

    assert answer_lines(a)[:2] == [a.answer, "(not answered: what is the zebraquartz bonus pool?)"]
    # With decomposition off, the whole check decides: refused.
    off = _service(store, ExtractiveChatModel(), restricted_gap=0.0, answerability_min_coverage=0.6,
                   decompose=False).answer(q, "staff")
    assert (off.refused, off.refusal_reason, off.unanswered_parts) == (True, "unanswerable-question", ())
    assert off.to_json()["unanswered_parts"] == []
    # A one-part question has no parts.
    one = svc.answer("Can I bring my dog to the office?", "staff")
    assert not one.refused and one.answerability.parts == () and one.unanswered_parts == ()


def test_combine_parts_verdicts():
    from ragbench.answer.answerability import AnswerabilityReport, combine_parts

    def report(ok: bool, reason: str | None = None) -> AnswerabilityReport:
        return AnswerabilityReport(0.2, 0.3, None, True, ok, reason)

    whole = report(False, "coverage 0.20 < 0.55 and similarity 0.30 < 0.62")
    assert combine_parts(report(True), [("a", report(False, "x"))]) == report(True)  # the whole decides first
    assert combine_parts(whole, []) == whole
    partial = combine_parts(whole, [("a?", report(True)), ("b?", report(False, "no number in the answer"))])
    assert (partial.answerable, partial.reason, partial.unanswered_parts) == (True, None, ("b?",))
    none = combine_parts(whole, [("a?", report(False, "no number in the answer")), ("b?", report(False, "coverage x"))])
    assert not none.answerable and none.unanswered_parts == () and none.on_thresholds
    assert none.reason == ("coverage 0.20 < 0.55 and similarity 0.30 < 0.62 (whole question); parts: "
                           "'a?': no number in the answer; 'b?': coverage x")
    # A contradiction of the whole question (no answer type, a sibling qualifier, an unknown name) is never
    # rescued by a part: its sentences would be quoted as they are.
    typed = report(False, "no person in the answer")
    assert combine_parts(typed, [("a?", report(True))]) == typed and not typed.on_thresholds
    # A name the quoted documents never mention may be one part's only ("What margin would Ferriby Bank charge,
    # and how much cash did we have?"): the other part is answered on its own.
    sibling = report(False, "names Ferriby, which the answer's documents never mention")
    split = combine_parts(sibling, [("a?", report(False, "names Ferriby, which …")), ("b?", report(True))])
    assert (split.answerable, split.unanswered_parts) == (True, ("a?",))


def test_the_asked_type_must_come_from_a_sentence_on_the_question_s_topic():
    """Marrowgate m061's shape: "What commission do spa therapists earn …?" answered with the contract sentence (no
    rate) and a spa discount from a perks list (a percentage). The percentage is off the topic: that sentence and its
    own heading cover under 0.2 of the question's weighted terms. Read under a heading that names the commission, the
    same sentence is on the topic."""
    spa = ("Retail sales are recorded against your name on TillPoint, and commission is paid at the rate in your "
           "contract.")
    perks = "Spa: 25 per cent off treatments at Brackenwell Spa."
    w = TermWeights.from_texts([spa, perks, OFFICE])
    q = "What commission do spa therapists earn on retail product sales?"
    said = [spa, perks]
    off = assess(q, q, said, ["Spa handbook", "Staff benefits"], w, None, 0.0, 0.0,
                 sentence_contexts=["Spa handbook", "Staff benefits"], type_coverage=0.2)
    assert (off.answerable, off.expected_type, off.type_found, off.reason) == (
        False, "percent", False, "no percent in an answer sentence on the question's topic (coverage < 0.2)")
    # 0 = the type anywhere in the answer (the rule off).
    assert assess(q, q, said, [], w, None, 0.0, 0.0, sentence_contexts=["", ""], type_coverage=0.0).answerable
    on = assess(q, q, said, [], w, None, 0.0, 0.0, sentence_contexts=["", "Spa therapists: retail commission"],
                type_coverage=0.2)
    assert on.answerable and on.type_found
    # Exactly at the bar passes: the perks sentence covers "spa" alone, log(4/1.5) of the question's total weight.
    share = math.log(4 / 1.5) / (4 * math.log(4 / 1.5) + 3 * math.log(4 / 0.5))
    assert assess(q, q, said, [], w, None, 0.0, 0.0, sentence_contexts=["", ""], type_coverage=share).answerable
    assert not assess(q, q, said, [], w, None, 0.0, 0.0, sentence_contexts=["", ""],
                      type_coverage=share + 1e-9).answerable


def test_a_table_row_states_the_type_its_column_header_names():
    """Gorsebeck z020's shape: the row "18-tonne rigid dray | Class C | 6 weeks |" under the header "| Vehicle |
    Licence needed | Safety inspection every |" states a frequency ("every 6 weeks"), though the row alone holds
    none. Without the header in the row's own context, or with a header of another width, it is read alone."""
    row = "18-tonne rigid dray with tail-lift | Class C | 6 weeks |."
    header = "| Vehicle | Licence needed | Safety inspection every |"
    w = TermWeights.from_texts([row, OFFICE, PETS])
    q = "How often does an 18-tonne dray need a safety inspection?"
    read = assess(q, q, [row], [], w, None, 0.0, 0.0, sentence_contexts=[f"Dray fleet handbook . {header}"],
                  type_coverage=0.2)
    assert (read.answerable, read.expected_type, read.type_found) == (True, "frequency", True)
    alone = assess(q, q, [row], [], w, None, 0.0, 0.0, sentence_contexts=["Dray fleet handbook"], type_coverage=0.2)
    assert (alone.answerable, alone.type_found, alone.reason) == (False, False, "no frequency in the answer")
    narrow = assess(q, q, [row], [], w, None, 0.0, 0.0, sentence_contexts=["| Vehicle | Safety inspection every |"],
                    type_coverage=0.2)
    assert (narrow.answerable, narrow.type_found) == (False, False)


def test_a_specific_word_the_answers_documents_never_mention_is_a_sibling():
    """kestrel k074: "surveyor" is in the readable documents, but the quoted rota pays operatives and supervisors."""
    from ragbench.answer.answerability import after_subject

    rota = "On-call operatives receive £55 a day at weekends. On-call supervisors receive £45 a day at weekends."
    repairs = "A surveyor inspects damp within 10 working days."
    w = TermWeights.from_texts([OFFICE, rota, repairs])
    said = ["On-call operatives receive £55 a day at weekends."]
    quoted = term_set("On-call allowances " + rota)
    q = "What standby allowance does a surveyor get for a weekend on call?"
    r = assess(q, q, said, [], w, None, 0.0, 0.0, document_terms=quoted, sibling_zipf=4.0)
    assert (r.answerable, r.reason, r.splittable) == \
        (False, "asks about the word surveyor, which the answer's documents never mention", True)
    assert assess(q, q, said, [], w, None, 0.0, 0.0, document_terms=quoted).answerable  # off
    assert assess(q, q, said, [], w, None, 0.0, 0.0, document_terms=quoted, sibling_zipf=3.0).answerable  # 3.3
    # quoted from a document that mentions the asked word: not a sibling
    assert assess(q, q, said, [], w, None, 0.0, 0.0, document_terms=quoted | term_set(repairs),
                  sibling_zipf=4.0).answerable
    # a word the readable documents do not know is the rare-word rule's, not this one's
    odd = "What standby allowance does a farrier get for a weekend on call?"
    assert assess(odd, odd, said, [], w, None, 0.0, 0.0, document_terms=quoted, sibling_zipf=4.0).answerable
    # a verb after its subject is the asker's phrasing: "can I inspect" paraphrases "check"
    assert [after_subject(x, "Can I inspect it, and should surveyors be told?") for x in ("inspect", "surveyors")] \
        == [True, False]
    verb = "Can I inspect the rota for weekend on call pay?"
    assert assess(verb, verb, said, [], w, None, 0.0, 0.0, document_terms=quoted, sibling_zipf=4.0).answerable


def test_a_year_asked_about_must_be_stated_by_the_answer_or_its_headings():
    """esterwick e078: "What operating profit did Penwarden Homes make in 2023?" answered with the table's 2024 and 2025
    columns; a year of the asker's setting ("I joined in 2019.") need not be stated."""
    from ragbench.answer.answerability import rule_of, years

    assert [years(t) for t in ("revenue in 2024, and why?", "FY 2023/24", "the 2024-2025 season", "£2,025",
                               "2,025 staff", "£2025.50", "in 20245", "ref 2023-17", "1999/2000")] == \
        [["2024"], ["2023", "2024"], ["2024", "2025"], [], [], [], [], ["2023"], ["1999", "2000"]]
    accounts = ("Operating profit was £15.2 million in 2024 and £18.8 million in 2025. The target made a profit. "
                "It was founded in 2023.")  # 2023 is known: else the unknown-identifier rule refuses first
    w = TermWeights.from_texts([OFFICE, accounts])
    q = "What operating profit did the target make in 2023?"
    row = ["Operating profit | £15.2 million | £18.8 million |."]
    r = assess(q, q, row, ["Penwarden accounts | | 2024 | 2025"], w, None, 0.0, 0.0, check_years=True)
    assert (r.answerable, r.reason, r.splittable) == \
        (False, "asks about the year 2023, which the answer never states", True)
    assert rule_of(r.reason) == "unstated-year"
    assert assess(q, q, row, ["Penwarden accounts | | 2024 | 2025"], w, None, 0.0, 0.0).answerable  # off
    # stated by the sentence's table header, or by a season code that spans it
    assert assess(q, q, row, ["Penwarden accounts | | 2023 | 2024"], w, None, 0.0, 0.0, check_years=True).answerable
    assert assess(q, q, ["Operating profit for FY 2022/23 was £9 million."], [], w, None, 0.0, 0.0,
                  check_years=True).answerable
    told = "I joined in 2019. What operating profit did the target make?"
    assert assess(told, told, row, ["Penwarden accounts | | 2024 | 2025"], w, None, 0.0, 0.0,
                  check_years=True).answerable


def test_what_holds_from_a_date_is_answered_only_when_the_answer_states_the_date():
    """marrowgate m057: today's dog charge does not answer "How much will it be from April 2026?"."""
    from ragbench.answer.answerability import change_dates, states_date

    assert [change_dates(q) for q in ("What will it cost from April 2026?", "And from next August?",
                                      "What is it from 1st September 2025, and after 2026/27?",
                                      "Where did it stop from the 3rd of May?", "How much is it now?")] == \
        [["April 2026"], ["next August"], ["1st September 2025", "2026/27"], [], []]
    assert [states_date("April 2026", e) for e in ("From 1 April 2026: £25.", "April 1, 2026", "April 2026",
                                                   "1 April 2025 to 31 March 2026", "April prices")] == \
        [True, True, True, False, False]
    assert states_date("next August", "Fees from August") and states_date("2026/27", "Prices for 2026/27")
    rates = "Dogs at The Quayside: £20 per dog per night. Rates apply from 1 April 2025 to 31 March 2026."
    w = TermWeights.from_texts([OFFICE, rates])
    q = "How much will the dog charge at The Quayside be from April 2026?"
    now = ["Dogs at The Quayside: £20 per dog per night."]
    r = assess(q, q, now, ["Room rates 2025/26"], w, None, 0.0, 0.0, check_dates=True)
    assert (r.answerable, r.reason, r.splittable) == \
        (False, "asks what holds from April 2026, which the answer never states", True)
    assert assess(q, q, now, ["Room rates 2025/26"], w, None, 0.0, 0.0).answerable  # off
    # the date in the answer's headings (a table's column "From 1 April 2026") is stated
    assert assess(q, q, ["Dogs at The Quayside | £20 | £25 |."], ["Rates | Now | From 1 April 2026"], w, None, 0.0,
                  0.0, check_dates=True).answerable


class NoCosine:
    """Every word embeds to the zero vector: word cosines credit nothing, so only a dictionary synonym can."""

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.zeros((len(texts), 4), dtype=np.float32)


def test_wordnet_synonyms_of_rare_words_cover_a_paraphrase():
    """"vino" (Zipf 2.77) shares a WordNet synset with "wine": the answer about wine covers it, and the rare-word rule
    no longer refuses it. A common word ("bring", 5.27) is never looked up: its many senses give false synonyms."""
    from conftest import extra

    extra("wn", "wordnet")
    from ragbench.answer.answerability import WordMatcher
    from ragbench.answer.synonyms import synonyms

    assert synonyms("vino") == frozenset({"wine"})
    assert synonyms("Telly") == frozenset({"television", "tv"})
    assert synonyms("hydrogen") == frozenset()  # its only other lemma, "H", is one letter
    assert synonyms("£4.50") == frozenset() and synonyms("ferret") == frozenset()
    assert "alcoholic" in synonyms("boozers")  # inflections are reduced first (boozers → boozer)
    on, off = WordMatcher(NoCosine(), 4.0), WordMatcher(NoCosine())
    assert (on.synonym_in("vino", ["glass", "Wines"]), on.best("vino", ["glass", "Wines"])) == (True, 1.0)
    assert (off.synonym_in("vino", ["wine"]), off.best("vino", ["wine"])) == (False, 0.0)
    assert not WordMatcher(NoCosine(), 2.0).synonym_in("vino", ["wine"])  # 2.77 is not below 2.0
    assert not on.synonym_in("bring", ["take", "convey"])  # "take" is a synonym of "bring", but "bring" is common

    bar = "A small glass of wine is 125 ml."
    w = TermWeights.from_texts([OFFICE, PETS, bar])
    q = "How big is a small glass of vino?"
    refused = assess(q, q, [bar], [], w, None, 0.0, 0.0, matcher=off, rare_zipf=4.0)
    assert (refused.answerable, refused.reason) == \
        (False, "asks about the rare word vino, which no readable document contains")
    answered = assess(q, q, [bar], [], w, None, 0.0, 0.0, matcher=on, rare_zipf=4.0)
    assert answered.answerable and answered.soft_coverage == 1.0
    # Coverage: "glass" and "small" are met, "vino" only through its synonym.
    plain = assess(q, q, [bar], [], w, None, 0.0, 0.0, matcher=off)
    weights = [w(t) for t in ("small", "glass", "vino")]
    assert plain.soft_coverage == pytest.approx(sum(weights[:2]) / sum(weights))


def test_the_typed_sentence_must_name_every_specific_asked_word():
    """answerability_typed_zipf: the price must come from one sentence naming both "gluten-free" and "sausages"
    (Zipf 3.62 and 3.3); the pork sausages' row and the gluten-free loaf's cover the question only together. Common
    words ("much", "pack", "free") are not asked of the sentence."""
    from ragbench.answer.answerability import rule_of, zipf

    assert (zipf("gluten"), zipf("sausages"), zipf("loaf")) == (3.62, 3.3, 3.49)
    rows = ["Pork sausages, pack of 6 | £5.75 |.", "Gluten-free seeded loaf | £5.60 |."]
    w = TermWeights.from_texts([*rows, "Gluten-free sausages are not sold.", OFFICE])
    q = "How much is a pack of gluten-free sausages?"
    assert assess(q, q, rows, [], w, None, 0.0, 0.0, sentence_contexts=["Prices", "Prices"]).answerable
    r = assess(q, q, rows, [], w, None, 0.0, 0.0, sentence_contexts=["Prices", "Prices"], typed_zipf=4.0)
    assert (r.answerable, r.reason, rule_of(r.reason), r.splittable) == \
        (False, "no money in an answer sentence naming gluten, sausages", "type-specific", True)
    one = ["Gluten-free pork sausages, pack of 6 | £6.10 |.", *rows]
    assert assess(q, q, one, [], w, None, 0.0, 0.0, sentence_contexts=["Prices"] * 3, typed_zipf=4.0).answerable
    # A word the sentence's own heading names counts as named.
    assert assess(q, q, rows[:1], [], w, None, 0.0, 0.0, sentence_contexts=["Gluten-free range"],
                  typed_zipf=4.0).answerable


class PoochIsDog:
    """Word vectors: "pooch" and "dog"/"dogs" share axis 0; every other text gets its own axis (by first letter)."""

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), 27), dtype=np.float32)
        for i, t in enumerate(texts):
            w = t.lower()
            out[i, 0 if w in {"pooch", "dog", "dogs"} else 1 + (ord(w[0]) - ord("a")) % 26] = 1.0
        return out


def test_the_per_sentence_type_test_can_read_soft_coverage():
    """answerability_type_soft: the sentence holding the asked time covers "pooch" through its word cosine with
    "dog", as the main coverage check would credit it; by exact terms it covers nothing asked and is off the topic."""
    from ragbench.answer.answerability import WordMatcher

    said = ["A calm dog may come in after 10:00."]
    w = TermWeights.from_texts([OFFICE, PETS, *said])
    q = "From what time is a pooch allowed?"
    m = WordMatcher(PoochIsDog())
    exact = assess(q, q, said, [], w, None, 0.0, 0.0, matcher=m, sentence_contexts=[""], type_coverage=0.2)
    assert (exact.answerable, exact.reason) == \
        (False, "no time in an answer sentence on the question's topic (coverage < 0.2)")
    soft = assess(q, q, said, [], w, None, 0.0, 0.0, matcher=m, sentence_contexts=[""], type_coverage=0.2,
                  type_soft=True)
    assert soft.answerable and soft.soft_coverage > soft.coverage


def test_a_part_of_the_week_is_met_by_the_names_of_its_days():
    """Fletchmoor A070's shape (session 58): "axe throwing for 8 of us on a weekday" answered with "£25 Monday to
    Thursday" was refused because "weekday" is in no readable document. With ``week_parts`` the matcher meets a word
    for a part of the week by one of its days' names, as it meets "grandad" by "grandparent": it is covered and no
    rare word. A weekend is not met by a Tuesday."""
    from ragbench.answer.answerability import WordMatcher, days_named_for

    said = ["Axe throwing, 8 or more people: £25 Monday to Thursday, £30 Friday to Sunday."]
    w = TermWeights.from_texts(["The office opens at 08:00.", *said])  # no document says "weekday"
    q = "how much is axe throwing for 8 of us on a weekday?"
    on, off = WordMatcher(NoCosine(), week_parts=True), WordMatcher(NoCosine())
    r = assess(q, q, said, ["Prices"], w, None, 0.5, 0.0, matcher=on, rare_zipf=4.0)
    assert r.answerable and r.soft_coverage == pytest.approx(1.0)
    r = assess(q, q, said, ["Prices"], w, None, 0.5, 0.0, matcher=off, rare_zipf=4.0)
    assert (r.answerable, r.reason) == (False, "asks about the rare word weekday, which no readable document contains")
    assert days_named_for("weeknights", ["Standby", "Monday"]) and days_named_for("Weekend", ["sunday"])
    assert not days_named_for("weekend", ["Tuesday", "Friday"]) and not days_named_for("week", ["Monday"])
    assert not on.synonym_in("weekend", ["Tuesday"]) and on.synonym_in("midweek", ["Wednesday"])


def test_a_closure_to_come_asked_when_needs_a_date_on_the_calendar():
    """Ovenholme B049's shape (session 48): "when is the Dowerby shop closing down" answered with the shop's opening
    hours, which carry the time type and the word "closed". A closure to come asks for a day on the calendar."""
    from ragbench.answer.answerability import asks_closure_date, rule_of, states_calendar_date

    hours = ["Dowerby | 2 Sheafgate Parade | Mon to Sat 7:30am to 5pm; closed Sunday |."]
    w = TermWeights.from_texts([OFFICE, PETS, hours[0] + " The Dowerby shop closes on 27 February 2027."])
    q = "when is the Dowerby shop closing down"
    r = assess(q, q, hours, ["Our shops"], w, None, 0.0, 0.0, check_closures=True)
    assert (r.answerable, r.reason) == (False, "asks for the date of a closure, which the answer never states")
    assert rule_of(r.reason) == "closure-date"
    assert assess(q, q, hours, ["Our shops"], w, None, 0.0, 0.0).answerable  # the switch off: as before
    dated = ["The Dowerby shop closes on 27 February 2027."]
    assert assess(q, q, dated, ["Board paper"], w, None, 0.0, 0.0, check_closures=True).answerable
    # Asked anywhere in the question; not of a day's hours or a closure that is no event to come.
    assert [asks_closure_date(x) for x in (
        "Is Saltcote depot closing, and if so when?", "Is Harrowmead going to close? When?",
        "When is the Nethercrane centre closing for good?", "What time does the café close?",
        "When is the shop closing today?", "When does bag drop close for a flight to Europe?",
        "How much a year would closing Orrin Street Baths save?")] == [True, True, True, False, False, False, False]
    assert [states_calendar_date(t) for t in (
        "closes on 30 September 2026", "by March 2027", "Sept 30th", "30/09/2026", "in 2027",
        "Monday to Friday 08:30 to 18:30, closed at weekends", "From November to February every centre closes at 5pm"
    )] == [True, True, True, True, True, False, False]


def test_a_closure_to_come_is_dated_by_the_answers_own_sentences_naming_a_year():
    """Yarrowcombe E049 and gildersby K049's shapes (session 55): "When is the Tessingham practice closing?" answered
    with an hours row whose title says "price list 2026-27", or with the Christmas closure "from 24 December to 2
    January". With closure_years a title dates no closure, and a day and month alone recur every year."""
    from ragbench.answer.answerability import rule_of, states_closure_date

    hours = ["Tessingham shop | 9:30am to 5pm (closed Mondays) |."]
    yearly = ["We close on bank holidays and from 24 December to 2 January."]
    w = TermWeights.from_texts([OFFICE, PETS, hours[0] + " " + yearly[0] + " Price list 2026-27."])
    q = "When is the Tessingham shop closing?"
    for said, title in ((hours, "Price list 2026-27"), (yearly, "Visiting our shops")):
        old = assess(q, q, said, [title], w, None, 0.0, 0.0, check_closures=True)
        new = assess(q, q, said, [title], w, None, 0.0, 0.0, check_closures=True, closure_years=True)
        assert (old.answerable, new.answerable) == (True, False)
        assert (new.reason, rule_of(new.reason)) == ("asks for the date of a closure, which the answer never states",
                                                     "closure-date")
    dated = ["The Tessingham shop closes on 27 March 2027."]
    assert assess(q, q, dated, ["Board paper"], w, None, 0.0, 0.0, check_closures=True, closure_years=True).answerable
    assert [states_closure_date(t) for t in (
        "closes on 30 September 2026", "by March 2027", "in 2027", "30/09/26", "Sept 30th", "closed 25 and 26 December",
        "from 24 December to 2 January", "Monday to Friday 08:30 to 18:30, closed at weekends")] == [
        True, True, True, True, False, False, False, False]


def test_a_profit_asked_needs_a_profit_or_loss_named_by_the_answer():
    """Ravelstock T066's shape (session 55): "What profit did Welterby Caning and Rush make last year?" answered with
    a purchase paper's turnover and rent rows. A profit is a figure of its own: the answer, with its table headers,
    must name a profit or loss; a document's title does not count."""
    from ragbench.answer.answerability import asks_profit, rule_of, states_profit

    rows = ["Welterby turnover | £310,000 |.", "Premises | leased; 6 years left at £14,000 a year |."]
    w = TermWeights.from_texts([OFFICE, PETS, " ".join(rows) + " Operating profit | £41,000 |. Last year."])
    q = "What profit did Welterby make last year?"
    r = assess(q, q, rows, ["Profit and loss"], w, None, 0.0, 0.0, check_profits=True)
    assert (r.answerable, r.reason, rule_of(r.reason)) == (
        False, "asks for a profit, which the answer never states", "profit")
    assert assess(q, q, rows, ["Profit and loss"], w, None, 0.0, 0.0).answerable  # the switch off: as before
    # named by the sentence itself, or by its table header
    assert assess(q, q, ["Operating profit | £41,000 |."], ["Board paper"], w, None, 0.0, 0.0,
                  check_profits=True).answerable
    assert assess(q, q, ["Last year | £41,000 |."], ["Board paper"], w, None, 0.0, 0.0, check_profits=True,
                  sentence_contexts=["| Operating profit |"]).answerable
    assert [asks_profit(x) for x in (
        "What profit did Wythenbury make last year?", "what was the operating result for the half year",
        "What was EBITDA?", "What were the profits in 2025?", "What was the net loss?",
        "What do we do with surplus bread?", "What was turnover last year?", "What is the loss of earnings cover?"
    )] == [True, True, True, True, True, False, False, False]
    assert [states_profit(t) for t in (
        "Operating profit | £61,000 |.", "a surplus of £24,000", "Net result | -£3,000 |", "a loss of £8,000",
        "Turnover | £310,000 |.", "Rent | £14,000 a year |")] == [True, True, True, True, False, False]


def test_service_refuses_opening_hours_for_a_closure_to_come_by_default():
    shops = [Document("shops", "Dowerby shop, 2 Sheafgate Parade: Mon to Sat 7:30am to 5pm; closed Sunday.",
                      "Our shops", acl=Acl.make([], [], "Public"))]
    q = "when is the Dowerby shop closing down"
    hours = "Dowerby shop, 2 Sheafgate Parade: Mon to Sat 7:30am to 5pm; closed Sunday [1]."
    a = _refused_by_default(shops, q, hours, "closure-date", "answerability_closure_dates")
    assert a.answerability.reason == "asks for the date of a closure, which the answer never states"


def test_a_figure_of_a_period_named_by_its_end_needs_that_end_stated():
    """Kittlewood N066's shape (session 49): "total income for the full year to March 2026" answered with the
    accounts' row for the six months to 30 September (headers "Six months to 30 Sept 2026 | Budget")."""
    from ragbench.answer.answerability import period_ends, rule_of, states_period_end

    row = ["Total income | £2,865,000 | £2,910,000 |."]
    headers = ["Management accounts | Six months to 30 Sept 2026 | Budget"]
    w = TermWeights.from_texts([OFFICE, PETS, row[0] + " Six months to 30 Sept 2026. Budget."])
    q = "What was our total income for the full year to March 2026?"
    r = assess(q, q, row, ["Management accounts"], w, None, 0.0, 0.0, sentence_contexts=headers, check_periods=True)
    assert (r.answerable, r.reason) == (False, "asks for a period ending March 2026, which the answer never states")
    assert rule_of(r.reason) == "period-end"
    assert assess(q, q, row, ["Management accounts"], w, None, 0.0, 0.0, sentence_contexts=headers).answerable
    half = "What was total income in the half-year to 30 September 2026?"
    assert assess(half, half, row, ["Management accounts"], w, None, 0.0, 0.0, sentence_contexts=headers,
                  check_periods=True).answerable
    assert period_ends("What EBITDA did Ledwell's make in the year ended 31 March 2025, and in the quarter ending "
                       "June?") == [("March 2025", 3, "2025", True), ("June", 6, None, False)]
    assert period_ends("What was revenue for the half year to september?") == [("september", 9, None, False)]
    assert period_ends("What was revenue for the year to date?") == []
    # A month as a date (a day before it, a year after it, "to" before it), a numeric date, or, for a year-long
    # period, the financial year that ends in the asked year; not "may" the verb, not another year.
    assert [states_period_end(*asked, text) for asked, text in (
        ((9, "2026", False), "Six months to 30 Sept 2026"), ((3, "2026", True), "Revenue, 2025-26 actual"),
        ((3, "2026", True), "FY 2025/26"), ((3, "2026", True), "31/03/2026"), ((5, None, False), "to May"),
        ((5, None, False), "you may go"), ((3, "2026", True), "year to 31 March 2027"),
        ((3, "2026", False), "Half year 2025-26"))] == [True, True, True, True, True, False, False, False]


def test_a_span_of_months_with_its_year_needs_its_end_stated():
    """Pommerstow V063's shape (session 63): "total income for October to December 2026" answered with the rows of
    the accounts for April to September 2026; a span of months with its year names a period by its two ends."""
    from ragbench.answer.answerability import period_ends

    row = ["Total income | £1,094,000 | £1,079,000 |."]
    headers = ["Management accounts | April to September 2026 | Budget"]
    w = TermWeights.from_texts([OFFICE, PETS, row[0] + " April to September 2026. Budget."])
    q = "What was total income for October to December 2026?"
    r = assess(q, q, row, ["Management accounts"], w, None, 0.0, 0.0, sentence_contexts=headers, check_periods=True,
               period_spans=True)
    assert (r.answerable, r.reason) == (False, "asks for a period ending December 2026, which the answer never states")
    # without the span form the period rule reads no period in the question
    assert assess(q, q, row, ["Management accounts"], w, None, 0.0, 0.0, sentence_contexts=headers,
                  check_periods=True).answerable
    same = "What was total income for April to September 2026?"
    assert assess(same, same, row, ["Management accounts"], w, None, 0.0, 0.0, sentence_contexts=headers,
                  check_periods=True, period_spans=True).answerable
    assert period_ends(q, spans=True) == [("December 2026", 12, "2026", False)]
    assert period_ends("sales Apr–Sep 2026, and the half year to September 2026?", spans=True) == [
        ("September 2026", 9, "2026", False)]  # one period, read once
    # a span needs its year: a season asked ("from May to September") names no accounting period
    assert period_ends("Is the pool open from May to September?", spans=True) == []
    assert period_ends(q) == []


def test_service_refuses_another_periods_figure_by_default():
    accounts = [Document("accounts", "Six months to 30 September 2026: total income was £2,865,000.",
                         "Management accounts", acl=Acl.make([], [], "Public"))]
    q = "What was our total income for the full year to March 2026?"
    said = "Six months to 30 September 2026: total income was £2,865,000 [1]."
    _refused_by_default(accounts, q, said, "period-end", "answerability_period_ends")


def test_service_refuses_another_spans_figure_by_default():
    accounts = [Document("accounts", "April to September 2026: total income was £1,094,000.",
                         "Management accounts", acl=Acl.make([], [], "Public"))]
    q = "What was total income for October to December 2026?"
    said = "April to September 2026: total income was £1,094,000 [1]."
    a = _refused_by_default(accounts, q, said, "period-end", "answerability_period_spans")
    assert a.answerability.reason == "asks for a period ending December 2026, which the answer never states"


def test_the_top_of_a_band_needs_a_range_stated():
    """Tappersley I052's shape (session 49): "the top of the qualified technician pay band" (the bands are
    Confidential) answered from the public advert's "from £27,500 a year", which says where the band starts."""
    from ragbench.answer.answerability import asks_band_top, rule_of, states_range

    advert = ["Qualified technician | from £27,500 a year | 40 hours |."]
    w = TermWeights.from_texts([OFFICE, PETS, advert[0] + " T2 | Qualified technician | £27,500 | £31,800 |"])
    q = "What's the top of the qualified technician pay band?"
    r = assess(q, q, advert, ["Jobs"], w, None, 0.0, 0.0, check_band_tops=True)
    assert (r.answerable, r.reason) == (False, "asks for the top of a band, which the answer never states")
    assert rule_of(r.reason) == "band-top"
    assert assess(q, q, advert, ["Jobs"], w, None, 0.0, 0.0).answerable  # the switch off: as before
    band = ["T2 | Qualified technician | £27,500 | £31,800 |."]
    assert assess(q, q, band, ["Pay bands"], w, None, 0.0, 0.0, check_band_tops=True).answerable
    assert [asks_band_top(x) for x in (
        "what do your instructors earn at the top of their pay scale", "What is the maximum of the E1 band?",
        "What is the top of pay band P2?", "What is the maximum vehicle height?", "What's the top speed allowed?")
    ] == [True, True, True, False, False]
    # with top_pay, the most someone can earn and a maximum salary, wage or pay rate ask for a band's top too; the
    # most paid for a hotel or on a claim, a top speed and "the top boss" do not
    top_pay = ("What's the most a room leader can earn per hour?", "what's the max salary for a property manager",
               "What is the highest freelance hourly rate we pay?", "what's the top pay for a pharmacy technician",
               "What is the most we pay per night for a hotel in London?",
               "What's the most you'd pay out on one claim?", "What's the top speed allowed?",
               "how much does the top boss earn")
    assert [asks_band_top(x, top_pay=True) for x in top_pay] == [True, True, True, True, False, False, False, False]
    assert not any(asks_band_top(x) for x in top_pay[:4])
    assert [states_range(t) for t in (
        "£27,500 | £31,800", "up to £800", "£12.90 to £13.85", "£29,500–£34,000", "from £27,500 a year",
        "Room leader | £14.60 an hour")] == [True, True, True, True, False, False]


def test_a_column_for_a_band_top_states_the_top():
    """Vinegarth Y025's shape (session 59, a pair's first contact): "top of band for a shop supervisor?" refused with
    the row "S1 | Shop supervisor | £15.95 |" of a pay sheet that records each band's top in a column of its own."""
    from ragbench.answer.answerability import states_band_top

    row = ["S1 | Shop supervisor | £15.95 |"]
    header = ["Pay bands . | Band | Roles | Top of band (per hour) |"]
    w = TermWeights.from_texts([OFFICE, PETS, row[0] + " top band shop supervisor"])
    q = "top of band for a shop supervisor?"
    on = dict(check_band_tops=True, sentence_contexts=header)
    assert not assess(q, q, row, ["Pay bands"], w, None, 0.0, 0.0, **on).answerable  # a range only, as before
    assert assess(q, q, row, ["Pay bands"], w, None, 0.0, 0.0, top_columns=True, **on).answerable
    # the column's header must name the top: a rate column does not
    rate = ["Pay bands . | Band | Roles | Rate per hour |"]
    assert not assess(q, q, row, ["Pay bands"], w, None, 0.0, 0.0, top_columns=True, check_band_tops=True,
                      sentence_contexts=rate).answerable
    assert [states_band_top(t) for t in (
        "Band S1 | Roles Shop supervisor | Top of band (per hour) £15.95", "Band B2 | Maximum £31,800",
        "Anyone at the top of their band for two years receives a one-off payment of £400",
        "Role Senior printer | Rate £15.60", "Maximum group size 12 | Price £40")] == [True, True, False, False, False]


def test_a_band_top_row_names_the_asked_role():
    """Vinegarth Y066's shape (session 59's loss of the top-column rule): "what is the top of band for an area
    manager?" answered with the shop manager's row of a sheet with no area manager band."""
    from ragbench.answer.answerability import band_top_role, rule_of

    row = ["M1 | Shop manager | £17.40 |"]
    header = ["Pay bands . | Band | Roles | Top of band (per hour) |"]
    w = TermWeights.from_texts([OFFICE, PETS, row[0] + " top band area manager"])
    q = "what is the top of band for an area manager?"
    on = dict(check_band_tops=True, sentence_contexts=header, top_columns=True)
    assert assess(q, q, row, ["Pay bands"], w, None, 0.0, 0.0, **on).answerable  # any role's row, before
    r = assess(q, q, row, ["Pay bands"], w, None, 0.0, 0.0, top_column_roles=True, **on)
    assert (r.answerable, rule_of(r.reason)) == (False, "band-top")
    shop = "What's the top of band for a shop manager?"
    assert assess(shop, shop, row, ["Pay bands"], w, None, 0.0, 0.0, top_column_roles=True, **on).answerable
    assert [sorted(band_top_role(x)) for x in (
        "what is the top of band for an area manager?", "What's the most a room leader can earn per hour?",
        "What's the top of the D2 drayman band?", "what's the top of my band",
        # brenthaugh W045's shape: the role is read from the clause asking for the top
        "What's the top of the duty manager band, compared with the starting pay on the careers page?",
        "What is the top of the D2 band and what sanction did Ann get?")] == [
        ["area", "manager"], ["leader", "room"], ["d2", "drayman"], [], ["duty", "manager"], ["d2"]]


def test_a_named_firms_charge_needs_a_sentence_naming_it_with_a_charge():
    """Sprigwell K051's shape (session 60): an agency climber's "what does Canopyhire charge Sprigwell an hour for a
    climber like me" answered with the careers page's pay rows and "Your pay comes from Canopyhire"; the charge
    sits in a document the asker may not read."""
    from ragbench.answer.answerability import charger_asked, rule_of, states_charge_of

    said = ["Your pay comes from Canopyhire Ltd, not from us.", "Climber | from £14.20 an hour |."]
    w = TermWeights.from_texts([OFFICE, PETS, " ".join(said) + " charge Sprigwell hour climber"])
    q = "what does Canopyhire charge Sprigwell an hour for a climber like me"
    assert assess(q, q, said, ["Agency induction"], w, None, 0.0, 0.0).answerable  # off
    r = assess(q, q, said, ["Agency induction"], w, None, 0.0, 0.0, check_charges=True)
    assert (r.answerable, r.reason, rule_of(r.reason)) == (
        False, "asks for the charge of Canopyhire, which no answer sentence states", "charge")
    # the charge under a heading naming the firm answers it
    rows = ["Climber | £21.60 |."]
    heads = ["Agency charges (Canopyhire Ltd) . | Role | Charge per hour |"]
    assert assess(q, q, rows, ["Agency charges"], w, None, 0.0, 0.0, check_charges=True,
                  sentence_contexts=heads).answerable
    assert [sorted(charger_asked(x)) for x in (
        "what does Canopyhire charge Sprigwell an hour for a climber like me",
        "what is silverplate charging tamberlow per hour for me",
        "What did Mawksley lose, and what does Tidewell Staffing charge per hour?",
        "How much does the college charge for a review of marking?", "what do you charge for a gate",
        "What is the landing charge per tonne?", "What does my agency charge per hour?",
        # marrowgate m070's shape: "it" names no one
        "How much would it cost to charge my electric car there?")] == [
        ["canopyhir"], ["silverplat"], ["staff", "tidewell"], [], [], [], [], []]
    who = charger_asked("how much does Skelmore charge you per hour for me")
    assert [states_charge_of(who, t) for t in (
        "Your pay comes from Skelmore Staffing, not from us.", "Skelmore Staffing bills us £19.40 an hour.",
        "What we pay Skelmore . | Shift | Rate | Weekday £19.40", "We charge £2.00 per extra 30 minutes.")] == [
        False, True, True, False]


def test_a_month_asked_with_its_year_must_be_named():
    """Quillmere n071's shape (session 49): "availability in August 2026" answered with the rows of September to
    November 2026, which state the year the unstated-year rule reads."""
    from ragbench.answer.answerability import months_asked, names_month, rule_of

    rows = ["November 2026 | 99.99% |.", "October 2026 | 99.95% |.", "September 2026 | 99.97% |."]
    w = TermWeights.from_texts([OFFICE, PETS, " ".join(rows) + " Clockwise availability"])
    q = "What was Clockwise's availability in August 2026?"
    r = assess(q, q, rows, ["Availability"], w, None, 0.0, 0.0, check_years=True, check_months=True)
    assert (r.answerable, r.reason) == (False, "asks about the month August 2026, which the answer never states")
    assert rule_of(r.reason) == "unstated-month"
    assert assess(q, q, rows, ["Availability"], w, None, 0.0, 0.0, check_years=True).answerable  # switch off
    october = "What was Clockwise's availability in October 2026?"
    assert assess(october, october, rows, ["Availability"], w, None, 0.0, 0.0, check_months=True).answerable
    # Points only: a period's end, a change and a deadline are other rules' or none.
    assert [months_asked(x) for x in (
        "How many members did we have at 31 March 2026?", "On what date is the June 2026 board meeting?",
        "What was revenue for the year to March 2026?", "What will it cost from April 2026?",
        "What must be filed by May 2026?")] == [[("March 2026", 3)], [("June 2026", 6)], [], [], []]
    assert [names_month(*x) for x in ((9, "Cash at bank on 30 Sept: £236,000"), (8, "November 2026 | 99.99%"),
                                      (5, "you may claim"), (5, "on 1 May"))] == [True, False, False, True]


def test_service_refuses_another_months_figure_by_default():
    rows = [Document("sla", "Availability in September 2026 was 99.97%.", "Availability",
                     acl=Acl.make([], [], "Public"))]
    q = "What was availability in August 2026?"
    said = "Availability in September 2026 was 99.97% [1]."
    _refused_by_default(rows, q, said, "unstated-month", "answerability_months")


def test_a_financial_year_asked_by_its_label_must_be_stated():
    """Ravelshaw Z065's shape (session 50): "total sales for the full year 2025-26" answered with the half-year
    accounts, whose headers state 2025 and 2026 apart (the unstated-year rule reads the label as two years)."""
    from ragbench.answer.answerability import rule_of, states_year_label, year_labels

    rows = ["Total sales | £2,829,000 | £2,767,000 | up 2.2% |."]
    half = ["Six months to 30 Sept 2026 | Six months to 30 Sept 2025 | change"]
    w = TermWeights.from_texts([OFFICE, PETS, rows[0] + " total sales in 26 shops", " ".join(half)])
    q = "What were total sales for the full year 2025-26?"
    r = assess(q, q, rows, ["Half-year accounts"], w, None, 0.0, 0.0, sentence_contexts=half, check_years=True,
               check_year_labels=True)
    assert (r.answerable, r.reason) == (False, "asks about the financial year 2025-26, which the answer never states")
    assert rule_of(r.reason) == "year-label"
    assert assess(q, q, rows, ["Half-year accounts"], w, None, 0.0, 0.0, sentence_contexts=half,
                  check_years=True).answerable  # the switch off: as before
    for stated in ("Year to 31 March 2026 | Year to 31 March 2025", "2025/26 | 2024/25", "FY 2025–2026"):
        assert assess(q, q, rows, ["Accounts"], w, None, 0.0, 0.0, sentence_contexts=[stated],
                      check_year_labels=True).answerable, stated
    assert [year_labels(x) for x in ("prices in 2024/25", "FY 2025–2026", "between 2023-2025", "code 2023-17",
                                     "£2025-26")] == [[("2024/25", "2025")], [("2025–2026", "2026")], [], [], []]
    assert [states_year_label("2026", t) for t in (
        "the year ended March 2026", "financial year ending 31 March 2026", "the year to March 2025",
        "six months to 30 September 2026", "2026-27 prices", "Half year to 31 March 2026")] == [
        True, True, False, False, False, False]  # a half year is not a year (thackerley T066, session 51)


def test_service_refuses_another_periods_figure_for_a_financial_year_by_default():
    accounts = [Document("acc", "Six months to 30 September 2025: total sales in 26 shops were £2,829,000.",
                         "Half-year accounts, published January 2026",
                         acl=Acl.make([], [], "Public"))]
    q = "What were total sales for the full year 2025-26?"
    said = "Six months to 30 September 2025: total sales in 26 shops were £2,829,000 [1]."
    _refused_by_default(accounts, q, said, "year-label", "answerability_year_labels")


def test_a_whole_year_is_not_stated_by_a_half_of_it():
    """Ravelshaw Z065's headers (session 50): "| Activity | H1 2026-27 | H1 2025-26 | Change |" state the label as a
    half; a year asked whole is not answered by them, a half asked is."""
    from ragbench.answer.answerability import asks_year_part, year_labels

    rows = ["Total sales | £2,829,000 | £2,767,000 | up 2.2% |."]
    halves = ["Activity | H1 2026-27 | H1 2025-26 | Change"]
    w = TermWeights.from_texts([OFFICE, PETS, rows[0] + " total sales in 26 shops and 27 vans", halves[0]])
    q = "What were total sales for the full year 2025-26?"
    r = assess(q, q, rows, ["Accounts"], w, None, 0.0, 0.0, sentence_contexts=halves, check_year_labels=True,
               whole_years=True)
    assert (r.answerable, r.reason) == (False, "asks about the financial year 2025-26, which the answer never states")
    assert assess(q, q, rows, ["Accounts"], w, None, 0.0, 0.0, sentence_contexts=halves,
                  check_year_labels=True).answerable  # rule 1 alone counts any stated label
    half = "What were total sales in the first half of 2025-26?"
    assert assess(half, half, rows, ["Accounts"], w, None, 0.0, 0.0, sentence_contexts=halves,
                  check_year_labels=True, whole_years=True).answerable
    assert year_labels("| Line | Half year 2026-27 | Same half 2025-26 | Q3 FY 2025/26 | six months of 2024-25 |"
                       " prices 2025-26", whole=True) == [("2025-26", "2026")]
    assert [asks_year_part(x) for x in (q, half, "sales in Q2 2025/26", "the half-year to September")] == [
        False, True, True, True]


def test_a_place_abroad_asked_must_be_spoken_of():
    """Skelvoe x063's shape (session 50): "the hotel limit … abroad" answered with the UK row."""
    from ragbench.answer.answerability import asks_abroad, rule_of, speaks_of_abroad

    rows = ["Elsewhere in the UK | £90 |.", "London | £140 |."]
    w = TermWeights.from_texts([OFFICE, PETS, " ".join(rows) + " hotel limit training course night"])
    q = "What's the hotel limit if I'm sent on a training course abroad?"
    r = assess(q, q, rows, ["Hotels"], w, None, 0.0, 0.0, check_abroad=True)
    assert (r.answerable, r.reason) == (False, "asks about abroad, which the answer never mentions")
    assert rule_of(r.reason) == "abroad"
    assert assess(q, q, rows, ["Hotels"], w, None, 0.0, 0.0).answerable  # the switch off: as before
    assert assess(q, q, ["Any trip abroad | £150 |."], ["Hotels"], w, None, 0.0, 0.0, check_abroad=True).answerable
    assert [asks_abroad(x) for x in ("What if the funeral's abroad?", "fieldwork overseas", "a trip outside the UK",
                                     "What's the hotel limit in London?", "How much is a foreign-language film?")
            ] == [True, True, True, False, False]
    assert [speaks_of_abroad(t) for t in ("Travel overseas | 5 days", "Hotels in Europe: £120", "outside the UK",
                                          "Anywhere else in the country | £110", "Elsewhere in the UK")
            ] == [True, True, True, False, False]


def test_service_refuses_the_home_rows_for_a_place_abroad_by_default():
    hotels = [Document("exp", "Hotel limit per night: London £140, elsewhere in the UK £90.", "Expenses",
                       acl=Acl.make([], [], "Public"))]
    q = "What is the hotel limit per night on a trip abroad?"
    said = "Hotel limit per night: London £140, elsewhere in the UK £90 [1]."
    _refused_by_default(hotels, q, said, "abroad", "answerability_abroad", answerability_rare_zipf=0.0,
                        answerability_everyday_zipf=0.0)


def test_an_interest_rate_asked_must_be_stated_as_a_percentage():
    """Kelverton F065's shape (session 51): "What interest rate is the bank charging on the loan?" answered with an
    amount a month "including interest", which the percent type counts as a rate."""
    from ragbench.answer.answerability import asks_interest_rate, rule_of, states_percentage

    said = ["The loan costs about £5,200 a month including interest."]
    w = TermWeights.from_texts([OFFICE, PETS, said[0] + " Stallard Bank term loan interest rate Hawkbit"])
    q = "What interest rate is Stallard Bank charging on the Hawkbit loan?"
    r = assess(q, q, said, ["Board paper"], w, None, 0.0, 0.0, check_interest_rates=True)
    assert (r.answerable, r.reason) == (False, "asks for an interest rate, which the answer never states as a "
                                               "percentage")
    assert rule_of(r.reason) == "interest-rate"
    assert assess(q, q, said, ["Board paper"], w, None, 0.0, 0.0).answerable  # the switch off: as before
    assert assess(q, q, ["Option B | 5.24% fixed |."], ["Board paper"], w, None, 0.0, 0.0,
                  sentence_contexts=["| Option | Rate |"], check_interest_rates=True).answerable
    assert [asks_interest_rate(x) for x in ("What is the APR on a £20,000 loan?", "the rate of interest on arrears",
                                            "What fee is charged on interest-free loans?", "What's the mileage rate?",
                                            "What interest rates apply?")] == [True, True, False, False, True]
    assert [states_percentage(t) for t in ("5.24 per cent fixed for 30 years", "2.75% above base rate", "9.9 % APR",
                                           "five percent", "£5,200 a month including interest",
                                           "the percentage is set by the bank")] == [
        True, True, True, True, False, False]


def test_a_vehicle_asked_for_mileage_must_be_named():
    """Hollingsby A062's shape (session 51): "the mileage rate if I use my own van" answered with the car and
    motorcycle rows of the mileage table."""
    from ragbench.answer.answerability import known_by_kind, names_vehicle, rule_of, vehicles_asked

    rows = ["Car, up to 10,000 miles | 45p |.", "Motorcycle or scooter | 24p |."]
    w = TermWeights.from_texts([OFFICE, PETS, " ".join(rows) + " mileage rate own van bicycle"])
    q = "what's the mileage rate if I use my own van"
    r = assess(q, q, rows, ["Expenses"], w, None, 0.0, 0.0, sentence_contexts=["| Vehicle | Rate |"] * 2,
               check_vehicles=True)
    assert (r.answerable, r.reason) == (False, "asks about the vehicle van, which the answer never names")
    assert rule_of(r.reason) == "vehicle"
    assert assess(q, q, rows, ["Expenses"], w, None, 0.0, 0.0).answerable  # the switch off: as before
    assert assess(q, q, ["Car or van | 45p |."], ["Expenses"], w, None, 0.0, 0.0, check_vehicles=True).answerable
    bike = "how much do I get per mile if I cycle to a job"
    assert assess(bike, bike, ["Bicycle | 20p |."], ["Expenses"], w, None, 0.0, 0.0, check_vehicles=True).answerable
    assert [vehicles_asked(x) for x in (q, bike, "What's the mileage rate for my motorbike?",
                                        "What's the mileage rate for a car?", "What's the pay for a van driver?",
                                        "mileage for a van or a bike", "mileage for my motor bike")] == [
        ["van"], ["bicycle"], ["motorbike"], [], [], ["van", "bicycle"], ["motorbike"]]
    assert [names_vehicle(k, t) for k, t in (("bicycle", "Pushbike | 20p"), ("motorbike", "Motorcycle | 24p"),
                                             ("van", "Vanessa's car | 45p"), ("bicycle", "Car | 45p"))] == [
        True, True, False, False]
    # a word of a kind's class, or "mileage" by "mile", is known when the answer says it another way
    assert [known_by_kind(w, t) for w, t in (("motorbike", "Motorcycle | 24p"), ("scooter", "Motorbikes | 24p"),
                                             ("bike", "Bicycle | 20p"), ("Mileage", "45p per mile"),
                                             ("mileage", "45p a day"), ("van", "Car | 45p"),
                                             ("motorbike", "Bicycle | 20p"), ("ferry", "Ferry | £12"))] == [
        True, True, True, True, False, False, False, False]


def test_a_vehicle_asked_for_an_amount_is_named_only_with_a_rate_per_mile():
    """Whinacre L062's shape (session 58's first contact): "the mileage rate if I use my own van" answered with the car
    rows and a sentence pricing the fleet's vans "depending on mileage", which names a van."""
    from ragbench.answer.answerability import rule_of, states_mileage_rate

    rows = ["Car, up to 10,000 miles | 45p |.", "The expected sale value is £31,000 for a family van, depending on "
            "mileage."]
    w = TermWeights.from_texts([OFFICE, PETS, " ".join(rows) + " mileage rate own van work trip"])
    q = "What's the mileage rate if I use my own van for a work trip?"
    on = dict(check_vehicles=True, vehicle_rates=True)
    r = assess(q, q, rows, ["Expenses"], w, None, 0.0, 0.0, **on)
    assert (r.answerable, rule_of(r.reason)) == (False, "vehicle")
    assert assess(q, q, rows, ["Expenses"], w, None, 0.0, 0.0, check_vehicles=True).answerable  # without: named
    assert assess(q, q, [rows[0], "Private van | 52p |."], ["Expenses"], w, None, 0.0, 0.0, **on).answerable
    # a yes/no question asks for no amount: a sentence naming the van answers it
    yes_no = "Can I claim mileage for my own van?"
    assert assess(yes_no, yes_no, ["Private vans are not covered by the mileage scheme."], ["Expenses"], w, None,
                  0.0, 0.0, **on).answerable
    assert [states_mileage_rate(t) for t in ("Private van | 52p |", "£0.45 a mile", "£1.20 per mile",
                                             "Van | 24.5p", "£31,000 for a family van, depending on mileage",
                                             "11,400 miles per van", "a 5p charge")] == [
        True, True, True, True, False, False, True]  # any amount in pence reads as a rate: the pence, not the mile


def test_a_column_the_quoted_row_leaves_empty_is_unanswered():
    """Wimbleworth J062 and vinegarth Y060's shapes (session 61): "a magnum of the Sloeburn Pinot Noir" answered with
    the row's bottle price, its magnum cell "–"; "a small plaice" with the regular price, the small cell "not sold"."""
    from ragbench.answer.answerability import about_asked, empty_asked_cell, rule_of

    head = "Wine list . | Wine | Half bottle (37.5cl) | Bottle (75cl) | Magnum (150cl) |"
    row = "Sloeburn Pinot Noir | – | £27 | – |."
    w = TermWeights.from_texts([OFFICE, PETS, row + " magnum wine half bottle"])
    q = "How much is a magnum of the Sloeburn Pinot Noir?"
    assert assess(q, q, [row], ["Wine list"], w, None, 0.0, 0.0, sentence_contexts=[head]).answerable  # off
    r = assess(q, q, [row], ["Wine list"], w, None, 0.0, 0.0, sentence_contexts=[head], empty_cells=True)
    assert (r.answerable, r.reason, rule_of(r.reason)) == (
        False, "asks for the column Magnum (150cl), which the answer's row leaves empty", "empty-cell")
    # a bottle is priced; a sentence about the wine stating a price answers too
    b = "How much is a bottle of the Sloeburn Pinot Noir?"
    assert assess(b, b, [row], ["Wine list"], w, None, 0.0, 0.0, sentence_contexts=[head], empty_cells=True).answerable
    said = [row, "Magnums of Sloeburn Pinot Noir are £60 to order."]
    assert assess(q, q, said, ["Wine list"], w, None, 0.0, 0.0, sentence_contexts=[head, "Wine list"],
                  empty_cells=True).answerable
    fish = "Prices . | Fish | Small | Regular | Large |"
    asked = term_set("how much is a small plaice?")
    assert [empty_asked_cell(asked, s, fish) for s in (
        "Plaice | not sold | £11.80 | not sold |.", "Plaice | £8.10 | £11.80 | n/a |.", "Plaice | none | £1 | – |.",
        "Cod | – | £9.60 | £12.40 |.", "Plaice | – | £11.80 |.")] == ["Small", None, None, None, None]
    assert [about_asked(asked, s, fish) for s in ("Mushy peas | £1.70 | £2.30 | – |.", "Plaice | – | £1 | £2 |.",
                                                   "Plaice is caught off Cornwall.")] == [False, True, True]
    # of two asked headers the one naming most is read: "a half bottle" is not "a bottle"
    assert empty_asked_cell(term_set("a half bottle of the Sloeburn Pinot Noir"), row, head) == "Half bottle (37.5cl)"


def test_service_refuses_by_default_a_column_the_quoted_row_leaves_empty():
    """The service reads the quoted row under its table's header: the magnum cell is "–", so the bottle's £27 does
    not answer "How much is a magnum …?"; with the rule off the row is quoted and cited."""
    body = ("Wine prices for 2026.\n\n| Wine | Bottle (75cl) | Magnum (150cl) |\n|---|---|---|\n"
            "| Sloeburn Pinot Noir | £27 | – |\n| Hartmoor Bacchus | £18.50 | £39 |\n")
    docs = [Document("wines", body, "Wine list", acl=Acl.make([], [], "Public"))]
    a = _refused_by_default(docs, "How much is a magnum of the Sloeburn Pinot Noir?",
                            "Sloeburn Pinot Noir | £27 | – | [1].", "empty-cell", "answerability_empty_cells")
    # the check reads the header with its unit set apart (answer.answerability_glued_units)
    assert a.answerability.reason == "asks for the column Magnum (150 cl), which the answer's row leaves empty"


def test_a_unit_written_against_its_number_is_read_apart():
    """Whettleby K001's shape (session 61): "how much to sharpen a serrated knife under 15cm?" refused as asking about
    "15cm", a word no document contains; the price list says "Up to 15 cm". Pence and money stay whole."""
    from ragbench.llm.signals import unglue_units

    assert [unglue_units(t) for t in ("a 15cm knife", "till 2am", "a 1.5kg tub", "45p a mile", "£2m deal", "A4 paper",
                                      "9am-5pm", "5kWh", "It's 11pm. Who do I ring?")] == [
        "a 15 cm knife", "till 2 am", "a 1.5 kg tub", "45p a mile", "£2m deal", "A4 paper", "9 am-5 pm", "5 kWh",
        "It's 11pm. Who do I ring?"]  # "pm." would read as an abbreviation and join the two sentences
    docs = ["Serrated knife | Up to 15 cm | £8.10 |.", "Chef's knife | Up to 20 cm | £8.40 |.", OFFICE, PETS]
    w = TermWeights.from_texts(docs)
    q = "how much to sharpen a serrated knife under 15cm?"
    said, heads = [docs[0]], ["Sharpening prices . | Knife | Length | Price |"]
    r = assess(q, q, said, ["Sharpening prices"], w, None, 0.0, 0.0, sentence_contexts=heads)
    assert (r.answerable, r.reason) == (False, "asks about 15cm, which no readable document mentions")
    cfg = replace(AnswerConfig(), answerability_glued_units=True, answerability_min_coverage=0.0,
                  answerability_min_similarity=0.0)
    assert assess_answer(cfg, q, q, said, ["Sharpening prices"], w, sentence_contexts=heads).answerable
    assert not assess_answer(replace(cfg, answerability_glued_units=False), q, q, said, ["Sharpening prices"], w,
                             sentence_contexts=heads).answerable


@pytest.mark.parametrize("body, title, question, rule, switch, cfg", [
    ("Qualified technician: from £27,500 a year, 40 hours a week.", "Jobs",
     "What's the top of the qualified technician pay band?", "band-top", "answerability_band_tops", {}),
    ("The loan costs about £5,200 a month including interest.", "Board paper",
     "What interest rate is the bank charging on the loan?", "interest-rate", "answerability_interest_rates", {}),
    ("The mileage rate if you use your own car: 45p a mile. Your own motorcycle: 24p a mile.", "Expenses",
     "What's the mileage rate if I use my own van?", "vehicle", "answerability_vehicles",
     dict(answerability_rare_zipf=0.0, answerability_everyday_zipf=0.0)),
    ("Room leader: from £14.60 an hour, 40 hours a week.", "Careers",
     "What's the most a room leader can earn per hour?", "band-top", "answerability_top_pay", {}),
    ("Piano tuner: from £27,500 a year. We add a surcharge of £25 on a Saturday visit and £40 on a Sunday visit.",
     "Careers", "What is the top of the pay band for a piano tuner?", "band-top", "answerability_range_forms", {}),
    ("Power flush of a system with up to 10 radiators: from £520. Free call-out within 15 miles.", "Heating prices",
     "How much is a power flush for a system with 15 radiators?", "count-band", "answerability_count_bands", {}),
    ("Pair of driveway gates up to 3.0 m wide: £1,450. Pair of driveway gates 3.0 m to 4.0 m wide: £1,900. Railings "
     "cost £120 a metre, fitted free within 5 miles.", "Gate prices",
     "How much for a pair of driveway gates 5 metres wide?", "length-band", "answerability_lengths", {}),
    ("Patch repair up to 2 square metres: £420. Patch repair from 2 to 5 square metres: £760. Quotes within 8 days.",
     "Thatch prices",
     "How much is a patch repair of 8 square metres?", "area-band", "answerability_areas", {}),
    ("Car, up to 10,000 miles: 45p. The expected sale value is £31,000 for a family van, depending on mileage.",
     "Expenses", "What's the mileage rate if I use my own van for a work trip?", "vehicle",
     "answerability_vehicle_rates", dict(answerability_rare_zipf=0.0, answerability_everyday_zipf=0.0,
                                         answerability_type_coverage=0.0)),
    ("Your pay comes from Canopyhire Ltd, not from us. Climbers are paid from £14.20 an hour.", "Agency induction",
     "What does Canopyhire charge per hour for a climber?", "charge", "answerability_charges", {}),
    ("Welterby Caning and Rush: turnover £310,000 last year. Its premises are leased at £14,000 a year.", "Board paper",
     "What profit did Welterby Caning and Rush make last year?", "profit", "answerability_profits", {}),
    ("Tessingham shop: 9:30am to 5pm, closed Mondays. We close from 24 December to 2 January.", "Price list 2026-27",
     "When is the Tessingham shop closing?", "closure-date", "answerability_closure_years", {}),
    ("Bereavement leave for a parent or a sibling: 5 days. For a grandparent, an aunt or an uncle: 2 days.", "Leave",
     "How much bereavement leave do I get for a cousin?", "relation", "answerability_relations",
     dict(answerability_rare_zipf=0.0, answerability_everyday_zipf=0.0)),
    ("Bereavement leave for a child or a partner: 10 days. For a parent or a sibling: 5 days.", "Leave",
     "How much bereavement leave do I get when my dog dies?", "relation", "answerability_other_relations",
     dict(answerability_rare_zipf=0.0, answerability_everyday_zipf=0.0, answerability_type_coverage=0.0)),
])
def test_service_refuses_by_default_what_answers_another_question(body, title, question, rule, switch, cfg):
    """A band's start for its top (asked as such or as the most a role can earn), an amount a month for an interest
    rate, the car rows for a van, the rows for parents and aunts for a cousin (and the family rows for a dog), two
    surcharges in running text for a band's top, an hours row under a dated title and a yearly closure for a closure
    to come, a turnover for a profit, the price for up to 10 radiators for 15, gates up to 4 m wide for 5 m, a patch
    repair up to 5 square metres for 8, a van's sale value for its mileage rate, an agency worker's pay for what the
    agency charges: each refused by its rule under the default config, answered with the rule switched off."""
    said = " ".join(f"{s} [1]." for s in body.rstrip(".").split(". "))
    _refused_by_default([Document("doc", body, title, acl=Acl.make([], [], "Public"))], question, said, rule, switch,
                        **cfg)


def test_stance_words_weigh_nothing_in_the_answerability_check():
    """"actually", "just", "ok" say how the asker stands to the question: they are the terms to drop, unless the same
    stem is asked in another form ("the real price really")."""
    from ragbench.answer.answerability import stance_terms

    assert stance_terms("And if I actually get called in?") == {"actual"}
    assert stance_terms("Is it OK to just turn up?") == {"ok", "just"}
    assert stance_terms("Is the real price really £5?") == set()
    body = "When called in, a keeper is paid £28 an hour on site."
    docs = [Document("doc", body, "On call", acl=Acl.make([], [], "Public"))]
    said = "When called in, a keeper is paid £28 an hour on site [1]."
    # A word no document contains would weigh nothing as an everyday word: switched off, as when other documents
    # of the organisation say "actually".
    base = dict(restricted_gap=0.0, answerability_everyday_zipf=0.0)
    on = _service(make_store(docs), FixedModel(said), NoCosine(), **base).answer(
        "How much am I actually paid when called in?", "guest")
    assert (on.refused, on.decided_by, on.answerability.coverage) == (False, "check:coverage", 1.0)
    off = _service(make_store(docs), FixedModel(said), NoCosine(), **base, answerability_stance_words=False).answer(
        "How much am I actually paid when called in?", "guest")
    assert (off.refused, off.decided_by) == (True, "check:thresholds")
    # "paid" and "called" in the one document weigh log(2 / 1.5) each; "actually", in none, log(2 / 0.5).
    present, absent = math.log(2 / 1.5), math.log(2 / 0.5)
    assert off.answerability.coverage == pytest.approx(2 * present / (2 * present + absent))


def test_service_answers_sick_pay_by_default_with_a_period_at_full_pay():
    """Company sick pay is stated as weeks at full pay: "How much company sick pay …?" is answered by the period under
    the default config, and refused for want of money with the switch off. Paternity pay is not read so."""
    from ragbench.answer.answerability import asks_sick_pay

    assert [asks_sick_pay(q) for q in ("What sick pay would I get?", "how much sickness pay after a year",
                                       "Is sick leave pay taxed?", "How much paternity pay do we give?",
                                       "Who pays when I'm sick?")] == [True, True, True, False, False]
    body = "Company sick pay after three years' service: 8 weeks at full pay, then 8 weeks at half pay."
    docs = [Document("doc", body, "Sickness", acl=Acl.make([], [], "Public"))]
    said = f"{body[:-1]} [1]."
    question = "How much company sick pay do I get after three years' service?"
    base = dict(restricted_gap=0.0, answerability_min_coverage=0.0)
    on = _service(make_store(docs), FixedModel(said), **base).answer(question, "guest")
    assert (on.refused, on.decided_by, on.answerability.expected_type) == (False, "check:coverage", "number")
    off = _service(make_store(docs), FixedModel(said), **base, answerability_sick_pay_periods=False).answer(
        question, "guest")
    assert (off.refused, off.decided_by, off.answerability.reason) == (
        True, "check:answer-type", "no money in the answer")


def test_service_refuses_by_default_a_lettered_grade_no_document_mentions():
    """"grade E" where the price table lists grades A to D is an unknown graded code, like "Level 5": refused under
    the default config, answered with the other grades' rows when the switch is off; "grade D", a cell of the
    table's "Grade" column, is known and answered."""
    body = "Fabric prices.\n\n| Grade | Price per metre |\n|---|---|\n| A | £28 |\n| D | £82 |\n"
    docs = [Document("doc", body, "Fabric prices", acl=Acl.make([], [], "Public"))]
    said = "| A | £28 | [1]. | D | £82 | [1]."
    a = _refused_by_default(docs, "How much is grade E fabric per metre?", said, "unknown-word",
                            "answerability_letter_codes")
    assert a.answerability.reason == "asks about Grade E, which no readable document mentions"
    known = _service(make_store(docs), FixedModel(said), restricted_gap=0.0, answerability_min_coverage=0.0
                     ).answer("How much is grade D fabric per metre?", "guest")
    assert (known.refused, known.decided_by) == (False, "check:coverage")


@pytest.mark.parametrize("body, question, said, word, switch", [
    ("Bereavement leave: a grandparent or grandchild, 2 days. A parent, 5 days.",
     "How much bereavement leave do I get for my grandad?",
     "Bereavement leave: a grandparent or grandchild, 2 days [1].", "grandad", "kinship"),
    ("The mileage rate for your own car: 45p a mile. The mileage rate for your own motorcycle: 24p a mile.",
     "What's the mileage rate for my own motorbike?", "The mileage rate for your own motorcycle: 24p a mile [1].",
     "motorbike", "answerability_vehicle_words"),
    ("Using your own car on business: 45p per mile.", "What mileage can I claim for my own car?",
     "Using your own car on business: 45p per mile [1].", "mileage", "answerability_vehicle_words"),
])
def test_service_answers_by_default_a_word_its_documents_say_another_way(body, question, said, word, switch):
    """A closed-class word of the question that no document uses ("grandad", "motorbike", "mileage") is met by its
    class's word in the answer ("grandparent", "motorcycle", "per mile"): answered under the default config, refused
    as a rare word with the switch off."""
    docs = [Document("doc", body, "Staff handbook", acl=Acl.make([], [], "Public"))]
    # With a word embedder, as the CLI's services have: the word matcher is what knows the classes.
    base = dict(embedder=NoCosine(), restricted_gap=0.0, answerability_min_coverage=0.0)
    a = _service(make_store(docs), FixedModel(said), **base).answer(question, "guest")
    assert (a.refused, a.decided_by, [c.doc_id for c in a.citations]) == (False, "check:coverage", ["doc"])
    off = _service(make_store(docs), FixedModel(said), **base, **{switch: False}).answer(question, "guest")
    assert (off.refused, off.decided_by, off.answerability.reason) == (
        True, "check:rare-word", f"asks about the rare word {word}, which no readable document contains")


def test_a_relation_the_answers_list_of_relations_leaves_out():
    """Brackenhythe P067's shape (session 54): bereavement leave "for a cousin" answered with the rows for parents,
    grandparents, aunts and uncles. A row for everyone else ("Any other relative") answers any relation, and one
    relation named by the answer is no list."""
    from ragbench.answer.answerability import rule_of
    from ragbench.answer.kinship import relations_named, unlisted_relations

    rows = ["Parent or step-parent | 5 days |.", "Grandparent or grandchild | 2 days |.",
            "Aunt, uncle, niece or nephew | 1 day |."]
    w = TermWeights.from_texts([OFFICE, PETS, " ".join(rows) + " bereavement leave cousin"])
    q = "How much bereavement leave do I get for a cousin?"
    r = assess(q, q, rows, ["Leave"], w, None, 0.0, 0.0, sentence_contexts=["| Relation | Leave |"] * 3,
               check_relations=True)
    assert (r.answerable, r.reason) == (False, "asks about the relation cousin, which the answer's relations leave out")
    assert rule_of(r.reason) == "relation"
    assert assess(q, q, rows, ["Leave"], w, None, 0.0, 0.0).answerable  # the switch off: as before
    nan = "How much bereavement leave do I get for my nan?"  # a grandparent by another word
    assert assess(nan, nan, rows, ["Leave"], w, None, 0.0, 0.0, check_relations=True).answerable
    assert assess(q, q, [*rows, "Any other relative | 1 day |."], ["Leave"], w, None, 0.0, 0.0,
                  check_relations=True).answerable
    assert unlisted_relations(q, "Children under 5 travel free; parents pay £2.") == ["cousin"]
    assert unlisted_relations(q, "Children under 5 travel free.") == []
    assert unlisted_relations("My cousin died. What's the mileage rate?", "Car | 45p |.") == []
    assert unlisted_relations("leave for my niece or my nephew", "Aunt or uncle | 1 day |. Parent | 5 days |.") == [
        "niece"]
    assert relations_named("Your mum, dad, wife or husband; grandad; a cousin.") == {
        1: "mum", 2: "wife", 0: "grandad", 7: "cousin"}


def test_a_friend_or_a_pet_the_answers_list_of_relations_leaves_out():
    """Ellerdyke C062's shape (session 58): "bereavement leave when my dog dies" answered with the rows for a child,
    a parent and a grandparent. With ``other_relations`` a friend or a pet is a relation the answer must list; a row
    for any other relative answers neither (neither is a relative), one for anyone else answers a friend only."""
    from ragbench.answer.kinship import relations_named, unlisted_relations

    rows = ["A child of yours | 10 working days |.", "A parent or a partner | 5 working days |.",
            "A grandparent | 2 working days |."]
    w = TermWeights.from_texts([OFFICE, PETS, " ".join(rows) + " bereavement leave dies"])
    q = "How much bereavement leave do I get when my dog dies?"
    r = assess(q, q, rows, ["Leave"], w, None, 0.0, 0.0, sentence_contexts=["| Relation | Leave |"] * 3,
               check_relations=True, other_relations=True)
    assert (r.answerable, r.reason) == (False, "asks about the relation dog, which the answer's relations leave out")
    # without the switch a dog is no relation, as before
    assert assess(q, q, rows, ["Leave"], w, None, 0.0, 0.0, check_relations=True).answerable
    pet_row = [*rows, "The death of a pet | 1 day, unpaid |."]
    assert assess(q, q, pet_row, ["Leave"], w, None, 0.0, 0.0, check_relations=True, other_relations=True).answerable
    answer = " ".join(rows)
    friend = "How many days do I get when a close friend dies?"
    assert unlisted_relations(friend, answer, others=True) == ["friend"]
    assert unlisted_relations(friend, answer + " Any other relative | 1 day |.", others=True) == ["friend"]
    assert unlisted_relations(friend, answer + " Anyone else close to you | 1 day |.", others=True) == []
    assert unlisted_relations(q, answer + " Anyone else close to you | 1 day |.", others=True) == ["dog"]
    # a family relation is still covered by a row for any other relative, with the switch on or off
    cousin = "How much bereavement leave do I get for a cousin?"
    assert unlisted_relations(cousin, answer + " Any other relative | 1 day |.", others=True) == []
    assert unlisted_relations(cousin, answer, others=True) == unlisted_relations(cousin, answer) == ["cousin"]
    # one relation named is no list; a question naming no relation is never refused by the rule
    assert unlisted_relations(q, "Children under 5 travel free.", others=True) == []
    assert unlisted_relations("Can I bring my puppy?", answer, others=True) == ["puppy"]
    assert unlisted_relations("What's the mileage rate?", answer, others=True) == []
    assert relations_named("my friends, our cats and kittens", others=True) == {9: "friends", 10: "cats"}
    assert relations_named("my friends, our cats and kittens") == {}


def test_type_names_weigh_nothing_once_the_type_is_found_when_switched_on():
    """Measured in session 54 and left off (it lost two refuse-acl questions): with ``answerability_type_names`` the
    words naming the asked kind of value ("phone number") weigh nothing once the answer holds such a value."""
    from ragbench.answer.answerability import type_name_terms

    assert type_name_terms("What's the phone number of the swarm line?", "phone") == {"phon", "number"}
    assert type_name_terms("What's the price of a large box?", "money") == {"pric"}
    assert type_name_terms("What's the price of a large box?", None) == set()
    assert type_name_terms("What's the salary for a driver?", "money") == set()
    body = "Swarm line: 01999 408 227, every day from 1 April."
    docs = [Document("doc", body, "Swarms", acl=Acl.make([], [], "Public"))]
    said = f"{body[:-1]} [1]."
    q = "What's the phone number of the swarm line?"
    base = dict(restricted_gap=0.0, answerability_min_similarity=1.0, answerability_everyday_zipf=0.0)
    # "phone" and "number", in no document, outweigh "swarm line": not even the sentence holding the number covers the
    # question enough to count as on its topic.
    off = _service(make_store(docs), FixedModel(said), NoCosine(), **base).answer(q, "guest")
    assert (off.refused, off.decided_by) == (True, "check:type-off-topic")
    on = _service(make_store(docs), FixedModel(said), NoCosine(), **base, answerability_type_names=True).answer(
        q, "guest")
    assert (on.refused, on.decided_by, on.answerability.coverage) == (False, "check:coverage", 1.0)


def test_two_amounts_are_a_range_only_in_a_table_row_with_range_forms():
    """Cardwinnow P049's shape (session 54): "a surcharge of £25 … and £40 …" is two prices, not a band; a table row's
    start and top columns are; a range's own form counts anywhere."""
    from ragbench.answer.answerability import states_range

    texts = ["We add a surcharge of £25 on Saturday and £40 on Sunday.", "Band T1 | Start £24,600 | Top £28,900",
             "Tuners earn between £24,000 and £28,000.", "Tuners earn £24,000 to £28,000.", "From £27,500 a year."]
    assert [states_range(t) for t in texts] == [True, True, True, True, False]
    assert [states_range(t, forms=True) for t in texts] == [False, True, True, True, False]


def test_a_number_asked_in_words_meets_the_row_written_in_digits():
    """Session 57 (measured and left off): with the switch, "four years' service" asks for the row "4 years": the
    answerability check reads number words as digits, so the row covers the question. The answer is quoted as the
    document writes it."""
    from ragbench.llm.signals import numerals

    assert [numerals(t) for t in ("four years' service", "my Seven-year-old", "twenty-five people", "Forty one",
                                  "the younger one", "one-off", "tenth", "tenant", "often")] == [
        "4 years' service", "my 7-year-old", "25 people", "41", "the younger one", "one-off", "tenth", "tenant",
        "often"]
    body = "Annual leave after 4 years' service: 27 days. After 10 years' service: 30 days."
    docs = [Document("doc", body, "Leave", acl=Acl.make([], [], "Public"))]
    said = "Annual leave after 4 years' service: 27 days [1]."
    question = "How much annual leave do I get with four years' service?"
    # "four" is in no document: as an everyday word it would weigh nothing (switched off here, as when another
    # document of the organisation says "four").
    base = dict(restricted_gap=0.0, answerability_everyday_zipf=0.0)
    on = _service(make_store(docs), FixedModel(said), NoCosine(), **base, answerability_number_words=True).answer(
        question, "guest")
    assert (on.refused, on.decided_by, on.answerability.coverage) == (False, "check:coverage", 1.0)
    assert on.answer == said
    off = _service(make_store(docs), FixedModel(said), NoCosine(), **base).answer(question, "guest")  # the default
    assert (off.refused, off.decided_by) == (True, "check:thresholds")


def test_a_two_part_question_off_topic_for_its_type_is_judged_per_part():
    """Thimbleford K041's shape (session 57): "How much is a new laptop keyboard, and how long is it guaranteed
    for?" was refused as off-topic for its type with the keyboard's price in hand: the second part's word weighs
    most, so no sentence stating money covers 0.2 of the whole question. Judged per part, the first is answered and
    the second listed unanswered; with the switch off (or without decompose) the whole refusal stands."""
    from ragbench.answer.answerability import splits_type_topic

    pub = Acl.make([], [], "Public")
    body = "| Job | Price |\n|---|---|\n| Laptop keyboard | from £105 |\n| Phone screen | from £79 |"
    # Six notes that mention laptop keyboards make those words common: "guaranteed", in no document, weighs most.
    docs = [Document("prices", body, "Repair prices", acl=pub)] + [
        Document(f"note{i}", f"Note {i}: a laptop keyboard sticks after spills; dry it for {i + 2} days.",
                 f"Note {i}", acl=pub) for i in range(6)]
    said = "Laptop keyboard | from £105 | [1]."
    question = "How much is a new laptop keyboard, and how long is it guaranteed for?"

    def ask(**cfg):
        return _service(make_store(docs), FixedModel(said), NoCosine(), restricted_gap=0.0, **cfg).answer(
            question, "guest")

    on = ask()
    assert (on.refused, on.decided_by, on.answer) == (False, "check:parts", said)
    assert [(text, r.answerable) for text, r in on.answerability.parts] == [
        ("How much is a new laptop keyboard", True), ("how long is it guaranteed for?", False)]
    assert on.answerability.parts[1][1].reason == "no number in an answer sentence on the question's topic " \
                                                  "(coverage < 0.2)"
    whole = "no money in an answer sentence on the question's topic (coverage < 0.2)"
    for off in (ask(answerability_split_type_topic=False), ask(decompose=False)):
        assert (off.refused, off.decided_by, off.answerability.reason) == (True, "check:type-off-topic", whole)
        assert splits_type_topic(off.answerability)
    assert not splits_type_topic(on.answerability)
