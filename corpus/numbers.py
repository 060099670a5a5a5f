"""Numeric values as printed in filings, tables and answers.

One parser for the whole project: table cells, "Label: value" facts, citation checks and
answer-correctness metrics all read "$1,577", "(169,080)", "(3.2)%", "1.2bn" or "—" the same way.
Parentheses and minus signs (ASCII, "−", "–") make a number negative; a dash alone is "nil"
(no number). A scale word after the number ("million", "bn", "3.5k") multiplies it; without one,
a table's declared scale ("(In thousands)") does. Percentages are never scaled.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ferret.corpus.records import Value

_CURRENCIES = {"US$": "USD", "$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "HK$": "HKD", "NZ$": "NZD", "A$": "AUD",
               "C$": "CAD", "R$": "BRL", "S$": "SGD", "RMB": "CNY",
               **{code: code for code in ("USD", "EUR", "GBP", "JPY", "CNY", "HKD", "CHF", "INR", "AUD", "CAD", "SGD")}}
# A currency before its number, glued or a space apart ("RMB77 million", "HK$1.2 billion", "US$3.5m", "USD 12.5")
_CURRENCY = r"(?:US|HK|NZ|[ACRS])?\$|[€£¥]|(?:USD|EUR|GBP|JPY|CNY|RMB|HKD|CHF|INR|AUD|CAD|SGD)\s?"
_SCALE_WORDS = {"thousand": 1e3, "thousands": 1e3, "k": 1e3,
                "million": 1e6, "millions": 1e6, "mn": 1e6, "mm": 1e6, "m": 1e6,
                "billion": 1e9, "billions": 1e9, "bn": 1e9, "b": 1e9,
                "trillion": 1e12, "trillions": 1e12, "tn": 1e12}
SCALE_NAMES = {1e3: "thousand", 1e6: "million", 1e9: "billion", 1e12: "trillion"}  # how an answer states a scale
# Single letters are scale words only when glued to the number ("3.5k", "$1.5m"): "1.134 m" is metres.
_GLUED_ONLY = {"k", "m", "b"}
_NIL = re.compile(r"[—–-]+\s*%?|n/?a|nm|none|nil", re.IGNORECASE)

# One value: [(] [sign] [currency] [(] [sign] digits [)] [%] [)] [scale word or unit word].
_VALUE = re.compile(
    rf"(?P<open>\()?\s*(?P<sign>[-−–+])?\s*(?P<cur>{_CURRENCY})?\s*(?P<open2>\()?\s*"
    r"(?P<sign2>[-−–])?(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"(?P<close>\))?(?P<gap>\s*)(?P<pct>%|percent\b)?\s*(?P<close2>\))?"
    r"\s*(?P<word>[A-Za-z]{1,12})?",
    re.IGNORECASE,
)

# A number inside running text, after its currency if any: not part of a word, date ("12/31/2022",
# "2023-04-01") or version.
_IN_TEXT = re.compile(
    rf"(?<![\w.,/−-])(?P<open>\()?(?P<sign>[-−])?(?P<cur>{_CURRENCY})?"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?P<close>\))?"
    r"(?:\s?(?P<pct>%|percent\b)|(?P<glued>[kKmMbB]\b|bn\b|mn\b)|\s(?P<word>thousand|million|billion|trillion)s?\b)?"
    r"(?![\w/]|[-−](?:\d|[A-Z]\b)|\.\d)",  # not a form's or a model's name: "10-K", "8-K", "20-F"
)
# A reference mark: one or two digits in parentheses after a word or a "%", glued or one space apart
# ("Cost of sales (1)", "shipment(1)", "EBIT / Sales %(1)"), or opening a line of words ("(1) Represents
# corporate expenses."): a footnote, not the value -1. A table's cells are two spaces or a column apart on a
# page ("Other  (1)  2"), so a cell is never one. After a number's word ("ninety (90) days") the digits are
# the number itself, and after a word that joins or relates values ("(19) and (41)", "fell to (3)") a value.
_MARK_AFTER = re.compile(r"(?:[A-Za-z] ?|%)$")
_MARK_OPENS = re.compile(r" [A-Z]")  # a footnote opens with a capital: "(19) and (41)" is a list
_VALUE_AFTER = re.compile(r"(?:\b(?:and|or|nor|to|of|than|from|by|at|in|on|for|with|as|vs|was|were|is|are|be|been)|"
                          r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|teen|twenty|thirty|"
                          r"forty|fifty|sixty|seventy|eighty|ninety)\s?$", re.IGNORECASE)

_SCALE_PHRASE = re.compile(
    r"(?:\b(?:in|of)|[$€£]|\b(?:USD|EUR|GBP|dollars))\s*(thousands|millions|billions|trillions)\b"
    r"|(?:[$€£]|\b(?:USD|EUR|GBP))\s*(?:in\s+)?(thousand|million|billion|mn|bn|m)\b"
    r"|(?:[$€£]|\b(?:USD|EUR|GBP))\s*['’]?000\b",  # "$'000", "US$000", "€’000": thousands
    re.IGNORECASE,
)
_PERCENT_PHRASE = re.compile(r"\(\s*in\s*(?:%|percent(?:ages?)?)\s*\)|\bin\s+percent(?:ages?)?\b", re.IGNORECASE)
_CURRENCY_WORDS = ((re.compile(r"€|\beuros?\b|\bEUR\b", re.IGNORECASE), "EUR"),
                   (re.compile(r"£|\bpounds?\b|\bGBP\b", re.IGNORECASE), "GBP"),
                   (re.compile(r"¥|\byen\b|\bJPY\b", re.IGNORECASE), "JPY"))
_SHARES = re.compile(r"\bshares\b", re.IGNORECASE)
# A year, "FY2017"'s too; not a part of another number ("20190", "1,2019", "2019.5"), an amount ("$2019") or a
# share ("2019%", "2019 percent"). EARLY_YEAR reaches back to 1000 (a history's years); the patterns that
# hold a year are built from YEAR
_YEAR = r"(?<![\d.,$€£]){}\d{{2}}(?!\d|[.,]\d|%|\s+percent\b)"
YEAR = re.compile(_YEAR.format("(?:19|20)"))
EARLY_YEAR = re.compile(_YEAR.format("(?:1\\d|20)"))
YEAR_RANGE = re.compile(rf"({YEAR.pattern})\s*(?:-|–|to|through)\s*(?:FY\s?)?({YEAR.pattern})", re.IGNORECASE)  # "FY2015 - FY2017"


def parse_value(text: str, scale: float = 1.0, unit: str | None = None) -> Value:
    """Parse a cell or fact value; `scale`/`unit` are the defaults declared by the table.

    "(169,080)" → -169080 × scale; "$1.5 billion" → 1.5e9 "USD"; "(3.2)%" → -3.2 "%" (never
    scaled); "—" or "n/a" → number None; anything that is not a single number → number None.
    """
    text = text.strip()
    core = text.rstrip(".,;:*").replace("\xa0", " ")
    if _NIL.fullmatch(core):
        return Value(text, None, "%" if "%" in core else unit, scale)
    match = _VALUE.fullmatch(core)
    if not match or bool(match["open"] or match["open2"]) != bool(match["close"] or match["close2"]):
        return Value(text, None, unit, scale)
    number = float(match["num"].replace(",", ""))
    if match["open"] or match["open2"] or match["sign"] in ("-", "−", "–") or match["sign2"]:
        number = -number
    if match["cur"]:
        unit = _CURRENCIES[match["cur"].strip().upper()]
    word = match["word"] or ""
    if word.upper() in _CURRENCIES:
        unit = _CURRENCIES[word.upper()]
    elif word.lower() in _SCALE_WORDS and (word.lower() not in _GLUED_ONLY or not match["gap"]):
        scale = _SCALE_WORDS[word.lower()]  # a printed scale word overrides the table's
    elif word:
        unit = word
    if match["pct"]:
        return Value(text, number, "%", 1.0)
    return Value(text, number * scale, unit, scale)


def parse_number(text: str) -> float | None:
    """The number in a short cell or answer string ("$1577.00", "1,577 million", "(3.2)%"), else None."""
    return parse_value(text).number


def detect_scale(text: str) -> tuple[float, str | None]:
    """The scale and unit a header declares: "(In thousands, except par value)" → (1e3, "USD").

    "(Dollars in millions)" → (1e6, "USD"), "(€ in billions)" → (1e9, "EUR"), "US$000" → (1e3, "USD"), "(in %)" → (1.0, "%");
    "(in thousands of shares)" → (1e3, None); (1.0, None) when the text declares nothing.
    """
    if _PERCENT_PHRASE.search(text):
        return 1.0, "%"
    match = _SCALE_PHRASE.search(text)
    if not match:
        return 1.0, None
    scale = _SCALE_WORDS[(match[1] or match[2] or "thousand").lower()]
    head = text.split("except")[0]
    if _SHARES.search(head):
        return scale, None
    for pattern, code in _CURRENCY_WORDS:
        if pattern.search(head):
            return scale, code
    return scale, "USD"


def numbers_in(text: str) -> list[float]:
    """Every number printed in running text, in order, with "%" kept as is and scale words applied.

    "$1.5 billion" → 1.5e9, "12%" → 12.0, "(3.2)%" → -3.2, "1.2bn" → 1.2e9; dates and
    identifiers ("12/31/2022", "2023-04-01", "Q4", "COVID-19") give nothing.
    """
    return [number for _, _, number in number_spans(text)]


def number_spans(text: str) -> list[tuple[int, int, float]]:
    """(start, end, number) of every number `numbers_in` reads, where it is printed."""
    spans = []
    for match in _IN_TEXT.finditer(text):
        if _is_mark(text, match):
            continue
        number = _number(match) * _scale(match)
        if math.isfinite(number):  # 310 digits and more overflow a float: no value, nothing to verify
            spans.append((match.start(), match.end(), number))
    return spans


def face_value(span: str) -> float | None:
    """The number a span of `number_spans` prints, before its scale word: "$60.3 million" → 60.3, "(1.2)bn" → -1.2."""
    match = _IN_TEXT.search(span)
    return None if match is None else _number(match)


def _number(match: re.Match) -> float:
    """The number an `_IN_TEXT` match prints, with its sign ("-3", "(3)"), before its scale."""
    number = float(match["num"].replace(",", ""))
    return -number if match["sign"] or (match["open"] and match["close"]) else number


def _scale(match: re.Match) -> float:
    """The scale an `_IN_TEXT` match's word or glued letters give it ("million", "bn"; "m" or "b" only after a currency)."""
    glued = (match["glued"] or "").lower()
    if match["word"]:
        return _SCALE_WORDS[match["word"].lower()]
    return _SCALE_WORDS[glued] if glued and (glued not in ("m", "b") or match["cur"]) else 1.0


