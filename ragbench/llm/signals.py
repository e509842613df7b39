"""Explainable question–evidence signals shared by the extractive reader and the answerability check.

All of these are corpus-independent text rules (no list of this or that organisation's words):

* **terms** — a question's salient content terms after light suffix stripping (:func:`salient_terms`), compared
  with the stemmed terms of a sentence *and its context* (the document title and the headings it sits under:
  "**Core hours.** Everyone … must be reachable between 10:00 and 15:00" answers "core hours");
* **coverage** — the share of the question's terms found in the evidence, each weighted by the caller's inverse
  document frequency, so rare, distinguishing terms (``bereavement``, ``P4``, ``canteen``) count most;
* **qualifier conflicts** (:func:`conflicts`) — the evidence answers a *sibling* of what was asked: a code of the
  same family with another number (asked ``P4``, the sentence says ``P1``), a hyphenated compound sharing one part
  (``part-time`` vs ``full-time``), or the question's head noun under another modifier (``bereavement leave`` vs
  ``annual leave``, ``CEO salary`` vs ``base salary``), or a quantity or counted kind with another number (asked
  "after 25 years", the evidence says "at 10 years … at 20 years"; "5-bedroom" vs "2-bedroom") — each only when the
  asked qualifier itself is absent from the evidence;
* **amount ranges** (:func:`range_conflicts`) — the question names a quantity ("a contract worth £400,000", "once
  it's over €12,000", "a 15 per cent discount") and a sentence states a band of the same unit that excludes it
  ("Up to £250,000: …", "Up to 10 per cent: …"): the rule for another amount; an asked amount or age inside a band
  ("Child (3 to 15)" for "my eight-year-old") is answered (:func:`amount_terms_met`);
* **clauses set aside** (:func:`without_exclusions`) — "…, not counting bank holidays?" asks nothing about bank
  holidays: such a clause makes no qualifier (and weighs nothing in the answerability check's coverage);
* **headings** — the Markdown headings a position in a document sits under (:func:`heading_trail`).
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable, Iterable, Mapping, Sequence

from ..text import STOP_WORDS, fold_accents, tokenize
from .answer_types import INSTRUCTION_VERBS
from .answer_types import _cells as table_cells
from .parts import split_setting

#: Words of a question that carry no topic (beyond :data:`ragbench.text.STOP_WORDS`): auxiliaries, pronouns,
#: quantifier and frequency words of the question form ("how *many*", "how *long*").
QUESTION_WORDS: frozenset[str] = frozenset(
    """about after again all also am any anything anyone be been before being both can could did do does doing
    done during each else ever every few get gets getting got had if into just me more most my myself need needs
    no nor not now off once only other out over own same should some such too under until up very would yes yet
    may might must shall much many long often whom whose us i'm im ive i've can't cannot please tell know
    far fast quickly soon big large high low old minimum maximum happens happen define defined allowed
    biggest largest highest lowest longest shortest smallest earliest latest furthest farthest soonest greatest
    heaviest lightest cheapest dearest referring
    doesn isn aren wasn weren don didn hasn haven hadn won wouldn shouldn couldn mustn needn ll re ve
    whats hows wheres whos whens whys thats theres dont doesnt didnt isnt arent wasnt werent havent hasnt hadnt
    cant wont wouldnt shouldnt couldnt youre theyre youve weve theyve""".split())
# "referring": the follow-up rewriter's "(referring to …)"; "doesn", "isn", "ll", …: what the tokenizer leaves of
# "doesn't", "isn't", "I'll" (carried into a follow-up's subject, they had made "(referring to isn operative doesn …)");
# "whats", "dont", …: the same words typed without the apostrophe (a rare word to the rare-word rule otherwise:
# "whats the max weight the van tail-lift can take" was refused for "whats"). "ill", "id", "lets", "well" and "were"
# are words of their own and stay.

_SUFFIXES = ("ations", "ation", "ments", "ment", "ings", "ing", "ness", "ed", "ly")


#: Irregular verb forms and their base ("kept" → "keep", "bitten" → "bite", "taken" → "take"): a suffix strip cannot
#: meet them ("How long do you keep …?" against "… are kept for 6 years"). Generic English, no corpus's words. Left
#: out: participles mostly used as adjectives whose base is also a common noun of another sense ("paid leave" is
#: not the noun "pay", "a broken boiler" not a driver's "break"), and forms that are other words ("left", "found",
#: "saw", "bit", "lead", "felt").
_IRREGULAR: dict[str, str] = dict(pair.split(":") for pair in """
    bought:buy buying:buy sold:sell sent:send kept:keep held:hold told:tell taken:take took:take taking:take
    given:give gave:give giving:give made:make making:make written:write wrote:write writing:write chosen:choose
    chose:choose stolen:steal bitten:bite known:know knew:know shown:show brought:bring caught:catch taught:teach
    thought:think sought:seek lost:lose losing:lose begun:begin began:begin gone:go went:go met:meet fed:feed
    built:build spent:spend lent:lend dealt:deal stood:stand understood:understand drove:drive driven:drive
    driving:drive ate:eat eaten:eat drew:draw drawn:draw grew:grow grown:grow threw:throw thrown:throw flew:fly
    flown:fly wore:wear worn:wear froze:freeze frozen:freeze hid:hide hidden:hide rode:ride ridden:ride
    spoken:speak woke:wake forgot:forget forgotten:forget sat:sit slept:sleep swept:sweep bled:bleed fled:flee
    ran:run""".split())


_UNITS = "one two three four five six seven eight nine".split()
_TEENS = "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_NUMBER_WORD_VALUES: dict[str, int] = {**{w: i for i, w in enumerate(_UNITS, start=1)},
                                       **{w: i for i, w in enumerate(_TEENS, start=10)},
                                       **{w: 10 * i for i, w in enumerate(_TENS, start=2)}}
_NUMBER_WORD = re.compile(r"\b(?:(?P<tens>" + "|".join(_TENS) + r")(?:[-\s](?P<unit>" + "|".join(_UNITS) + r"))?"
                          r"|(?P<small>" + "|".join(_UNITS[1:] + _TEENS) + r"))\b", re.IGNORECASE)


def _numeral(m: re.Match[str]) -> str:
    if m.group("small"):
        return str(_NUMBER_WORD_VALUES[m.group("small").lower()])
    unit = m.group("unit")
    return str(_NUMBER_WORD_VALUES[m.group("tens").lower()] + (_NUMBER_WORD_VALUES[unit.lower()] if unit else 0))


def numerals(text: str) -> str:
    """``text`` with the number words two to ninety-nine written as digits ("three years'" → "3 years'",
    "Seven-year-old" → "7-year-old", "twenty-five" → "25"), so that a count asked in words meets the row a document
    writes in digits. "One" alone stays: it is far more often a pronoun ("the younger one") than a count."""
    return _NUMBER_WORD.sub(_numeral, text)


#: A number with a unit written against it ("15cm", "200g", "1.5kg", "2am"). Pence ("45p") and money ("£2m",
#: "£400k") stay as they are: the money tests read them whole. So does a time ending a sentence ("it's 11pm."): the
#: question splitter reads "pm." as an abbreviation, which would join the asker's setting to what is asked.
_GLUED_UNIT = re.compile(r"(?<![£$€¥\w.,])(\d+(?:\.\d+)?)(mm|cm|km|m|mg|kg|g|ml|cl|l|oz|lb|lbs|ft|in|kwh|kwp|kw|mph"
                         r"|hrs|hr|h|mins|min|(?:am|pm)(?!\.))\b", re.IGNORECASE)


def unglue_units(text: str) -> str:
    """``text`` with a unit written against its number set apart ("a 20cm bread knife" → "a 20 cm bread knife",
    "till 2am" → "till 2 am"), as documents mostly write it ("Up to 20 cm"): glued, the pair is one word no
    document contains."""
    return _GLUED_UNIT.sub(r"\1 \2", text)


def stem(token: str) -> str:
    """A light suffix strip so that inflections meet (``approves``/``approved``/``approve`` → ``approv``,
    ``dogs`` → ``dog``, ``policies`` → ``policy``, ``sickness`` → ``sick``, ``planned`` → ``plan``); an irregular
    verb form is first put in its base (``kept`` → ``keep``); digits and words of ≤ 3 letters are unchanged, and a
    suffix is stripped only where 4 letters remain ("illness" stays)."""
    if token.isdigit():
        return token
    token = _IRREGULAR.get(token, token)
    if len(token) <= 3:
        # An acronym's plural ("pcs", "ids") meets its singular; other short words are unchanged.
        return token[:-1] if len(token) == 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")) \
            else token
    if token.endswith(("ies", "ied")) and len(token) > 4:
        return token[:-3] + "y"
    for suffix in _SUFFIXES:
        if len(token) - len(suffix) >= 4 and token.endswith(suffix):
            token = token[: -len(suffix)]
            # A doubled final consonant before "-ed" / "-ing" is the spelling's, not the word's ("planned",
            # "stopping" → "plan", "stop"); "ff", "ll" and "ss" are the word's own ("staffed", "billed", "passing").
            if suffix in ("ing", "ings", "ed") and token[-1] == token[-2] and token[-1] in "bdgmnprt":
                token = token[:-1]
            break
    else:
        if token.endswith(("sses", "xes", "zes", "ches", "shes")):
            token = token[:-2]
        elif token.endswith("s") and not token.endswith(("ss", "us", "is")):
            token = token[:-1]
    if len(token) > 4 and token.endswith("e"):
        token = token[:-1]
    return token


#: A decimal number ("0.2", "12.75"), not part of a dotted identifier, version or address ("10.0.0.1"), also when
#: its unit is typed against it ("8.2m", "£3.4m", "2.5km": the number, then the unit), but not a clock time ("9.30am").
_DECIMAL = re.compile(r"(?<![\w.])\d+\.\d+(?![\d_]|\.\d|(?:am|pm)\b)", re.IGNORECASE)


def words(text: str, stopwords: bool = False) -> list[str]:
    """:func:`ragbench.text.tokenize`, except that a decimal number is one word ("0.2", trailing zeros dropped):
    split at its point, "0.2" would be the words "0" and "2" and meet every "0.3" and "2 hours". Accents are
    dropped first, so a question typed "cafe" meets a document's "Café"."""
    text = fold_accents(text)
    out: list[str] = []
    pos = 0
    for m in _DECIMAL.finditer(text):
        out += tokenize(text[pos:m.start()], stopwords)
        out.append(_decimal(m.group()))
        pos = m.end()
    return out + tokenize(text[pos:], stopwords)


