"""Question–evidence signals: qualifier conflicts, heading trails, weighted coverage."""
from __future__ import annotations

from ragbench.llm.signals import (conflicts, coverage, heading_trail, modifier_conflicts, modifier_pairs,
                                  paragraph_headings)

DOC = ("# Leave\n\nIntro line.\n\n**Sick leave.** Staff report absence by 09:00. A note is needed after 7 days."
       "\n\n## Parental\n\nSix weeks.")


def test_conflicts_find_siblings_of_what_was_asked():
    assert conflicts("What is the response target for a P4 ticket?", "P1 tickets get a reply in 15 minutes.") == \
        ["p4≠p1"]
    assert conflicts("What is the target for P4?", "P1 in 15 minutes, P4 in 5 days.") == []  # both present
    assert conflicts("Leave for part-time staff?", "Full-time staff get 25 days.") == ["part-time≠full-time"]
    assert conflicts("How many days of bereavement leave?", "Staff get 25 days of annual leave.") == \
        ["bereav leav≠annual leav"]
    assert conflicts("What is the CEO's salary?", "The base salary band for sales is 40,000.") == \
        ["ceo salary≠base salary"]
    assert conflicts("What is the CEO's salary?", "The base salary band for sales is 40,000.", modifiers=False) == []
    # A sibling the question itself names is compared, not confused; verbs after "who" are not modifiers.
    assert conflicts("How long are vendor logs kept compared with system logs?", "Vendor logs: 400 days.") == []
    assert modifier_pairs("Who issues access badges to new employees?") == [("access", "badg")]
    # The modifier rule alone.
    assert modifier_conflicts("What is the CEO's salary?", "The base salary band for sales is 40,000.") == \
        ["ceo salary≠base salary"]
    assert modifier_conflicts("Leave for part-time staff?", "Full-time staff get 25 days.") == []


def test_heading_trail_and_paragraphs():
    assert heading_trail(DOC, DOC.index("A note")) == ["Leave", "Sick leave"]
    assert heading_trail(DOC, DOC.index("Six weeks")) == ["Leave", "Parental"]
    assert [h for _, _, h in paragraph_headings(DOC)] == [["Leave"], ["Leave"], ["Leave", "Sick leave"],
                                                          ["Leave", "Parental"], ["Leave", "Parental"]]


def test_weighted_coverage():
    w = {"bereav": 3.0, "leav": 1.0}.get
    assert coverage(["bereav", "leav"], {"leav", "annual"}, lambda t: w(t) or 1.0) == 0.25
    assert coverage([], {"x"}, lambda t: 1.0) == 1.0
