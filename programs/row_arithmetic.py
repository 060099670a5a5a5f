"""A change, percentage change or average of one table row between the two years a question names, its
two cells, one year's cell, or the year of its largest cell, written in code from the row's printed cells:
no LM call.

"What was the percentage change in the valuation allowance between 2018 and 2019?" is answered from
the table row whose label the question names, its 2019 and 2018 cells, as the expression
"(-123 - -109) / -109 * 100", which `programs.passage_answer` computes and cites like a read's
calculation (the 0.5B read writes such expressions over the wrong cells or with the wrong operation).
Nothing is guessed: a question is left to the reads unless
- it names exactly two years (an average "from 2017 to 2019" is of three), or one year right before
  "average" ("What is the 2019 average free cash flow?": the average of the row's 2019 and 2018 cells, as
  a balance's average is taken; "the average exchange rate in 2019" is printed, not computed), or none
  when the row's columns name exactly two ("What was the change in total emissions?"), and it neither
  defines a formula ("DPO is defined as: ...") nor asks why, how or for a reason;
- a table row's label has all its words in the question (`structured.grounded`), the longest such label
  wins, no other row's label the question names has words outside it ("the total of A and B" names two
  rows, which one row does not answer; a share's "percentage of sales represented by X" may name the
  sales row), and the rows of that label agree on each year's value;
- each year has one cell in the row, or of several ("Domestic 2019", "International 2019") one whose
  header's other words the question names most;
- the question names the operation outside the row's label ("Average invested capital" and
  "weighted-average" name a metric): a change (the later year less the earlier; how much something
  fell, the earlier less the later), a percentage change (of amounts: of a rate, a change "in
  percent" means points as often as a relative change), or the average of the two years (without
  a change asked);
- the two values differ (equal cells of two years are more often one column read twice).
The change of a share ("the change in the percentage of sales represented by gross profit") is a
change of the share, in points, from the row's "%" column when it has one (`arithmetic.SHARE`).
A question that names no operation but asks for the row's two years "respectively" (not a range
"2019 to 2017") is answered with the two cells as printed, in the question's order ("73,260 and
57,768"), of the amount columns where a year also has a "%" column.
A question that names one year and no operation ("What was the net income in 2019?", "How much was X
as at December 31, 2018?") is answered with the row's cell of that year as printed (of the amount
columns where the year also has a "%" column); not a quarter's ("in the third quarter of 2018"), nor a
part or share of another row ("what share of revenue", "as a percentage of"). The table rung reads a
filing's statements first: their line items know the filing's unit (`programs.table_rung`). Chosen on
TAT-QA's train split; its reach and precision on every split are in docs/transfer.md.
"In which year was the amount for Sensors the largest?" names no year: it is answered with the year of
the row's largest (or smallest) cell, among the years the question names if it names some; not a
threshold ("less than 100 million"), nor the year of an operation's extreme; amounts all printed
negative are compared by size. On TAT-QA's 1,668 questions, 63 ask "which year" and 31 of them are
answered so, all 31 right.
The rung's reach and precision on every split are in docs/transfer.md (`ferret eval --grounding`).
An amount read or computed (not a percentage change, a share or a year) carries the scale its table counts it
in, the one the rows' stored values are printed at (`rows_scale`: "(In millions)"), which the table rung
states with it ("500 million").
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ferret.corpus.numbers import RESPECTIVELY, YEAR, YEAR_RANGE, parse_number, parse_value
from ferret.corpus.tables import PERCENT_HEADER
from ferret.programs.arithmetic import SHARE, operations
from ferret.programs.grounding import QUARTER, YEAR_AVERAGE, asks_reason, question_stems, stems
from ferret.programs.passage_answer import WHICH_YEAR
from ferret.programs.structured import grounded

LABEL_CANDIDATES = 20  # labels looked at for the question's rows
_DEFINED = re.compile(r"\b(?:defined as|calculated as|formula)\b|=", re.IGNORECASE)
_PERCENTS = re.compile(r"\bpercents\b", re.IGNORECASE)  # "in units of percents"
_FELL = re.compile(r"\b(?:decrease[sd]?|decline[sd]?|fell|drop(?:ped)?)\b", re.IGNORECASE)
_ROSE = re.compile(r"\bincrease", re.IGNORECASE)
_MOST = re.compile(r"\b(?:(?:larg|high|great|bigg)(?:er|est)|more|most)\b", re.IGNORECASE)
_LEAST = re.compile(r"\b(?:(?:low|small|few)(?:er|est)|less|least)\b", re.IGNORECASE)
_PART = re.compile(r"\b(?:share|portion|fraction)\s+of\b", re.IGNORECASE)  # "what share of revenue": a ratio, no cell
_THAN = re.compile(r"\bthan\b", re.IGNORECASE)  # "less than 100 million": a threshold, not the row's extreme


@dataclass(frozen=True)
class RowCalculation:
    expression: str  # over the cells' numbers ("(-123 - -109) / -109 * 100"); "" for a lookup
    hits: list[dict]  # the row(s), each as a passage that names its columns (`row_passage`)
    answer: str = ""  # a lookup's cells as printed, in the question's order ("73,260 and 57,768")
    cell: bool = False  # one year's cell read as printed: a filing's own statements come first (`table_rung`)
    scale: float = 1.0  # what an amount read or computed is counted in: its table's "(in millions)" (`rows_scale`)


def named_rows(corpus, question: str, bucket: str | None = None, doc_id: str | None = None) -> list[dict]:
    """The table rows among the question's best label matches whose label has every word in the question."""
    rows = corpus.annotations_search(question, bucket=bucket, doc_id=doc_id, top_k=LABEL_CANDIDATES)
    return [row for row in rows if row["kind"] == "row" and row["fields"] and grounded([row["label"]], question)]