def _decimal(number: str) -> str:
    return number.rstrip("0").rstrip(".")


def is_number(term: str) -> bool:
    """A whole or decimal number term ("25", "0.2")."""
    return term.isdigit() or _DECIMAL.fullmatch(term) is not None


def value_conflicts(question: str, sentence: str) -> list[str]:
    """``["asked≠stated"]`` when the question names a decimal value ("if it keeps falling to 0.2?") that
    ``sentence`` lacks while it states another ("falls to 0.3 mg/l"): the rule for another value. Whole numbers
    are left out: "3 days" and "2 hours" are everywhere, and amounts have their bands (:func:`range_conflicts`)."""
    asked = {_decimal(m.group()) for m in _DECIMAL.finditer(question)}
    stated = {_decimal(m.group()) for m in _DECIMAL.finditer(sentence)}
    if asked and stated and not asked & stated:
        return [f"{min(asked)}≠{min(stated)}"]
    return []


def salient_terms(question: str) -> list[str]:
    """Stemmed content terms of a question, first-appearance order, no duplicates."""
    out = [stem(t) for t in words(question, stopwords=True)
           if t not in QUESTION_WORDS and (len(t) > 1 or t.isdigit())]
    return list(dict.fromkeys(out))


def term_set(text: str) -> set[str]:
    """Stemmed content terms of any text."""
    return {stem(t) for t in words(text, stopwords=True)}


def coverage(terms: Sequence[str], evidence: set[str], weight: Callable[[str], float]) -> float:
    """Weighted share of ``terms`` found in ``evidence`` (1.0 when there are no terms or no weight)."""
    total = sum(weight(t) for t in terms)
    if total <= 0:
        return 1.0
    return sum(weight(t) for t in terms if t in evidence) / total


def weight_lookup(weights: Mapping[str, float] | None) -> Callable[[str], float]:
    """A weight function from a term → weight mapping (terms it does not list weigh 1)."""
    table = dict(weights or {})
    return lambda t: float(table.get(t, 1.0))


# ------------------------------------------------------------------------------------------ qualifier conflicts

_CODE = re.compile(r"(?<![\w-])([A-Za-z]{1,4})-?(\d{1,3})(?![\w-])")
_COMPOUND = re.compile(r"(?<![\w-])([^\W\d_]{2,})-([^\W\d_]{2,})(?![\w-])")
#: Words with their hyphens kept (``part-time`` is one token; it is not a plain content word).
_POSSESSIVE = re.compile(r"['’]s\b")
_HYPHENATED = re.compile(r"[^\W_]+(?:-[^\W_]+)*")
#: The first word of a sentence, clause or list item (after markup and bullets).
_IMPERATIVE = re.compile(r"((?:^|[.!?;:\n])[\s*_#>\-\d.)]*)([A-Za-z]+)")
#: A code identifier joined by dots or underscores (`billing.deferred_capture`, `max_retries`, a domain name): one
#: token, not English words, so its parts never act as a modifier or a head noun.
_IDENTIFIER = re.compile(r"\b[^\W_]*[A-Za-z][^\W_]*(?:[._][^\W_]+)+\b|\b[^\W_]+(?:[._][^\W_]+)*_[^\W_]*\b")


#: Numbered members of a graded family written as a word and numbers: "Category 2", "Priority 1", "Band 3", and
#: lists and ranges of them, "Bands 5 and 6", "Grades 3 to 5", "Levels 2, 3 or 4". A range followed by a unit is a
#: span of that unit ("Priority 1 – 4 hours"), not a list of codes.
_FAMILY_NAMES = ("category", "priority", "level", "tier", "band", "grade", "stage", "phase", "zone", "class", "step")


def _plural(noun: str) -> str:
    return noun[:-1] + "ies" if noun.endswith("y") else noun + ("es" if noun.endswith("s") else "s")


#: Each family word, singular or plural ("priorities", "classes", "bands"), to its singular.
_FAMILIES = {form: name for name in _FAMILY_NAMES for form in (name, _plural(name))}
_GRADED = re.compile(r"\b(" + "|".join(sorted(_FAMILIES, key=len, reverse=True)) + r")\s+(\d{1,2})"
                     r"((?:\s*(?:,|and|or|&|to|-|–|—)\s*\d{1,2}(?![\w-]|[.,]\d))*)(?![\w-]|[.,]\d)"
                     r"(?!\s*(?:hours?|minutes?|days?|weeks?|months?|years?|%|per)\b)", re.IGNORECASE)
_GRADED_NEXT = re.compile(r"(to|-|–|—)?\s*(\d{1,2})")


