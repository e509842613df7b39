"""What kind of answer a question asks for, and whether a text holds one.

A generic English question-word lexicon, not tuned to any corpus: *who* asks for a role or person, *how much* for
money or a number, *how many / long / often* and measured nouns for a number, *rate* for a percentage or an amount
per unit (*commission* and *discount* also for a sum), *when* and *opening hours* for a time expression or a
condition; phone numbers and temperatures have shapes of their own.
The extractive reader (:mod:`ragbench.llm.extractive`) prefers sentences holding the asked-for kind and the
answerability check (:mod:`ragbench.answer.answerability`) refuses a reply that holds none. A question asking what
the asker should do ("what now?", "how do I fix …?") is answered by an instruction (:func:`asks_for_action`,
:func:`is_instruction`); that one is a reading preference only, never a reason to refuse.
"""
from __future__ import annotations

import re

from ..errors import ConfigError
from ..text import tokenize
from .parts import question_parts

PERSON, MONEY, PERCENT, NUMBER, TIME = "person", "money", "percent", "number", "time"
PHONE, TEMPERATURE, FREQUENCY = "phone", "temperature", "frequency"
ANSWER_TYPES = (PERSON, MONEY, PERCENT, NUMBER, TIME, PHONE, TEMPERATURE, FREQUENCY)

_Q_LEAD = r"^(?:(?:and|but|so|then|also|ok|okay)\b[\s,]*)*"
_WHO = re.compile(_Q_LEAD + r"(?:who|whom|whose)\b|\bname of\b", re.IGNORECASE)
_HOW_MUCH = re.compile(_Q_LEAD + r"how\s+much\b", re.IGNORECASE)
#: "How much is/are … ?" asks what something costs ("How much is afternoon tea?", "How much is X paying for Y?"),
#: unless the question names a measured quantity or a span of time ("How much notice is needed?").
_HOW_MUCH_IS = re.compile(_Q_LEAD + r"how\s+much\s+(?:is|are|was|were|will)\b", re.IGNORECASE)
_SPAN_Q = re.compile(r"\b(?:time|leave|notice|holiday|days?|hours?|weeks?|months?|years?)\b", re.IGNORECASE)
_HOW_NUMBER = re.compile(r"\bhow\s+(?:many|long|often|far|soon|quickly|fast|old|frequently|big|large|high|low)\b"
                         r"|\b(?:minimum|maximum|number\s+of)\b", re.IGNORECASE)
#: "What …", "Which …", and the same after a leading preposition ("Up to what amount …", "In which month …").
_WHAT = re.compile(_Q_LEAD + r"(?:(?:up\s+to|by|in|at|for|from|to|on|under|within|during|after|before)\s+)?"
                   r"(?:what|which)\b", re.IGNORECASE)
#: "What is the ticket number …", "What distance …": nouns whose value is a number or a measured quantity (phone
#: numbers and temperatures have shapes of their own, below).
_MEASURE_Q = re.compile(r"\b(?:(?:extension|account|reference|ticket|serial)\s+number"
                        r"|distance|weight|height|capacity|speed|headcount|quantity|amount|limit|length|duration"
                        r"|size|age|(?:response|waiting|turnaround|lead|notice)\s+(?:time|period))\b", re.IGNORECASE)
#: Measured nouns with a value of a recognisable shape: a phone number is a run of digits, not any number (a
#: street address "3 Orchard Parade" is no phone number); a temperature carries degrees.
_PHONE_Q = re.compile(r"\b(?:phone|telephone|fax|mobile|contact)\s+number\b", re.IGNORECASE)
_TEMPERATURE_Q = re.compile(r"\btemperatures?\b", re.IGNORECASE)
_HOW_HOT = re.compile(r"\bhow\s+(?:hot|cold|warm)\b", re.IGNORECASE)
_PHONE = re.compile(r"\+?\(?\d[\d ()./-]{5,}\d")
_TEMPERATURE = re.compile(r"°|\bdegrees?\b|\b\d+(?:\.\d+)?\s?[CF]\b")
#: A rate is a percentage, an amount per unit ("€0.39 per kilometre", "£12/hour", "£45 an hour", "35p a mile") or a
#: multiple of the normal rate (below). After "a"/"an" only a unit counts: "at 10:00 a member of staff" is no rate.
_PER_UNIT = re.compile(r"\d[\d.,]*\s*(?:[a-z]+\s+)?(?:per\b|/\s*[a-z]|an?\s+(?:hour|day|night|week|fortnight|month|"
                       r"year|term|session|mile|kilomet(?:re|er)|km|minute|person|head|page|item|visit|seat)s?\b)",
                       re.IGNORECASE)
