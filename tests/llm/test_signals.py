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
    # A past participle is a verb, not a head noun: no "passenger offer" against the "agent offered" sentence.
    assert modifier_pairs("What was the passenger offered after the complaint?") == []
    assert modifier_conflicts("What was the passenger offered after the complaint?",
                              "The agent offered a £25 food and drink voucher.") == []
    assert modifier_pairs("What is the top speed?") == [("top", "speed")]
    # Do-support: the word after "does the box office" is the verb, so "Sundays: the counter opens …" is no
    # "counter open" sibling of an asked "office open".
    assert modifier_pairs("What time does the box office open on a Sunday?") == [("box", "offic")]
    assert modifier_conflicts("What time does the box office open on a Sunday?",
                              "Sundays: the counter opens 90 minutes before a Sunday performance.") == []
    assert modifier_pairs("When does the bereavement leave start?") == [("bereav", "leav")]
    assert modifier_pairs("How much did the guest pay for parking?") == []
    # A graded family written as a word and a number ("Category 2" asked, the Category 1 row found).
    assert conflicts("Within what time must a technician attend a Category 2 burst?",
                     "A technician must attend within 1 hour. . Category 1 (major)", modifiers=False) == \
        ["category2≠category1"]
    assert conflicts("Which level 3.5 rule?", "Level 3 staff.", modifiers=False) == []  # 3.5 is no grade
    # The modifier rule alone.
    assert modifier_conflicts("What is the CEO's salary?", "The base salary band for sales is 40,000.") == \
        ["ceo salary≠base salary"]
    assert modifier_conflicts("Leave for part-time staff?", "Full-time staff get 25 days.") == []
    # A code identifier is one token: "flag billing.deferred_capture" puts no modifier on "billing" (golden g010).
    q = "What is the first mitigation for a Skyline billing API outage?"
    assert modifier_conflicts(q, "Switch the service into deferred mode with the feature flag "
                                 "billing.deferred_capture.") == []
    assert modifier_conflicts(q, "Set the feature flag billing_deferred and restart.") == []
    assert modifier_conflicts(q, "Switch the flag billing off.") == ["skylin bill≠flag bill"]
    # An instruction verb opening a sentence, clause or list item is an imperative, not a modifier.
    q = "At what temperature must drinking water samples be kept in the cool box?"
    assert modifier_conflicts(q, "Keep samples in the cool box between 2 °C and 8 °C.") == []
    assert modifier_conflicts(q, "Label them; keep samples cool.\n- Store samples upright.") == []
    assert modifier_conflicts(q, "**Storage.** Keep samples cool. Raw samples go in the fridge.") == \
        ["water sampl≠raw sampl"]
    assert modifier_conflicts("How long is bereavement leave?", "Report it. Annual leave is 25 days.") == \
        ["bereav leav≠annual leav"]


def test_list_items_are_blocks_with_their_own_run_in():
    text = ("## Categories\n\n- **Category 1 (major).** Attend within 1 hour.\n- **Category 2.** Attend within 4 "
            "hours.\n\n**Severity levels.**\n- Sev-1: a breach.\n- Sev-2: a suspected breach.")
    assert [(text[s:e][:14], h) for s, e, h in paragraph_headings(text)] == [
        ("## Categories", ["Categories"]),
        ("- **Category 1", ["Categories", "Category 1 (major)"]),
        ("- **Category 2", ["Categories", "Category 2"]),  # its own run-in, not the first item's
        ("**Severity lev", ["Categories", "Severity levels"]),
        ("- Sev-1: a bre", ["Categories", "Severity levels"]),  # no run-in of its own: the paragraph's
        ("- Sev-2: a sus", ["Categories", "Severity levels"])]


def test_heading_trail_and_paragraphs():
    assert heading_trail(DOC, DOC.index("A note")) == ["Leave", "Sick leave"]
    assert heading_trail(DOC, DOC.index("Six weeks")) == ["Leave", "Parental"]
    assert [h for _, _, h in paragraph_headings(DOC)] == [["Leave"], ["Leave"], ["Leave", "Sick leave"],
                                                          ["Leave", "Parental"], ["Leave", "Parental"]]