def _graded(text: str) -> set[tuple[str, str]]:
    """``(family, number)`` for every graded code of ``text``, a list or range counting each of its members."""
    out: set[tuple[str, str]] = set()
    for m in _GRADED.finditer(text):
        family = _FAMILIES[m.group(1).lower()]
        last = int(m.group(2))
        numbers = {last}
        for step in _GRADED_NEXT.finditer(m.group(3)):
            n = int(step.group(2))
            if step.group(1) and last < n <= last + 10:  # "Bands 1 to 4": every member between
                numbers.update(range(last, n + 1))
            numbers.add(n)
            last = n
        out |= {(family, str(n)) for n in numbers}
    return out


def codes(text: str) -> set[tuple[str, str]]:
    """The codes of ``text`` as ``(family, number)``: ``P4`` → ``("p", "4")``, ``Category 2`` → ``("category",
    "2")``, ``Bands 1 to 3`` → one per band."""
    return {(m.group(1).lower(), m.group(2).lstrip("0") or "0") for m in _CODE.finditer(text)} | _graded(text)


def graded_codes(text: str) -> set[str]:
    """The graded codes of ``text`` written as a word and a number, normalised ("Level 5" → ``"level 5"``, "Bands 5
    and 6" → ``"band 5"`` and ``"band 6"``): each is one identifier, which a readable document either mentions or
    not."""
    return {f"{family} {number}" for family, number in _graded(text)}


#: Roman numerals up to XII, as grades are written ("Grade IV"), longest first so "III" is not read as "I".
_ROMANS = ("XII", "XI", "X", "IX", "VIII", "VII", "VI", "V", "IV", "III", "II", "I")
_LETTER_CODE = r"(?:[A-Z]|" + "|".join(_ROMANS) + r")"
_LETTER_CELL = re.compile(_LETTER_CODE)
#: The graded families, and delivery or collection rounds ("Round B"), which are lettered, not numbered.
_LETTER_FAMILIES = {**_FAMILIES, "round": "round", "rounds": "round"}
#: A graded code written with a capital letter or a Roman numeral ("Grade IV", "Zone B"), and lists and ranges of
#: them ("Bands A and B", "Rounds A to C"). The family word may take any case, the code only capitals: "band a" is
#: no code. "I" before a verb or an apostrophe ("which band I am on", "what grade I'd get") is the asker.
_LETTERED = re.compile(r"\b(?i:(" + "|".join(sorted(_LETTER_FAMILIES, key=len, reverse=True)) + r"))\s+(" + _LETTER_CODE
                       + r")(?![\w'’-])((?:\s*(?:,|and|or|&|to|-|–)\s*" + _LETTER_CODE + r"(?![\w'’-]))*)")
_LETTERED_NEXT = re.compile(r"(to|-|–)?\s*(" + _LETTER_CODE + r")(?![\w'’-])")
_PRONOUN_I = re.compile(r"\s*(?:['’]|(?:am|have|had|need|needed|should|will|would|can|could|do|did|was|get|got|"
                        r"must|may|might|want|think|work|joined|started)\b)")
#: A Markdown table line, read for a column headed by a family word whose cells are single codes ("| Grade | … |"
#: over "| A | … |").
_TABLE_ROW = re.compile(r"^\s*\|.+\|\s*$")
_TABLE_RULE = re.compile(r"^[\s|:\-–]+$")


def _roman_value(code: str) -> int | None:
    values = {"I": 1, "V": 5, "X": 10}
    if not code or any(ch not in values for ch in code):
        return None
    total = 0
    for i, ch in enumerate(code):
        v = values[ch]
        total += -v if i + 1 < len(code) and values[code[i + 1]] > v else v
    return total


def _code_range(first: str, last: str) -> list[str]:
    """The codes from ``first`` to ``last``: letters ("A" to "D") or Roman numerals ("I" to "III")."""
    a, b = _roman_value(first), _roman_value(last)
    if a is not None and b is not None and len(first) + len(last) > 2 and a < b <= a + 11:
        return [r for r in reversed(_ROMANS) if a <= (_roman_value(r) or 0) <= b]
    if len(first) == len(last) == 1 and first < last and ord(last) - ord(first) <= 12:
        return [chr(c) for c in range(ord(first), ord(last) + 1)]
    return [first, last]


def lettered_codes(text: str) -> set[str]:
    """The graded codes of ``text`` written with a capital letter or a Roman numeral, normalised like
    :func:`graded_codes` ("Grade IV" → ``"grade iv"``, "Rounds A to C" → ``"round a"``, ``"round b"``, ``"round
    c"``), and those of a table column headed by a family word whose cells are such codes ("| Grade |" over "| D |"
    → ``"grade d"``). A Roman numeral that is also a letter ("V", "X", "I") is one code either way."""
    out: set[str] = set()
    for m in _LETTERED.finditer(text):
        family = _LETTER_FAMILIES[m.group(1).lower()]
        first = m.group(2)
        if first == "I" and not m.group(3) and _PRONOUN_I.match(text, m.end()):
            continue
        members = [first]
        last = first
        for step in _LETTERED_NEXT.finditer(m.group(3)):
            code = step.group(2)
            members += _code_range(last, code)[1:] if step.group(1) else [code]
            last = code
        out |= {f"{family} {code.lower()}" for code in members}
    header: list[str] | None = None
    for line in text.splitlines():
        if _TABLE_ROW.match(line) is None:
            header = None
            continue
        cells = table_cells(line)
        if header is None:
            header = cells
            continue
        if _TABLE_RULE.match(line):
            continue
        for head, cell in zip(header, cells):
            column = _LETTER_FAMILIES.get(head.lower())
            if column is not None and _LETTER_CELL.fullmatch(cell):
                out.add(f"{column} {cell.lower()}")
    return out


#: A counted kind written as a number and a noun ("5-bedroom", "10-week", "7.5-tonne": a decimal too, a sibling of
#: "26-tonne"); in evidence also unhyphenated ("1 bedroom"). Only the hyphenated form counts in a question, where
#: "3 days" is as often a condition as a kind.
_COUNTED_ASKED = re.compile(r"(?<![\w.,-])(\d{1,3}(?:\.\d+)?)-([^\W\d_]{3,})(?![\w-])")
#: The same kind written without its hyphen where only a compound modifier can stand: after a determiner and before
#: the noun it modifies ("a 3 hour lesson", "a 12 kWp solar system"), not in a condition's place ("off for 3 days").
#: "per" is no unit ("a 15 per cent discount" is a percentage).
_COUNTED_ATTRIBUTIVE = re.compile(r"\b(?:a|an|the|each|every|this|that)\s+(\d{1,3}(?:\.\d+)?)\s+(?!per\b)"
                                  r"([^\W\d_]{3,})\s+(?=[^\W\d_])", re.IGNORECASE)
_AFTER = re.compile(r"\b(?:after|beyond)\s*$", re.IGNORECASE)
_COUNT_OF = re.compile(r"\d[\d,]*(?:\.\d+)?")
_COUNTED = re.compile(r"(?<![\w.,-])(\d{1,3}(?:\.\d+)?)[ -]([^\W\d_]{3,})(?![\w-])")


def _counted(pattern: re.Pattern[str], text: str) -> set[tuple[str, str]]:
    return {(stem(m.group(2).lower()), _count(m.group(1))) for m in pattern.finditer(text)}


def _count(number: str) -> str:
    """A count as compared: "07" and "7" alike, "7.50" and "7.5" alike."""
    whole, _, frac = number.partition(".")
    whole, frac = whole.lstrip("0") or "0", frac.rstrip("0")
    return f"{whole}.{frac}" if frac else whole


