"""ExtractiveChatModel reading: headings and FAQ questions are never quoted; sentences holding the kind of answer
the question asks for (a number, a role, money) are preferred."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from ragbench.answer.grounding import verify
from ragbench.errors import ConfigError
from ragbench.llm import ExtractiveChatModel, Passage, rag_meta
from ragbench.llm.extractive import headings
from ragbench.schema import Message

CARDS = ("# Corporate payment cards\n\n**Who can have one.** Requests are approved by the Financial Controller.\n\n"
         "**Limits.** The standard card has a single-transaction limit of £1,500.")
FAQ = "## Delivery slots\n\nHow do suppliers book a delivery slot?\nSuppliers book a slot 48 hours ahead in the portal."


def ask(model: ExtractiveChatModel, question: str, passages: list[Passage]) -> str:
    return model.complete([Message("user", "prompt", rag_meta(question, passages))]).text


def test_headings_found():
    assert headings(CARDS) == {"corporate payment cards", "who can have one.", "limits."}
    assert headings(FAQ) == {"delivery slots"}
    # A long bold sentence is emphasis, not a heading.
    assert headings("**Never share your password with anyone, including the service desk staff.** Ok.") == set()


def test_headings_and_questions_are_not_answers():
    # "Corporate payment cards" shares 3 words with the question; the heading is skipped, the answer kept.
    out = ask(ExtractiveChatModel(), "Who approves requests for corporate payment cards?", [Passage(1, CARDS, 1.0)])
    assert out == "Requests are approved by the Financial Controller. [1]"
    # The FAQ line repeats the question word for word; the sentence after it is the answer.
    assert ask(ExtractiveChatModel(), "How do suppliers book a delivery slot?", [Passage(1, FAQ, 1.0)]) == \
        "Suppliers book a slot 48 hours ahead in the portal. [1]"
    # With skipping off the heading is a candidate again, but the answer sentence sits under it and counts its
    # words as context: (approv, request, corporate, payment, card) all covered → it wins; the heading has no role
    # (score × 0.5) and stays below the 0.5 × best floor.
    assert ask(ExtractiveChatModel(skip_headings=False), "Who approves requests for corporate payment cards?",
               [Passage(1, CARDS, 1.0)]) == "Requests are approved by the Financial Controller. [1]"


def test_sentences_with_the_asked_for_kind_are_preferred():
    text = "The card limit policy is reviewed by finance. The card limit is 1,500 pounds."
    # Overlap {card, limit} is 2/2 for both; the first has no currency → score × 0.5, below 0.7 × the second.
    q = "Tell me about the card limit."
    assert ask(ExtractiveChatModel(sentence_ratio=0.7), q, [Passage(1, text, 1.0)]) == \
        "The card limit policy is reviewed by finance. [1] The card limit is 1,500 pounds. [1]"  # no type asked
    q = "What is the card limit?"  # a limit is a measured noun: a number is asked for
    assert ask(ExtractiveChatModel(sentence_ratio=0.7), q, [Passage(1, text, 1.0)]) == \
        "The card limit is 1,500 pounds. [1]"
    q = "How much money is the card limit?"  # "how much" + no money noun → a number is asked for
    assert ask(ExtractiveChatModel(sentence_ratio=0.7), q, [Passage(1, text, 1.0)]) == \
        "The card limit is 1,500 pounds. [1]"
    # type_penalty = 1 switches the preference off.
    assert ask(ExtractiveChatModel(sentence_ratio=0.7, type_penalty=1.0), q, [Passage(1, text, 1.0)]) == \
        "The card limit policy is reviewed by finance. [1] The card limit is 1,500 pounds. [1]"
    with pytest.raises(ConfigError):
        ExtractiveChatModel(type_penalty=1.5).complete([Message("user", "q", rag_meta(q, [Passage(1, text, 1.0)]))])


def test_a_heading_modifier_does_not_count_against_every_sentence_under_it():
    # The section title calls the email "suspicious"; the question calls it "fake". The title describes the whole
    # section, so only a sentence's own words can contradict the question's modifier: the counting sentence wins.
    text = ("The link led to a fake sign-in page that copied the staff email login. "
            "Mail logs show that 2 staff clicked the link in the email.")
    passage = Passage(1, text, 1.0, context="Ticket 4471: suspicious supplier email")
    q = "How many staff clicked the link in the fake supplier email?"
    assert ask(ExtractiveChatModel(sentence_ratio=0.99), q, [passage]) == \
        "Mail logs show that 2 staff clicked the link in the email. [1]"
    # A sentence that itself names another kind of leave is still penalised (bereavement asked, annual found).
    text = "Staff get 25 days of annual leave. Staff get 5 days of bereavement leave after a death."
    q = "How many days of bereavement leave do staff get?"
    assert ask(ExtractiveChatModel(sentence_ratio=0.99), q, [Passage(1, text, 1.0)]) == \
        "Staff get 5 days of bereavement leave after a death. [1]"


def test_a_bold_run_in_heading_cut_at_the_chunk_start_is_a_heading():
    # The chunk was cut after "**5. ": what is left of the run-in heading is still a heading.
    chunk = "Project Kingfisher.** The board approved spending of up to £180,000 on due diligence."
    assert headings(chunk) == {"project kingfisher."}
    assert ask(ExtractiveChatModel(sentence_ratio=0.1), "What did the board approve for Project Kingfisher?",
               [Passage(1, chunk, 1.0)]) == "The board approved spending of up to £180,000 on due diligence. [1]"


def test_a_bold_run_in_heading_cut_at_the_chunk_end_is_a_heading():
    chunk = "Staff may work remotely up to 2 days per week.\n\n**Core hours."
    assert headings(chunk) == {"core hours."}
    assert ask(ExtractiveChatModel(sentence_ratio=0.1), "When are the core hours for remote staff?",
               [Passage(1, chunk, 1.0)]) == "Staff may work remotely up to 2 days per week. [1]"


def test_a_band_of_money_that_excludes_the_asked_amount_loses():
    text = ("Up to £25,000: department heads. Up to £250,000: Executive team members. "
            "Up to £1 million: the Chief Financial Officer or the Chief Executive Officer.")
    q = "Who may sign a contract worth £400,000?"
    assert ask(ExtractiveChatModel(), q, [Passage(1, text, 1.0, context="Contract signature limits")]) == \
        "Up to £1 million: the Chief Financial Officer or the Chief Executive Officer. [1]"


def test_a_percentage_band_that_excludes_the_asked_share_loses():
    text = ("Up to 10 per cent: the Account Executive may approve. "
            "Over 10 and up to 20 per cent: the Regional Sales Director. "
            "Over 20 per cent: the Chief Revenue Officer.")
    q = "Who must approve a 15 per cent discount?"
    assert ask(ExtractiveChatModel(), q, [Passage(1, text, 1.0, context="Discount approval")]) == \
        "Over 10 and up to 20 per cent: the Regional Sales Director. [1]"


def test_a_question_about_what_to_do_prefers_an_instruction():
    from ragbench.llm.answer_types import asks_for_action, is_instruction

    assert asks_for_action("Some odd email wants my login details - what now?")
    assert asks_for_action("I emailed an invoice to the wrong client. What do I have to do?")
    assert asks_for_action("How do I fix readings that drift upward?") and asks_for_action("What should we do?")
    # Someone else's duty, or a question about facts, is answered by a statement.
    assert not asks_for_action("What must the shift lead do first?")
    assert not asks_for_action("How often do I get appraised?") and not asks_for_action("What is the limit?")
    assert is_instruction("Clean the inlet grille with the soft brush.")
    assert is_instruction("Never share your password.") and is_instruction("Breaches must be reported within 1 hour.")
    assert not is_instruction("Upward drift is usually dust on the sensor inlet.")
    # Question terms: fix, monitor, reading, drift, upward. The cause covers 4 of 5: (0.8 + 0.05) × 0.5 = 0.425; the
    # instruction covers 2: (0.4 + 0.05) × 1 = 0.45, so it wins.
    text = "Upward drift of monitor readings is usually dust on the inlet. Clean the inlet grille to fix the drift."
    q = "How do I fix monitor readings that drift upward?"
    assert ask(ExtractiveChatModel(sentence_ratio=0.99), q, [Passage(1, text, 1.0)]) == \
        "Clean the inlet grille to fix the drift. [1]"
    # type_penalty = 1 switches the preference off: the cause sentence shares more words with the question.
    assert ask(ExtractiveChatModel(sentence_ratio=0.99, type_penalty=1.0), q, [Passage(1, text, 1.0)]) == \
        "Upward drift of monitor readings is usually dust on the inlet. [1]"


def test_a_modifier_of_one_part_does_not_rank_down_the_other_parts_answer():
    # "Brook Valley Water" puts the modifier "valley" on "water"; the second part's answer speaks of "drinking
    # water". That sentence answers the second part, whose words it does not contradict, so it is not ranked down.
    q = "How many treatment sites does Brook Valley Water run, and how many homes does Tarnwick supply today?"
    passages = [Passage(1, "Brook Valley Water runs 4 treatment sites in the valley.", 1.0),
                Passage(2, "Tarnwick Ltd supplies drinking water to about 41,000 homes. "
                           "The company was formed in 1989 in Tarnwick.", 0.9)]
    assert ask(ExtractiveChatModel(), q, passages) == \
        "Brook Valley Water runs 4 treatment sites in the valley. [1] Tarnwick Ltd supplies drinking water to " \
        "about 41,000 homes. [2]"
    # Asked alone, the same modifier still ranks a sentence about another kind of water down.
    q = "How many homes does Brook Valley Water supply?"
    assert ask(ExtractiveChatModel(sentence_ratio=0.99), q, [Passage(1, "Drinking water reaches 41,000 homes. "
                                                                       "Brook Valley Water supplies 9,000 homes.",
                                                                       1.0)]) == \
        "Brook Valley Water supplies 9,000 homes. [1]"


def test_a_rate_can_be_a_multiple_of_the_normal_rate():
    from ragbench.llm.answer_types import PERCENT, expected_type, has_type

    q = "What rate am I paid for a call-out?"
    assert expected_type(q) == PERCENT
    assert has_type("Call-outs are paid at double time on Sundays.", PERCENT, q)
    assert has_type("Weekday call-outs are paid at time and a half.", PERCENT, q)
    assert not has_type("Call-outs are paid on the monthly payroll.", PERCENT, q)


def test_a_table_row_is_read_with_its_column_headers_and_the_header_is_never_quoted():
    fares = ("## Ticket prices\n\n| Ticket | Adult | Child (5-15) |\n|---|---|---|\n"
             "| Day Rider, all zones | £6.80 | £3.40 |\n| Weekly Rider, all zones | £24.00 | £12.00 |")
    sunday = "On Sundays a Day Rider for all zones costs £5.00 for everyone."
    q = "How much is an adult Day Rider for all zones?"
    # "adult" is only in the header line: it makes the Day Rider row the best answer, and the header line itself,
    # which shares most words with the question, is not an answer.
    assert ask(ExtractiveChatModel(sentence_ratio=0.99), q, [Passage(1, fares, 1.0), Passage(2, sunday, 1.0)]) == \
        "Day Rider, all zones | £6.80 | £3.40 |. [1]"
    assert "ticket | adult | child (5-15) |" in headings(fares)


def test_pence_written_after_the_number_is_money_and_a_mileage_rate_is_answered_by_it():
    """Brindlecote P021's shape: "What's the mileage rate for a motorbike?" asks for a rate, and the row "Motorbike |
    24p |" states one per mile: pence written as "24p" is an amount, and a mileage rate names its unit (the mile) as
    an hourly rate names the hour."""
    from ragbench.llm.answer_types import MONEY, PERCENT, expected_type, has_type

    q = "What's the mileage rate for a motorbike?"
    assert expected_type(q) == PERCENT
    assert has_type("Motorbike | 24p |.", PERCENT, q) and has_type("Cyclists claim 12.5p.", PERCENT, q)
    assert not has_type("Motorbike riders claim for business miles only.", PERCENT, q)
    assert has_type("A carrier bag costs 10p.", MONEY) and has_type("45p", MONEY)
    # "2pm", "P3" and "3pp" are no pence; a rate without a unit or money word still asks for a share.
    assert not any(has_type(t, MONEY) for t in ("Doors open at 2pm.", "Form P3 is needed.", "See 3pp of notes."))
    assert not has_type("Bicycle | 20p |.", PERCENT, "What rate of staff absence do we have?")


def test_the_type_test_reads_each_cell_under_its_column_header():
    from ragbench.llm.answer_types import FREQUENCY, MONEY, has_type, under_headers

    row = "7.5-tonne caged tipper | 8 | 8 weeks |."
    ctx = "Fleet checks . Inspections . | Vehicle | Number in fleet | Safety inspection every |"
    assert under_headers(row, ctx) == \
        "Vehicle 7.5-tonne caged tipper | Number in fleet 8 | Safety inspection every 8 weeks"
    assert has_type(under_headers(row, ctx), FREQUENCY) and not has_type(row, FREQUENCY)
    # The nearest header of the context counts; a row of another width, a plain sentence or no header: as it is.
    assert under_headers("Adult | 12.50 |.", "| Old | Older | Oldest | . | Ticket | Price (£) |") == \
        "Ticket Adult | Price (£) 12.50"
    assert has_type(under_headers("Adult | 12.50 |.", "| Ticket | Price (£) |"), MONEY)
    assert under_headers(row, "| Vehicle | Safety inspection every |") == row
    assert under_headers("Drays are inspected often.", ctx) == "Drays are inspected often."
    assert under_headers(row, "Fleet checks") == row


def test_the_reader_prefers_the_row_whose_column_states_the_asked_type():
    """Cindergate c019's shape: "How often …?" asks for a frequency; the tipper's row holds one only under its
    header, so read alone the row would lose to a looser sentence that states one ("each morning", "monthly")."""
    fleet = ("## Inspections\n\n| Vehicle | Number in fleet | Safety inspection every |\n|---|---|---|\n"
             "| 7.5-tonne caged tipper | 8 | 8 weeks |")
    q = "How often does a 7.5-tonne caged tipper have a safety inspection?"
    for other in ("Every caged tipper gets a safety check by its driver each morning.",
                  "Safety inspections of tippers are booked monthly."):
        assert ask(ExtractiveChatModel(max_sentences=1), q, [Passage(1, fleet, 1.0), Passage(2, other, 1.0)]) == \
            "7.5-tonne caged tipper | 8 | 8 weeks |. [1]"


def test_the_reader_reads_a_rows_cells_under_their_column_headers_for_coverage():
    """Tallowick C001's shape: the asked price sits in the row of The Orrery under the header "Adult peak"; read as
    its cells alone the row said only "Orrery", so a sentence saying "adult" and "peak" of another cinema won."""
    prices = ("## Standard tickets by cinema\n\n| Cinema | Adult off-peak | Adult peak | Child |\n|---|---|---|---|\n"
              "| The Orrery | £9.40 | £11.90 | £6.80 |\n| The Starlight | £9.10 | £11.50 | £6.60 |\n\n"
              "The Bijou has no peak pricing: an adult ticket costs £8.50 at every performance.")
    model = ExtractiveChatModel(max_sentences=1)
    assert ask(model, "How much is an adult peak ticket at the Orrery now?", [Passage(1, prices, 1.0)]) == \
        "The Orrery | £9.40 | £11.90 | £6.80 |. [1]"
    assert ask(model, "How much is an adult peak ticket at the Starlight?", [Passage(1, prices, 1.0)]) == \
        "The Starlight | £9.10 | £11.50 | £6.60 |. [1]"


def test_a_header_line_at_the_end_of_a_chunk_is_still_a_header():
    # A chunk boundary right after the separator line leaves the header with no row under it: it is still a
    # header, not a sentence (it had been quoted as "Grade | Salary range (full time, 37 hours) |.").
    cut = ("## Salaried grades\n\nEach grade has four points.\n\n| Grade | Salary range (full time, 37 hours) |\n"
           "|---|---|")
    rows = "| K4 | £30,120 to £32,660 |\n| K5 | £33,450 to £36,210 |"
    assert "grade | salary range (full time, 37 hours) |" in headings(cut)
    answer = ask(ExtractiveChatModel(sentence_ratio=0.99), "What salary range is grade K5 on?",
                 [Passage(1, cut, 1.0), Passage(2, rows, 1.0)])
    assert "K5 | £33,450 to £36,210 |. [2]" in answer and "Salary range" not in answer


def test_a_list_item_is_read_under_its_lead_in_which_is_never_quoted():
    text = ("All staff can take 52 weeks of maternity leave. Staff with a year's service receive enhanced maternity "
            "pay:\n\n- 12 weeks at full pay, then\n- 14 weeks at half pay.")
    q = "How many weeks of enhanced maternity pay at full pay do staff with a year's service get?"
    assert ask(ExtractiveChatModel(sentence_ratio=0.99), q, [Passage(1, text, 1.0)]) == \
        "12 weeks at full pay, then. [1]"


def test_a_list_item_ending_in_a_semicolon_ends_with_a_full_stop():
    text = ("A data breach includes:\n\n- a laptop or phone lost with customer data on it;\n"
            "- an email with customer details sent to the wrong person;\n- a letter posted to the wrong address.")
    answer = ask(ExtractiveChatModel(sentence_ratio=0.99), "Is an email sent to the wrong person a data breach?",
                 [Passage(1, text, 1.0)])
    assert answer == "an email with customer details sent to the wrong person. [1]"


def test_a_table_row_is_one_sentence_whatever_full_stops_its_cells_hold():
    table = ("| Category | Action |\n|---|---|\n| P2 | Repair before the next day's service. |\n"
             "| P3 | Report it in CheckRound. The workshop repairs it within 7 days. |")
    # Each of its pieces carries the marker, so grounding finds all of them cited.
    answer = ask(ExtractiveChatModel(sentence_ratio=0.99), "By when must a P3 defect be repaired?",
                 [Passage(1, table, 1.0)])
    assert answer == "P3 | Report it in CheckRound. [1] The workshop repairs it within 7 days. [1]"
    assert verify(answer, [SimpleNamespace(chunk_id="c1", text=table)]).support_ratio == 1.0


def test_a_share_can_be_a_ratio_and_a_named_rate_of_pay_an_amount():
    from ragbench.llm.answer_types import PERCENT, expected_type, has_type

    q = "What proportion of passengers is selected for a swab?"
    assert expected_type(q) == PERCENT
    assert has_type("In addition, 1 in 10 passengers is selected for a swab.", PERCENT, q)
    assert has_type("About one in five bags is opened.", PERCENT, q)
    assert has_type("Roughly a third of them are searched.", PERCENT, q)
    assert not has_type("Passengers are selected at random.", PERCENT, q)
    assert not has_type("Diabetic patients receive half their usual breakfast.", PERCENT, "What is the death rate?")
    # A rate whose unit the question names is answered by an amount of money (a pay table's row).
    q = "What is the basic hourly rate for a certified security officer?"
    assert expected_type(q) == PERCENT
    assert has_type("Security officer (certified) | £14.20 |", PERCENT, q)
    assert has_type("Night drivers | £98 |", PERCENT, "What is the rate per shift?")
    assert has_type("£320 a day.", PERCENT, "What is the daily rate for a contractor?")
    # A rate without a unit of time or pay is not answered by a bare amount.
    assert not has_type("The fee is £25.", PERCENT, "What is the interest rate on the loan?")
    # "share" asks for a share only as a noun; an APR asks for a percentage whatever else the question names.
    assert expected_type("What share of the value passed to the agency did it recover?") == PERCENT
    assert expected_type("What were arrears as a share of the rent debit?") == PERCENT
    assert expected_type("Can a contractor's staff share one login?") is None
    assert expected_type("What is the APR on a share-secured loan, and what dividend did the account pay?") == PERCENT
    # So is a rate asked with a word for money, unless the question asks for a share in so many words.
    assert has_type("Welding and fabrication | £66 | £84 |.", PERCENT,
                    "what's the weekday rate we charge customers for welding")
    assert not has_type("Associate dentist | £420 |", PERCENT,
                        "What percentage rate of net fees do associate dentists receive?")


def test_a_title_that_defines_the_asked_name_answers_what_it_is_when_switched_on():
    """dunhollow d096 (session 35): the paper's title, not its text, says what Project Kittiwake is."""
    from ragbench.llm.extractive import defined_name, title_definition

    text = ("Staff at Dunhollow and at the target must not be told. Kittiwake would take Dunhollow from four clinics "
            "to nine. Marlowe Brook Dental runs five practices.")
    title = "Board paper: Project Kittiwake, acquisition of Marlowe Brook Dental"
    passages = [Passage(1, text, 1.0, f"{title} . Board paper: Project Kittiwake")]
    on = ExtractiveChatModel(title_definitions=True)
    assert ask(on, "What is Project Kittiwake?", passages).startswith(
        "Project Kittiwake, acquisition of Marlowe Brook Dental. [1]")
    assert ask(on, "What's Project Kittiwake about?", passages).startswith("Project Kittiwake, acquisition of")
    assert "acquisition of" not in ask(ExtractiveChatModel(), "What is Project Kittiwake?", passages)  # off
    assert "acquisition of" not in ask(on, "How many clinics would Project Kittiwake add?", passages)  # not asked
    assert (defined_name("What's Project Kittiwake about?"), defined_name("What's Project Kittiwake about?", True)) \
        == (None, "Project Kittiwake")
    titles = (title, "Board paper: Project Kittiwake", "Project Kittiwake - the plan", "Project Kittiwake, Q3")
    assert [title_definition(t, "Project Kittiwake") for t in titles] == \
        ["Project Kittiwake, acquisition of Marlowe Brook Dental", None, "Project Kittiwake - the plan", None]