def row_passage(row: dict) -> dict:
    """A row as a passage that names its columns ("Discount rate: Domestic 2019: 4.00%; Domestic 2018:
    3.75%"), so a value's year and column are read from its label instead of from a row's position; its
    `label` is what the page prints of it as one string."""
    return {"doc_id": row["doc_id"], "page": row["page"], "section": row["section"], "node_id": row["annotation_id"],
            "score": row["score"], "label": row["label"],
            "text": f"{row['label']}: " + "; ".join(f"{k}: {v}" for k, v in row["fields"].items())}


def row_calculation(corpus, question: str, bucket: str | None = None, doc_id: str | None = None) -> RowCalculation | None:
    """The question's calculation over one table row of `corpus` (module rules), or None."""
    years = list(dict.fromkeys(YEAR.findall(question)))
    which_year = bool(WHICH_YEAR.search(question))
    if len(years) > 2 and not which_year or _DEFINED.search(question) or asks_reason(question):
        return None
    named = named_rows(corpus, question, bucket, doc_id)
    longest = max((len(stems(row["label"])) for row in named), default=0)
    rows = [row for row in named if len(stems(row["label"])) == longest]
    if not rows:
        return None
    asked = question.lower()
    for label in {row["label"].lower() for row in rows}:
        asked = asked.replace(label, " ")
    if which_year:
        return _extreme_year(rows, question, asked, years)
    share = bool(SHARE.search(asked))  # "the percentage of sales represented by X": its "%" column
    if not share and any(not stems(row["label"]) <= stems(rows[0]["label"]) for row in named):
        return None  # two rows named: "the total of A and B" is not one row's
    ops = operations(asked) | ({"percentage"} if _PERCENTS.search(asked) else set())
    if not years:  # "What was the change in total emissions?": between the row's two years, when it has two
        years = _printed_years(rows)
        if len(years) != 2 or not ops & {"change", "average"}:
            return None
    if len(years) == 1 and not ops and not share:  # "What was the net income in 2019?": the year's cell
        if QUARTER.search(question) or _PART.search(asked):  # a quarter's or a part's: no cell of the year's column
            return None
        cell = _year_cell(rows, years[0], question_stems(question), amounts=True)
        return None if cell is None else RowCalculation("", [row_passage(row) for row in rows], cell[1], cell=True,
                                                        scale=rows_scale(rows, cell[1]))
    if len(years) == 1:  # "the 2019 average X": of the year's cell and the year's before
        if ops != {"average"} or not YEAR_AVERAGE.search(question):
            return None
        years.append(str(int(years[0]) - 1))
    if not ops and RESPECTIVELY.search(asked) and not YEAR_RANGE.search(question):  # "X in 2019 and 2018 respectively"
        cells = [_year_cell(rows, year, question_stems(question), share, amounts=not share) for year in years]
        return None if None in cells else RowCalculation("", [row_passage(row) for row in rows],
                                                         " and ".join(printed for _, printed in cells),
                                                         scale=min(rows_scale(rows, printed) for _, printed in cells))
    if not ops & {"change", "average"} or "average" in ops and (span := YEAR_RANGE.search(question)) \
            and int(span.group(2)) - int(span.group(1)) > 1:
        return None
    cells = [_year_cell(rows, year, question_stems(question), share, amounts=not share) for year in sorted(years)]
    if None in cells:
        return None
    (before, printed_before), (after, printed_after) = cells
    percentage = "percentage" in ops and "change" in ops
    if before == after or percentage and ("%" in printed_before + printed_after or not before):
        return None
    if percentage:
        expression = f"({plain_number(after)} - {plain_number(before)}) / {plain_number(before)} * 100"
    elif "change" in ops:  # how much something fell is the earlier value less the later
        fell = _FELL.search(asked) and not _ROSE.search(asked)
        expression = f"{plain_number(before)} - {plain_number(after)}" if fell else f"{plain_number(after)} - {plain_number(before)}"
    else:
        expression = f"({plain_number(after)} + {plain_number(before)}) / 2"
    scale = 1.0 if percentage else min(rows_scale(rows, printed) for printed in (printed_before, printed_after))
    return RowCalculation(expression, [row_passage(row) for row in rows], scale=scale)