@lru_cache(maxsize=1024)
def _asked_quantities(question: str) -> tuple[tuple[str, str, str, float] | None, frozenset[tuple[str, str]],
                                              frozenset[tuple[str, str]]]:
    """The question side of :func:`quantity_conflicts`, parsed once per question (the reader asks about every
    candidate sentence): the one point quantity of the asking sentence as ``(as written, unit word, compared unit,
    value)``, its hyphenated counted kinds, and its unhyphenated attributive ones."""
    asking = split_setting(question)[1]
    point = None
    asked = asked_amount(asking)
    if asked is not None and asked[1][0] == asked[1][1]:
        unit, wanted = asked
        m = next(m for m in _quantities(asking) if _measure(m)[0] == unit)
        point = (m.group().strip(), _unit_word(m) or "", unit, wanted[0])
    return point, frozenset(_counted(_COUNTED_ASKED, asking)), frozenset(_counted(_COUNTED_ATTRIBUTIVE, asking))


def quantity_conflicts(question: str, evidence: str, attributive: bool = False) -> list[str]:
    """``["asked≠stated"]`` when the question names one quantity as a point ("after 25 years", "a 5-bedroom
    house") that ``evidence`` lacks, no band of ``evidence`` holds it, and ``evidence`` states the same unit or
    kind with another number ("at 10 years … at 20 years"; "1 bedroom", "2-bedroom"): the evidence gives the rule
    for other quantities, as "P1" does for "P4". Only what is asked counts: the question's setting ("I'm 19 and
    …") describes the asker. With ``attributive``, a kind written without its hyphen between a determiner and
    its noun ("a 12 kWp solar system") counts too."""
    point, kinds, loose = _asked_quantities(question)
    if attributive:
        kinds |= loose
    out: list[str] = []
    reported: tuple[str, str] | None = None  # the point's (unit stem, count) when it conflicts
    if point is not None:
        said, word, unit, value = point
        wanted = (value, value, True, True)
        # Siblings are quantities in the same unit word ("20 years" for "25 years", not "25 days"); "after 2
        # years" is a threshold that 3 years passes, not a sibling of it.
        points: dict[float, str] = {}
        for q in _quantities(evidence):
            if _unit_word(q) != word:
                continue
            v = _measure(q)[1]
            if _AFTER.search(evidence, max(0, q.start() - 12), q.start()) and v <= value:
                points = {}
                break
            points[v] = q.group().strip()
        if points and value not in points and all(_disjoint(wanted, b) for u, b in _bands(evidence) if u == unit):
            out.append(f"{said}≠{points[min(points)]}")
            reported = (stem(word.lower()), _count(_COUNT_OF.search(said).group()))  # type: ignore[union-attr]
    stated = _counted(_COUNTED, evidence)
    for noun, number in sorted(kinds):
        # "a 3 hour lesson" is read as a point and as a kind: one conflict, said once.
        if (noun, number) in stated or (noun, number) == reported:
            continue
        siblings = sorted(n for k, n in stated if k == noun and n != number)
        if siblings:
            out.append(f"{number}-{noun}≠{siblings[0]}-{noun}")
    return out


def _compounds(text: str) -> set[tuple[str, str]]:
    return {(m.group(1).lower(), m.group(2).lower()) for m in _COMPOUND.finditer(text)}


#: Prepositions and linking words: never a modifier or a head.
_FUNCTION = frozenset("""within without between across through per via since upon among around including except
    toward towards inside outside near than versus like unlike along onto whether while""".split())


def _content(token: str) -> bool:
    return (token.isalpha() and len(token) > 2 and token not in STOP_WORDS and token not in QUESTION_WORDS
            and token not in _FUNCTION)


#: Words after which the next word is a verb, not a modifier ("who *issues* access badges", "can I *fix* …").
_VERB_CUES = frozenset("""who what which i you we they he she it do does did can could may might must should shall
    will would to not never please""".split())


#: Do-support: after "does the box office", the next bare word is the question's verb ("open"), not a head noun.
_DO = frozenset({"do", "does", "did"})
_DETERMINERS = frozenset("the a an my your our their his her its this that these those each every any".split())


def _do_verbs(tokens: Sequence[str]) -> set[int]:
    """Positions of the main verb of each do-support clause ("What time *does* the box office *open* on …?",
    "How much *did* the guest *pay*?"): the last of the content words that follow the auxiliary's subject, up to the
    first word that is neither a determiner nor a content word (a lone content word is the subject)."""
    out: set[int] = set()
    for i, tok in enumerate(tokens):
        if tok not in _DO:
            continue
        run: list[int] = []
        for j in range(i + 1, len(tokens)):
            if tokens[j] in _DETERMINERS and not run:
                continue
            if not _content(tokens[j]):
                break
            run.append(j)
        if len(run) > 1:
            out.add(run[-1])
    return out


#: A clause the question sets aside ("…, not counting bank holidays?", "instead of in a hotel"): up to the clause end.
_EXCLUDED = re.compile(r"\b(?:not\s+(?:counting|including)|excluding|except(?:\s+for)?|apart\s+from|other\s+than"
                       r"|rather\s+than|instead\s+of)\b[^?.!,;:]*", re.IGNORECASE)


def without_exclusions(question: str) -> str:
    """``question`` without the clauses it sets aside: "How many days off do I get, not counting bank holidays?"
    does not ask about bank holidays, so an answer about public holidays answers no sibling of it."""
    return _EXCLUDED.sub(" . ", question)


def modifier_pairs(question: str) -> list[tuple[str, str]]:
    """Adjacent (modifier, head) content-word pairs of a question, stemmed (``bereavement leave`` →
    ``("bereav", "leave")``); a word right after a pronoun, auxiliary or question word is taken for a verb and
    skipped, as is the verb of a do-support clause ("does the box office *open*"), and hyphenated compounds are
    left to :func:`conflicts`' compound rule. A clause the question sets aside has no pairs
    (:func:`without_exclusions`)."""
    tokens = [t.lower() for t in _HYPHENATED.findall(_POSSESSIVE.sub("", without_exclusions(question)))]
    verbs = _do_verbs(tokens)
    out = []
    for i, (a, b) in enumerate(zip(tokens, tokens[1:])):
        if _content(a) and _content(b) and (i == 0 or tokens[i - 1] not in _VERB_CUES) and not _participle(b) \
                and i + 1 not in verbs:
            out.append((stem(a), stem(b)))
    return out


def _participle(token: str) -> bool:
    """A past participle or past tense ("offered", "approved"), a verb and no head noun: "What was the passenger
    *offered*?" asks what was given, not about a "passenger offer" ("speed", "hundred" stay nouns)."""
    return len(token) > 4 and token.endswith("ed") and not token.endswith("eed") and token != "hundred"


