"""A filing's financial metric of a fiscal year, computed in code from its statements' line items: no LM call.

"What is the FY2020 days payable outstanding (DPO) for Corning? DPO is defined as: 365 * (average
accounts payable between FY2019 and FY2020) / (FY2020 COGS + change in inventory between FY2019 and
FY2020)" is answered from the rows "Accounts payable", "Cost of sales" and "Inventories" of Corning's
filing, as the expression "365 * ((1,174 + 1,587) / 2) / (...)", which `programs.passage_answer`
computes and cites like a read's calculation (the 0.5B read picks the wrong cells or operation). The
metric becomes an expression over line items (LINE_ITEMS) and fiscal years:
- the question's own definition ("X is defined as: ...", "Define X as A divided by B"): its terms
  "average A between FYa and FYb", "change in A between FYa and FYb", "FYn A", and a bare "A" of the
  question's first fiscal year, joined by operators, numbers and parentheses only;
- else a metric defined one way in every textbook (`_named`): an item's "% margin" (of revenue; gross,
  operating, net and EBITDA margins too; a "N year average" of it over the years it names), a
  year-over-year change or growth rate in percent, free cash flow and its conversion (of net income, in
  percent), the working capital (current assets less current liabilities) and its ratio, and the
  operating cash flow and retention ratios (not the quick ratio: its "quick" assets are defined two ways);
- else the one line item the question names, its printed cell the answer ("the FY2019 total amount
  of inventories").
A line item is a row of the filing whose whole label reads as that item ("Total net sales" for
revenue, "Net cash provided by operating activities" for cash from operations); its fiscal year's
cell is the one whose column header prints the year ("Year Ended December 31, 2017", "February 2,
2019"), or, in a row whose headers print no year ("col1"), the cell in the same position of a row of
its page whose headers do. Of several rows of an item, the one on a page with the most of the
metric's other items wins, then the largest value (a total, not a segment of it). Each row used is
a passage that names its line item as the way it was reached ("via"), as a hop names its bridge.
Nothing is guessed: a question is left to the reads unless it is asked of one document, names a
fiscal year ("FY2019", or "FY19" for 2019), asks no yes/no, why or how, and every item of its
expression has a row with one cell of each year it needs. Amounts are used as printed, their sign
aside (a payment's parentheses).
A yes/no question whether such a metric improved, grew or declined ("Does Adobe have an improving
operating margin profile as of FY2022?"), or which of the two it did, or whether it is positive
(`grounding.asks_direction`; never of a quarter), gets a verdict (`statement_verdict`,
`verdict_answer`): the metric of the two years it names, or of the year it names and the one before,
computed the same way, and compared ("No. It fell from 36.7564 in FY2021 to 34.6359 in FY2022.").
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ferret.corpus.numbers import YEAR, numbers_in, parse_number
from ferret.programs.arithmetic import format_result
from ferret.programs.grounding import asks_direction, asks_reason, direction_word
from ferret.programs.passage_answer import PassageAnswer, asks_yes_no, computed_answer
from ferret.programs.row_arithmetic import plain_number, row_passage

ROW_CANDIDATES = 30  # rows looked at for each line item
# item: (the words its rows are searched by, how a question names it, how a row's whole label reads it)
LINE_ITEMS = {
    "total current assets": ("total current assets", r"total current assets", r"total current assets"),
    "total current liabilities": ("total current liabilities", r"total current liabilities", r"total current liabilities"),
    "total assets": ("total assets", r"total assets", r"total assets"),
    "cash from operations": (
        "net cash provided by operating activities",
        r"cash (?:flows? )?(?:from|provided by) operati(?:ons|ng activities)|operating cash flows?",
        r"net cash (?:\(used in\) )?(?:provided by|from|generated (?:by|from))(?: \(used in\))? operating activities"
        r"|cash provided by operations"),
    "capex": ("capital expenditures purchases of property and equipment", r"capex|capital expenditures?",
              r"capital expenditures|(?:purchases?|payments for|additions to) (?:of )?(?:property|land)[\w ,&]*equipment"),
    "cogs": ("cost of sales revenue goods products sold", r"cogs|cost of (?:goods sold|products sold|sales|revenues?)",
             r"(?:total )?cost of (?:goods sold|products sold|sales|revenues?)"),
    "operating income": ("operating income from operations", r"(?:unadjusted )?(?:operating income|income from operations)",
                         r"(?:total )?operating income(?: \(loss\))?|income(?: \(loss\))? from operations"),
    "net income": ("net income net earnings attributable", r"net (?:income|earnings|profit)(?: attributable to (?:shareholders|stockholders))?",
                   r"net (?:income|earnings)(?: \(loss\))?(?: attributable to [\w .,&'-]+)?"),
    "d&a": ("depreciation and amortization", r"d&a|depreciation (?:and|&) amortization",
            r"depreciation,? (?:and|&) amortization(?: expense| of [\w ,&]+)?"),
    "dividends": ("dividends paid", r"(?:total )?(?:cash )?dividends(?: paid)?",
                  r"(?:cash )?dividends paid(?: to [\w ]+)?|(?:payments? (?:of|for)|cash) dividends(?: paid)?"),
    "inventory": ("inventories", r"(?:merchandise )?inventor(?:y|ies)", r"(?:merchandise )?inventor(?:y|ies)(?:, net)?"),
    "accounts payable": ("accounts payable", r"accounts payable", r"accounts payable"),
    "pp&e": ("property plant and equipment net", r"pp&?n?e|property,? plant,? (?:and|&) equipment",
             r"property,? plant,? (?:and|&) equipment(?:, net)?"),
    "revenue": ("total net sales revenues", r"(?:total )?(?:net )?(?:revenues?|sales)",
                r"(?:total )?(?:net )?(?:revenues?|sales)(?:, net)?"),
}
_ITEM = "|".join(f"(?P<i{n}>{asked})" for n, (_, asked, _) in enumerate(LINE_ITEMS.values()))
_KEYS = list(LINE_ITEMS)
_NOTE = r"(?:\s*\((?:\d+|[a-z]|notes? [\w ,]+)\))*"  # "(1)", "(Note 6)"
_LABELS = {key: re.compile(rf"(?:{label}){_NOTE}", re.IGNORECASE) for key, (_, _, label) in LINE_ITEMS.items()}


def _fy(name: str = "") -> str:
    """A fiscal year, "FY2019": its year captured, as `name` when one is given."""
    return rf"fy\s?({f'?P<{name}>' if name else ''}{YEAR.pattern})"


_FY = _fy()
_SHORT_FY = re.compile(r"\bFY\s?(\d{2})\b", re.IGNORECASE)  # "FY20" is FY2020
_TERM = re.compile(rf"(?:(?P<op>average|change in)\s+)?(?:{_fy('fy')}\s+)?(?:the\s+)?\b(?:{_ITEM})\b"
                   rf"(?:\s+between\s+{_fy('a')}\s+and\s+{_fy('b')})?", re.IGNORECASE)
_DEFINITION = re.compile(r"\b(?:defined|calculated)\s+as:?\s*(.+?)(?:\.\s|\.?$)|\bdefine\s+[\w\s]+?\s+as\s+(.+?)(?:\.\s|\.?$)",
                         re.IGNORECASE)
_WORDS = [(re.compile(rf"\b{words}\b", re.IGNORECASE), symbol) for words, symbol in
          (("divided by|over", "/"), ("times|multiplied by", "*"), ("plus", "+"), ("minus|less", "-"))]
_ARITHMETIC = re.compile(r"[\d\s.+\-*/(){}]*")
_MARGIN = re.compile(r"([\w&' ]+?)\s*%?\s*margin\b", re.IGNORECASE)
_AVERAGE = re.compile(r"\b(\d+|three|five)[- ]year average\b", re.IGNORECASE)
_CHANGE = re.compile(rf"(?:year[- ]over[- ]year|yoy)\s+change in\s+([\w&' ]+?)\s+from\s+{_FY}\s+to\s+{_FY}"
                     rf"|{_FY}\s*-\s*{_FY}\s+([\w&' ]+?)\s+growth rate", re.IGNORECASE)
_METRIC_WORDS = re.compile(r"\b(?:ratio|margin|change|growth|average|percent\w*|turnover|days|per share|%)", re.IGNORECASE)
_COUNTS = {"three": 3, "five": 5}
_MARGIN_ITEMS = {"operating": "operating income", "net": "net income"}  # "operating margin", "net margin"
_UNIT = re.compile(r"\bin (thousands|millions|billions)\b", re.IGNORECASE)  # "(In thousands, except per share data)"
_SCALES = {"thousands": 1e3, "millions": 1e6, "billions": 1e9}
_MILLIONS = re.compile(r"\bin (?:usd |us\$ ?|\$ ?)?millions\b", re.IGNORECASE)


@dataclass(frozen=True)
class StatementCalculation:
    expression: str  # over the cells' numbers; "" when the answer is one printed cell
    answer: str  # that cell's text, else ""
    hits: list[dict]  # the rows used, each as a passage that names its columns (`row_passage`) and, as "via", its line item
    constants: tuple[float, ...] = ()  # the expression's own numbers ("* 100"), not read from a row


@dataclass(frozen=True)
class StatementVerdict:
    asked: str  # what the question asks of the metric (`grounding.asks_direction`): "up", "down", "either", "positive", "negative"
    years: list[str]  # the fiscal years compared, earliest first (one, for a sign)
    expressions: list[str]  # the metric of each year, over the cells' numbers
    hits: list[dict]  # the rows used, each as a passage that names its columns (`row_passage`) and, as "via", its line item
    constants: tuple[float, ...] = ()  # the expressions' own numbers ("* 100"), not read from a row


def statement_calculation(corpus, question: str, doc_id: str | None) -> StatementCalculation | None:
    """The question's metric over the line items of document `doc_id` (module rules), or None."""
    question = _SHORT_FY.sub(r"FY20\1", question)
    years = re.findall(_FY, question, re.IGNORECASE)
    if doc_id is None or not years or asks_yes_no(question) or asks_reason(question) or asks_direction(question):
        return None
    template = _defined(question, years[0]) or _named(question, years)
    single = template is None and _single(question, years[0])
    if template is None and not single:
        return None
    terms, text = template or ([single], "{0}")
    if (filled := _filled(corpus, doc_id, terms)) is None:
        return None
    numbers, cells, hits, scale = filled
    if _MILLIONS.search(question) and scale in (1e3, 1e9):  # an amount asked in millions, printed in thousands or billions
        text = f"({text}) / 1000" if scale == 1e3 else f"({text}) * 1000"
    elif single:
        return StatementCalculation("", cells[0], hits)
    return StatementCalculation(text.format(*numbers), "", hits, _constants(text))


