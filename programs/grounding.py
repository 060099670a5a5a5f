"""Grounding: is a cited value the one the question asks for, or only printed somewhere on the page?

Each value an answer states (its numbers, years and the question's own numbers aside; a calculation's
operands; else the words it adds to the question) is looked for on the pages it cites, and gets a level:
- `grounded`: a table cell whose row label names the question's metric and is the page's best match
  for the question (label, column header and years; no other cell of the page names more of it: a
  value of another row or year is not; an operand of several need only be in a row the question names,
  in its years; in a schedule whose rows are years, the column names the metric and the row the year),
  or a sentence that names the metric (a "Label: value" fact is a one-cell row; a date's day is no
  value); a count ("how many days") only where the number is printed with its unit (in words, "two-time",
  as a text value), and a count of years over a threshold only where the row the question names has that
  many; a name asked as the largest where its row (or column) holds that value in a table that names the
  question; a text value in the sentence of its page that names most of the question (with the page's
  title), of the kind the question asks for (`gap_type`: a person, a place, a time, the "band" of "Which band
  ...?" where a page says what it is), and a list as the rows of one table that names the question;
- `on_page`: printed on a cited page, but in a row, column or sentence that is not the question's;
- `unsupported`: printed on no cited page, or of another type than the question asks for (a section
  number for a count of days, a name for an amount, no yes or no to a yes/no question).
The answer's level is its weakest value's. A yes or no is grounded only when code computed it (a trend's
verdict from its years' values, `programs.statement_metric`; a comparison of each side's own page,
`programs.comparison`, which the iterative program also checks a stated verdict or choice against), or when
it is stated with the two figures it rests on, each of its period, and code finds both where the question's
metric is printed in those periods and agrees with the verdict (`_figured_verdict`): a page that states the
claim grounds "yes" and "no" alike, so a bare verdict the model stated is `on_page` here.
Question words are stems (`corpus.words.stems`), a few synonyms of financial statements joined (SYNONYMS), words of the questions' boilerplate (GENERIC) and the cited
document's own name aside (every line of a filing is about its company, `_name_stems`).
All of this is code, without an LM. A text value's sentence can name several things, so a program that
states only grounded answers also asks its model whether that sentence answers the question with the
value (`programs.confirm`).
"""
from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import partial

from ferret.corpus import words
from ferret.corpus.words import MONTHS, STOPWORDS, sentences
from ferret.corpus.numbers import YEAR, YEAR_RANGE, is_change, number_spans, number_years, numbers_in, rounds_to, stated_figures
from ferret.corpus.pdf import COLUMN_GAP
from ferret.corpus.tables import PERCENT_HEADER
from ferret.programs.arithmetic import SHARE, names_operation, operations, percentage_made
from ferret.programs.hops import linked, names, offered, parts, title_name
from ferret.programs.passage_answer import asks_yes_no
from ferret.programs.verify import SCALES, TOLERANCE, same_number

GROUNDED, ON_PAGE, UNSUPPORTED = "grounded", "on_page", "unsupported"
LEVELS = (UNSUPPORTED, ON_PAGE, GROUNDED)  # weakest first
MAX_VALUE_WORDS = 12  # a text value longer than this is a passage copied, not a value, unless the question asks
# why, how or what for: a clause answers it, and grounds only where one sentence prints it whole
MAX_RANGE = 10  # years a range a question names may span ("FY2015 - FY2017")
# Names of one financial statement item, each a set of stems that names it only whole: "capital expenditures"
# is capex, "expenses" alone is not, nor is "property" alone
SYNONYMS = [tuple(map(words.stems, names)) for names in (("revenue", "sales"), ("income", "earnings", "profit"), (
    "capex", "capital expenditures", "purchases property equipment", "property plant equipment"), ("cogs", "cost"),
    ("receivables", "debtors"), ("inventory", "stock"))]
GENERIC = {"amoun", "total", "value", "answe", "usd", "milli", "billi", "thous", "fisca", "calcu", "respo", "relyi",
           "detai", "shown", "infor", "provi", "base", "based", "state", "using", "round", "decim", "place", "unit",
           "perce", "compa", "repor", "give", "year", "perio", "figur", "metri", "prima", "outli", "taking",
           "accou", "numbe"}
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*"
_DATE_DAY = re.compile(rf"\b{_MONTH}\.?\s+$", re.IGNORECASE)
_LARGEST = re.compile(r"\b(?:largest|highest|greatest|most|larger|higher|greater|more|maximum)\b", re.IGNORECASE)
_SMALLEST = re.compile(r"\b(?:smallest|lowest|least|smaller|lower|less|fewer|minimum)\b", re.IGNORECASE)
_THAN = re.compile(r"\bthan\b", re.IGNORECASE)
_DAY_MONTH = re.compile(rf"\s+{_MONTH}\b", re.IGNORECASE)  # "3 November"
_DATE = re.compile(rf"\b(\d{{1,2}})\s+({_MONTH})\b|\b({_MONTH})\.?\s+(\d{{1,2}})\b(?!\d)", re.IGNORECASE)  # "8 June", "June 8"
# A company's legal form adds nothing to its name ("Best Buy Co., Inc." to "Which Best Buy category ...?")
_LEGAL_FORMS = {"co", "inc", "corp", "corporation", "incorporated", "plc", "ltd", "limited", "llc", "lp", "sa", "ag", "nv"}
_UNITS = {"milli", "billi", "thous", "perce", "usd", "dolla", "respe", "eur", "euro"}  # with "and": a list of amounts
_STATEMENT = re.compile(r"\b(?:(?:consolidated )?statements? of (?:income|operations|earnings|cash flows?|financial position)|"
                        r"(?:income|cash flows?|p&l) statements?|balance sheets?)\b", re.IGNORECASE)
YEAR_AVERAGE = re.compile(rf"({YEAR.pattern})\s+average\b", re.IGNORECASE)  # "the 2019 average X": of 2019 and 2018
_PERCENTS = re.compile(r"\bin (?:units of )?percents?\b", re.IGNORECASE)
_COUNT = re.compile(r"\bhow many\s+([a-z]+)", re.IGNORECASE)
# a count's threshold: "exceed $5,000 million", "less than 100 thousands", "more than 20%"
_THRESHOLD = re.compile(r"\b(?:(?P<above>exceed(?:ed|s)?|above|more than|greater than|higher than|over)|less than|below|"
                        r"lower than|under|fewer than)\s+(?P<amount>[$€£]?\s?\d[\d,]*(?:\.\d+)?%?"
                        r"(?:\s+(?:thousand|million|billion)s?\b)?)", re.IGNORECASE)
_ASKS_YEAR = re.compile(r"\b(?:what|which)\s+(?:of\s+the\s+)?(?:financial\s+|fiscal\s+)?years?\b|"
                        r"\b(?:what|which)\s+(?:are|were)\s+the\s+years\b|\bwhen\s+(?:was|were|did|is)\b", re.IGNORECASE)
_QUANTITY = r"how (?:much|many)|amount|percentage|percent|sum|average|difference|change|growth|ratio|rate|margin|cagr|dpo|turnover"
_ASKS_NUMBER = re.compile(rf"\b(?:{_QUANTITY}|total|revenues?|sales|income|earnings|profits?|costs?|expenses?|expenditures?|"
                          r"capex|assets|liabilities|equity|cash|debt|price|eps|dividends?|balance|value|number|count)\b",
                          re.IGNORECASE)  # a quantity, or a metric named
_ASKS_REASON = re.compile(r"\s*(?:why|what (?:drove|caused|explains|led|does|do|did)|how (?:did|does|do|has|have|often|is|are|was|were)|"
                          r"explain|describe|summari[sz]e|what (?:is|was|are|were) the (?:\w+ )?(?:reasons?|factors?|drivers?|causes?))\b", re.IGNORECASE)  # a question about a number that asks for no number
_ASKS_DATE = re.compile(r"\b(?:what|which)\s+(?:is|was|are|were)\s+the\s+(?:[\w'-]+\s+){0,3}dates?\b",  # "the maturity date"
                        re.IGNORECASE)
_ASKS_QUANTITY = re.compile(rf"\b(?:{_QUANTITY})\b", re.IGNORECASE)  # a metric's name alone is not
_DANGLING = re.compile(r"\b(?:to|as|by|for|of|from|with|on|into|at|about)\s*\?\s*$", re.IGNORECASE)  # "... related to?"
_ASKS_ITEMS = re.compile(r"\s*(?:what|which)\s+(?:are|were)\b", re.IGNORECASE)  # "What are the components of the ratio?"
_ASKS_PURPOSE = re.compile(r"\b(?:purpose|objective|used for|used to|represent|include[sd]?|nature|reason)\b", re.IGNORECASE)
# a question that only names a term asks what it is, and a clause answers it: "What is aggregate intrinsic value?",
# "What is considered to be a cash equivalent?"; not "What is the name of ...?", nor a term with a number
_ASKS_DEFINITION = re.compile(r"^\s*what\s+(?:is|are)\s+(?:considered\s+(?:to\s+be\s+|as\s+)?)?(?!the\s+name\b)"
                              r"(?:[^\s?\d]+\s+){0,5}[^\s?\d]+\s*\?\s*$", re.IGNORECASE)
_ASKS_NAME = re.compile(r"\b(?:name[ds]?|called|titled)\b|^\s*where\b|\bwhere\s*\??\s*$",  # not "the city where X was born"
                        re.IGNORECASE)
_ASKS_PERSON = re.compile(r"^\s*(?:who|whom)\b|\bwith whom\b|\bwho (?:was|is|were|did)\b", re.IGNORECASE)
_NUMBER_WORDS = re.compile(r"\b(?:once|twice|thrice|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\b",
                           re.IGNORECASE)
_UP = r"improv\w*|increas\w*|grow|grew|grown|growing|rise|rose|risen|rising|higher|expand\w*"
_DOWN = r"declin\w*|decreas\w*|drop\w*|fell|fall\w*|lower|shr[ai]nk\w*|worsen\w*|deteriorat\w*"
_EITHER = re.compile(rf"(?:^|[.?!]\s+)(?:is|are|was|were|do|does|did|has|have|had)\b[^.?!]*?"  # "Has X improved or declined?",
                     rf"\b(?P<first>{_UP}|{_DOWN})\s+or\s+(?P<second>{_UP}|{_DOWN})\b", re.IGNORECASE)  # not "What was the increase or ..."
_DIRECTION = re.compile(rf"\b(?:(?P<up>{_UP})|(?P<down>{_DOWN})|(?P<positive>positive)|(?P<negative>negative))\b", re.IGNORECASE)
_CHANGE = re.compile(r"\b(?:chang\w*|differ\w*)\b", re.IGNORECASE)
_VERDICT_START = re.compile(rf"\s*(?:yes|no|{_UP}|{_DOWN})\b", re.IGNORECASE)
QUARTER = re.compile(r"\b(?:q[1-4]|quarters?|h[12])\b", re.IGNORECASE)
_YES_NO_START = re.compile(r"\s*(?:yes|no)\b", re.IGNORECASE)
_TOKEN = re.compile(r"[\w'’%$.,-]+")
stems = partial(words.stems, rows=True)  # grounding's words: a row label's "Other", "Less" and "Most" too


@dataclass
class Grounding:
    level: str  # the answer's: GROUNDED, ON_PAGE or UNSUPPORTED
    reason: str = ""  # why it is not grounded ("" when it is)
    shown: list[str] = field(default_factory=list)  # each value with what grounded it: "380.1 · Consumer · Revenue 2022 · p.13"
    pages: dict[tuple[str, int], str] = field(default_factory=dict)  # each cited page's level
    sentence: str = ""  # a grounded text value's sentence, for the model to confirm (`programs.confirm`)