def conflicts(question: str, evidence: str, modifiers: bool = True, attributive: bool = False) -> list[str]:
    """Qualifiers of ``question`` that ``evidence`` contradicts, each as ``"asked≠found"``.

    A qualifier counts only when it is absent from the evidence while a sibling is present (see the module
    docstring), so evidence that mentions both (``P1 … P4``) is never in conflict. ``modifiers=False`` keeps
    only the code and compound rules: without part-of-speech tags a verb can pass for a modifier ("my dog
    *keep* the cone"), so the modifier rule is a ranking signal, not a reason to refuse. ``attributive`` is
    :func:`quantity_conflicts`'s."""
    out: list[str] = []
    question = without_exclusions(question)
    ev_codes, asked_codes = codes(evidence), codes(question)
    for prefix, number in sorted(asked_codes):
        if (prefix, number) in ev_codes or prefix in STOP_WORDS:
            continue
        siblings = sorted(n for p, n in ev_codes if p == prefix and n != number and (p, n) not in asked_codes)
        if siblings:
            out.append(f"{prefix}{number}≠{prefix}{siblings[0]}")
    ev_compounds = _compounds(evidence)
    for a, b in sorted(_compounds(question)):
        if (a, b) in ev_compounds:
            continue
        siblings = sorted(f"{x}-{y}" for x, y in ev_compounds
                          if (x == a) != (y == b) and (x, y) not in _compounds(question))
        if siblings:
            out.append(f"{a}-{b}≠{siblings[0]}")
    out += quantity_conflicts(question, evidence, attributive)
    return out + modifier_conflicts(question, evidence) if modifiers else out


def modifier_conflicts(question: str, evidence: str) -> list[str]:
    """The modifier rule of :func:`conflicts` alone: the question's head noun under another modifier in
    ``evidence`` (``bereavement leave`` asked, ``annual leave`` found), the asked modifier absent."""
    out: list[str] = []
    ev_terms = term_set(evidence)
    asked = term_set(question)  # a sibling the question itself names is being compared, not confused
    plain = _IDENTIFIER.sub(" the ", _POSSESSIVE.sub("", evidence))  # "the": a break no pair is made across
    # An instruction verb opening a sentence or clause is an imperative, not a modifier: "Keep samples in the
    # cool box …" says nothing about which samples.
    plain = _IMPERATIVE.sub(lambda m: m.group(1) + (" the " if m.group(2).lower() in INSTRUCTION_VERBS
                                                     else m.group(2)), plain)
    ev_tokens = [t.lower() for t in _HYPHENATED.findall(plain)]
    for mod, head in modifier_pairs(question):
        if mod in ev_terms:
            continue
        found = sorted({stem(prev) for prev, tok in zip(ev_tokens, ev_tokens[1:])
                        if stem(tok) == head and _content(prev) and stem(prev) not in (mod, head)
                        and stem(prev) not in asked})
        if found:
            out.append(f"{mod} {head}≠{found[0]} {head}")
    return out


# ------------------------------------------------------------------------------------------ amount ranges

#: A quantity: an optional currency sign, a number, an optional scale and an optional unit ("€12,000", "£1 million",
#: "15 per cent", "5,000 km", "30 minutes"). Only a number with a currency sign or a unit can be compared.
_QUANTITY = re.compile(
    r"(?P<cur>[£€$])?\s?(?<![\w.,])(?P<num>\d[\d,]*(?:\.\d+)?)(?![\d])"
    r"(?:\s?(?P<scale>million|billion|bn|mn|m|k)\b)?"
    r"(?:\s?(?P<unit>%|per\s?cent\b|percent\b|km\b|kilomet(?:re|er)s?\b|miles?\b|days?\b|weeks?\b|months?\b|"
    r"years?\b|hours?\b|minutes?\b|ml\b|kg\b|pounds?\b|euros?\b|dollars?\b|gbp\b|eur\b|usd\b))?", re.IGNORECASE)
_SCALE = {"k": 1e3, "m": 1e6, "mn": 1e6, "million": 1e6, "bn": 1e9, "billion": 1e9}
#: Units compared on one scale: currency words with their signs, and spans of time in minutes (a month as 30 days
#: and a year as 365, close enough to tell bands apart).
_BASE = {"pound": ("£", 1.0), "gbp": ("£", 1.0), "euro": ("€", 1.0), "eur": ("€", 1.0), "dollar": ("$", 1.0),
         "usd": ("$", 1.0), "minute": ("minute", 1.0), "hour": ("minute", 60.0), "day": ("minute", 1440.0),
         "week": ("minute", 10080.0), "month": ("minute", 43200.0), "year": ("minute", 525600.0)}
_BOUND_WORD = (r"up\s+to|not\s+more\s+than|no\s+more\s+than|at\s+most|a\s+maximum\s+of|within|the\s+first|first|"
               r"under|below|less\s+than|above|over|more\s+than|exceeding|in\s+excess\s+of|at\s+least|from|"
               r"a\s+minimum\s+of")
_BOUND = re.compile(rf"\b({_BOUND_WORD})\s+(?=[£€$]?\s?\d)", re.IGNORECASE)
_UPPER_INCL = ("up to", "not more than", "no more than", "at most", "a maximum of", "within", "the first", "first")
_UPPER_EXCL = ("under", "below", "less than", "fewer than")  # "fewer than": counts only (_COUNT)
_LOWER_EXCL = ("above", "over", "more than", "exceeding", "in excess of")

Interval = tuple[float, float, bool, bool]  # low, high, low included, high included
Band = tuple[str, Interval]  # compared unit ("€", "%", "km", "minute", …) and interval


def _unit_word(m: re.Match[str]) -> str | None:
    """A quantity's unit as written, normalised: its currency sign, "%", "km", "day", "pound", …"""
    if m.group("cur"):
        return m.group("cur")
    unit = m.group("unit")
    if unit is None:
        return "m" if (m.group("scale") or "").lower() == "m" else None  # "10 m" without a currency: metres
    u = re.sub(r"\s+", "", unit.lower())
    if u == "%" or u.startswith("per"):
        return "%"
    if u.startswith("kilomet"):
        return "km"
    return u[:-1] if u.endswith("s") and len(u) > 3 else u  # days → day, minutes → minute


def _measure(m: re.Match[str], word: str | None = None) -> tuple[str | None, float]:
    """``(unit, value)`` of a quantity in the unit it is compared in ("£" for "£" and "pounds", minutes for any span
    of time); ``word`` is the unit a bare number takes from its phrase. The unit is ``None`` for a bare number."""
    word = word or _unit_word(m)
    scale = (m.group("scale") or "").lower()
    factor = _SCALE.get(scale, 1.0) if (scale != "m" or m.group("cur")) else 1.0
    unit, per = _BASE.get(word, (word, 1.0)) if word is not None else (None, 1.0)
    return unit, float(m.group("num").replace(",", "")) * factor * per


def amount_value(text: str) -> float:
    """The value of a quantity in its compared unit ("£1 million" → 1e6, "€12,000" → 12000, "15 per cent" → 15,
    "2 hours" → 120 minutes)."""
    m = _QUANTITY.search(text)
    if m is None:
        raise ValueError(f"not an amount: {text!r}")
    return _measure(m)[1]


def _bound(word: str, value: float) -> Interval:
    word = " ".join(word.lower().split())
    if word in _UPPER_INCL:
        return (0.0, value, True, True)
    if word in _UPPER_EXCL:
        return (0.0, value, True, False)
    if word in _LOWER_EXCL:
        return (value, float("inf"), False, False)
    return (value, float("inf"), True, False)  # at least, from, a minimum of


def _quantities(text: str) -> list[re.Match[str]]:
    return [m for m in _QUANTITY.finditer(text) if m.group("num")]


def amount_ranges(text: str) -> list[Band]:
    """The bands a text states (see :func:`_bands`)."""
    return list(_bands(text))