def _is_mark(text: str, match: re.Match) -> bool:
    """Whether a match is a reference mark (`_MARK_AFTER`, `_MARK_OPENS`, `_VALUE_AFTER`): "(1)" to "(99)"
    after a word or opening a line of words."""
    num, start = match["num"], match.start() - (0 if match["open"] else 1)  # "shipment(1)": it begins at the digit
    if not (match["close"] and len(num) <= 2 and num.isdigit() and (match["open"] or text[start:start + 1] == "(")
            and not (match["sign"] or match["cur"] or match["pct"] or match["glued"] or match["word"])):
        return False
    before = text[max(0, start - 8):start]
    if _VALUE_AFTER.search(before):
        return False
    if start == 0 or before.endswith("\n"):
        return bool(_MARK_OPENS.match(text, match.end()))
    return bool(_MARK_AFTER.search(before))


# The period an answer states a figure for: "Q2 of FY2023", "FY 2022", "fiscal 2021", "FY21", "2019"
_PERIOD = re.compile(r"(?:\b(?P<quarter>Q[1-4]|H[12])\s+(?:of\s+)?)?(?:\b(?:FY\s?|fiscal\s+(?:year\s+)?))?"
                     rf"(?P<year>{YEAR.pattern})|\bFY\s?(?P<short>\d\d)\b", re.IGNORECASE)