def test_a_table_row_sits_under_its_header_line():
    table = ("## Ticket prices\n\n| Ticket | Adult | Child |\n|---|---|---|\n| Day Rider | £6.80 | £3.40 |\n"
             "| Weekly Rider | £24.00 | £12.00 |\n\nThere is no return ticket.")
    assert heading_trail(table, table.index("£24.00")) == ["Ticket prices", "| Ticket | Adult | Child |"]
    # The header line itself, the separator and text after the table sit under the section heading only.
    assert heading_trail(table, table.index("Adult")) == ["Ticket prices"]
    assert heading_trail(table, table.index("no return")) == ["Ticket prices"]
    # A chunk that starts inside a table has no header line: its rows get none.
    assert heading_trail("| Day Rider | £6.80 | £3.40 |\n| Weekly | £24 | £12 |", 30) == []


def test_a_list_item_sits_under_the_sentence_that_introduces_its_list():
    from ragbench.llm.signals import list_intro

    text = ("## Pay\n\nAll staff get a uniform. Staff with a year's service receive enhanced pay:\n\n"
            "- 12 weeks at full pay, then\n- 14 weeks at half pay.\n\nAfter that, statutory pay only.")
    intro = "Staff with a year's service receive enhanced pay:"
    assert heading_trail(text, text.index("14 weeks")) == ["Pay", intro]
    assert list_intro(text, text.index("- 12")) == intro
    # Neither the intro itself nor a paragraph after the list is an item of it; a list after a full stop has no
    # intro.
    assert heading_trail(text, text.index("After")) == ["Pay"]
    assert list_intro("Staff get:", 0) is None
    assert list_intro("Bring these.\n- a pen\n- a badge", len("Bring these.\n")) is None


def test_weighted_coverage():
    w = {"bereav": 3.0, "leav": 1.0}.get
    assert coverage(["bereav", "leav"], {"leav", "annual"}, lambda t: w(t) or 1.0) == 0.25
    assert coverage([], {"x"}, lambda t: 1.0) == 1.0


def test_count_conflicts_read_counts_of_a_plural_noun_as_bands():
    """Fallowmere R062 and cressbury L064's shapes (session 55): a count of radiators or a length in feet is no unit of
    the band rule, so "15 radiators" was answered by "up to 10 radiators"."""
    from ragbench.llm.signals import count_conflicts

    q = "How much is a power flush for a system with 15 radiators?"
    assert count_conflicts(q, "Power flush of a system with up to 10 radiators: from £520.") == [
        "15 radiators≠up to 10 radiators"]
    assert count_conflicts(q, "Up to 10 radiators: £520. 11 to 20 radiators: £690.") == []  # a band holds it
    assert count_conflicts(q, "A power flush costs £520.") == []  # no count of radiators stated
    boat = "How much does blacking cost for a boat over 72 feet?"
    rows = "Blacking, up to 60 feet | £1,150 |. Blacking, 61 to 72 feet | £1,340 |."
    assert count_conflicts(boat, rows) == ["over 72 feet≠up to 60 feet"]  # "over 72" excludes "61 to 72"
    assert count_conflicts("How much for a boat of 65 feet?", rows) == []
    # not read: a closed range asked (ages as often as counts), a singular or -ing word, the band rule's own units
    assert count_conflicts("How many 16 to 18 students enrolled?", "8,250 students enrolled.") == []
    assert count_conflicts("What is the Level 4 allowance?", "The Level 3 allowance is £20.") == []
    assert count_conflicts("What if I cancel 5 working days before?", "Cancel 10 working days before.") == []
    assert count_conflicts("What if it is below 0 degrees?", "Stop washing at 3 degrees.") == []
    assert count_conflicts("Is a table for 8 people possible?", "Tables seat up to 6 people.") == [
        "8 people≠up to 6 people"]
    # the band rule's bound words, read the band rule's way, and "fewer than" for counts
    assert count_conflicts("Is a table for 8 people possible?", "Tables for fewer than 8 people.") == [
        "8 people≠fewer than 8 people"]
    assert count_conflicts("Is a table for 8 people possible?", "Tables for at least 8 people.") == []