#: A pay rate stated as a multiple of the normal one ("double time on Sundays", "time and a half").
_MULTIPLE = re.compile(r"\b(?:double|triple|treble)\s+time\b|\btime\s+and\s+a\s+(?:half|quarter|third)\b",
                       re.IGNORECASE)
#: "How often …?" asks for a frequency: "every 4 weeks", "weekly", "twice a year", "each month", "at 6-month
#: intervals"; a span alone ("within 2 minutes") is how long, not how often.
_FREQUENCY_Q = re.compile(r"\bhow\s+(?:often|frequently)\b", re.IGNORECASE)
_FREQUENCY = re.compile(r"\b(?:every|each|per)\s+(?:\w+\s+)?(?:\d+\s+)?\w+"
                        r"|\b(?:hourly|daily|nightly|weekly|fortnightly|monthly|quarterly|annually|yearly|annual)\b"
                        r"|\b(?:once|twice)\b|\b\w+\s+times\b|\binterval|\ba\s+(?:day|week|fortnight|month|year|shift)\b",
                        re.IGNORECASE)
#: "share" asks for a share as a noun ("what share of", "as a share of", "their share"); as a verb ("Can a
#: contractor's staff share one login?") it asks yes or no. An APR or AER is a percentage by definition.
_PERCENT_Q = re.compile(r"\b(?:rate|percentage|proportion|commission|discount|apr|aer)\b|\bshare\s+of\b"
                        r"|\b(?:what|which|a|the|their|our|his|her|its|my|your|whose)\s+share\b(?![-‐])"
                        r"|\bshare\s+(?:do|does|did|will|would|can|is|are)\b", re.IGNORECASE)
#: A commission or a discount is a share or a sum ("8 per cent", "£5 off"): an amount of money answers it too.
_SHARE_OR_SUM_Q = re.compile(r"\b(?:commission|discount)s?\b", re.IGNORECASE)
#: A share stated as a ratio or a fraction ("1 in 10 passengers", "one in five", "a third of", "half of them"); a
#: bare "half" is no share ("half their usual breakfast").
_RATIO = re.compile(r"\b(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten)\s+(?:in|out\s+of)\s+(?:\d+|every|"
                    r"two|three|four|five|six|seven|eight|nine|ten|twenty|fifty|a\s+hundred)\b"
                    r"|\b(?:a|one|two|three)\s+(?:third|thirds|quarter|quarters|fifth|fifths|tenth|tenths)\s+of\b"
                    r"|\bhalf\s+of\b", re.IGNORECASE)
#: A rate whose unit the question names ("hourly rate", "daily rate", "rate per night", "rate of pay"): an amount
#: of money answers it, the unit being the question's (a pay table's row "Security officer | £14.20 |"). So does a
#: rate asked with a word for money ("the weekday rate we charge for welding", "the rate we pay"), unless the
#: question asks for a share in so many words ("What percentage of net fees …").
_SHARE_Q = re.compile(r"\b(?:percentage|proportion|share|percent|per\s*cent)\b|%", re.IGNORECASE)
_RATE_Q = re.compile(r"\brates?\b", re.IGNORECASE)
_MONEY_RATE_Q = re.compile(r"\b(?:hourly|daily|weekly|nightly|monthly|annual|yearly|mileage)\s+(?:\w+\s+)?rates?\b"
                           r"|\brates?\s+(?:per|a|an|each)\s+\w+|\b(?:pay|salary|wage)\s+rates?\b"
                           r"|\brates?\s+of\s+pay\b", re.IGNORECASE)
_WHEN = re.compile(_Q_LEAD + r"(?:when|by\s+when)\b|\bwhat\s+(?:time|date|day|month|year)\b", re.IGNORECASE)
#: Nouns whose value is a span of clock times ("What are the opening hours of …?"): a time answers them.
_HOURS_Q = re.compile(r"\b(?:opening|closing|office|visiting)\s+(?:hours|times?)\b", re.IGNORECASE)
#: The question word names the kind itself ("By what date …", "Which day …"): that beats a noun later in the
#: question ("… the business plan for the price review": a date is asked, not a price).
_WHAT_WHEN = re.compile(r"\b(?:what|which)\s+(?:time|date|day|month|year)\b", re.IGNORECASE)
#: Nouns whose value is an amount of money.
MONEY_WORDS: frozenset[str] = frozenset(
    """salary salaries pay wage wages cost costs price prices fee fees charge charges revenue revenues turnover
    profit profits budget budgets bonus bonuses valuation worth spend spending income earnings remuneration
    compensation bill bills invoice allowance""".split())