def statement_verdict(corpus, question: str, doc_id: str | None) -> StatementVerdict | None:
    """The two years' values of the metric a question asks the trend of, or the one year's of a metric it
    asks the sign of, over the line items of document `doc_id` (module rules), or None."""
    asked, question = asks_direction(question), _SHORT_FY.sub(r"FY20\1", question)
    years = sorted(set(re.findall(_FY, question, re.IGNORECASE)))
    if doc_id is None or not asked or not years or len(years) > 2 or asks_reason(question):
        return None
    if asked in ("positive", "negative"):
        periods = years[-1:]
    else:
        periods = years if len(years) == 2 else [str(int(years[0]) - 1), years[0]]  # "improving as of FY2022"
    terms: list[tuple[str, str]] = []
    texts = []
    for year in periods:
        template = _named(question, [year]) or ((single := _single(question, year)) and ([single], "{0}"))
        if not template:
            return None
        texts.append(template[1].format(*(_slot(terms, item, item_year) for item, item_year in template[0])))
    if (filled := _filled(corpus, doc_id, terms)) is None:
        return None
    numbers, _, hits, _ = filled
    return StatementVerdict(asked, periods, [text.format(*numbers) for text in texts], hits,
                            tuple(n for text in texts for n in _constants(text)))


def verdict_answer(question: str, verdict: StatementVerdict) -> PassageAnswer:
    """The verdict with the values it rests on ("No. It fell from 36.7564 in FY2021 to 34.6359 in FY2022."),
    each year's value computed and its operands cited as `computed_answer` does; its computation is the
    later year's value less the earlier's (a sign's: the one value). To a question that asks which, the
    verdict is the question's own word ("improved"); a value unchanged gets none."""
    reads = [computed_answer(question, expression, verdict.hits, verdict.constants) for expression in verdict.expressions]
    if problem := next((read.problem for read in reads if read.problem), ""):
        return PassageAnswer("", problem=problem)
    values = [read.derived[0] for read in reads]
    findings = list({(f.doc_id, f.page, f.value, f.context): f for read in reads for f in read.findings}.values())
    if len(values) == 1:
        (value,), (year,) = values, verdict.years
        holds = value > 0 if verdict.asked == "positive" else value < 0
        answer = f"{'Yes' if holds else 'No'}. It was {format_result(value)} in FY{year}."
        return PassageAnswer(answer, findings, values, verdict.expressions[0])
    (first, last), (earlier, later) = values, verdict.years
    computation = f"{verdict.expressions[1]} - ({verdict.expressions[0]})"
    if first == last:
        return PassageAnswer("", findings, problem=f"the metric was {format_result(first)} in FY{earlier} and FY{later}")
    rose = last > first
    verdict_word = direction_word(question, rose).capitalize() if verdict.asked == "either" else \
        ("Yes" if rose == (verdict.asked == "up") else "No")
    answer = (f"{verdict_word}. It {'rose' if rose else 'fell'} from {format_result(first)} in FY{earlier} "
              f"to {format_result(last)} in FY{later}.")
    return PassageAnswer(answer, findings, [first, last, last - first], computation)