def test_a_heading_that_defines_the_asked_name_answers_what_it_is():
    paper = ("# Project Kingfisher — proposed acquisition of Tolland Coaches Ltd\n\n"
             "Paper for the board meeting on 18 November 2025.\n\n## The proposal\n\n"
             "Its main business is 31 home-to-school contracts for the county council.")
    passages = [Passage(1, paper, 1.0)]
    assert ask(ExtractiveChatModel(), "What is Project Kingfisher?", passages).startswith(
        "Project Kingfisher — proposed acquisition of Tolland Coaches Ltd. [1]")
    # Any other question still never gets a heading.
    assert "Tolland" not in ask(ExtractiveChatModel(), "When is the board meeting for Project Kingfisher?", passages)
    from ragbench.llm.extractive import defined_name, defines

    assert defined_name("What is Project Kingfisher?") == "Project Kingfisher"
    assert defined_name("What is the fix target for a P1 ticket?") is None
    assert defines("Project Osprey: base agreement with Skylark Air", "Project Osprey")
    assert not defines("Project Heron", "Project Heron")  # a bare name defines nothing
    assert defines("Project Heron - acquisition pipeline", "Project Heron")
    assert not defines("Project Heron-style reviews", "Project Heron")  # a hyphenated word is no definition


def test_how_often_asks_for_a_frequency_unless_another_part_asks_for_a_count():
    from ragbench.llm.answer_types import FREQUENCY, NUMBER, expected_type, has_type

    q = "How often is that tested?"
    assert expected_type(q) == FREQUENCY
    assert has_type("Response times are tested every month by a timed exercise.", FREQUENCY, q)
    assert has_type("The balance is checked weekly by two members of staff.", FREQUENCY, q)
    assert has_type("Coaches | every 4 weeks |", FREQUENCY, q)
    assert has_type("Hydrants are inspected twice a year.", FREQUENCY, q)
    # How long is not how often.
    assert not has_type("The first vehicle must reach the runway within 2 minutes of the call.", FREQUENCY, q)
    # A second part asking for a count keeps the number type for the whole question.
    assert expected_type("How often do buses get a safety inspection, and how many pipes did the check find?") == \
        NUMBER


