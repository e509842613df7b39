from __future__ import annotations

import logging

import pytest

from ragbench.eerag.election import (HEADER_CLOSE, HEADER_OPEN, build_header, filter_elected, make_candidates,
                                     parse_header, parse_retrieve_ids, summary_line)
from ragbench.schema import Hit


@pytest.mark.parametrize("reply, ids", [
    ("RETRIEVE 7", [7]),
    ("RETRIEVE 3 7 12", [3, 7, 12]),
    ("retrieve 5", [5]),
    ("Sure. Retrieve 3, 7,12", [3, 7, 12]),
    ("RETRIEVE 2\n4\n  6", [2, 4, 6]),                  # ids split across lines
    ("RETRIEVE 2 2 5 2", [2, 5]),                       # de-duplicated in first-seen order
    ("RETRIEVE 1 and then RETRIEVE 2", [1]),            # first match only
    ("RETRIEVE -3", []),                                # a negative number is not an id
    ("RETRIEVE 99999999999999999999", [99999999999999999999]),
    ("Entry [ID:4] and [id:2] look relevant", [4, 2]),  # fallback: a trigger word plus [ID:n]
    ("See [ID:4] and [ID:2].", []),                     # no trigger word: no fallback
    ("", []),
])
def test_parse_retrieve_ids(reply, ids):
    assert parse_retrieve_ids(reply) == ids


def test_filter_keeps_only_shown_ids_and_caps(caplog):
    with caplog.at_level(logging.DEBUG, logger="ragbench.dcs"):
        kept, rejected = filter_elected([9, 2, 2000, 3, 1], shown=[1, 2, 3, 4, 5], max_expand=2)
    assert kept == [2, 3]
    assert rejected == [9, 2000, 1]
    assert any("Rejected ids" in r.getMessage() for r in caplog.records)


def test_hundreds_of_ids_are_capped():
    kept, rejected = filter_elected(list(range(1, 1001)), shown=[1, 2, 3, 4, 5], max_expand=3)
    assert kept == [1, 2, 3]
    assert len(rejected) == 997


def test_header_lists_every_candidate_with_source_format():
    hits = [Hit("c1", "d1", 0.9, 0, "full text one"), Hit("c2", "d2", 0.5, 1, "x " * 100)]
    cands = make_candidates(hits, {"c1": "  first summary  "})
    header = build_header(cands)
    lines = header.splitlines()
    assert lines[0] == HEADER_OPEN and lines[-1] == HEADER_CLOSE
    assert "RETRIEVE <number>" in header
    assert lines[-3] == "[ID:1] first summary"
    # No stored summary: the text cut to 150 characters, trimmed, plus an ellipsis.
    assert lines[-2] == "[ID:2] " + ("x " * 75).rstrip() + "\u2026"
    assert parse_header(header) == [(1, "first summary"), (2, ("x " * 75).rstrip() + "\u2026")]


def test_summary_line_fallback_keeps_short_text():
    assert summary_line("", "  short text ") == "short text"