def at_least(level: str, accept: str) -> bool:
    return LEVELS.index(level) >= LEVELS.index(accept)


def said_stems(question: str) -> set[str]:
    """The question's content words, without GENERIC and without the statements it says to read ("using the
    statement of income" names no metric)."""
    return stems(_STATEMENT.sub(" ", question)) - GENERIC


def question_stems(question: str) -> set[str]:
    """The stems a grounding context must share with the question: `said_stems` with SYNONYMS, and a
    margin's revenue too."""
    asked = said_stems(question)
    for group in SYNONYMS:
        if any(name <= asked for name in group):
            asked = asked.union(*group)
    return asked | ({"reven", "sale"} if "margi" in asked else set())


def question_years(question: str) -> set[str]:
    """The years a question names, with those inside a range it names ("FY2019 - FY2021": 2020 too) and
    the year before one whose average it asks ("the 2019 average X", of its 2019 and 2018 cells: 2018 too)."""
    years = set(YEAR.findall(question)) | {str(int(year) - 1) for year in YEAR_AVERAGE.findall(question)}
    for first, last in YEAR_RANGE.findall(question):
        years |= {str(year) for year in range(int(first) + 1, int(last)) if int(last) - int(first) <= MAX_RANGE}
    return years


def numbers_only(answer: str) -> bool:
    """The answer is one number or a list of them ("1,098 and 1,055 respectively", "$2.1 million"): no other word."""
    spans = number_spans(answer)
    rest = "".join(answer[end:start] for (_, end, _), (start, _, _) in zip([(0, 0, 0), *spans], [*spans, (len(answer), 0, 0)]))
    return bool(spans) and not stems(rest) - _UNITS


def asks_reason(question: str) -> bool:
    """The question asks why or how, what drove or explains something, its reason, or for a description."""
    return bool(_ASKS_REASON.match(question))


def asks_direction(question: str) -> str:
    """What a question about fiscal years asks of a value's direction: "up" or "down" when its yes/no sentence
    asks whether it improved (increased, grew) or declined ("Does Adobe have an improving operating margin
    profile as of FY2022?"), "either" when it asks which of the two ("Has AMCOR's quick ratio improved or
    declined?"), "positive" or "negative" when its yes/no sentence asks for that sign ("Does Corning have
    positive working capital?"); "" otherwise, and for a question about quarters."""
    if QUARTER.search(question):
        return ""
    if (either := _EITHER.search(question)) and bool(re.fullmatch(_UP, either["first"], re.IGNORECASE)) \
            != bool(re.fullmatch(_UP, either["second"], re.IGNORECASE)):
        return "either"
    found = _DIRECTION.search(asks_yes_no(question))
    return next((name for name, word in found.groupdict().items() if word), "") if found else ""


def direction_word(question: str, up: bool) -> str:
    """The question's own word for a rise (`up`) or a fall, of a question that asks which ("improved")."""
    either = _EITHER.search(question)
    first_up = bool(re.fullmatch(_UP, either["first"], re.IGNORECASE))
    return either["first"] if first_up == up else either["second"]


def asks_year(question: str) -> bool:
    """The question asks for a year ("in what year", "when was")."""
    return bool(_ASKS_YEAR.search(question))


def asks_number(question: str) -> bool:
    """The question asks for a number: how much or many, or a metric named (revenue, margin, ...), not
    why or how it came to be, nor yes or no, nor a date ("the maturity date of the Variable Rate Loans")."""
    return bool(_ASKS_NUMBER.search(question)) and not asks_reason(question) and not asks_yes_no(question) \
        and not _ASKS_DATE.search(question)


def _asks_other_kind(question: str) -> bool:
    """The question asks for a kind of thing that is no quantity nor metric ("In which currency was the total amount
    of financial assets the smallest?", "Which factors are considered when constructing the rate of return?")."""
    return bool(kind := asked_kind(question)) and not _ASKS_NUMBER.search(kind)


def _asks_beside_metric(question: str) -> bool:
    """The question names a metric but asks no quantity of it (how much, amount, change, ...) and something else:
    when or where, a kind of thing that is no metric ("the near term forecast for expenses"), or what the metric
    relates to ("What are these costs primarily related to?"); not its value ("What was Consumer revenue in 2022?")."""
    return not _ASKS_QUANTITY.search(question) and bool(
        _ASKS_WHEN.search(question) or _ASKS_WHERE.search(question) or _DANGLING.search(question)
        or _asks_other_kind(question))


def expected_type(question: str, answer: str) -> str:
    """Why the answer is not of the type the question asks for ("" when it is)."""
    core = _YES_NO_START.sub("", answer).strip(" .")
    has_number = bool(numbers_in(core)) or bool(_NUMBER_WORDS.search(core))
    if asks_yes_no(question) and not _YES_NO_START.match(answer):
        return "the question asks yes or no"
    if _ASKS_YEAR.search(question) and not YEAR.search(answer) and not (
            _ASKS_WHEN.search(question) and (_TIME.search(core) or _RECURRING.search(core))):  # "when" asks for a time:
        return "the question asks for a year"  # "May 31", "annually" too
    if _ASKS_PERSON.search(question) and not asks_yes_no(question) and not stems(YEAR.sub("", core).translate(_DIGITS)):
        return "the question asks who, the answer is a number"
    if asks_number(question) and _ASKS_QUANTITY.search(question) and not _ASKS_ITEMS.match(question) \
            and not _ASKS_YEAR.search(question) and not has_number and not _asks_other_kind(question):
        return "the question asks for a number"
    if _ASKS_WHEN.search(question) and not _ASKS_QUANTITY.search(question) \
            and any(percent or currency for _, percent, _, currency in _printed(core, question)):
        return "the question asks when, the answer is an amount"  # "$23,792" for "Over what period is it recognized?"
    if asks_reason(question) and re.fullmatch(r"[-$\d.,%\s]+(?:million|billion|thousand)?", core or "x"):
        return "the question asks why or how, the answer is a number"
    if _ASKS_NAME.search(question) and re.fullmatch(r"[-$\d.,%\s]+", core or "x"):
        return "the question asks for a name, the answer is a number"
    if _COUNT.search(question) and any(n < 0 for n in numbers_in(core)):
        return "the question asks how many, the answer is negative"
    if _COUNT.search(question) and not asks_percent(question) and any(
            re.search(r"[$€£¥]", printed := core[start:end]) or (re.search(r"\.\d\d$", printed) and not _PERCENT_AFTER.match(core[end:]))
            for start, end, _ in number_spans(core)):  # $12, 480.00 (cents): a count is no sum of money ("2.5 years" may be one)
        return "the question asks how many, the answer is an amount"
    options = parts(question)
    if len(options) >= 2 and " or " in question.lower() and not any(stems(o) & stems(answer) for o in options):
        return f"the question asks which of {', '.join(options)}"
    return ""


# A sum or difference a question writes between the terms of its own formula ("CCC is defined as: DIO + DSO - DPO",
# "FCF here is defined as: (cash from operations - capex)"); not a sign between numbers or years ("FY2015 - FY2017"),
# nor a slash, which between words is an "or" ("increase / (decrease)")
_FORMULA_OPERATOR = re.compile(r"(?<=[A-Za-z)])\s+([-+])\s+(?=[A-Za-z(])")


def computed_type(question: str, computation: str) -> str:
    """Why a calculation is not of the operation the question names ("" when it is, or when there is
    none): a percentage change divides a difference, a difference does not divide, a ratio divides, an
    average adds and divides, and a formula the question writes has each of its operators."""
    if not computation:
        return ""
    asked, divides, subtracts = operations(question), "/" in computation, "-" in computation.lstrip(" (-")
    applied = {"+"} & set(computation) | ({"-"} if subtracts else set())  # a leading sign is no difference
    if missing := sorted(set(_FORMULA_OPERATOR.findall(question)) - applied):
        return f"the question's formula has {' and '.join(missing)}, not {computation}"
    if _RELATIVE.search(question):  # a growth rate is a percentage change
        asked = asked | {"percentage", "change"}
    if {"percentage", "change"} <= asked and not (divides and subtracts):
        return f"the question asks for a percentage change, not {computation}"
    if "change" in asked and not asked & {"percentage", "ratio", "average"} and (divides or not subtracts) \
            and not _PERCENTS.search(question):  # a change "in units of percents" may be relative
        return f"the question asks for a difference, not {computation}"
    if "ratio" in asked and not divides or "average" in asked and not (divides and "+" in computation):
        return f"the question asks for {'a ratio' if 'ratio' in asked else 'an average'}, not {computation}"
    return ""


# The unit, scale and sign a question names for its number (rules chosen on the train splits of FinanceBench
# and TAT-QA: the words are those of any financial question, not of one set's templates).
_ASKS_PERCENT = re.compile(r"\bpercent(?:ages?|s)?\b|\bper cent\b|(?<![\d.)\s])\s*%|^%|\bgrowth rates?\b|\bcagr\b|"
                           r"\brates? of (?:growth|return|change)\b", re.IGNORECASE)  # not the "30%" a question gives
_RELATIVE = re.compile(r"\bgrowth rates?\b|\bcagr\b|\brates? of (?:growth|change)\b", re.IGNORECASE)  # a change divided
_ASKED_SCALE = re.compile(r"\bin (?:(?:usd|us\$|\$|eur|€|gbp|£)\s*)?(thousands|millions|billions)\b|"
                          r"\bin (?:usd|us\$|\$|eur|€|gbp|£)\s*(thousand|million|billion|mn|bn|m)\b", re.IGNORECASE)
_SCALE_OF = {"thousand": 1e3, "million": 1e6, "mn": 1e6, "m": 1e6, "billion": 1e9, "bn": 1e9}
_PER_SHARE = re.compile(r"\bper (?:\w+ )?share\b|\beps\b", re.IGNORECASE)
_SHARES = re.compile(r"\bshares\b", re.IGNORECASE)  # "shares used in computing earnings per share": a count
_PAID = re.compile(r"\b(?:paid|pays?|paying|spent|spends?|spending)\b", re.IGNORECASE)  # an outflow, asked as an amount
_SCALE_WORD = re.compile(r"(?:thousand|million|billion|trillion|bn|mn|[kmb])s?$", re.IGNORECASE)
_PERCENT_AFTER = re.compile(r"\s*(?:%|percent\b|per cent\b|percentage points?\b|pp\b|points?\b)", re.IGNORECASE)
MAX_AMOUNT = 1e12  # no amount a filing states reaches a trillion (of its currency): a larger one is in the wrong scale
MAX_SMALL = 1000  # a percentage, or a per-share amount, is below a thousand


def _printed(answer: str, question: str) -> list[tuple[float, bool, bool, bool]]:
    """(number, percent, scaled, currency) of each number an answer states: printed with "%" (or
    "percent", "points"), with a scale word ("million", "bn"), with a currency sign; years (a year a question asks
    for is no percentage) and the question's own numbers aside."""
    given = numbers_in(question)
    found = []
    for start, end, number in number_spans(answer):
        text = answer[start:end]
        if any(same_number(abs(number), abs(g)) for g in given) or YEAR.fullmatch(text):
            continue
        found.append((number, "%" in text or bool(_PERCENT_AFTER.match(answer[end:])), bool(_SCALE_WORD.search(text)),
                      bool(re.search(r"[$€£¥]", text) or re.search(r"\b(?:usd|eur|gbp|dollars?)\s*$", answer[:start], re.I))))
    return found


_IN_SCALE = re.compile(r"\bin\s+(thousands|millions|billions)\b", re.IGNORECASE)  # a page's "(In millions of U.S. dollars)"