def test_a_multi_part_question_reads_max_passages_for_each_part():
    # Three passages score above the only one that answers the second part. Read as one question (two passages),
    # the second part's passage was never read; a two-part question reads two passages per part.
    q = "How many days of annual leave do I get, and who signs off my expenses?"
    passages = [Passage(1, "Full-time staff get 25 days of annual leave a year.", 1.0),
                Passage(2, "Part-time staff get annual leave pro rata, in days.", 0.95),
                Passage(3, "Annual leave requests go through the HR portal.", 0.9),
                Passage(4, "Your line manager signs off your expenses within 5 days.", 0.8)]
    model = ExtractiveChatModel(max_passages=2)
    assert model._kept(passages) == ([0, 1], 1.0)
    assert model._kept(passages, n_parts=2) == ([0, 1, 2, 3], 1.0)
    assert ask(model, q, passages) == \
        "Full-time staff get 25 days of annual leave a year. [1] Your line manager signs off your expenses within " \
        "5 days. [4]"


def test_each_part_that_asks_for_a_kind_of_answer_gets_a_sentence_holding_it():
    # The two best sentences share the question's words but hold no sum: the first part asks "what salary range"
    # (money), so the best sentence with a sum that shares a term with that part is added (one over the cap).
    q = "What is the salary range for grade 6, and what notice period applies to that grade?"
    passages = [Passage(1, "Notice periods: staff on grades 6 to 8 give two months of notice, and grade 6 staff on "
                           "probation give one week.", 1.0),
                Passage(2, "The salary range for grades 6 to 8 is reviewed every April by the pay committee.", 0.9),
                Passage(3, "Grade 6 is paid £32,140 to £36,820 a year.", 0.7),
                Passage(4, "The canteen sells lunch for £4.50.", 0.6)]
    model = ExtractiveChatModel(max_sentences=2, sentence_ratio=0.7)
    two = ("Notice periods: staff on grades 6 to 8 give two months of notice, and grade 6 staff on probation give one "
           "week. [1] The salary range for grades 6 to 8 is reviewed every April by the pay committee. [2]")
    assert ask(model, q, passages) == f"{two} Grade 6 is paid £32,140 to £36,820 a year. [3]"
    # A sum that shares no term with the part is not its answer; one question asks one thing: nothing is added.
    assert ask(model, q, passages[:2] + passages[3:]) == two
    assert ask(model, "What notice period applies to grade 6 and to grade 7?", passages[:3]) == \
        "Notice periods: staff on grades 6 to 8 give two months of notice, and grade 6 staff on probation give one " \
        "week. [1]"