def _constants(text: str) -> tuple[float, ...]:
    """The numbers an expression template writes itself (its "* 100", "/ 3"), not those of its {n} slots."""
    return tuple(numbers_in(re.sub(r"\{\d+\}", " ", text)))


def _filled(corpus, doc_id: str, terms: list[tuple[str, str]]) -> tuple[list[str], list[str], list[dict], float | None] | None:
    """(each term's number, each term's printed cell, the rows used as passages, their page unit) from
    rows that share a page unit, or None when a term has no row with one cell of its year."""
    rows = _rows(corpus, doc_id, {item for item, _ in terms})
    for scale in _scales(rows, {item for item, _ in terms}):
        cells = [_cell(corpus, [row for row in rows[item] if row["scale"] == scale], year) for item, year in terms]
        if None not in cells:
            break
    else:
        return None
    used = {row["annotation_id"]: (row, item) for (row, _), (item, _) in zip(cells, terms)}.values()
    hits = [{**row_passage(row), "via": LINE_ITEMS[item][0]} for row, item in used]
    numbers = [plain_number(abs(parse_number(printed))) for _, printed in cells]
    return numbers, [printed for _, printed in cells], hits, scale


def _defined(question: str, year: str) -> tuple[list[tuple[str, str]], str] | None:
    """The question's own definition of its metric as (terms, expression with a {n} for each term)."""
    match = _DEFINITION.search(question)
    if not match:
        return None
    definition = (match.group(1) or match.group(2)).strip()
    terms: list[tuple[str, str]] = []

    def term(found: re.Match) -> str:
        item = _KEYS[next(n for n in range(len(_KEYS)) if found[f"i{n}"])]
        op, first, last = found["op"], found["a"], found["b"]
        if op and not (first and last) or (first and not op):
            raise ValueError("a term over two years without its operation")
        if op is None:
            return _slot(terms, item, found["fy"] or year)
        joined = "+" if op.lower() == "average" else "-"
        expression = f"({_slot(terms, item, last)} {joined} {_slot(terms, item, first)})"
        return f"({expression} / 2)" if op.lower() == "average" else expression

    try:
        text = _TERM.sub(term, definition)
    except ValueError:
        return None
    for words, symbol in _WORDS:
        text = words.sub(symbol, text)
    return (terms, text) if terms and _ARITHMETIC.fullmatch(text) else None