def _page_scale(question: str, answer: str, texts: Sequence[str]) -> str:
    """Why a stated amount (no scale word) is not in the scale the question asks ("in USD billions")
    though its grounding pages print it in theirs ("(In millions)"): 380.1 copied from a millions table
    is no amount in billions, 0.3801 is. "" when it is, when the question names no scale, or when the
    pages name none."""
    scale = _ASKED_SCALE.search(question)
    if not scale:
        return ""
    factor = _SCALE_OF[(scale[1] or scale[2]).lower().rstrip("s")]
    pages = {_SCALE_OF[found.lower().rstrip("s")] for text in texts for found in _IN_SCALE.findall(text)}
    printed = [number for text in texts for number in numbers_in(text)]
    for number, percent, scaled, _ in _printed(answer, question):
        if percent or scaled or not pages:
            continue
        quantity = abs(number) * factor
        if not any(same_number(abs(number), abs(p)) and any(abs(quantity - abs(p) * f) <= TOLERANCE * quantity for f in pages | {1.0})
                   for p in printed):
            return f"the question asks for an amount {scale[0]}, the page prints {_format(abs(number))} in another scale"
    return ""


_RATE = re.compile(r"\b(?:tax|interest|discount) rates?\b(?:\s+(\w+))?", re.IGNORECASE)  # the word after it, if any


def asks_percent(question: str) -> bool:
    """The question asks for a percentage (a share, a percentage change, a growth rate, a tax, interest or
    discount rate: not the "interest rate swaps" such a rate names), not an amount in a scale it names."""
    rate = any(not match[1] or match[1].lower() in STOPWORDS for match in _RATE.finditer(question))
    return bool(_ASKS_PERCENT.search(question) or rate) and not _ASKED_SCALE.search(question)


def unit_type(question: str, answer: str, computation: str = "") -> str:
    """Why the number an answer states has not the unit, scale or sign its question names ("" when it
    has, or when the question names none): a percentage asked is printed as one, or is a number below a
    thousand without a scale word or a currency, unless it is the value of a calculation that divides and
    multiplies by 100 ("(2,532 - 98) / 98 * 100": a change from a small base); an amount asked in a scale
    ("in USD billions") is no percentage, and read in that scale stays below a trillion (its number
    converted: 4,500 where billions are asked is millions copied); a per-share amount is below a thousand,
    without a scale word; an amount paid or spent is not negative; a growth rate computed divides. General
    over financial questions: units, scales and signs, not one set's wording (chosen on the train splits)."""
    printed = _printed(answer, question)
    if not printed:
        return ""
    if asks_percent(question):
        if not any(percent for _, percent, _, _ in printed):
            if any(scaled or currency for _, _, scaled, currency in printed):
                return "the question asks for a percentage, the answer is an amount"
            made = percentage_made(computation)
            if any(abs(number) >= MAX_SMALL and (made is None or abs(number - made) > TOLERANCE * abs(made))
                   for number, _, _, _ in printed):
                return "the question asks for a percentage, the answer is a value in the thousands"
        if computation and _RELATIVE.search(question) and "/" not in computation:
            return f"the question asks for a growth rate, not {computation}"
        return ""
    if scale := _ASKED_SCALE.search(question):
        factor = _SCALE_OF[(scale[1] or scale[2]).lower().rstrip("s")]
        if any(percent for _, percent, _, _ in printed):
            return f"the question asks for an amount in {scale[0][3:]}, the answer is a percentage"
        if any(abs(number if scaled else number * factor) >= MAX_AMOUNT for number, _, scaled, _ in printed):
            return f"the question asks for an amount {scale[0]}, the answer is in another scale"
    if _PER_SHARE.search(question) and not _SHARES.search(_PER_SHARE.sub(" ", question)):
        if any(scaled or abs(number) >= MAX_SMALL for number, _, scaled, _ in printed):
            return "the question asks for a per-share amount, the answer is a total"
    if _PAID.search(question) and "change" not in operations(question) and \
            any(number < 0 for number, _, _, _ in printed):
        return "the question asks for an amount paid, the answer is negative"
    return ""


_DIGITS = str.maketrans("", "", "0123456789")


def ground(question: str, answer: str, values: Sequence[float] | None, pages: Sequence[tuple[str, int]],
           corpus, computation: str = "", bridges: Sequence[str] = ()) -> Grounding:
    """The grounding of `answer` on the cited `pages` (doc_id, page) of `corpus` (its `page_text` and
    `page_cells`). `values`: the numbers to ground, when the caller knows them (the operands of
    `computation`); else those the answer states (`stated_numbers`) when the question asks for a number
    or a year or the answer is one; else its words. `bridges`: the names through which a multi-hop
    search reached its pages (`programs.hops`); a context naming one is about the question as if it named
    the question's words. A number of another unit, scale or sign than the question names (`unit_type`)
    is `on_page` at most, however well its operands ground."""
    result = _ground(question, answer, values, pages, corpus, computation, bridges)
    numeric = computation or values is not None or asks_number(question) or numbers_only(answer)
    if result.level == GROUNDED and numeric and not asks_yes_no(question) and (
            wrong := unit_type(question, answer, computation) or (not computation and _page_scale(question, answer, [
                corpus.page_text(*place) or "" for place, level in result.pages.items() if level == GROUNDED]))):
        result.level, result.reason, result.sentence = ON_PAGE, wrong, ""
        result.pages = {place: ON_PAGE if level == GROUNDED else level for place, level in result.pages.items()}
    return result


def _ground(question: str, answer: str, values: Sequence[float] | None, pages: Sequence[tuple[str, int]],
            corpus, computation: str = "", bridges: Sequence[str] = ()) -> Grounding:
    """`ground` but the unit check."""
    # a verdict computed in code ("No. It fell from 36.8 in FY2021 to 34.6 in FY2022."): its computation is a
    # difference whatever it compares, and its operands, not a sentence, ground it, in the years it names
    verdict = bool(computation) and bool(asks_direction(question)) and bool(_VERDICT_START.match(answer))
    pages = list(dict.fromkeys(pages))
    texts = {place: corpus.page_text(*place) or "" for place in pages}
    cells = {place: _introduced(corpus.page_cells(*place), texts[place]) for place in pages}  # each page's rows, read once
    if values is None and not computation and (row := _extreme_row(question, answer, cells)):
        return Grounding(GROUNDED, shown=[row], pages={place: GROUNDED for place in pages})
    if wrong_type := expected_type(question, answer) or (not verdict and computed_type(question, computation)):
        return Grounding(UNSUPPORTED, wrong_type)
    if asks_yes_no(question) and not verdict:
        return _figured_verdict(question, answer, pages, texts, cells, bridges) or _verdict(texts)
    if values is None and not computation and (stated := _stated_change(question, answer, pages, texts, cells, bridges)) \
            and stated.level == GROUNDED:
        return stated
    if values is None:
        if not (asks_number(question) or _ASKS_YEAR.search(question) or numbers_only(answer)):
            return _ground_text(question, answer, texts, bridges, cells)
        values = stated_numbers(answer, question)
    if not values:
        # "Debtors, Cash and cash equivalents" for "What made up current assets?", "two-time" for "How many times?";
        # a question that names a metric but asks something else of it is answered in words, or when it asks when,
        # in years: "Third party advisory services" for "What are strategic alternative evaluation costs primarily
        # related to?", "2018" for "When has IMFT discontinued the production of NAND?"
        if list_items(answer) or _NUMBER_WORDS.search(answer) or _asks_beside_metric(question) and (
                stems(answer) - _UNITS or _ASKS_WHEN.search(question)):
            return _ground_text(question, answer, texts, bridges, cells)
        return Grounding(UNSUPPORTED, "the answer states no number")
    years = question_years(question) | (set(YEAR.findall(answer)) if verdict else set())
    if computation and not verdict and len(years) == 1 and "change" in operations(question):
        years |= {str(int(min(years)) - 1)}  # a change "in 2019" is from 2018: its operands are in both years
    asked = _asked(question, answer, bridges, years, len(values) == 1, "" if computation else question)
    if _ASKS_YEAR.search(question):
        if compared := list(_years_beyond(question, cells)):  # "In which years was X less than $100 million?": all
            # and only the years beyond the threshold
            stated = {f"{value:.0f}" for value in values}
            listed = [f"{', '.join(sorted(beyond))} of {counted} years · {where}" for beyond, counted, where in compared
                      if beyond == stated]
            return Grounding(GROUNDED, shown=listed[:1], pages={place: GROUNDED for place in pages}) if listed else Grounding(
                ON_PAGE, "the years stated are not those in which the row the question names is beyond its threshold")
        if all(columns := [_year_column(question, value, cells, asked.words) for value in values]):
            return Grounding(GROUNDED, shown=columns, pages={place: GROUNDED for place in pages})
        if "table" in stems(question) and (shown := _table_years(values, cells)):
            return Grounding(GROUNDED, shown=[shown], pages={place: GROUNDED for place in pages})
    if asked.single and _COUNT.search(question) and (counted := (_years_counted if asked.unit == "year" else _rows_counted)(
            question, values[0], cells)):
        return Grounding(GROUNDED, shown=[counted], pages={place: GROUNDED for place in pages})
    return _ground_values(values, pages, texts, cells, asked)


# a sentence that introduces a table: "The following table summarizes our ... (in millions):", "... were as follows:"
_INTRO = re.compile(r"\b(?:follow(?:s|ing)?|table|below)\b[^:]*:\s*$", re.IGNORECASE)


def _introduced(rows: list[dict], text: str) -> list[dict]:
    """A page's table rows (`page_cells`), the one sentence of its prose that introduces a table added to their caption
    when they share one: what a "Total" row under "11" totals is what "The following table summarizes our ... income
    from continuing operations ...:" names, wherever the page prints it (TAT-QA's pages print it after the table)."""
    intro = _introductions(text)
    if len(intro) != 1 or len({row["section"] for row in rows}) != 1:
        return rows
    return [{**row, "section": f"{row['section']} {intro[0]}".strip()} for row in rows]


def _introductions(text: str) -> list[str]:
    """The lines of a page's prose that introduce a table (`_INTRO`)."""
    return [line for line in sentences(text, lines=True) if COLUMN_GAP not in line and _INTRO.search(line)]


def _asked(question: str, answer: str, bridges: Sequence[str], years: set[str], single: bool, operation: str) -> _Asked:
    return _Asked(question_stems(question) | stems(" ".join(bridges)), stems(" ".join(names(question))), years,
                  _count_unit(question), single, operation, stems(question) & GENERIC, bool(SHARE.search(question)),
                  frozenset(dates_in(answer)), said_stems(question), tuple(names(question)))


def _ground_values(values: Sequence[float], pages: Sequence[tuple[str, int]], texts: dict[tuple[str, int], str],
                   cells: dict[tuple[str, int], list[dict]], asked: _Asked) -> Grounding:
    """Each value at its best on the cited pages (`_ground_number`); the answer at its worst value's level."""
    result = Grounding(GROUNDED)
    for value in values:
        best, printed, shown = UNSUPPORTED, _format(value), ""
        for place in pages:
            name = _name_stems(place[0], asked.names)
            on_page = replace(asked, words=asked.words - name, said=asked.said - name)
            level, as_printed, where = _ground_number(value, place, texts[place], cells[place], on_page)
            result.pages[place] = max(result.pages.get(place, UNSUPPORTED), level, key=LEVELS.index)
            if LEVELS.index(level) > LEVELS.index(best) or not shown:
                best, printed, shown = level, as_printed or printed, where
        result.shown.append(f"{printed} · {shown}" if shown else printed)
        if LEVELS.index(best) < LEVELS.index(result.level):
            result.level = best
            result.reason = (f"{printed} is printed on no cited page" if best == UNSUPPORTED else
                             f"{printed} is printed on the page, but not where the question's "
                             f"{'metric and period are' if asked.years else 'metric is'} named")
    return result