# The reader asks about the same question and sentences for every candidate: parse each text once.
@lru_cache(maxsize=4096)
def _bands(text: str) -> tuple[Band, ...]:
    """The bands a text states, each with its unit: "between £1,000 and £5,000" / "€52,000 to €66,000", "up to
    £250,000", "above €12,000", "over 10 and up to 20 per cent", "within 30 minutes", "the first 5,000 km". One
    lower and one upper bound of the same unit make one band ("above €2,000 and up to €12,000"). A bare number
    takes the unit of the next quantity in the same phrase ("over 10 and up to 20 per cent"); one without any unit
    is not a band."""
    qs = _quantities(text)

    def measure_at(i: int) -> tuple[str | None, float]:
        # The quantity's own unit, else that of the next quantity joined by "and" / "to" / a dash.
        own = _unit_word(qs[i])
        if own is None and i + 1 < len(qs):
            gap = text[qs[i].end():qs[i + 1].start()]
            if re.fullmatch(r"\s*(?:and|to|–|-|and\s+(?:" + _BOUND_WORD + r"))\s*", gap, re.IGNORECASE):
                own = _unit_word(qs[i + 1])
        return _measure(qs[i], own)

    bands: list[Band] = []
    used: set[int] = set()
    for i in range(len(qs) - 1):
        gap = text[qs[i].end():qs[i + 1].start()]
        if not re.fullmatch(r"\s*(?:and|to|–|-)\s*", gap, re.IGNORECASE) or i in used:
            continue
        ranged = re.search(r"\bbetween\s*$", text[:qs[i].start()], re.IGNORECASE) is not None \
            or re.fullmatch(r"\s*(?:to|–|-)\s*", gap) is not None
        (u1, v1), (u2, v2) = measure_at(i), measure_at(i + 1)
        if ranged and u2 is not None and u1 == u2:
            lo, hi = sorted((v1, v2))
            bands.append((u2, (lo, hi, True, True)))
            used |= {i, i + 1}
    bounds: dict[str, list[Interval]] = {}
    for m in _BOUND.finditer(text):
        j = next((k for k, q in enumerate(qs) if q.start() >= m.end() - 1 and k not in used), None)
        if j is None or text[m.end():qs[j].start()].strip(" £€$") != "":
            continue
        unit, value = measure_at(j)
        if unit is not None:
            bounds.setdefault(unit, []).append(_bound(m.group(1), value))
            used.add(j)
    for unit, found in bounds.items():
        lows = [b for b in found if b[1] == float("inf")]
        highs = [b for b in found if b[1] != float("inf")]
        if len(lows) == 1 and len(highs) == 1 and lows[0][0] < highs[0][1]:
            bands.append((unit, (lows[0][0], highs[0][1], lows[0][2], highs[0][3])))
        else:
            bands += [(unit, b) for b in found]
    return tuple(bands)


@lru_cache(maxsize=1024)
def asked_amount(question: str) -> Band | None:
    """The one quantity a question is about, as a band with its unit ("worth £400,000" is the point, "over
    €12,000" everything above, "within 30 minutes" up to 30); ``None`` when it names none or several."""
    bands = _bands(question)
    if len(bands) == 1:
        return bands[0]
    points = [(u, v) for m in _quantities(question) for u, v in [_measure(m)] if u is not None]
    if not bands and len(points) == 1:
        unit, v = points[0]
        return (unit, (v, v, True, True))
    return None


def _disjoint(a: Interval, b: Interval) -> bool:
    (lo1, hi1, li1, hi1in), (lo2, hi2, li2, hi2in) = a, b
    if hi1 < lo2 or hi2 < lo1:
        return True
    if hi1 == lo2:
        return not (hi1in and li2)
    if hi2 == lo1:
        return not (hi2in and li1)
    return False


def _show(band: Interval) -> str:
    lo, hi, _, _ = band
    if hi == float("inf"):
        return f"{lo:,.0f}+"
    return f"{lo:,.0f}" if lo == hi else f"{lo:,.0f}–{hi:,.0f}"


def range_conflicts(question: str, sentence: str) -> list[str]:
    """``["asked≠stated"]`` when the question is about one quantity and every band of the same unit that
    ``sentence`` states excludes it ("Who may sign a contract worth £400,000?" against "Up to £250,000: Executive
    team members."; "a 15 per cent discount" against "Up to 10 per cent: …"), else ``[]``: the sentence gives the
    rule for another amount. Bands of other units are not compared."""
    asked = asked_amount(question)
    if asked is None:
        return []
    unit, wanted = asked
    bands = [b for u, b in _bands(sentence) if u == unit]
    if bands and all(_disjoint(wanted, b) for b in bands):
        return [f"{_show(wanted)}≠{_show(bands[0])}"]
    return []


#: A count of things with a plural noun ("15 radiators", "over 72 feet", "up to 8 people", "61 to 72 feet"): the band
#: rule's bound word (or "fewer than"), the number (or a range's two ends) and the noun.
_COUNT = re.compile(rf"(?:\b({_BOUND_WORD}|fewer\s+than)\s+)?(?<![\w.,£€$])(\d[\d,]*(?:\.\d+)?)"
                    rf"(?:\s*(?:to|-|–)\s*(\d[\d,]*(?:\.\d+)?))?\s+([a-z]+)\b", re.IGNORECASE)
_IRREGULAR_PLURALS = {"feet": "foot", "people": "person", "children": "child", "men": "man", "women": "woman"}
#: Nouns the band rule reads as units already (spans of time, distances, weights, money), and temperatures, whose
#: bands have signs: not counts here.
_NOT_COUNTED = frozenset("""second minute hour day week month year mile km kilometre kilometer kg ml pound euro dollar
    percent cent degree""".split())


def _counted_noun(word: str) -> str | None:
    """The singular of a plural count noun ("radiators" → "radiator", "feet" → "foot"); ``None`` for anything else
    (a singular, an -ing word, a unit the band rule reads)."""
    w = word.lower()
    if w in _IRREGULAR_PLURALS:
        return _IRREGULAR_PLURALS[w]
    if not w.endswith("s") or w.endswith("ss") or len(w) < 4:
        return None
    one = w[:-3] + "y" if w.endswith("ies") else w[:-2] if w.endswith(("ches", "shes", "xes", "sses")) else w[:-1]
    return None if one in _NOT_COUNTED or one.endswith("ing") else one


def _counts(text: str) -> list[tuple[str, Interval, str]]:
    """The counts ``text`` states, each as (singular noun, interval, as written)."""
    out = []
    for m in _COUNT.finditer(text):
        bound, first, last, word = m.groups()
        noun = _counted_noun(word)
        if noun is None:
            continue
        a = float(first.replace(",", ""))
        if last is not None:
            band: Interval = (a, float(last.replace(",", "")), True, True)
        else:
            band = (a, a, True, True) if bound is None else _bound(bound, a)
        out.append((noun, band, m.group(0).strip()))
    return out


def count_conflicts(question: str, evidence: str) -> list[str]:
    """``["asked≠stated"]`` when the question's asking part names one count of a plural noun ("a system with 15
    radiators", "a boat over 72 feet") and every count of that noun in ``evidence`` excludes it ("up to 10
    radiators"; "up to 60 feet", "61 to 72 feet"): the evidence gives other counts' rule, as :func:`range_conflicts`
    does for money and spans of time. A closed range asked ("16 to 18 students") is not read: it names ages as often
    as counts."""
    asked = _counts(split_setting(question)[1])
    if len(asked) != 1:
        return []
    noun, wanted, said = asked[0]
    lo, hi, _, _ = wanted
    if lo != hi and lo != 0 and hi != float("inf"):
        return []
    stated = [(band, shown) for n, band, shown in _counts(evidence) if n == noun]
    if stated and all(_disjoint(wanted, band) for band, _ in stated):
        return [f"{said}≠{stated[0][1]}"]
    return []