def _named(question: str, years: list[str]) -> tuple[list[tuple[str, str]], str] | None:
    """A textbook metric the question names, as (terms, expression)."""
    plain = re.sub(r"\([^)]*\)", " ", question)  # "(D&A from cash flow statement)", "(as a %)"
    lowered = plain.lower()
    terms: list[tuple[str, str]] = []
    if change := _CHANGE.search(plain):
        what, first, last = (change[1], change[2], change[3]) if change[1] else (change[6], change[4], change[5])
        if not re.search(r"percent", question, re.IGNORECASE) and not change[6] or (item := _item(what)) is None:
            return None
        later, earlier = _slot(terms, item, last), _slot(terms, item, first)
        return terms, f"({later} - {earlier}) / {earlier} * 100"
    if margin := _MARGIN.search(plain):
        count = (average := _AVERAGE.search(plain)) and (_COUNTS.get(average[1].lower()) or int(average[1]))
        span = sorted({int(year) for year in years})
        period = [str(year) for year in range(span[0], span[-1] + 1)] if count else [years[0]]
        if count and len(period) != count:
            return None
        parts = [_margin(terms, margin[1], year) for year in period]
        if None in parts:
            return None
        return terms, parts[0] if len(parts) == 1 else f"({' + '.join(parts)}) / {len(parts)}"
    year = years[0]
    if "working capital ratio" in lowered:
        return terms, f"{_slot(terms, 'total current assets', year)} / {_slot(terms, 'total current liabilities', year)}"
    if "working capital" in lowered:
        return terms, f"{_slot(terms, 'total current assets', year)} - {_slot(terms, 'total current liabilities', year)}"
    if "operating cash flow ratio" in lowered:
        return terms, f"{_slot(terms, 'cash from operations', year)} / {_slot(terms, 'total current liabilities', year)}"
    if "retention ratio" in lowered:
        income = _slot(terms, "net income", year)
        return terms, f"({income} - {_slot(terms, 'dividends', year)}) / {income}"
    if re.search(r"\bfree cash ?flow\b|\bfcf\b", lowered):
        free = f"{_slot(terms, 'cash from operations', year)} - {_slot(terms, 'capex', year)}"
        return terms, (f"({free}) / {_slot(terms, 'net income', year)} * 100" if re.search(r"\bconversion\b", lowered)
                       else free)
    return None