def _extreme_year(rows: list[dict], question: str, asked: str, years: list[str]) -> RowCalculation | None:
    """"In which year was X the largest?": the year whose cell of the row is the largest (or the smallest),
    among the years the question names if it names some; None when it asks a threshold ("less than"), an
    operation, or both directions, or when two years tie. Amounts all printed negative ("(1.5)", "(4.2)":
    outflows, losses) are compared by size: "a greater foreign exchange movement" is the (4.2)."""
    most, least = bool(_MOST.search(asked)), bool(_LEAST.search(asked))
    if most == least or _THAN.search(asked) or operations(asked):
        return None
    printed = _printed_years(rows)
    cells = {year: cell for year in printed if (not years or year in years)
             and (cell := _year_cell(rows, year, question_stems(question), amounts=True)) is not None}
    values = {year: value for year, (value, _) in cells.items()}
    if all(value < 0 for value in values.values()):
        values = {year: -value for year, value in values.items()}
    if len(values) < 2 or list(values.values()).count(best := (max if most else min)(values.values())) > 1:
        return None
    return RowCalculation("", [row_passage(row) for row in rows], next(year for year, value in values.items() if value == best))


def rows_scale(rows: list[dict], printed: str) -> float:
    """The scale an amount `printed` in `rows` is counted in: the one their stored values are printed at (a
    table's "(In millions)": 2,780 stored as 2.78e9), or 1.0 when they disagree, print none, or `printed` is
    a percentage (a percent column is never scaled) or says its own scale ("$1.2 billion")."""
    if "%" in printed or parse_value(printed).scale != 1:
        return 1.0
    scales = {round(abs(row["value"] / number)) for row in rows
              if row.get("value") and (number := parse_number(row.get("value_text") or "")) and "%" not in row["value_text"]}
    return scales.pop() if len(scales) == 1 else 1.0


def _printed_years(rows: list[dict]) -> list[str]:
    """The years the rows' column headers name, in order."""
    return sorted({year for row in rows for header in row["fields"] for year in YEAR.findall(header)})


def _year_cell(rows: list[dict], year: str, asked: set[str], share: bool = False,
               amounts: bool = False) -> tuple[float, str] | None:
    """(value, text) of the year's one cell, the same in every row; None when the rows disagree or a
    row has no single cell of the year the question's words pick (of a question about a `share`, the
    cells under a "%" header first; for `amounts`, the others first)."""
    found = set()
    for row in rows:
        cells = [(header, text) for header, text in row["fields"].items()
                 if year in header and parse_number(text) is not None]
        if (share or amounts) and len(cells) > 1 and (
                kept := [cell for cell in cells if bool(PERCENT_HEADER.search(cell[0])) == share]):
            cells = kept  # a share's "%" columns, or the amounts' columns
        if len(cells) > 1:  # several columns of the year: the one whose other words the question names most
            named = [len(stems(YEAR.sub("", header)) & asked) for header, _ in cells]
            cells = [cell for cell, count in zip(cells, named) if count == max(named)]
        found |= {(parse_number(text), text) for _, text in cells}
    values = {value for value, _ in found}
    return next(iter(found)) if len(values) == 1 else None


def plain_number(value: float) -> str:
    """A value as the expression grammar reads it: no exponent, no thousands separator."""
    return f"{value:f}".rstrip("0").rstrip(".")