def _size_pattern(unit: str) -> re.Pattern[str]:
    """A size in ``unit`` (a regex): an optional bound, a number, and the unit, or a range of two numbers with the unit
    after the second and optionally after the first too ("3 to 4 m", "3.0 m to 4.0 m")."""
    return re.compile(rf"(?:\b(?P<bound>{_BOUND_WORD}|(?:taller|longer|wider|higher|bigger|larger)\s+than|between)\s+)?"
                      rf"(?<![\w.,£€$])(?P<a>\d+(?:\.\d+)?)(?:\s?{unit})?"
                      rf"(?:\s*(?P<join>to|and|-|–)\s*(?P<b>\d+(?:\.\d+)?))?\s?(?P<unit>{unit})", re.IGNORECASE)


#: A length: an optional bound ("up to", "over", "taller than", "between"), a number or a range of two, and a metric
#: unit ("5 metres", "up to 3.0 m", "60 cm", "250mm", "between 3 and 4 m", "3.0 m to 4.0 m"). Not after a currency
#: sign: "£3m" is money.
_LENGTH = _size_pattern(r"(?:mm|cm|m|millimet(?:re|er)s?|centimet(?:re|er)s?|met(?:re|er)s?)(?![\w'’-]|\.\d)")
_IN_METRES = {"mm": 0.001, "mi": 0.001, "cm": 0.01, "ce": 0.01}  # by the unit's first two letters; else metres


#: An area: the same bounds and ranges with a unit of area ("8 square metres", "up to 2 sq m", "12 m²", "a 300 sq ft
#: unit", "from 2 to 5 square metres").
_AREA = _size_pattern(r"(?:square\s+(?:met(?:re|er)s?|feet|foot)|sq\.?\s?(?:met(?:re|er)s?|m|feet|foot|ft)\.?"
                      r"|m²|m2|ft²)(?![\w'’-]|\.\d)")
_SQUARE_FEET = re.compile(r"f(?:ee|oo)?t", re.IGNORECASE)


def _in_metres(unit: str) -> float:
    return _IN_METRES.get(unit[:2].lower(), 1.0)


def _in_square_metres(unit: str) -> float:
    return 0.09290304 if _SQUARE_FEET.search(unit) else 1.0


def _sizes(text: str, pattern: re.Pattern[str], per_unit: Callable[[str], float]) -> list[tuple[Interval, str]]:
    """The sizes ``text`` states in ``pattern``'s dimension, in its base unit, each as (interval, as written)."""
    out = []
    for m in pattern.finditer(text):
        bound, a, join, b, unit = m.group("bound", "a", "join", "b", "unit")
        between = bound is not None and bound.lower() == "between"
        if join is not None and join.lower() == "and" and not between:
            continue  # "3 and 4 m" without "between" may list two lengths
        per = per_unit(unit)
        low = float(a) * per
        if b is not None:
            band: Interval = (low, float(b) * per, True, True)
        elif bound is None or between:
            band = (low, low, True, True)
        elif bound.lower().endswith(" than") and bound.split()[0].lower() not in ("less", "fewer"):
            band = (low, float("inf"), False, False)  # "taller than 4 m"
        else:
            band = _bound(bound, low)
        out.append((band, m.group(0).strip()))
    return out


def _lengths(text: str) -> list[tuple[Interval, str]]:
    """The lengths ``text`` states, in metres, each as (interval, as written)."""
    return _sizes(text, _LENGTH, _in_metres)


def _areas(text: str) -> list[tuple[Interval, str]]:
    """The areas ``text`` states, in square metres, each as (interval, as written)."""
    return _sizes(text, _AREA, _in_square_metres)


def _size_conflicts(question: str, evidence: str, sizes: Callable[[str], list[tuple[Interval, str]]]) -> list[str]:
    asked = sizes(split_setting(question)[1])
    if len(asked) != 1:
        return []
    wanted, said = asked[0]
    stated = sizes(evidence)
    if stated and all(_disjoint(wanted, band) for band, _ in stated):
        return [f"{said}≠{stated[0][1]}"]
    return []


def length_conflicts(question: str, evidence: str) -> list[str]:
    """``["asked≠stated"]`` when the question's asking part names one length ("a pair of gates 5 metres wide", "a
    hedge taller than 4 m", "the 250mm telescope") and every length ``evidence`` states excludes it ("up to 3.0 m",
    "3.0 m to 4.0 m"; "114mm", "150mm"): the evidence prices or rules other sizes, as :func:`count_conflicts` does
    for counted things. Lengths are compared in metres, whatever metric unit each is written in."""
    return _size_conflicts(question, evidence, _lengths)


def area_conflicts(question: str, evidence: str) -> list[str]:
    """:func:`length_conflicts` for areas: "a patch repair of 8 square metres" against "Patch repair up to 2 square
    metres" and "from 2 to 5 square metres"; square feet ("a 300 sq ft unit") are compared in square metres too."""
    return _size_conflicts(question, evidence, _areas)


def amount_terms_met(question: str, evidence: str) -> set[str]:
    """The terms of the question's quantity ("400", "000" of "£400,000"; "15", "cent" of "15 per cent") when
    ``evidence`` states a band of the same unit that holds it ("Up to £1 million: …"): the quantity is answered,
    though its digits are not repeated. Likewise an asked age inside an age band (:func:`age_terms_met`)."""
    out = age_terms_met(question, evidence)
    asked = asked_amount(question)
    if asked is None:
        return out
    unit, wanted = asked
    if not any(u == unit and not _disjoint(wanted, b) for u, b in _bands(evidence)):
        return out
    return out | {t for m in _quantities(question) if _measure(m)[0] == unit for t in term_set(m.group())}


_NUMBER_NAMES = {w: i for i, w in enumerate("""zero one two three four five six seven eight nine ten eleven twelve
    thirteen fourteen fifteen sixteen seventeen eighteen nineteen""".split())}
_AGE_NUMBER = r"(\d{1,2}|" + "|".join(_NUMBER_NAMES) + r")"
#: An age the question names ("my eight-year-old", "a 12 year old", "19-year-olds") or a range of ages ("12 and 13
#: year olds", "15 to 19-year-olds": both ends asked).
_AGE_ASKED = re.compile(r"\b(?:" + _AGE_NUMBER + r"\s*(?:to|and|-|–)\s*)?" + _AGE_NUMBER + r"[- ]years?[- ]olds?\b",
                        re.IGNORECASE)
#: An age band as price lists and rules write it: "Child (3 to 15)", "(aged 12–17)", "Ages 12 to 15:".
_AGE_BAND = re.compile(r"\(\s*(?:aged\s+|ages\s+)?(\d{1,2})\s*(?:to|-|–)\s*(\d{1,2})\s*\)"
                       r"|\b(?:aged|ages)\s+(\d{1,2})\s*(?:to|-|–)\s*(\d{1,2})\b", re.IGNORECASE)


def _age(word: str) -> int:
    w = word.lower()
    return int(w) if w.isdigit() else _NUMBER_NAMES[w]


def age_terms_met(question: str, evidence: str) -> set[str]:
    """The terms of an age the question names ("eight", "year", "old" of "my eight-year-old"; both ends of "12 and
    13 year olds") when ``evidence`` states an age band that holds it ("Child (3 to 15) | £48", "Ages 12 to 15: in
    rooms by 10pm"): the row answers that age."""
    bands = [(int(m.group(1) or m.group(3)), int(m.group(2) or m.group(4))) for m in _AGE_BAND.finditer(evidence)]
    out: set[str] = set()
    for m in _AGE_ASKED.finditer(question) if bands else ():
        low = _age(m.group(1) or m.group(2))
        high = _age(m.group(2))
        if any(a <= low and high <= b for a, b in bands):
            out |= term_set(m.group())
    return out