def stated_numbers(answer: str, question: str) -> list[float]:
    """The numbers an answer states: those after its last "=" or ":" when any are ("2019: $909; 2018:
    $1,305" → 1,305), the question's own numbers aside, and years too unless the question asks for one (then
    the years it names are ones it offers when it names two or more: "Between 2018 and 2019, which year had
    higher revenue?"; one it names alone is part of what it asks about, "the election, 2000" of "In what year
    was the man who resigned before the election, 2000 born?")."""
    if numbers_in(result := re.split(r"[=:]", answer)[-1]):
        answer = result
    given, asks = numbers_in(question), bool(_ASKS_YEAR.search(question))
    offers = asks and len(set(YEAR.findall(question))) >= 2
    is_year = lambda n: n.is_integer() and 1900 <= n <= 2100 and bool(YEAR.search(f"{n:.0f}"))
    found = [n for n in numbers_in(answer) if (offers and is_year(n)) or not any(same_number(n, g) for g in given)]
    if not asks:
        found = [n for n in found if not is_year(n)]
    return list(dict.fromkeys(found))


def dates_in(text: str) -> set[tuple[int, str]]:
    """The days `text` prints beside a month ("8 June 1951", "June 8"), each with its month's first three letters."""
    return {(int(match[1] or match[4]), (match[2] or match[3]).lower()[:3]) for match in _DATE.finditer(text)}


@dataclass(frozen=True)
class _Asked:
    """What the question asks, as a number's grounding reads it."""
    words: set[str]  # its stems (and its bridges'), the cited document's own name aside
    subject: set[str]  # the names it asks about ("IMFT"), not the metric it asks for
    years: set[str]
    unit: str  # a count's ("days"), or ""
    single: bool  # the answer states one value (not a calculation's several operands)
    operation: str  # the question, when the answer computed nothing: an average's value must be named an average
    generic: set[str]  # the boilerplate words it says ("total"): a row label naming them is not the worse for it
    share: bool = False  # it asks about a share ("the percent of total sales"): of a row's "%" columns only
    dates: frozenset = frozenset()  # the days the answer states with their months ("8 June 1951": (8, "jun"))
    said: set[str] = field(default_factory=set)  # its own stems (`said_stems`), not its synonyms' or bridges'
    names: tuple[str, ...] = ()  # its names as it prints them ("Best Buy")
    exact: bool = False  # a value is a cell's or a sentence's only to the decimals they print (a verdict's figure)


def _ground_number(value: float, place: tuple[str, int], text: str, rows: list[dict], asked: _Asked) -> tuple[str, str, str]:
    """(level, the value as the page prints it, where) of one value on one page (its `text` and its table
    `rows`, as `page_cells` gives them): a cell whose row label
    names the question's words and whose column fits its years (and, for a single value, the page's best
    cell for the question: one of several operands answers a part of it, as the total of a share does;
    of a question about a share, in a row that prints one, a "%" column),
    else the sentence naming most of the question's metric (its words but its subject's names) among the
    page's sentences that state a number (as a text value's; any naming it, for a year or one of several
    operands), a date's day not taken for it; a value answering the question's operation (an average, a
    change) when the answer computed nothing only where its row or sentence names that operation too (a
    proportion asked "as a percentage of" a whole, where its cell is printed as a percentage); a count
    only where it is printed with its unit. A question that names nothing but "the Total amount" and an
    operation asks about a "Total" row (`_total_asked`)."""
    page, words, years, single = f"p.{place[1]}", asked.words, asked.years, asked.single
    if not any(same_number(abs(value), abs(n)) for n in numbers_in(text)):
        return UNSUPPORTED, "", ""
    if asked.unit:
        for start, end, number in number_spans(text):
            if same_number(abs(value), abs(number)) and asked.unit in stems(" ".join(text[end:].split()[:2])):
                return GROUNDED, _format(abs(value)), f"{asked.unit} · {page}"
        return ON_PAGE, "", f"{page}, not as a number of {asked.unit}"
    year = value.is_integer() and 1900 <= value <= 2100  # a table prints a year as its column's header, not in a cell;
    # and 2022 is not 2023 rounded
    captioned = not any(stems(row["label"]) - GENERIC & words for row in rows)  # no row of its own is the question's
    labelled = [] if year else [(row, _row_label(row, captioned, asked.generic)) for row in rows]
    cells = [(*_oriented(*_grouped(row, label, header, asked)), printed, number)
             for row, label in labelled for header, printed, number in row["cells"]]
    # a label read with its caption (`_row_label`) is not the worse for the caption's words
    captions = [stems(row["section"]) if label != row["label"] else set() for row, label in labelled for _ in row["cells"]]
    # "International", when the question names it; not a calculation's own column ("Change %"): its operands sit in others
    # and not a share's column ("% of total revenue" names revenue as what it divides by), unless a share is asked;
    # nor a column of another year ("For the year ended 31 December 2018" does not make "December" tell columns apart)
    distinct = _distinct_headers([header for _, header, _, _ in cells if (asked.operation or not operations(header) - {"percentage"})
                                  and (asked.share or not PERCENT_HEADER.search(header))
                                  and _years_fit(header, years)]) & words
    distinct_total = distinct | asked.generic & {"total"}  # a "Total" column is the total a question asks for
    scores = [_cell_score(label, header, words, years, asked.generic | caption)
              for (label, header, _, _), caption in zip(cells, captions)]
    top = max(scores, default=None)
    same = [(cell, score) for cell, score in zip(cells, scores) if cell[3] is not None and _is(value, cell[2], cell[3], asked.exact)]
    # rows that print the share asked
    shared = {label for label, header, _, _ in cells if asked.share and PERCENT_HEADER.search(header)}
    for (label, header, printed, _), score in same:
        # a calculation's operands over rows the question does not name (the segments of "the average total expected
        # charges per segment"): their metric is what their column names
        # and so is the metric of a row labelled with generic words only ("Total" under "Fiscal 2018 Net Sales")
        metric = f"{label} {header}" if captioned and (not single or not stems(label) - GENERIC) else label
        if (score == top or not single) and (stems(metric) & words or _total_asked(asked, label)) \
                and (names_operation(asked.operation, f"{label} {header}") or _share_printed(asked.operation, printed, header)) \
                and _years_fit(header, years) \
                and (bool(PERCENT_HEADER.search(header)) if label in shared and single  # a calculation's operands
                     else not distinct or stems(header) & distinct_total):  # are amounts, wherever the share is printed
            return GROUNDED, printed, " · ".join(filter(None, (label, header, page)))
    if same:  # a cell, but not the question's: the text of its table row is no sentence to ground it
        return ON_PAGE, same[0][0][2], page
    metric = words - asked.subject or words  # a sentence names "liabilities", not only the "IMFT" every line is about
    lines = [(sentence, stems(sentence) & metric) for sentence in sentences(text, lines=True)]
    # of the page's sentences that state a number, the one that names most of the metric (a table's line sets no
    # bar on a page with prose), as of its cells the best one; a calculation's operands answer parts of the question,
    # and a year dates what the sentence names, which the question may name in few of its words ("In what year was
    # the man that resigned as President of Israel before the election born?")
    top = _most_named([(line, named) for line, named in lines if numbers_in(line)])
    for sentence, named in lines:
        if named and (len(named) >= top or not single or year) and names_operation(asked.operation, sentence) \
                and not (year and single and rows and len(set(YEAR.findall(sentence))) > 1):  # a table header's years
            stated_for = number_years(sentence) if years else {}  # "RMB77 million (2018: RMB229 million)"
            for start, end, number in number_spans(sentence):
                if start in stated_for and stated_for[start] not in years:
                    continue  # stated for a year the question does not ask about
                if (number == value if year else _is(value, sentence[start:end], number, asked.exact)) \
                        and (year or not (_DATE_DAY.search(sentence[:start]) or _DAY_MONTH.match(sentence[end:]))
                             or any(day == value for day, _ in dates_in(sentence) & asked.dates)):  # a day is no
                    # amount, but may be the day of the date the answer states
                    return GROUNDED, sentence[start:end], f"{' '.join(sentence.split())[:60]} · {page}"
    return ON_PAGE, "", page


# the words that name an operation ("percentage change", "proportion"), not what it is taken of
_OPERATION_STEMS = stems("change changes changed difference increase decrease growth average mean ratio proportion "
                         "percentage percent sum")


def _total_asked(asked: _Asked, label: str) -> bool:
    """A "Total" row is the metric of a question that names nothing but the total of a table and an operation ("What
    was the percentage change in the Total amount in 2019 from 2018?")."""
    return "total" in asked.generic and "total" in stems(label) and not asked.words - _OPERATION_STEMS - asked.subject


def _share_printed(question: str, printed: str, header: str) -> bool:
    """A cell printed as a percentage (or in a "%" column) answers a question for a proportion "as a percentage of"
    a whole ("the proportion of cost of revenue as a percentage of revenue": "55%" in the row "Cost of revenue"):
    the page printed the share."""
    return operations(question) - {"percentage"} == {"ratio"} and bool(SHARE.search(question)) \
        and ("%" in printed or bool(PERCENT_HEADER.search(header)))


def _is(value: float, printed: str, number: float, exact: bool) -> bool:
    """`number`, printed as `printed`, is `value` (any sign) within rounding (`same_number`), or, `exact`, to the
    decimals it is printed with, at its scale ("20.0" is not 20.1)."""
    return same_number(abs(value), abs(number)) and (not exact or any(rounds_to(abs(value) / scale, printed) for scale in SCALES))


def _oriented(label: str, header: str) -> tuple[str, str]:
    """(what a cell measures, its period): its row label and column header, or, in a schedule whose rows are
    years ("2021  $138  $6" under "Operating Leases  Finance Leases"), its column header and its row's year."""
    return (header, f"{label} {header}") if YEAR.fullmatch(label.strip()) else (label, header)


def _grouped(row: dict, label: str, header: str, asked: _Asked) -> tuple[str, str]:
    """A cell's (label, header) read with the label-only line its row is printed under (`page_cells`' "group").
    A group naming a year is the period of a column that names none, whose header then says what the cell
    measures as its row label does ("Total" under "December 31, 2018", in the column "Allowance for Losses").
    Of another, the words the question says itself (`_Asked.said`) are the row's too when its own label names
    one, or only GENERIC words the question says ("Total" under "Revenue:" for the total revenue; not "Total
    segments" under "Assets allocated to segments" for the total assets): "Basic" under "Weighted-average
    common shares outstanding" answers a question about basic weighted-average shares, while a synonym of
    the question's ("stock" for inventories) or a search's ("products" for the cost of goods sold) lifts no
    row of a group above its total, and a group's other words count against none of its rows."""
    group = row.get("group", "")
    if YEAR.search(group):
        return (label, header) if YEAR.search(header) else (f"{label} {header}", f"{group} {header}")
    said, own = [word for word in words.words(group) if stems(word) & asked.said], stems(row["label"])
    return (" ".join([*said, label]) if said and (own & asked.said or own and own <= asked.generic) else label), header