def _margin(terms: list[tuple[str, str]], what: str, year: str) -> str | None:
    """An item's margin in percent of the year's revenue: "(gross)", "EBITDA", "net profit", else an item."""
    what = re.sub(rf"^.*\b(?:{_FY}|average)\b|\bunadjusted\b", " ", what, flags=re.IGNORECASE).strip().lower()
    revenue = _slot(terms, "revenue", year)
    if what.endswith("ebitda"):
        amount = f"({_slot(terms, 'operating income', year)} + {_slot(terms, 'd&a', year)})"
    elif what.endswith("gross"):
        amount = f"({revenue} - {_slot(terms, 'cogs', year)})"
    elif (item := _MARGIN_ITEMS.get(what.split()[-1] if what else "") or _item(what)) is not None and item != "revenue":
        amount = _slot(terms, item, year)
    else:
        return None
    return f"{amount} / {revenue} * 100"


def _single(question: str, year: str) -> tuple[str, str] | None:
    """(item, year) when the question names one line item and no metric of it."""
    plain = re.sub(r"\([^)]*\)", " ", question)
    if _METRIC_WORDS.search(plain):
        return None
    items = {_KEYS[n] for found in _TERM.finditer(plain) for n in range(len(_KEYS)) if found[f"i{n}"]}
    return (items.pop(), year) if len(items) == 1 else None