#: Nouns that name a role, a body of people or a desk (the answer to a *who* question).
ROLE_WORDS: frozenset[str] = frozenset(
    """manager managers director directors officer officers controller head lead leader leaders team teams
    committee board desk executive executives owner owners administrator administrators admin chair chairman
    chairwoman chairperson counsel ceo cfo coo cto cio ciso hr department supervisor supervisors secretary
    commander president vp coordinator representative representatives agent agents specialist analyst auditor
    auditors inspector clerk steward partner partners engineer engineers founder employer mr mrs ms dr
    receptionist reception""".split())
#: A currency sign or word, or pence written after the number ("45p", "12.5p a mile").
_CURRENCY = re.compile(r"[£$€¥₹]|\b(?:pounds?|dollars?|euros?|gbp|usd|eur|pence|yen)\b|\b\d+(?:\.\d+)?p\b",
                       re.IGNORECASE)
_PERCENT = re.compile(r"%|\bper\s*cent\b|\bpercent(?:age)?\b", re.IGNORECASE)
_NUMBER_WORDS = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen"
    r"|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
    r"|hundred|thousand|million|billion|half|twice|once|double|dozen|daily|weekly|fortnightly|monthly"
    r"|quarterly|annually|yearly|hourly)\b(?![-‐‑])", re.IGNORECASE)  # "two-step", "one-off": no quantity
_TIME_WORDS = re.compile(
    r"\d|\b(?:january|february|march|april|june|july|august|september|october|november|december|monday"
    r"|tuesday|wednesday|thursday|friday|saturday|sunday|weekend|weekday|weekdays|morning|afternoon|evening"
    r"|noon|midday|midnight|tonight|today|tomorrow|yesterday|immediately|daily|weekly|monthly|annually|yearly"
    r"|years?|months?|weeks?|days?|hours?|minutes?|spring|summer|autumn|winter)\b",
    re.IGNORECASE)  # "may" is left out: far more often the verb than the month
_CONDITION = re.compile(r"\b(?:when|whenever|if|once|as soon as|before|after|until|within)\b", re.IGNORECASE)


def expected_type(question: str) -> str | None:
    """The kind of answer ``question`` asks for (one of :data:`ANSWER_TYPES`) or ``None`` when it is open."""
    q = question.strip()
    if _WHO.search(q):
        return PERSON
    if _WHAT_WHEN.search(q) or (_HOURS_Q.search(q) and _WHAT.search(q)):
        return TIME
    words = set(tokenize(q))
    if _HOW_MUCH.search(q):
        priced = _HOW_MUCH_IS.search(q) and not _MEASURE_Q.search(q) and not _SPAN_Q.search(q)
        return MONEY if words & MONEY_WORDS or priced else NUMBER
    if _WHAT.search(q) and _PHONE_Q.search(q):
        return PHONE
    if _TEMPERATURE_Q.search(q) and (_WHAT.search(q) or _HOW_HOT.search(q)):
        return TEMPERATURE
    if _FREQUENCY_Q.search(q) and len(question_parts(q)) == 1:
        return FREQUENCY  # a multi-part question's other part may ask for a count: a number answers both
    if _HOW_NUMBER.search(q) or (_MEASURE_Q.search(q) and _WHAT.search(q)):
        return NUMBER
    if _PERCENT_Q.search(q):
        return PERCENT
    if words & MONEY_WORDS and _WHAT.search(q):
        return MONEY
    if _WHEN.search(q):
        return TIME
    return None


def _money_rate(question: str) -> bool:
    return bool(_RATE_Q.search(question) and not _SHARE_Q.search(question)
                and set(tokenize(question)) & MONEY_WORDS)