def test_a_part_no_chosen_sentence_speaks_of_gets_its_own_best_sentence():
    # Both parts ask for a number and the two van rows hold numbers, but neither speaks of the order: the second
    # part is not answered. Ranked by the whole question, the order's sentence scores 0.139, under 0.4 × 0.383;
    # ranked by the part's own words it comes first, and it is added (one over the cap).
    q = "How old do you have to be to drive one of our vans, and what is the minimum order for a nursery delivery?"
    passages = [Passage(1, "Staff van drivers: you must be 21 or older to drive our vans.\n\nVan hire customers: you "
                           "must be 25 or older to drive our vans.", 1.0),
                Passage(2, "Minimum order: £250 before VAT.", 0.4)]
    model = ExtractiveChatModel(max_sentences=2, sentence_ratio=0.7)
    assert [round(c.score, 3) for c in model.rank(q, passages)] == [0.383, 0.383, 0.139]
    vans = ("Staff van drivers: you must be 21 or older to drive our vans. [1] Van hire customers: you must be 25 or "
            "older to drive our vans. [1]")
    assert ask(model, q, passages) == f"{vans} Minimum order: £250 before VAT. [2]"
    # Asked one thing, nothing is added.
    assert ask(model, "How old do you have to be to drive one of our vans?", passages) == vans
    # The part's own ranking reads the passages the whole question reads: one per part here, so two.
    one_each = ExtractiveChatModel(max_sentences=2, sentence_ratio=0.7, max_passages=1)
    assert ask(one_each, q, passages) == f"{vans} Minimum order: £250 before VAT. [2]"