# ------------------------------------------------------------------------------------------ headings

_HASH_HEADING = re.compile(r"^[ \t]{0,3}(#{1,6})[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_RUN_IN = re.compile(r"^[ \t]*(?:[-*+][ \t]+)?\*\*([^*\n]{1,80}?)[.!?:]?\*\*", re.MULTILINE)
_PARA_BREAK = re.compile(r"\n[ \t]*\n")
#: A paragraph break, or a line break before a list item ("- **Category 2.** …", "2. …"): each item of a list is
#: a block of its own, with its own run-in heading.
_BLOCK_BREAK = re.compile(r"\n[ \t]*\n|\n(?=[ \t]*(?:[-*+]|\d{1,2}[.)])[ \t]+\S)")


#: A Markdown table's header line and the separator line under it ("| Ticket | Adult |" / "|---|---|"); the
#: separator may end the text, where a chunk boundary falls right after it.
_TABLE_HEAD = re.compile(r"[ \t]*(\|[^\n]*\|)[ \t]*\n[ \t]*\|?[ \t]*:?-{2,}[^\n]*(?:\n|\Z)")


_TABLE_HEAD_LINE = re.compile(r"(?m)^" + _TABLE_HEAD.pattern)


def table_headers(text: str) -> list[str]:
    """The header lines of the Markdown tables in ``text``."""
    return [m.group(1) for m in _TABLE_HEAD_LINE.finditer(text)]


def table_header(text: str, start: int, pos: int) -> str | None:
    """The header line of the Markdown table opening at ``start`` when ``pos`` lies in one of its rows, else
    ``None``: the columns a row's cells belong to ("Adult", "Child (5–15)")."""
    m = _TABLE_HEAD.match(text, start)
    return m.group(1) if m and m.end() <= pos else None


def heading_trail(text: str, pos: int) -> list[str]:
    """The headings position ``pos`` of a Markdown ``text`` sits under: the latest ``#`` heading of each level
    above it (outermost first), then the bold run-in heading opening its paragraph (``**Core hours.** …``), then
    the header line of the table a row belongs to (``| Ticket | Adult | Child |``) and the sentence that
    introduces the list an item belongs to ("… receive enhanced maternity pay:")."""
    levels: dict[int, str] = {}
    for m in _HASH_HEADING.finditer(text, 0, max(0, pos)):
        depth = len(m.group(1))
        levels = {d: h for d, h in levels.items() if d < depth}
        levels[depth] = m.group(2).strip()
    trail = [levels[d] for d in sorted(levels)]
    # A list item's own run-in ("- **Category 2.** …") heads it; an item without one sits under the run-in that
    # opens its paragraph ("**Severity levels.**" above "- Sev-1: …").
    para_start = block_start = 0
    for m in _BLOCK_BREAK.finditer(text, 0, max(0, pos)):
        block_start = m.end()
        if _PARA_BREAK.fullmatch(m.group()):
            para_start = block_start
    for start in dict.fromkeys((block_start, para_start)):
        run_in = _RUN_IN.match(text, start)
        if run_in and run_in.start() <= pos:
            trail.append(run_in.group(1).strip())
            break
    header = table_header(text, block_start, pos)
    if header is not None:
        trail.append(header)
    intro = list_intro(text, block_start)
    if intro is not None:
        trail.append(intro)
    return trail


_LIST_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,2}[.)])[ \t]+\S")
_LAST_SENTENCE = re.compile(r"[^.!?\n]*:[ \t]*$")


def list_intro(text: str, start: int) -> str | None:
    """The sentence ending in a colon that introduces the list whose item opens at ``start`` ("Employees with a
    year's service receive enhanced pay:" above "- 12 weeks at full pay"), else ``None``."""
    if not _LIST_ITEM.match(text, start):
        return None
    # Back over the items above this one to the text the list follows.
    lines = text[:start].rstrip().split("\n")
    while lines and (_LIST_ITEM.match(lines[-1]) or (lines[-1].startswith((" ", "\t")) and lines[-1].strip())):
        lines.pop()
    before = "\n".join(lines).rstrip()
    m = _LAST_SENTENCE.search(before)
    return m.group().strip() if m and m.group().strip() != ":" else None


def contexts(texts: Iterable[str]) -> str:
    """Join context strings (titles, headings) into one evidence string."""
    return " . ".join(t for t in texts if t)


def _split_spans(text: str, breaks: re.Pattern[str]) -> list[tuple[int, int]]:
    """``[start, end)`` spans of the non-blank pieces of ``text`` between matches of ``breaks``."""
    spans, start = [], 0
    for m in breaks.finditer(text):
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(text)))
    return [(s, e) for s, e in spans if text[s:e].strip()]


def paragraphs(text: str) -> list[tuple[int, int]]:
    """``[start, end)`` spans of the blank-line separated paragraphs of ``text`` (non-blank ones only)."""
    return _split_spans(text, _PARA_BREAK)


def blocks(text: str) -> list[tuple[int, int]]:
    """``[start, end)`` spans of the non-blank blocks of ``text``: its paragraphs, with each list item apart."""
    return _split_spans(text, _BLOCK_BREAK)


#: A line that opens a block of its own: a table row, a heading, a block quote or a list item.
_BLOCK_LINE = re.compile(r"^[ \t]*(?:\||#{1,6}(?:[ \t]|$)|>|[-*+][ \t]|\d{1,2}[.)][ \t])")
#: A line opening with a short label and a colon ("Email: …", "**Reviewed by:** …"): a field, not a wrapped line.
_LABEL_LINE = re.compile(r"^[ \t]*(?:\*\*|__)?[A-Z][\w’'/() -]{0,40}:(?:\*\*|__)?[ \t]")
#: A bold name alone, perhaps with a note in brackets ("**reelgriselda** (posted 3 November)"): a post's byline.
_BYLINE = re.compile(r"^[ \t]*(?:\*\*|__)[^*_\n]+(?:\*\*|__)(?:[ \t]*\([^)\n]*\))?[ \t]*$")
#: A line that ends a sentence or a clause (emphasis, quotes or brackets may follow), or a Markdown hard break.
_LINE_END = re.compile(r"(?:[.!?:;][*_`\"'’”)\]]*[ \t]*|[ \t]{2,}|\\)$")


def join_wrapped_lines(text: str) -> str:
    """``text`` with the line breaks of hard-wrapped prose read as spaces, as Markdown reads a soft line break
    ("… until at least\n**six months** have passed" is one sentence). A break stays where the line before ends a
    sentence or clause (or with a hard break), where either line is a table row or a heading, where the next line
    opens a list item, a block quote or a label ("Email: …"), and after a byline ("**name** (date)")."""
    lines = text.split("\n")
    out = lines[:1]
    for line in lines[1:]:
        prev = out[-1]
        if (prev.strip() and line.strip() and not _LINE_END.search(prev) and not _BYLINE.match(prev)
                and not prev.lstrip().startswith(("|", "#")) and not _BLOCK_LINE.match(line)
                and not _LABEL_LINE.match(line)):
            out[-1] = prev.rstrip() + " " + line.strip()
        else:
            out.append(line)
    return "\n".join(out)


def paragraph_headings(text: str) -> list[tuple[int, int, list[str]]]:
    """Each block of ``text`` (:func:`blocks`: a paragraph, or one list item) with the headings it sits under
    within ``text`` (:func:`heading_trail` at its end, so a block's own ``#`` line or run-in counts)."""
    return [(s, e, heading_trail(text, e)) for s, e in blocks(text)]