def test_length_conflicts_compare_lengths_in_metres_whatever_their_unit():
    """Quenchley N062's shape (session 58's first contact): "5 metres" is no count of the noun "m", and no unit of the
    band rule, so "gates 5 metres wide" was answered by the rows for gates up to 3.0 m and from 3.0 m to 4.0 m."""
    from ragbench.llm.signals import length_conflicts

    rows = "Pair of driveway gates, up to 3.0 m wide | £1,450. Pair, 3.0 m to 4.0 m | £1,900."
    assert length_conflicts("How much for a pair of driveway gates 5 metres wide?", rows) == [
        "5 metres≠up to 3.0 m"]
    assert length_conflicts("How much for a pair of gates 3.5 metres wide?", rows) == []  # a band holds it
    assert length_conflicts("what about gates between 3 and 4 m?", rows) == []
    assert length_conflicts("How much for gates 4 metres wide?", rows) == []  # a band's end is in it
    # other units, compared in metres: 250 mm is no 114 mm or 150 mm; 60 cm is 0.6 m
    assert length_conflicts("What's the loan fee for a 250mm Dobsonian?", "114mm reflector | £10. 150mm | £20.") == [
        "250mm≠114mm"]
    assert length_conflicts("a stump 60 cm wide?", "Stumps 0.3 m to 0.6 m | £90.") == []
    # "taller than" bounds from below, exclusive: "2 to 4 m" ends where it starts
    assert length_conflicts("How much per metre for a hedge taller than 4 m?", "Hedges 2 to 4 m: £8 per metre.") == [
        "taller than 4 m≠2 to 4 m"]
    # nothing to compare: no length stated, two lengths asked, money in millions, a length only in the setting
    assert length_conflicts("How much for gates 5 metres wide?", "Gates are made to measure.") == []
    assert length_conflicts("Gates 3 m or 5 m wide?", rows) == []
    assert length_conflicts("Was turnover £3m last year?", "Turnover up to 2 m.") == []
    assert length_conflicts("My drive is 5 m wide. How much is a pair of gates?", rows) == []
    # "3 and 4 m" without "between" may list two lengths
    assert length_conflicts("Is a 5 m gate dearer?", "Gates 3 and 4 m wide.") == []


def test_area_conflicts_compare_areas_in_square_metres():
    """Sedgewarth H062's shape (session 59, a pair's first contact): "8 square metres" against the rows up to 2 and
    from 2 to 5 square metres; no length is stated, since the unit of area does not follow the number as a length's."""
    from ragbench.llm.signals import area_conflicts, length_conflicts

    rows = "Patch repair up to 2 square metres | £420 |. Patch repair from 2 to 5 square metres | £760 |."
    q = "How much is a patch repair of 8 square metres?"
    assert area_conflicts(q, rows) == ["8 square metres≠up to 2 square metres"]
    assert length_conflicts(q, rows) == []
    assert area_conflicts("How much is a patch repair of 4 square metres?", rows) == []  # a band holds it
    # square feet are compared in square metres: 300 sq ft is none of 50, 100 or 200 sq ft, nor 20 m² (215 sq ft)
    units = "50 sq ft | £17.40 |. 100 sq ft | £29.90 |. 200 sq ft | £52.75 |."
    assert area_conflicts("How much is a 300 sq ft unit per week?", units) == ["300 sq ft≠50 sq ft"]
    assert area_conflicts("How much is a 100 sq ft unit per week?", units) == []
    assert area_conflicts("a room of 20 m²?", "Rooms up to 25 sq ft | £5.") == ["20 m²≠up to 25 sq ft"]
    assert area_conflicts("a room of 2 m²?", "Rooms up to 25 sq ft | £5.") == []  # 2 m² is under 25 sq ft
    # no area stated, or two asked: nothing to compare
    assert area_conflicts(q, "Patch repairs are priced after a survey.") == []
    assert area_conflicts("8 square metres or 12 square metres?", rows) == []