def _row_label(row: dict, captioned: bool, said: set[str]) -> str:
    """A row's label, with its table's caption when the label names nothing but GENERIC words and
    `captioned` (the question names no row of the page by its own words) or the question `said` them (it
    asks for a "total" too): a "Total" row under "Personnel expenses for employees were as follows:" is the
    personnel expenses' total, and not the total a question about the "Consumer" row of a segment table
    would read. A label of no words (a schedule's year, `_oriented`) stays as printed."""
    label = stems(row["label"])
    return f"{row['section']} {row['label']}".strip() if label and not label - GENERIC and (captioned or label <= said) \
        else row["label"]


def _year_column(question: str, value: float, cells: dict[tuple[str, int], list[dict]], asked: set[str]) -> str:
    """Where a year answers "in which year was X the largest" from a table (`cells`: each cited page's
    rows, as `page_cells` gives them): the year's column in a row the
    question names whose value there is the row's largest (smallest, when it asks that; any, when neither;
    when neither and no row of the page names the question, any row of a table whose caption does);
    "" when no row shows it."""
    year = f"{value:.0f}" if value.is_integer() else ""
    extreme = max if _LARGEST.search(question) else min if _SMALLEST.search(question) else None
    percent = asks_percent(question)
    for place, rows in cells.items():
        captioned = extreme is None and not any(stems(row["label"]) & asked for row in rows)
        for row in rows:
            by_year = {year: number for year, (number, _) in _by_year(row, percent).items()}
            if year in by_year and stems(row["section"] if captioned else row["label"]) & asked \
                    and (extreme is None or by_year[year] == extreme(by_year.values())):
                return f"{year} · {row['label']} · p.{place[1]}"
    return ""


def _table_years(values: Sequence[float], cells: dict[tuple[str, int], list[dict]]) -> str:
    """Where years answer "Which years does the table show?": a cited table whose columns are of those years, all of
    them and no other; "" when none is."""
    stated = {f"{value:.0f}" for value in values}
    for place, section, table in _tables(cells):
        if stated == {year for row in table for header, _, number in row["cells"] if number is not None
                      for year in YEAR.findall(header)}:
            return f"{', '.join(sorted(stated, reverse=True))} · {section[:60]} · p.{place[1]}"
    return ""


def _extreme_row(question: str, answer: str, cells: dict[tuple[str, int], list[dict]]) -> str:
    """Where a name answers "In which segment was X the largest?" from a table of a cited page whose caption,
    rows or columns name a word of the question the answer does not: the answer is a row label, and in the
    columns the question asks about (of its years, when it names some; of amounts, or percentages when it asks
    for one; those whose headers name most of the question, or a "Total" column when it asks about a total) its
    row holds the largest (smallest) value of the table's rows, totals aside, with no tie; or the answer is a
    column header, and in the row the question names its cell is the largest (smallest) of that row's, totals
    aside. A list of one name ("Wages and salaries, Wages and salaries" for two years "respectively") is that
    name. "" when no table shows it."""
    most, least = bool(_LARGEST.search(question)), bool(_SMALLEST.search(question))
    wanted = {tuple(words.words(item)) for item in answer.strip(" .").split(",")}
    if most == least or _THAN.search(question) or len(wanted) != 1 or not next(iter(wanted)) or numbers_in(answer):
        return ""  # "more than 10% of revenue" is a threshold, "higher than Consumer's" a comparison: no extreme
    wanted, pick = next(iter(wanted)), max if most else min
    years, percent, said = question_years(question), asks_percent(question), stems(question)
    asked = question_stems(question) - stems(answer)

    def winner(by_name: dict[str, float]) -> str:  # the one name holding the extreme, totals aside
        by_name = {name: number for name, number in by_name.items() if stems(name) - GENERIC}
        best = [name for name, number in by_name.items() if number == pick(by_name.values())] if len(by_name) >= 2 else []
        return best[0] if len(best) == 1 else ""

    for place, table in _tables_about(cells, asked):
        headers = list(dict.fromkeys(header for row in table for header, _, number in row["cells"] if number is not None))
        columns = [header for header in headers if bool(PERCENT_HEADER.search(header)) == percent
                   and (set(YEAR.findall(header)) & years if years else True)]
        fit = max((len(stems(header) & said) for header in columns), default=0)
        totals = [header for header in columns if "total" in said & stems(header)]  # a "Total" column is the total asked
        columns = totals or [header for header in columns if len(stems(header) & said) == fit]
        winners = {winner({row["label"]: number for row in table for header, _, number in row["cells"]
                           if header == column and number is not None}) for column in columns}
        if len(winners) == 1 and tuple(words.words(found := winners.pop())) == wanted:
            return f"{found} · {', '.join(columns)} · p.{place[1]}"
        for row in table:  # the answer among the columns of a row the question names
            if stems(row["label"]) and stems(row["label"]) <= said and (set(YEAR.findall(row["label"])) <= years if years else True):
                found = winner({header: number for header, _, number in row["cells"] if number is not None})
                if found and tuple(words.words(found)) == wanted:
                    return f"{found} · {row['label']} · p.{place[1]}"
    return ""


def _tables_about(cells: dict[tuple[str, int], list[dict]], asked: set[str]) -> Iterator[tuple[tuple[str, int], list[dict]]]:
    """Each cited page's tables whose caption, groups, row labels or columns name a word of `asked` (`_table_words`),
    with their pages."""
    for place, section, table in _tables(cells):
        if _table_words(section, table) & asked:
            yield place, table


def _tables(cells: dict[tuple[str, int], list[dict]]) -> Iterator[tuple[tuple[str, int], str, list[dict]]]:
    """Each cited page's tables (its rows under one caption), with their pages and captions."""
    for place, rows in cells.items():
        for section in dict.fromkeys(row["section"] for row in rows):
            yield place, section, [row for row in rows if row["section"] == section]


def _table_words(section: str, table: list[dict], items: Sequence[tuple[str, ...]] = ()) -> set[str]:
    """The stems of a table's caption, its rows' groups, its row labels but those of `items` (a label's words) and
    its columns."""
    return stems(" ".join([section, *(row.get("group", "") for row in table),
                           *(row["label"] for row in table if tuple(words.words(row["label"])) not in items),
                           *(header for row in table for header, _, _ in row["cells"])]))


def _by_year(row: dict, percent: bool) -> dict[str, tuple[float, str]]:
    """A row's (value, as printed) in each year its columns name: a year's amount, not its "%" of the total beside
    it (or its percentage, when `percent`)."""
    dated = [(header, printed, number) for header, printed, number in row["cells"] if number is not None and YEAR.search(header)]
    kind = [cell for cell in dated if bool(PERCENT_HEADER.search(cell[0])) == percent] or dated
    found: dict[str, tuple[float, str]] = {}
    for header, printed, number in kind:
        for year in YEAR.findall(header):
            found.setdefault(year, (number, printed))
    return found


def _years_counted(question: str, value: float, cells: dict[tuple[str, int], list[dict]]) -> str:
    """Where a count answers "How many years did X exceed $5,000 million?" from a table: the row the question
    names has `value` years beyond the threshold (`_years_beyond`); "" when no row shows it."""
    if not value.is_integer():
        return ""
    return next((f"{value:.0f} of {counted} years ({', '.join(sorted(beyond))}) · {where}"
                 for beyond, counted, where in _years_beyond(question, cells) if len(beyond) == value), "")


def _years_beyond(question: str, cells: dict[tuple[str, int], list[dict]]) -> Iterator[tuple[set[str], int, str]]:
    """(the years beyond the question's threshold, the years compared, where) of each row the question names
    (every word of its label in the question; the longest) in a table of two or more years (those the question
    names, if it names some)."""
    if not (beyond := _beyond(limit := _THRESHOLD.search(question))):
        return
    years, asked = question_years(question), stems(question)
    for place, rows in cells.items():
        named = [row for row in rows if (label := stems(row["label"])) and label <= asked]
        longest = max((len(stems(row["label"])) for row in named), default=0)
        for row in (row for row in named if len(stems(row["label"])) == longest):
            amounts = {year: cell for year, cell in _by_year(row, "%" in limit["amount"]).items()
                       if not years or year in years}
            if len(amounts) >= 2:
                yield {year for year, cell in amounts.items() if beyond(*cell)}, len(amounts), f"{row['label']} · p.{place[1]}"


def _beyond(limit: re.Match | None) -> Callable[[float, str], bool] | None:
    """Whether a cell (its value, as printed) is beyond a question's threshold (`_THRESHOLD`'s match: "exceed
    $5,000 million"): at the scale its table declares ("in millions": 39,005 is 39,005e6) against the threshold's
    amount, else as printed against the threshold's face value ("$35,000 million" of a table that declares no
    scale is 35,000); None when there is no threshold."""
    bounds = (numbers_in(limit["amount"]), numbers_in(_SCALE_WORD.sub("", limit["amount"]))) if limit else ([], [])
    if not all(bounds):
        return None
    (scaled, *_), (face, *_) = bounds

    def beyond(number: float, printed: str) -> bool:
        amount, bound = (number, scaled) if number != (as_printed := next(iter(numbers_in(printed)), number)) else (as_printed, face)
        return amount > bound if limit["above"] else amount < bound
    return beyond


def _rows_counted(question: str, value: float, cells: dict[tuple[str, int], list[dict]]) -> str:
    """Where a count answers "How many components of deferred tax assets exceeded $50,000 thousand in 2019?" or
    "How many components are there under deferred tax assets?" from a table: `value` of the items of the group
    the question names (every word of it in the question), else of a table about the question, are beyond its
    threshold in the year it names (or its one year), or there are `value` items when it sets no threshold. The
    items are the rows above the first total: "Total ..." or a row naming the whole group ("Gross deferred tax
    assets"). "" when no table shows it."""
    if not value.is_integer() or value < 1:
        return ""
    limit = _THRESHOLD.search(question)
    beyond, years, asked = _beyond(limit), question_years(question), stems(question)
    for place, table in _tables_about(cells, question_stems(question)):
        groups = [group for group in dict.fromkeys(row.get("group", "") for row in table) if stems(group) and stems(group) <= asked]
        for group in groups or [None]:
            items = []
            for row in (row for row in table if group is None or row.get("group", "") == group):
                label = stems(row["label"])
                if label <= GENERIC or words.words(row["label"])[:1] == ["total"] or (group and stems(group) <= label):
                    break
                items.append(row)
            if beyond:
                cells_asked = [[cell for year, cell in _by_year(row, "%" in limit["amount"]).items() if not years or year in years]
                               for row in items]
                if not items or any(len(found) != 1 for found in cells_asked):
                    continue  # a row with no cell, or several, in the year asked: nothing to count
                counted = sum(beyond(*found[0]) for found in cells_asked)
            else:
                counted = len(items)
            if counted == value:
                return f"{value:.0f} of {len(items)} rows{' under ' + group if group else ''} · p.{place[1]}"
    return ""


def _cell_score(label: str, header: str, asked: set[str], years: set[str], excused: set[str]) -> tuple[int, int]:
    """(question words and years the cell's label and column name, less years it names that the question
    does not; minus the label's other words but the `excused` ones: the generic words the question says,
    "Total" being the question's when it asks for a total, and those of a caption the label was read with):
    the page's best cell for the question has the largest."""
    cell_years = set(YEAR.findall(header))
    named = len(stems(f"{label} {header}") & asked) + len(cell_years & years) - (len(cell_years - years) if years else 0)
    return named, -len(stems(label) - asked - excused)


def _distinct_headers(headers: list[str]) -> set[str]:
    """The words that tell a page's columns apart (in some headers, not all: "Domestic", "International")."""
    sets = [stems(header) for header in dict.fromkeys(headers) if header]
    return set().union(*sets) - set.intersection(*sets) if len(sets) > 1 else set()


def _years_fit(header: str, years: set[str]) -> bool:
    """The column's years are among the question's (when both name years)."""
    named = set(YEAR.findall(header))
    return not (years and named) or named <= years