FIGURE_GAP = 5  # words at most between a figure and its period ("969 by the end of Q2 FY2024")


@dataclass(frozen=True)
class Figure:
    """A number an answer states for a period ("969 by the end of Q2 FY2024")."""
    value: float
    printed: str
    start: int  # where the answer prints it
    period: tuple[int, int]  # (year, its quarter, a half as its last quarter, 0 for a whole year)


def stated_figures(answer: str) -> tuple[list[Figure], list[str]]:
    """The figures an answer states with the period each is for, printed after it within FIGURE_GAP words and
    before the next number ("from 982 stores in Q2 FY2023 to 969 by the end of Q2 FY2024"), and the other
    numbers it states (a change it computed: "by 1.32%"), periods aside."""
    periods = list(_PERIOD.finditer(answer))
    spans = [span for span in number_spans(answer) if not any(p.start() <= span[0] < p.end() for p in periods)]
    figures, others = [], []
    for at, (start, end, value) in enumerate(spans):
        stop = spans[at + 1][0] if at + 1 < len(spans) else len(answer)
        period = next((p for p in periods if end <= p.start() < stop and len(answer[end:p.start()].split()) <= FIGURE_GAP),
                      None)
        if period is None:
            others.append(answer[start:end])
            continue
        year = int(period["year"] or f"20{period['short']}")
        half = (period["quarter"] or "").upper()
        figures.append(Figure(value, answer[start:end], start, (year, int(half[1]) * (2 if half[0] == "H" else 1) if half else 0)))
    return figures, others