def test_amount_ranges_and_range_conflicts():
    from ragbench.llm.signals import amount_ranges, amount_terms_met, amount_value, asked_amount, range_conflicts

    assert amount_value("£1 million") == 1_000_000.0 and amount_value("€12,000") == 12_000.0
    assert amount_value("$2.5k") == 2_500.0 and amount_value("15 per cent") == 15.0
    inf = float("inf")
    assert amount_ranges("Up to £250,000: Executive team members.") == [("£", (0.0, 250_000.0, True, True))]
    assert amount_ranges("Up to £1m: the CFO.") == [("£", (0.0, 1_000_000.0, True, True))]
    assert amount_ranges("Purchases above €2,000 and up to €12,000 need two quotes.") == \
        [("€", (2_000.0, 12_000.0, False, True))]
    assert amount_ranges("Purchases from €2,500 up to €15,000 need two quotes.") == \
        [("€", (2_500.0, 15_000.0, True, True))]
    assert amount_ranges("For purchases between £10,000 and £50,000, obtain three quotes.") == \
        [("£", (10_000.0, 50_000.0, True, True))]
    assert amount_ranges("Bands run €52,000 to €66,000.") == [("€", (52_000.0, 66_000.0, True, True))]
    assert amount_ranges("Debts under £100 are written off.") == [("£", (0.0, 100.0, True, False))]
    # A bare number takes the unit of the next quantity in its phrase; a number without any unit is no band.
    assert amount_ranges("Over 10 and up to 20 per cent: the Regional Sales Director.") == \
        [("%", (10.0, 20.0, False, True))]
    assert amount_ranges("Notify the CISO within 30 minutes.") == [("minute", (0.0, 30.0, True, True))]
    assert amount_ranges("The second dose follows 2 to 4 weeks later.") == \
        [("minute", (20_160.0, 40_320.0, True, True))]  # "2" takes "weeks"; time is compared in minutes
    assert amount_ranges("€0.39 per km for the first 5,000 km.") == [("km", (0.0, 5_000.0, True, True))]
    assert amount_ranges("The fee is €45 per visit.") == []  # an amount, not a band
    # Currency words meet their signs; spans of time are compared in minutes.
    assert amount_ranges("Gifts under 50 pounds may be kept.") == [("£", (0.0, 50.0, True, False))]
    assert amount_value("2 hours") == 120.0 and amount_value("1 week") == 7 * 1440.0
    assert range_conflicts("What if I am off sick for 10 days?", "Absences of up to 1 week need no note.") == \
        ["14,400≠0–10,080"]
    assert range_conflicts("Who must be told within 30 minutes?", "Tell the DPO within 1 hour.") == []
    assert amount_ranges("Review within 5 working days; the leave year runs from 1 April to 31 March.") == []
    assert asked_amount("Who may sign a contract worth £400,000?") == ("£", (400_000.0, 400_000.0, True, True))
    assert asked_amount("Who approves it once it's over €12,000?") == ("€", (12_000.0, inf, False, False))
    assert asked_amount("Who must approve a 15 per cent discount?") == ("%", (15.0, 15.0, True, True))
    assert asked_amount("Is £5 or £10 the fee?") is None  # two amounts: no one amount asked about
    assert asked_amount("Who signs contracts for 2 years?") == ("minute", (1_051_200.0, 1_051_200.0, True, True))
    assert asked_amount("Who signs contracts?") is None and asked_amount("What is the P4 target?") is None
    q = "Who may sign a contract worth £400,000 for Ferrowick?"
    assert range_conflicts(q, "Up to £250,000: Executive team members.") == ["400,000≠0–250,000"]
    assert range_conflicts(q, "Up to £1 million: the Chief Financial Officer.") == []
    assert range_conflicts(q, "The CFO signs every contract.") == []  # no band stated: nothing contradicts
    assert range_conflicts(q, "Contracts over 2 years need Legal.") == []  # another unit is not compared
    # Bounds: "over €12,000" excludes a band that ends at €12,000 and holds one that starts above it.
    q = "Who approves it once it's over €12,000?"
    assert range_conflicts(q, "Purchases above €2,000 and up to €12,000 need two quotes.") == ["12,000+≠2,000–12,000"]
    assert range_conflicts(q, "Purchases above €12,000 need three quotes.") == []
    assert range_conflicts("What about £100?", "Debts under £100 are written off.") == ["100≠0–100"]
    assert range_conflicts("What about £100?", "Debts up to £100 are written off.") == []
    q = "Who must approve a 15 per cent discount off list price?"
    assert range_conflicts(q, "Up to 10 per cent: the Account Executive may approve.") == ["15≠0–10"]
    assert range_conflicts(q, "Over 10 and up to 20 per cent: the Regional Sales Director.") == []
    # The amount's digits count as answered when a stated band of its unit holds it.
    assert amount_terms_met("Who may sign a contract worth £400,000?", "Up to £1 million: the CFO.") == {"400", "000"}
    assert amount_terms_met("Who may sign a contract worth £400,000?", "Up to £250,000: executives.") == set()
    assert amount_terms_met("Who may sign a contract worth £400,000?", "Up to 1 million km.") == set()