def _count_unit(question: str) -> str:
    """The unit a count asks for ("how many days" → "days"), or ""; "times" is no unit printed with its number."""
    match = _COUNT.search(question)
    word = match.group(1).lower() if match else ""
    return next(iter(stems(word)), "") if word and word not in ("times", "of") else ""


_LIST_SEPARATOR = re.compile(r"\s*(?:[;,]\s*(?:and\s+)?|\s+and\s+)", re.IGNORECASE)


def list_items(answer: str) -> list[str]:
    """The items of an answer that lists two or more values, none a number ("Billed, Unbilled", "UK, USA and
    Germany"); [] for any other answer."""
    items = [item.strip(" .") for item in _LIST_SEPARATOR.split(_YES_NO_START.sub("", answer))]
    items = [item for item in items if item]
    return items if len(items) >= 2 and not any(numbers_in(item) for item in items) else []


def _ground_text(question: str, answer: str, texts: dict[tuple[str, int], str], bridges: Sequence[str],
                 cells: dict[tuple[str, int], list[dict]]) -> Grounding:
    """`_ground_value`; an answer that lists values (`list_items`) and does not ground whole, as printed,
    grounds as the rows of one table that names the question (`_listed_rows`; which rows are the largest is
    `_extreme_row`'s to say), else as its least grounded item: a page prints a list's items in a sentence
    with "and"."""
    whole = _ground_value(question, answer, texts, bridges)
    if whole.level != GROUNDED and "table" in stems(question) and (caption := _caption(answer, texts, cells)):
        return Grounding(GROUNDED, shown=[caption], pages={place: GROUNDED for place in texts})
    if whole.level == GROUNDED or not (items := list_items(answer)):
        return whole
    asked = _unquoted(question, cells)
    if not (_LARGEST.search(asked) or _SMALLEST.search(asked)) and (listed := _listed_rows(question, items, cells)):
        return Grounding(GROUNDED, shown=listed, pages={place: GROUNDED for place in texts})
    each = [_ground_value(question, item, texts, bridges, item=True) for item in items]
    worst = min(each, key=lambda grounding: LEVELS.index(grounding.level))
    if LEVELS.index(worst.level) <= LEVELS.index(whole.level):
        return whole
    pages: dict[tuple[str, int], str] = {}
    for grounding in each:
        for place, level in grounding.pages.items():
            pages[place] = max(pages.get(place, UNSUPPORTED), level, key=LEVELS.index)
    return Grounding(worst.level, worst.reason, shown=[shown for grounding in each for shown in grounding.shown],
                     pages=pages)


# a table's scale line: "(In thousands, except per share data)"
_SCALE_LINE = re.compile(rf"\W*{_IN_SCALE.pattern}[^:]*$", re.IGNORECASE)
_INTRO_WORDS = stems("follows following table below")


def _caption(answer: str, texts: dict[tuple[str, int], str], cells: dict[tuple[str, int], list[dict]]) -> str:
    """What a question about "the table" ("What does the table show?", "What are the units used in the table?")
    is answered by: the words of a cited table's caption (a section its rows are under, the sentence that
    introduces it less "follows" or "table", or its scale line "(in thousands)"), all of them; "" when none."""
    said = stems(answer)
    for place, text in texts.items():
        captions = {row["section"] for row in cells[place]} | set(_introductions(text)) | {
            line for line in sentences(text, lines=True)
            if COLUMN_GAP not in line and _SCALE_LINE.fullmatch(line.strip("() "))}
        for caption in captions:
            if said and said == stems(caption) - _INTRO_WORDS:
                return f"{caption} · p.{place[1]}"
    return ""


def _unquoted(question: str, cells: dict[tuple[str, int], list[dict]]) -> str:
    """The question without the row labels and groups of the cited pages' tables it quotes: "more" in "What
    items does amounts falling due after more than one year consist of?" is a word of the group it names, not
    a comparison it asks."""
    for name in sorted({name for rows in cells.values() for row in rows for name in (row["label"], row.get("group", ""))
                        if len(words.words(name)) >= 2}, key=len, reverse=True):
        question = _quoted(name).sub(" ", question)
    return question


def _quoted(name: str) -> re.Pattern:
    """`name`'s words (one or more) as a phrase of a question, whatever their case and the marks between them."""
    return re.compile(r"(?<!\w)" + r"\W+".join(map(re.escape, words.words(name))) + r"(?!\w)", re.IGNORECASE)


def _listed_rows(question: str, items: list[str], cells: dict[tuple[str, int], list[dict]]) -> list[str]:
    """Where a list answer is the rows of one table ("Billed, Unbilled" for "What types of accounts receivable
    are there?"): each item a whole row label of one table of a cited page (its rows under one caption) whose
    caption, other rows or columns name a word of the question, and of the group the question names when it names
    one ("What does amounts falling due after more than one year consist of?"); [] when none. An item may be a
    label with "and" in it ("Debtors, Cash and cash equivalents")."""
    for place, section, table in _tables(cells):
        named = {group for group in {row.get("group", "") for row in table}
                 if words.words(group) and _quoted(group).search(question)}
        labels = {tuple(words.words(row["label"])): row["label"] for row in table if not named or row["group"] in named}
        if (wanted := _labelled(items, labels)) and _table_words(section, table, wanted) & question_stems(question):
            return [f"{labels[item]} · {place[0]} · p.{place[1]}" for item in wanted]
    return []


def _labelled(items: list[str], labels: dict[tuple[str, ...], str]) -> list[tuple[str, ...]]:
    """The items as whole row labels (`labels`, by their words), items split at "and" joined again where the
    whole is a label ("Cash", "cash equivalents": "Cash and cash equivalents"); [] when one is no label."""
    wanted, at = [], 0
    while at < len(items):
        for end in range(len(items), at, -1):
            if (joined := tuple(words.words(" and ".join(items[at:end])))) in labels:
                wanted.append(joined)
                at = end
                break
        else:
            return []
    return wanted


def _unasked_number(token: str, question: str) -> bool:
    """`token` is a number ("2018", "2,000") that the question does not print."""
    printed = r"(?<![\d.,])" + re.escape(token.strip(".,")) + r"(?!\d|[.,]\d)"
    return bool(numbers_in(token)) and not re.search(printed, question)


def _ground_value(question: str, answer: str, texts: dict[tuple[str, int], str], bridges: Sequence[str],
                  item: bool = False) -> Grounding:
    """A text value: the words the answer adds to the question, printed together on a cited page about
    what the question names (`_subject_pages`), in the sentence of that page that names most of what the question,
    or a bridge to it, names (a table's line aside, where the page has prose; with the page's title: "Maximum
    Overdrive" names the film a bridge reached; a bridge the answer names does not name what the question asks:
    the hops' "Part II" leads to no answer "Part II");
    not a company's legal form, nor a fuller name of what the question
    names, of all its words or two of them ("Audrey Mae Sheppard Williams" for "Who was Audrey Williams
    pregnant with?", "Direct Action Committee" for a question about "Act of War; Direct Action"); of the type
    the question's gap asks for (`gap_type`; `item`: the answer is an item of a list)."""
    asked = stems(question)
    tokens = _TOKEN.findall(_YES_NO_START.sub("", answer))
    generic = GENERIC if len(tokens) == 1 else set()  # a generic word alone ("Total", "Company") says nothing
    new = [i for i, token in enumerate(tokens) if (stems(token) - asked - generic or _unasked_number(token, question))
           and token.strip(".,").lower() not in _LEGAL_FORMS]  # a year the question does not print is a value too
    answered = stems(answer) - asked
    asked = asked | stems(" ".join(bridge for bridge in bridges if not stems(bridge) & answered))
    if (options := offered(question)) and not any(stems(option) & stems(answer) for option in options):
        return Grounding(UNSUPPORTED, f"the question offers {options[0]!r} or {options[1]!r}, the answer is neither")
    if not new:
        return Grounding(UNSUPPORTED, "the answer adds nothing to the question")
    core = tokens[new[0]:new[-1] + 1]
    if len(core) > MAX_VALUE_WORDS and not (asks_reason(question) or _ASKS_PURPOSE.search(question)
                                            or _ASKS_DEFINITION.match(question)):
        return Grounding(ON_PAGE, f"the answer is a passage of {len(core)} words, not the value the question asks for")
    said = [stems(name) for name in names(answer)] or [stems(" ".join(core))]
    if any(named and name - named and (named < name or len(named & name) >= 2)
           for name in said for named in map(stems, names(question))):
        return Grounding(ON_PAGE, f"{' '.join(core)!r} names what the question names, not what it asks")
    # a name is printed whole, unless the question's words go on with it: "ABC" is not "ABC Family", but the
    # "Lakota and Dakota Sioux" of "named after which Native American tribes?" are "... Sioux Native American tribes"
    whole = (r"(?!\s+(?!(?:" + "|".join(map(re.escape, re.findall(r"\w+", question))) + r")\b)(?-i:[A-Z]))"
             if core == tokens and core[-1][:1].isupper() else "")
    phrase = re.compile(r"(?<!\w)" + r"\W+".join(re.escape(t.strip(".,")) for t in core if t.strip(".,")) + r"(?!\w)" + whole,
                        re.IGNORECASE)
    result = Grounding(UNSUPPORTED, f"{' '.join(core)!r} is printed on no cited page")
    subject_pages = tied_pages(question, answer, texts, bridges)
    for place, text in texts.items():
        if place not in subject_pages:
            if phrase.search(text):
                result.pages[place] = ON_PAGE
                if result.level == UNSUPPORTED:
                    result.level = ON_PAGE
                    result.reason = f"{' '.join(core)!r} is printed on {place[0]}, which no cited page ties to what the question names"
            continue
        # a sentence whose subject is a pronoun goes on about the page's subject: "It was released as the first single"
        # of the page "Falling Away from Me" is read as "Falling Away from Me was released as the first single"
        printed = sentences(text, lines=True)
        resolved = [_PRONOUN.sub(lambda match: _subject(place[0], match), sentence, count=1) for sentence in printed]
        title = stems(place[0])
        about = [(stems(sentence) | title) & asked for sentence in resolved]
        # a sentence opening with an anaphor ("The increase was due to ...", "This reflects ...") goes on about the
        # one before it
        about = [named | (about[at - 1] if at and _ANAPHOR.match(sentence) else set()) for at, (named, sentence)
                 in enumerate(zip(about, printed))]
        top = _most_named(list(zip(printed, about)))
        prose = any(COLUMN_GAP not in line and not _heading(line) for line in printed)  # a heading grounds nothing
        for sentence, named, as_printed in zip(resolved, about, printed):
            if found := phrase.search(sentence):
                level = GROUNDED if named and (len(named) >= top or _beside_gap(question, sentence, found)) \
                    and not (prose and _heading(as_printed)) else ON_PAGE
                if level == GROUNDED and (miss := gap_type(question, found[0], sentence, found.start(), found.end(), texts,
                                                               _YES_NO_START.sub("", answer), item)):
                    level = ON_PAGE
                    if result.level == UNSUPPORTED:
                        result.level, result.reason = ON_PAGE, miss
                    result.pages[place] = max(result.pages.get(place, UNSUPPORTED), level, key=LEVELS.index)
                    continue
                result.pages[place] = max(result.pages.get(place, UNSUPPORTED), level, key=LEVELS.index)
                if LEVELS.index(level) > LEVELS.index(result.level):
                    result.level, result.shown = level, [f"{' '.join(core)} · {place[0]} · p.{place[1]}"]
                    result.sentence = " ".join(as_printed.split())
                    result.reason = "" if level == GROUNDED else (
                        f"{' '.join(core)!r} is printed, but not in the sentence of its page that names most of the question")
    return result