def has_type(text: str, kind: str | None, question: str = "") -> bool:
    """True when ``text`` contains an answer of ``kind``; a role counts for *who* only when the question does
    not already name it."""
    if kind is None:
        return True
    if kind == PERSON:
        return bool((set(tokenize(text)) & ROLE_WORDS) - set(tokenize(question)))
    if kind == MONEY:
        return bool(_CURRENCY.search(text))
    if kind == PERCENT:
        return bool(_PERCENT.search(text) or _PER_UNIT.search(text) or _MULTIPLE.search(text) or _RATIO.search(text)
                    or ((_MONEY_RATE_Q.search(question) or _SHARE_OR_SUM_Q.search(question)
                         or _money_rate(question)) and _CURRENCY.search(text)))
    if kind == PHONE:
        return any(sum(ch.isdigit() for ch in m.group()) >= 6 for m in _PHONE.finditer(text))
    if kind == TEMPERATURE:
        return bool(_TEMPERATURE.search(text))
    if kind == FREQUENCY:
        return bool(_FREQUENCY.search(text))
    if kind == NUMBER:
        return bool(_NUMBER_WORDS.search(text))
    if kind == TIME:  # "when must reviewers add security?" is answered by a condition ("when a change …")
        return bool(_TIME_WORDS.search(text) or _CONDITION.search(text))
    raise ConfigError(f"unknown answer type {kind!r}; expected one of {list(ANSWER_TYPES)}.")


def _cells(line: str) -> list[str]:
    """The cells of a Markdown table line ("| a | b |" or a quoted row "a | b |."), empty inner cells kept."""
    body = line.strip().rstrip(".").strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") else body
    return [c.strip() for c in body.split("|")]


def header_cells(sentence: str, context: str = "") -> tuple[list[str], list[str]] | None:
    """A table row ``sentence`` split into cells beside its table's header cells (from ``context``, the sentence's
    titles and headings " . "-joined, as :func:`under_headers` reads it), or ``None`` when ``sentence`` is no row
    under a header with as many cells."""
    if "|" not in sentence or not context:
        return None
    header = next((h for h in reversed(context.split(" . ")) if h.startswith("|") and h.endswith("|")), None)
    if header is None:
        return None
    heads, cells = _cells(header), _cells(sentence)
    if len(heads) != len(cells) or len(cells) < 2:
        return None
    return heads, cells


def under_headers(sentence: str, context: str = "") -> str:
    """``sentence`` as the asked-type test reads it: a table row's cells each under their column header ("Safety
    inspection every 6 weeks" for the cell "6 weeks" in the column "Safety inspection every"), when ``context``
    (the sentence's titles and headings, " . "-joined) holds its table's header line with as many cells; any other
    sentence as it is. A cell means what its column says: "12.50" under "Price (£)" is an amount of money."""
    split = header_cells(sentence, context)
    if split is None:
        return sentence
    return " | ".join(f"{h} {c}".strip() for h, c in zip(*split))


#: The asker asks what to do: "what should I do", "what do I have to do", "what now", "how do I / can we <verb> …".
#: A question about what someone else must do ("What must the shift lead do first?") is answered by a statement.
_ACTION_Q = re.compile(r"\bwhat\s+(?:should|must|do|can|shall)\s+(?:i|we|you)\s+(?:(?:have|need)\s+to\s+)?do\b"
                       r"|\bwhat\s+(?:now|next)\b|\bhow\s+(?:do|can|should|must)\s+(?:i|we|you)\s+[a-z]",
                       re.IGNORECASE)
#: Verbs that open an instruction in procedures and policies ("Clean the inlet grille …", "Report any breach …").
INSTRUCTION_VERBS: frozenset[str] = frozenset(
    """call report contact email phone ring tell inform notify send forward escalate use clean check test restart
    reset enable disable open close delete remove keep store lock unlock log sign book ask fill complete submit
    return raise record follow press click select choose go take bring wear switch turn replace update install
    change apply request do make leave put move wait stop start run avoid isolate unplug disconnect pause revert
    roll flip visit write read save print share upload download attach label bag seal""".split())
_OBLIGATION = re.compile(r"\b(?:must|should|need\s+to|needs\s+to|have\s+to|has\s+to|(?:is|are)\s+required\s+to)\b"
                         r"|^\s*(?:never|always|do\s+not|don['’]t)\b", re.IGNORECASE)


def asks_for_action(question: str) -> bool:
    """True when ``question`` asks what the asker should do."""
    return bool(_ACTION_Q.search(question))


def is_instruction(sentence: str) -> bool:
    """True when ``sentence`` tells the reader what to do: it opens with an instruction verb ("Report …") or
    "never / always / do not", or states an obligation ("must", "should", "are required to")."""
    words = tokenize(sentence)
    return bool(words and words[0] in INSTRUCTION_VERBS) or bool(_OBLIGATION.search(sentence))