def test_stem_meets_an_acronyms_plural_and_keeps_other_short_words():
    from ragbench.llm.signals import stem

    assert stem("pcs") == stem("pc") == "pc"
    assert stem("ids") == "id" and stem("gps") == "gp"
    assert stem("ass") == "ass" and stem("bus") == "bus" and stem("cat") == "cat"
    assert stem("p4") == "p4" and stem("2026") == "2026"
    assert stem("dogs") == "dog" and stem("policies") == "policy" and stem("approves") == stem("approved")
    # "-ness" makes a noun of an adjective: "phone in sick" meets "Sickness absence"; four letters must remain
    assert stem("sickness") == stem("sick") == "sick" and stem("illness") == "illness"


def test_a_decimal_number_is_one_term_and_another_value_conflicts():
    from ragbench.llm.signals import salient_terms, term_set, value_conflicts, words

    assert words("falls to 0.30 mg/l; at 0.2 mg/l it stops.") == \
        ["falls", "to", "0.3", "mg", "l", "at", "0.2", "mg", "l", "it", "stops"]
    # Dotted identifiers and addresses are not decimals; a sentence's closing full stop is not a point.
    assert words("host 10.0.0.1 runs v2.1, rate 1.0.") == ["host", "10", "0", "0", "1", "runs", "v2", "1", "rate", "1"]
    # A unit typed against the number is a word of its own ("8.2m" had been "8" and the made-up code "2m"); a clock
    # time keeps its form.
    assert words("a tower up to 8.2m costs £3.4m, 2.5km away, open at 9.30am") == \
        ["a", "tower", "up", "to", "8.2", "m", "costs", "3.4", "m", "2.5", "km", "away", "open", "at", "9", "30am"]
    assert salient_terms("and the 10.2 m one? (referring to weekend rate wide span 8.2m)") == \
        ["10.2", "one", "weekend", "rate", "wide", "span", "8.2"]
    assert salient_terms("What if it keeps falling to 0.2?") == ["keep", "fall", "0.2"]
    assert "0.2" not in term_set("The low alarm is at 0.3 mg/l, after 2 hours.")
    assert value_conflicts("What if it keeps falling to 0.2?", "A low alarm is raised at 0.3 mg/l.") == ["0.2≠0.3"]
    assert value_conflicts("What if it keeps falling to 0.2?", "At 0.2 mg/l the works shuts down.") == []
    assert value_conflicts("What if it keeps falling to 0.2?", "The works shuts down.") == []  # nothing stated
    assert value_conflicts("How long is 3 days?", "It lasts 2 days.") == []  # whole numbers are not compared


def test_stem_meets_irregular_verb_forms_and_undoubles_a_spelling_consonant():
    from ragbench.llm.signals import stem

    assert stem("kept") == stem("keep") == stem("keeps") == "keep"
    assert stem("bitten") == stem("bite") and stem("taken") == stem("took") == stem("take")
    assert stem("written") == stem("wrote") == stem("writes") == "writ"
    assert stem("bought") == stem("buying") == stem("buy") == "buy"
    # "paid leave" is no "pay", a "broken" boiler no "break"; "left" and "found" are words of their own
    assert stem("paid") == "paid" and stem("broken") == "broken" and stem("left") == "left"
    assert stem("planned") == stem("planning") == stem("plan") == "plan"
    assert stem("stopped") == stem("stop") and stem("running") == "run"
    # the word's own double letters stay
    assert stem("staffed") == stem("staffing") == stem("staff") == "staff"
    assert stem("billed") == "bill" and stem("passing") == "pass" and stem("buzzing") == "buzz"