# What a text answer must be to fill the question's gap (chosen reading the HotpotQA train split's grounded
# wrong names: "Europe" for "founded by who?", "American" for "the mayor of what city?", "Solo" of "Solo
# pistols" for "what company?"): the wh-word's type, told by general cues of the sentence that prints it.
_ASKS_WHO = re.compile(r"^\s*(?:who|whom)\b|\bwhom?\s*\??\s*$", re.IGNORECASE)  # not a relative "the singer who is"
_PLACE_KINDS = (r"city|cities|towns?|country|countries|states?|county|counties|provinces?|regions?|villages?|places?|"
                r"locations?|continents?|islands?")
_ASKS_WHERE = re.compile(rf"^\s*where\b|\bwhere\s*\??\s*$|\b(?:what|which)\s+(?:\w+\s+)?(?P<kind>{_PLACE_KINDS})\b",
                         re.IGNORECASE)
# what a page calls a place ("a town in Norfolk County", "the capital of ...", "a commune in ...")
_PLACE = re.compile(rf"\b(?:{_PLACE_KINDS}|capital|municipality|commune|suburb|borough|district|neighbou?rhood|community|"
                    r"settlement|hamlet|metropolis|area|territory|prefecture|parish|port)\b", re.IGNORECASE)
# "when" (and "which century", "what period") asks for a time: a name that prints no number, month or word of
# time is none
# ("Type H Carrier Fighter" for "... first developed when?"; "World War II", "the Christmas season" are times)
_ASKS_WHEN = re.compile(r"^\W*when\b|\bwhen\s*\??\s*$|"
                        r"\b(?:what|which)\s+(?:\w+\s+)?(?P<kind>century|centuries|decades?|eras?|periods?)\b", re.IGNORECASE)
_RECURRING = re.compile(r"\b(?:annually|quarterly|monthly|weekly|daily|yearly|(?:each|every)\s+(?:year|quarter|month|week|day))\b",
                        re.IGNORECASE)  # a time that recurs: "tested annually"
_TIME = re.compile(rf"\d|\b(?:{'|'.join(MONTHS)}|centur(?:y|ies)|decades?|eras?|ages?|wars?|periods?|reigns?|dynast(?:y|ies)|"
                   r"seasons?|spring|summer|autumn|fall|winter|christmas|easter)\b", re.IGNORECASE)
_BEFORE_PLACE = {"in", "at", "from", "near", "of", "outside", "across", "to", "within", "into", "throughout", "around"}
_PERSON_CUES = re.compile(r"\b(?:born|he|she|his|her|died)\b", re.IGNORECASE)
_WORD = re.compile(r"[\w'’-]+")
_ANAPHOR = re.compile(r"\W*(?:this|these|that|those|such|the\s+(?:increase|decrease|change|decline|rise|growth|"
                      r"improvement|reduction|difference))\b", re.IGNORECASE)
_PRONOUN = re.compile(r"^\W*(?:(it|he|she|they)|its|his|her|their)\b", re.IGNORECASE)  # a sentence's subject told before


_WH = re.compile(r"\b(?:who|whom|what|which|where|when)\b", re.IGNORECASE)
GAP_WORDS = 2  # content words of the question just before its wh-word ...
NEAR_WORDS = 4  # ... printed this near the answer


def _beside_gap(question: str, sentence: str, found: re.Match) -> bool:
    """The sentence prints near the answer a word the question puts before its gap (its wh-word), not a name
    it names: "created by TV executive Reg Watson" for "... created by who?", "headquartered in Canton" for
    "headquartered in what city?", even where another sentence of the page names more of the question."""
    wh = _WH.search(question)
    if wh is None:
        return False
    content = lambda text: [word for word in _WORD.findall(text) if word.lower() not in STOPWORDS]
    gap = stems(" ".join(content(question[:wh.start()])[-GAP_WORDS:])) - stems(" ".join(names(question)))
    near = stems(" ".join(_WORD.findall(sentence[:found.start()])[-NEAR_WORDS:] + _WORD.findall(sentence[found.end():])[:NEAR_WORDS]))
    return bool(gap & near)


def _subject(title: str, pronoun: re.Match) -> str:
    """The page's subject (its title, less a "(film)" that tells it from another) for the pronoun a sentence starts with."""
    name = title_name(title)
    return name if pronoun[1] else f"{name}'s"


def gap_type(question: str, answer: str, sentence: str, start: int, end: int, texts: dict[tuple[str, int], str],
             whole: str = "", item: bool = False) -> str:
    """Why the `answer` printed at sentence[start:end] does not name what the question's gap asks for ("" when it may):
    one word that modifies the next ("Solo pistols", "an American consultant", "Penn's recording"), unless the next
    is the question's own ("entertainment category"), is part of another name, and so is one printed only inside a
    longer quoted title; a name asked by its kind ("Which heavy metal band", `asked_kind`; a name, not a date, place
    or number) is not one a cited page's sentence, opening with it, calls another kind (by the head of what it calls
    it: "was an English cricketer", "a sports show host" is no show), nor, when no page calls it anything, one
    printed in a clause of the sentence (between its commas, colons or brackets) without the kind's words ("a band
    from Copenhagen, formed by vocalist King Diamond"); "who" asks for a person: a name whose own page, when cited,
    says born, he or she (no network's "It was founded by ..."), else one of two capitalised words (the whole
    answer's), not a name printed after "in", "at" or "from"; "where" (what city, which countries) asks for a place:
    a name printed after such a preposition (within the three words before the whole answer: "the Chairman of the
    Board" is not printed after "of") or whose own page calls it a place, and for "what city" not a name a cited
    page calls no kind of place ("an American restaurant holding company"); "when" asks for a time, which a name
    printing no number, month or word of time is not (for "which century", no answer printing none is). `whole`: the
    whole answer, when `answer` is the part of it the question does not say ("19th" of "19th century"); `item`: it
    is one item of a list answer, whose kind is the list's."""
    tokens = _WORD.findall(whole or answer)
    after = _WORD.findall(sentence[end:end + 40])
    preceding = [word.lower() for word in _WORD.findall(sentence[max(0, start - 80):start])]
    at = whole.lower().find(answer.lower()) if whole else -1
    lead = [word.lower() for word in _WORD.findall(whole[:at])] if at > 0 else []  # the answer's own words before `answer`
    before = (preceding[:-len(lead)] if lead and preceding[-len(lead):] == lead else preceding)[-3:]
    if len(_WORD.findall(whole or answer)) == 1 and (re.search(r"['’]s?$", answer.strip()) or
                             after and after[0][:1].islower() and after[0].lower() not in STOPWORDS
                             and not stems(after[0]) & stems(question)  # "entertainment category" for "which category"
                             and not re.match(r"\s*[,.;:()\"]", sentence[end:])):
        return f"{answer!r} is printed as a part of another name"
    printed = re.finditer(re.escape(answer), sentence, re.IGNORECASE)  # a name may be printed in a title and outside it
    if all(_inside_title(sentence, *found.span(), whole) for found in printed):
        return f"{answer!r} is printed as a part of a longer quoted title"
    where = _ASKS_WHERE.search(question)
    if (kind := asked_kind(question)) and _is_name(whole or answer) and not item and not where:
        wanted = _terms(kind)
        if called := _defined_as(whole or answer, texts):
            if not wanted & _terms(_heads(called)):
                return f"the question asks for a {kind}, a cited page calls {answer!r} {called}"
        elif not any(wanted & _terms(_described(sentence, *found.span(), whole or answer))
                     for found in re.finditer(re.escape(answer), sentence, re.IGNORECASE)):
            return f"the question asks for a {kind}, no cited page says {answer!r} is one"
    if (when := _ASKS_WHEN.search(question)) and (when["kind"] or _is_name(whole or answer)) \
            and not _TIME.search(whole or answer):
        return f"the question asks when, {answer!r} names no time"
    own = " ".join(text for place, text in texts.items() if place[0].lower().startswith(answer.lower().strip(" .")))
    if _ASKS_WHO.search(question):
        capitals = [token for token in tokens if token[:1].isupper()]
        if before and before[-1] in _BEFORE_PLACE - {"of", "to"} \
                or not (len(capitals) >= 2 and not own or _PERSON_CUES.search(own)):
            return f"the question asks who, {answer!r} is printed as no person's name"
    if where and where["kind"] and _is_name(whole or answer) and not item \
            and (called := _defined_as(whole or answer, texts)) and not _PLACE.search(called):
        return f"the question asks for a {where['kind'].lower()}, a cited page calls {answer!r} {called}"
    if where and not set(before) & _BEFORE_PLACE \
            and not re.search(r"\b(?:city|town|country|state|capital|village|located|region)\b", own, re.IGNORECASE):
        return f"the question asks where, {answer!r} is printed as no place"
    return ""


_QUOTES = "\"“”"
_KIND = re.compile(r"\b(?:(?:what|which)\s+(?:(?:is|was|are|were)\s+(?:the|a|an)\s+(?:name\s+of\s+(?:the|a|an)\s+)?)?|"
                   r"^\W*who\s+(?:is|was|are|were)\s+(?:the|a|an)\s+)(?P<rest>.*)", re.IGNORECASE)
_DEFINITION = re.compile(r"^\s*[\"”’']?\s*(?:\([^)]*\)\s*)?,?\s*(?:is|was|are|were)\s+(?:a|an|the|one\s+of\s+the)\s+(?P<called>.+?)"
                         r"(?=[.;:()]|\s+(?:who|whom|which|that|born|of|for|in|from|at|with|by|on)\b|$)", re.IGNORECASE)


def asked_kind(question: str) -> str:
    """The kind of thing a question's gap names ("song" of "What song debuted ...?", "heavy metal band" of "Which
    heavy metal band ...?", "DJ" of "Who was the DJ of ...?"): the words after its "what" or "which" (or an opening
    "Who was the") up to a function word, a verb among them ("song debuted"); "" when a function word follows it
    ("What did ...?"), for "Who wrote ...?", for "what name" (any name) and when it offers two names."""
    match = _KIND.search(question)
    if match is None or offered(question):
        return ""
    kind = []
    for word in _WORD.findall(match["rest"]):
        if word.lower() in STOPWORDS:
            break
        kind.append(word)
    return "" if [word.lower() for word in kind] in (["name"], ["names"]) else " ".join(kind)  # any name


def _defined_as(answer: str, texts: dict[tuple[str, int], str]) -> str:
    """What a sentence of the cited pages that opens with the answer, as its subject, calls it ("English
    cricketer" of "Richard Vincent (1846 – 1924) was an English cricketer born in London"), or ""."""
    name = re.compile(r"(?<!\w)" + re.escape(answer.strip(" .")) + r"(?!\w)")
    for text in texts.values():
        for sentence in sentences(text, lines=True):
            found = name.search(sentence)
            if found is None or re.search(r"[a-z]", re.sub(r"\b(?:[A-Z]\S*|of|the|de|von|van)\b", "", sentence[:found.start()])):
                continue  # not printed, or another word than a name precedes it: it is not the sentence's subject
            rest = re.sub(r"^(?:\s*[\"“”']?\s*[A-Z][\w.'’-]*)*", "", sentence[found.end():])  # the rest of a fuller name
            if match := _DEFINITION.match(rest):
                return match["called"].strip()
    return ""


_PARTICIPLE = re.compile(r"(?:ed|ing)$")
_EXAMPLES = re.compile(r"\s*(?:such as|including|like|e\.g\.|namely|notably|especially)\b", re.IGNORECASE)