def test_every_cardinal_word_up_to_ninety_is_a_number():
    from ragbench.llm.answer_types import NUMBER, expected_type, has_type

    q = "How old must a volunteer be?"
    assert expected_type(q) == NUMBER
    for word in ("thirteen", "fourteen", "sixteen", "seventeen", "eighteen", "nineteen", "seventy", "eighty",
                 "ninety"):
        assert has_type(f"Volunteers must be {word} or over.", NUMBER, q), word
    assert not has_type("Volunteers must be over the age of consent.", NUMBER, q)


def test_wordnet_synonyms_steer_the_reader_to_the_paraphrased_sentence():
    """With synonym_zipf, "vino" (Zipf 2.77) is met by a sentence about wine, so the reader quotes it over a sentence
    that shares only "glass"; off, the glassware sentence's overlap wins."""
    from conftest import extra

    extra("wn", "wordnet")
    text = "Every glass is washed at 80 degrees. A small wine is 125 ml."
    q = "How big is a small glass of vino?"
    assert ask(ExtractiveChatModel(max_sentences=1), q, [Passage(1, text, 1.0)]) == \
        "Every glass is washed at 80 degrees. [1]"
    assert ask(ExtractiveChatModel(max_sentences=1, synonym_zipf=4.0), q, [Passage(1, text, 1.0)]) == \
        "A small wine is 125 ml. [1]"
    assert ExtractiveChatModel(synonym_zipf=4.0)._synonyms(q) == {"vino": frozenset({"wine"})}
    assert ExtractiveChatModel()._synonyms(q) == {}