def test_a_decimal_counted_kind_is_a_sibling():
    """Gorsebeck z064's shape: "26-tonne drays" asked, only the 7.5-tonne and 3.5-tonne rows stated: the answer is
    about other vehicles. A count is compared as a number ("7.50-tonne" is "7.5-tonne")."""
    from ragbench.llm.signals import quantity_conflicts

    rows = "7.5-tonne dray with tail-lift | C1 | 8 weeks |. 3.5-tonne van | car licence | 12 weeks |."
    assert quantity_conflicts("How often do our 26-tonne drays need a safety inspection?", rows) == \
        ["26-tonn≠3.5-tonn"]
    assert quantity_conflicts("How often does a 7.5-tonne dray need a safety inspection?", rows) == []
    assert quantity_conflicts("How often does a 7.50-tonne dray need a safety inspection?", rows) == []
    assert quantity_conflicts("How often does a 7.5-tonne dray need a safety inspection?",
                              "26-tonne refuse collection vehicle | 56 | 6 weeks |.") == ["7.5-tonn≠26-tonn"]


def test_a_quantity_or_counted_kind_conflicts_with_its_siblings():
    from ragbench.llm.signals import quantity_conflicts

    award = "We give an award at 10 years (£200 of vouchers) and at 20 years (£500 of vouchers)."
    assert quantity_conflicts("What award does an employee get after 25 years?", award) == ["25 years≠10 years"]
    assert quantity_conflicts("What award does an employee get after 20 years?", award) == []
    # Siblings share the unit word: days are no sibling of years, though both are spans of time.
    assert quantity_conflicts("What award comes after 25 years?", "Staff get 28 days of leave.") == []
    # A threshold the asked amount passes ("after 2 years") and a band that holds it are answers, not siblings.
    assert quantity_conflicts("How much leave after 3 years?", "After 2 years you get 28 days.") == []
    assert quantity_conflicts("How much leave after 3 years?", "At 2 years you get 28 days.") == ["3 years≠2 years"]
    assert quantity_conflicts("Who signs a £400,000 contract?", "At £100,000 the director; up to £1 million "
                              "the board.") == []
    # Only the sentence that asks: the setting describes the asker.
    assert quantity_conflicts("I have been here 25 years. What award is there?", award) == []
    # A counted kind in a hyphenated compound; the evidence may write it either way.
    rents = "1 bedroom | £102.25 |. The average rent for a 2-bedroom home is £154.60."
    assert quantity_conflicts("What is the rent for a 5-bedroom house?", rents) == ["5-bedroom≠1-bedroom"]
    assert quantity_conflicts("What is the rent for a 1-bedroom flat?", rents) == []
    assert quantity_conflicts("What is the rent for a 2-bedroom flat?", "2 bedrooms | £120 |") == []
    # Part of conflicts(), so the answerability check refuses on it (modifiers or not).
    assert conflicts("What award does an employee get after 25 years?", award, modifiers=False) == \
        ["25 years≠10 years"]


def test_an_unhyphenated_counted_kind_counts_where_only_a_modifier_can_stand():
    """Pennyholt U063's shape: "a 12 kWp solar system" asked, the 4 to 10 kWp rows quoted. Between a determiner and
    its noun a number and a unit are a compound modifier, the kind a hyphen would mark; the check reads them
    (``attributive``), the reader's ranking does not."""
    from ragbench.llm.signals import quantity_conflicts

    rows = "4 kWp | 10 | £6,190 |. 6 kWp | 14 | £7,840 |. 10 kWp | 24 | £11,250 |."
    assert quantity_conflicts("How much is a 12 kWp solar system?", rows, attributive=True) == ["12-kwp≠10-kwp"]
    assert quantity_conflicts("How much is a 12 kWp solar system?", rows) == []
    assert quantity_conflicts("how much is a 6 kWp solar system", rows, attributive=True) == []
    assert conflicts("What does a 6 berth caravan cost a week?", "A 4 berth caravan is £420.", modifiers=False,
                     attributive=True) == ["6-berth≠4-berth"]
    # Not in a condition's or an object's place, and "per" is no unit.
    flush = "Power flush of a system with up to 10 radiators: from £520."
    assert quantity_conflicts("How much is a power flush for a system with 15 radiators?", flush,
                              attributive=True) == []
    assert quantity_conflicts("Who must approve a 15 per cent discount?", "15 per cent: the sales director.",
                              attributive=True) == []
    # Read as a point ("3 hour") and as a kind ("3-hour"), one conflict is reported once.
    assert quantity_conflicts("What does a 3 hour lesson cost?", "A 2 hour lesson costs £80.",
                              attributive=True) == ["3 hour≠2 hour"]