def _heads(called: str) -> str:
    """The words of what a page calls a thing that are no modifier of the word after them: "host", not "show",
    of "a sports show host"; "film" of "comedy film produced" (a participle or function word after a word
    leaves it the head)."""
    found = _WORD.findall(called)
    return " ".join(word for word, after in zip(found, found[1:] + [""])
                    if not (after[:1].islower() and after not in STOPWORDS and not _PARTICIPLE.search(after)))


def _described(sentence: str, start: int, end: int, answer: str) -> str:
    """What the sentence says of the answer printed at sentence[start:end]: the clause that prints it (between the
    punctuation around it, with the clause before it when it opens a list of examples: "numerous films, such as
    ..."), less the names of two words or more it prints besides (the kind in "awarded the Medal of Honor" names
    that medal, not the "United States Navy" beside it); when that clause prints the answer alone, the next one, as
    printed ("JOSHUA T. DUCKWORTH, Vice President of Treasury")."""
    marks = ",;:()"
    before = lambda at: max(sentence.rfind(mark, 0, at) for mark in marks)  # the clause's mark before `at`, or -1
    after = lambda at: min((found for found in (sentence.find(mark, at) for mark in marks) if found >= 0),
                           default=len(sentence))  # the clause's mark from `at` on, or the sentence's end
    left = before(start)
    if _EXAMPLES.match(sentence, left + 1) and left > 0:
        left = before(left)
    right = after(end)
    if not (sentence[left + 1:start] + sentence[end:right]).strip(" \"“”'"):
        return sentence[right + 1:after(right + 1)]
    clause = sentence[left + 1:right]
    for name in names(clause):
        if " " in name and not stems(answer) & stems(name):
            clause = clause.replace(name, " ")
    return clause


def _is_name(text: str) -> bool:
    """A name: its words capitalised, function words aside, and no number ("Wings and the Woman"; not a date)."""
    content = [word for word in _WORD.findall(text) if word.lower() not in STOPWORDS]
    return bool(content) and all(word[:1].isupper() for word in content) and not re.search(r"\d", text)


def _terms(text: str) -> set[str]:
    """A kind's words as a definition may print them: loose stems ("films" is "film") and short words ("DJ", of
    "DJ'ed")."""
    return words.stems(text, loose=True) | {word for word in words.WORD_PART.findall(text.lower()) if word not in STOPWORDS}


def _inside_title(sentence: str, start: int, end: int, whole: str = "") -> bool:
    """The answer printed at sentence[start:end] (with the `whole` answer it is a part of) is inside a quoted
    title that goes on past it ('"Korn's Groovy Pirate Ghost Mystery"')."""
    if whole:
        start, end = next((found.span() for found in re.finditer(re.escape(whole.strip(" .")), sentence, re.IGNORECASE)
                           if found.start() <= start and end <= found.end()), (start, end))
    opened = sum(sentence[:start].count(quote) for quote in _QUOTES) % 2 == 1
    return opened and not re.match(rf"[\s,.!?]*[{_QUOTES}]", sentence[end:])


def tied_pages(question: str, answer: str, texts: dict[tuple[str, int], str], bridges: Sequence[str]) -> set[tuple[str, int]]:
    """The pages of `texts` about what the question names (`_subject_pages`; every page when the answer is
    one of the things it names)."""
    subjects = [name for name in (stems(name) - GENERIC for name in names(question)) if name]  # not "the Company"
    if any(name <= stems(answer) for name in subjects):  # the answer is a thing the question names
        subjects = []
    return _subject_pages(texts, subjects, bridges)


def _subject_pages(texts: dict[tuple[str, int], str], subjects: list[set[str]], bridges: Sequence[str]) -> set[tuple[str, int]]:
    """The cited pages about what the question names: those that (with their titles) name one of the
    question's names (`subjects`, each name's stems) or whose title is a bridge's (`linked`: the page a hop
    reached, not every page that prints the bridge), and those tied to one of these, one naming the other's
    title (the town's page names "Maximum Overdrive", the song's page names "Laie"; a one-word name only a
    title it starts: "Drew" is not "The Drew Pearson Show"); every page when the question names nothing."""
    if not subjects:
        return set(texts)
    words = {place: stems(text) | stems(place[0]) for place, text in texts.items()}
    naming = {place for place in texts if any(name <= words[place] for name in subjects)
              or any(linked(bridge, place[0]) for bridge in bridges)}
    titles = {place: names(text) for place, text in texts.items()}

    def names_title(place: tuple[str, int], other: tuple[str, int]) -> bool:  # one word names a title it starts
        return any(linked(name, other[0]) and (" " in name or other[0].lower().startswith(name.lower()))
                   for name in titles[place])

    return naming | {place for place in texts
                     if any(other != place and (names_title(other, place) or names_title(place, other)) for other in naming)}


def _verdict(texts: dict[tuple[str, int], str]) -> Grounding:
    """A yes or no that code did not compute is `on_page` at most: what a page says grounds a claim's words,
    not its verdict, so the opposite verdict would ground as well."""
    return Grounding(ON_PAGE, "a yes or no that code did not compute: a page grounds the claim, not the verdict",
                     pages={place: ON_PAGE for place in texts})


def _heading(line: str) -> bool:
    """A heading: a line of two or more words that names topics, every word capitalised ("Cost of Revenue, Gross
    Profit and Gross Margin"), not a sentence that states something of them."""
    return len(_WORD.findall(line)) >= 2 and _is_name(line) and not line.rstrip().endswith(".")


def _most_named(lines: list[tuple[str, set[str]]]) -> int:
    """How many of the question's words the page's line (its text, the words it names) naming most of them names;
    a table's line (its cells apart by the column gap) sets no bar unless the page has no other."""
    return max((len(named) for line, named in lines if COLUMN_GAP not in line), default=0) \
        or max((len(named) for _, named in lines), default=0)


def _figured_verdict(question: str, answer: str, pages: Sequence[tuple[str, int]], texts: dict[tuple[str, int], str],
                     cells: dict[tuple[str, int], list[dict]], bridges: Sequence[str]) -> Grounding | None:
    """A reader's yes or no to whether a figure rose, fell or changed between two periods, stated with the two
    figures it rests on ("Yes, net earnings as a percent of sales increased from 20% in Q2 of FY2022 to 20.1%
    in Q2 of FY2023."): `_figured_change`, the verdict agreeing with the figures' direction; None when it states
    no two figures of two periods, or the question asks no direction."""
    claim = asks_yes_no(question)
    direction = _DIRECTION.search(claim)
    asked = "change" if _CHANGE.search(claim) else direction.lastgroup if direction else ""
    if asked not in ("up", "down", "change"):
        return None
    return _figured_change(claim, question, answer, pages, texts, cells, bridges,
                           lambda delta: {"up": delta > 0, "down": delta < 0, "change": delta != 0}[asked]
                           == (_YES_NO_START.match(answer)[0].strip().lower() == "yes"))


def _stated_change(question: str, answer: str, pages: Sequence[tuple[str, int]], texts: dict[tuple[str, int], str],
                   cells: dict[tuple[str, int], list[dict]], bridges: Sequence[str]) -> Grounding | None:
    """A change stated by its two figures instead of computed ("The effective tax rate has changed from 20% in
    FY2021 to 23% in FY2022." for "How much has the effective tax rate changed between FY2021 and FY2022?"):
    `_figured_change`, a rise or fall the answer names agreeing with the figures; None when the question asks
    for no change or difference, or the answer states no two figures of two periods."""
    if not operations(question) & {"change", "difference"}:
        return None
    said = _DIRECTION.search(answer)
    return _figured_change(question, question, answer, pages, texts, cells, bridges,
                           lambda delta: said is None or said.lastgroup not in ("up", "down")
                           or (delta > 0) == (said.lastgroup == "up"))


def _figured_change(claim: str, question: str, answer: str, pages: Sequence[tuple[str, int]],
                    texts: dict[tuple[str, int], str], cells: dict[tuple[str, int], list[dict]], bridges: Sequence[str],
                    agrees: Callable[[float], bool]) -> Grounding | None:
    """An answer stating the two figures a change rests on, each with its period: grounded when each figure
    grounds as the question's metric in its own period's year (`_ground_number`), to the decimals the page
    prints (20.0 is not 20.1 rounded: the direction rests on the difference), what it says of them `agrees`
    with their difference (later less earlier), and any other number it states is their difference or
    percentage change; None when it states no two figures of two periods. The `claim`'s words for the change
    ("increase", "changed") are what it says of the metric, not the metric."""
    figures, others = stated_figures(answer)
    if len(figures) != 2 or figures[0].period == figures[1].period:
        return None
    earlier, later = sorted(figures, key=lambda figure: figure.period)
    if not agrees(later.value - earlier.value):
        return Grounding(UNSUPPORTED, f"the verdict disagrees with its figures: {earlier.printed} then {later.printed}")
    if changed := [printed for printed in others if not is_change(printed, figures)]:
        return Grounding(ON_PAGE, f"{changed[0]} is neither the figures' difference nor their percentage change")
    claimed = stems(" ".join(found[0] for found in itertools.chain(_DIRECTION.finditer(claim), _CHANGE.finditer(claim))))
    result = Grounding(GROUNDED, pages={place: ON_PAGE for place in texts})
    for figure in figures:
        asked_in = _asked(question, answer, bridges, {str(figure.period[0])}, True, "")
        asked_in = replace(asked_in, words=asked_in.words - claimed, said=asked_in.said - claimed, exact=True)
        grounding = _ground_values([figure.value], pages, texts, cells, asked_in)
        result.shown += grounding.shown
        for place, level in grounding.pages.items():
            result.pages[place] = max(result.pages.get(place, UNSUPPORTED), level, key=LEVELS.index)
        if LEVELS.index(grounding.level) < LEVELS.index(result.level):  # a verdict's own level, `on_page`, at least
            result.level, result.reason = max(grounding.level, ON_PAGE, key=LEVELS.index), grounding.reason
    return result


def _name_stems(doc_id: str, said: Sequence[str]) -> set[str]:
    """The stems of a document's id ("3M_2018_10K" → {"3m", "10k"}) and of a name among `said` that the id
    prints run together ("Best Buy" of "BESTBUY_2024Q2_10Q"): its company's name is on every line."""
    parts = {part.lower() for part in re.split(r"[\W_]+", doc_id)}
    glued = [name for name in said if re.sub(r"\W", "", name).lower() in parts]
    return stems(re.sub(r"[_-]", " ", doc_id)) | stems(" ".join(glued))


def _format(number: float) -> str:
    return f"{number:,.0f}" if number == int(number) and abs(number) >= 1000 else f"{number:g}"


def settle(status: str, answer: str, reason: str, grounding: Grounding, accept: str) -> tuple[str, str, str, str]:
    """(status, answer, reason, candidate): an answer grounded below `accept` is not stated as fact but
    kept as the unconfirmed candidate of a "fail" that says why."""
    if status != "answer" or at_least(grounding.level, accept):
        return status, answer, reason, ""
    return "fail", "", f"unconfirmed ({grounding.level}): {grounding.reason}", answer


def citation_levels(citations: list, grounding: Grounding) -> None:
    """Each citation's level: its page's, or on_page for a verified one the answer's values did not reach."""
    for citation in citations:
        citation.grounding = grounding.pages.get((citation.doc_id, citation.page),
                                                 ON_PAGE if citation.verified else UNSUPPORTED)


def check_accept(accept: str) -> str:
    """The lowest level stated as an answer: ValueError naming the levels for another."""
    if accept not in LEVELS:
        raise ValueError(f"accept={accept!r}: one of {', '.join(reversed(LEVELS))}")
    return accept