def is_change(printed: str, figures: list[Figure]) -> bool:
    """`printed` is the difference or the percentage change of two figures (`stated_figures`), to its decimals
    ("1.32%" from 982 to 969)."""
    if len(figures) != 2:
        return False
    earlier, later = sorted(figures, key=lambda figure: figure.period)
    delta = later.value - earlier.value
    return any(rounds_to(change, printed) for change in [abs(delta)] + ([abs(delta / earlier.value * 100)] if earlier.value else []))


def rounds_to(value: float, printed: str) -> bool:
    """`value` is what `printed` writes, to its decimals and before its scale word ("20.1%" is not 20.04 nor 20.0)."""
    number, decimals = face_value(printed), re.search(r"\.(\d+)", printed)
    places = len(decimals[1]) if decimals else 0
    return number is not None and round(value, places) == round(abs(number), places)


# A year that labels the number after it in parentheses, as a report gives the year before's figure:
# "exchange gains of RMB77 million (2018: RMB229 million)", "(FY2018: 12%; FY2017: 9%)"
_LABEL = re.compile(rf"(?:(?i:FY)\s?)?({YEAR.pattern})\s*:\s*(?:[A-Z]{{0,3}}[$€£¥]?\s?)?$")  # its currency
RESPECTIVELY = re.compile(r"\brespectively\b", re.IGNORECASE)
_YEAR_LIST = re.compile(rf"(?:FY\s?)?{YEAR.pattern}(?:(?:\s*,\s*(?:and\s+)?|\s+and\s+)(?:FY\s?)?{YEAR.pattern})+",
                        re.IGNORECASE)


def number_years(sentence: str) -> dict[int, str]:
    """The year each number of a sentence is stated for, by where it starts, where the sentence says so: a year
    that labels it in parentheses ("RMB77 million (2018: RMB229 million)"), or the years it lists in its numbers'
    order, "respectively" ("$533 million and $308 million in 2018 and 2017, respectively": the amounts nearest
    before the list, else after it). A number the sentence says no year of is not in it."""
    spans = [span for span in number_spans(sentence) if not YEAR.fullmatch(sentence[span[0]:span[1]].strip())]
    found = {}
    for start, _, _ in spans:
        opened = sentence.rfind("(", 0, start)
        if opened >= 0 and ")" not in sentence[opened:start] and (label := _LABEL.search(sentence, opened + 1, start)):
            found[start] = label[1]
    if (said := RESPECTIVELY.search(sentence)) and (listed := next(_YEAR_LIST.finditer(sentence, 0, said.start()), None)):
        years = YEAR.findall(listed[0])
        before = [start for start, _, _ in spans if start < listed.start() and start not in found]
        after = [start for start, _, _ in spans if listed.end() <= start < said.start() and start not in found]
        amounts = before[-len(years):] if len(before) >= len(years) else after[:len(years)]
        if len(amounts) == len(years):
            found.update(zip(amounts, years))
    return found