def test_graded_codes_are_one_identifier():
    from ragbench.llm.signals import graded_codes

    assert graded_codes("A Level 3 course, a level 03 resit, Category 9 cover; level headed.") == \
        {"level 3", "category 9"}


def test_graded_codes_written_with_a_letter_or_a_roman_numeral():
    """"Grade IV" and "Round D" are graded codes too; lists and ranges name each member; a table column headed by a
    family word names its cells; the family word takes any case, the code only capitals, and "I" before a verb is
    the asker."""
    from ragbench.llm.signals import lettered_codes

    assert lettered_codes("How much is grade E fabric? Cover for a Grade IV safe.") == {"grade e", "grade iv"}
    assert lettered_codes("Rounds A to C, Grades I to III, Bands A and B, Zone A or C") == {
        "round a", "round b", "round c", "grade i", "grade ii", "grade iii", "band a", "band b", "zone a", "zone c"}
    assert lettered_codes("| Grade | Price per metre |\n|---|---|\n| A | £28 |\n| D | £82 |\n\n| A | x |") == \
        {"grade a", "grade d"}
    assert lettered_codes("which band I am on, what grade I'd get, a band a week, Level 5") == set()
    assert lettered_codes("a Grade I listed barn") == {"grade i"}


def test_lists_and_ranges_of_graded_codes_name_each_member():
    """"Bands 1 to 4" mentions Band 2, so a question about Band 2 is neither unknown nor answered by a sibling; a
    range followed by a unit is a span ("Priority 1 – 4 hours"), and a wide jump is no range ("Category 2 – 30")."""
    from ragbench.llm.signals import graded_codes

    assert graded_codes("| Bands 1 to 4 | 25 days |") == {"band 1", "band 2", "band 3", "band 4"}
    assert graded_codes("Bands 5 and 6, Grades 3, 4 or 5, stage 1-2") == \
        {"band 5", "band 6", "grade 3", "grade 4", "grade 5", "stage 1", "stage 2"}
    assert graded_codes("Priority 1 – 4 hours to fix") == {"priority 1"}
    assert graded_codes("Category 2 – 30 minutes") == {"category 2"}
    assert graded_codes("Levels 2 to 30") == {"level 2", "level 30"}
    assert conflicts("How many days of leave on Band 2?", "Bands 1 to 4 | 25 days", modifiers=False) == []
    assert conflicts("How many days of leave on Band 5?", "Bands 1 to 4 | 25 days", modifiers=False) == \
        ["band5≠band1"]


def test_an_asked_age_inside_an_age_band_is_answered():
    from ragbench.llm.signals import age_terms_met, amount_terms_met

    row = "Child (3 to 15) | £48 |"
    assert age_terms_met("And one for my eight-year-old?", row) == {"eight", "year", "old"}
    assert amount_terms_met("What about my 12 year old?", "Young person (aged 12–17) | £3.40 |") == \
        {"12", "year", "old"}
    # outside the band, or no band at all: nothing is met
    assert age_terms_met("And one for my 16-year-old?", row) == set()
    assert age_terms_met("And one for my eight-year-old?", "Children go free with a paying adult.") == set()
    # An asked range is met only as a whole: "15 to 19-year-olds" by a band holding both ends, not by one holding 19.
    assert age_terms_met("How much is a workshop for 15 to 19-year-olds?", "Seniors (15 to 19) | £108 |") == \
        {"15", "19", "year", "old"}
    assert age_terms_met("How much is a workshop for 15 to 19-year-olds?", "Seniors (16 to 19) | £108 |") == set()


def test_plural_ages_ranges_and_bands_written_without_brackets():
    """Saltmarden M004's shape: "12 and 13 year olds" against "Ages 12 to 15: in rooms by 10pm." The plural
    ("olds") had made the age unread, so "olds" was refused as a rare word."""
    from ragbench.llm.signals import age_terms_met

    rule = "Ages 12 to 15: in rooms by 10pm. Ages 16 and 17: in rooms by 10:30pm."
    assert age_terms_met("What time do 12 and 13 year olds have to be in their rooms?", rule) == \
        {"12", "13", "year", "old"}
    assert age_terms_met("When do 19-year-olds pay the adult rate?", "Young adults aged 18-21 pay £12.") == \
        {"19", "year", "old"}
    assert age_terms_met("What time do 15 and 16 year olds go to bed?", rule) == set()  # no band holds both