def _item(words: str) -> str | None:
    """The line item a phrase ends with ("the unadjusted operating income" → operating income)."""
    found = [match for match in _TERM.finditer(words) if match.end() == len(words.rstrip())]
    return next((_KEYS[n] for n in range(len(_KEYS)) if found and found[-1][f"i{n}"]), None)


def _slot(terms: list[tuple[str, str]], item: str, year: str) -> str:
    if (item, year) not in terms:
        terms.append((item, year))
    return "{%d}" % terms.index((item, year))


def _rows(corpus, doc_id: str, items: set[str]) -> dict[str, list[dict]]:
    """Each item's rows in the document, each with its page's `scale`, best first: none a hundredth of the
    item's largest (a per-share or a change row), then those on a page with most of the metric's other
    items, then with most line items of any kind (a statement, not a note's pro forma table), then the largest."""
    found, pages = {}, {}
    for item in items:
        rows = corpus.annotations_search(LINE_ITEMS[item][0], doc_id=doc_id, top_k=ROW_CANDIDATES)
        rows = [row for row in rows if row["kind"] == "row" and row["fields"] and _LABELS[item].fullmatch(row["label"].strip())]
        for row in rows:
            if (page := (row["doc_id"], row["page"])) not in pages:
                unit = _UNIT.search(corpus.page_text(*page) or "")
                labels = [cells["label"].strip() for cells in corpus.page_cells(*page)]
                pages[page] = (_SCALES[unit[1].lower()] if unit else None,
                               sum(any(_LABELS[key].fullmatch(label) for label in labels) for key in LINE_ITEMS))
            first = next((number for text in row["fields"].values() if (number := parse_number(text)) is not None), 0.0)
            row.update(scale=pages[page][0], size=abs(first) * (pages[page][0] or 1))
        largest = max((row["size"] for row in rows), default=0.0)
        found[item] = [row for row in rows if row["size"] >= largest / 100]
    held = {item: {row["page"] for row in rows} for item, rows in found.items()}
    for item, rows in found.items():
        rows.sort(key=lambda row: (-sum(row["page"] in on for other, on in held.items() if other != item),
                                   -pages[(row["doc_id"], row["page"])][1], -row["size"]))
    return found


def _scales(rows: dict[str, list[dict]], items: set[str]) -> list[float | None]:
    """The pages' scales the items' rows could share, those of most items' best rows first, then the larger."""
    best = [rows[item][0]["scale"] for item in items if rows[item]]
    return sorted(set(best), key=lambda scale: (-best.count(scale), -(scale or 0)))


def _cell(corpus, rows: list[dict], year: str) -> tuple[dict, str] | None:
    """(row, printed cell) of the first row with one number under a header of `year` (module rules); a
    row whose headers print no year comes back under its page's (`_page_headers`), one whose headers
    print years for some cells only is skipped (its headers were read out of line)."""
    for row in rows:
        dated = [bool(YEAR.search(header)) for header in row["fields"]]
        if any(dated) and not all(dated):
            continue
        if not any(dated):
            headers = _page_headers(corpus, row, len(row["fields"]))
            row = {**row, "fields": dict(zip(headers, row["fields"].values()))} if headers else row
        cells = [text for header, text in row["fields"].items()
                 if re.search(rf"(?<!\d){year}(?!\d)", header) and parse_number(text) is not None]
        if len(cells) == 1:
            return row, cells[0]
    return None


def _page_headers(corpus, row: dict, width: int) -> list[str] | None:
    """The headers of the first row of `row`'s page that has as many cells and prints a year in each; else
    the years of the page's first line that prints as many distinct years ("December 31, 2020  2019")."""
    for other in corpus.page_cells(row["doc_id"], row["page"]):
        headers = [header for header, _, _ in other["cells"]]
        if len(headers) == width and all(YEAR.search(header) for header in headers):
            return headers
    for line in (corpus.page_text(row["doc_id"], row["page"]) or "").splitlines():
        years = YEAR.findall(line)
        if len(years) == width and len(set(years)) == width:
            return years
    return None
