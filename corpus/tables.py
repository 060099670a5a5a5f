"""Tables in compacted page text (see corpus.pdf): rows of a label and column-gap-separated cells.

A table is a run of at least two numeric rows ("Total assets  $11,726,472  $10,785,829"),
possibly interleaved with label-only lines ("Current assets:") and blank lines. Above it sit
header lines ("November 27,  November 28," / "2015  2014"; a year may carry a note, "2019 (1)", or be
letter-spaced, "2 0 1 8"), whose cells are stacked into one column name each, and title/scale lines
("CONSOLIDATED BALANCE SHEETS", "(In thousands)"); a scale line may also sit between the header and
the rows. Each row keeps the label-only line it is printed under ("Inventories:"), its group. An unlabelled
subtotal line ("$3,260  $3,836") does not end a run of rows; under a group it is the group's own row,
labelled with it, and closes it. A run cut by blank lines that has no header of its own goes on under the
columns and scale of the table above it.
Column positions are not in the text, so cells are matched to columns by count.
"""
from __future__ import annotations

import re

from ferret.corpus.numbers import detect_scale, parse_value
from ferret.corpus.records import Table, TableRow, Value

_GAP = re.compile(r"[ \xa0]{2,}")
_SPACED_PERCENT = re.compile(r"(?<=[\d)]) %")
_DETACHED_CURRENCY = re.compile(r"(?<!\S)([$€£])\s+(?=[\d(—–-])")  # "$  —" → "$—"
_DETACHED_PAREN = re.compile(r"(\(\d[\d,.]*)\s+\)")  # "(124  )" → "(124)"
_SPACED_YEAR = re.compile(r"(?<!\S)[12] [09] \d \d(?!\S)")  # a letter-spaced year: "2 0 1 8"
_TOKEN = re.compile(
    r"[—–-]+%?"
    r"|\(?[-−–+]?(?:US\$|[$€£¥])?\(?[-−–]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:bn|[BMK])?\)?%?\)?"
)
# a header's years, as the stored indexes' tables were parsed with them: not `corpus.numbers.YEAR`
_YEAR = re.compile(r"\(?(?:19|20)\d\d\)?")
_HEADER_WORD = re.compile(
    r"\b(?:19|20)\d\d\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|\bended\b|audited"
    r"|\bquarter|\bfiscal\b|\bweeks\b|\bmonths\b|\byears?\b|\bchange\b|%|\$|\bQ[1-4]\b",
    re.IGNORECASE,
)
_PER_SHARE = re.compile(r"\bper (?:\w+ )?share\b|\bEPS\b", re.IGNORECASE)
_SHARE_COUNT = re.compile(r"^(?:weighted[- ]average|shares\b|number of shares)|\bshares (?:used|outstanding)\b",
                          re.IGNORECASE)
PERCENT_HEADER = re.compile(r"%|\bpercent", re.IGNORECASE)  # a column (or row) of percentages
_UNIT_HEADER = re.compile(r"\((?:in )?(years|months|days|shares|units)\)", re.IGNORECASE)
_MAX_GAP_LINES = 4  # label-only or blank lines allowed between two rows of one table
_MAX_TITLE_LINES = 3
_MAX_CAPTION = 200  # a label-only line ending with ":" that introduces the rows below it


def _cells(line: str) -> list[str]:
    """The column-gap-separated cells of a line, with detached "$" and ")" put back on their numbers."""
    line = _DETACHED_PAREN.sub(r"\1)", _DETACHED_CURRENCY.sub(r"\1", line))
    return [_SPACED_YEAR.sub(lambda year: year[0].replace(" ", ""), cell.strip())
            for cell in _GAP.split(line) if cell.strip()]


def _numeric_tokens(cell: str) -> list[str] | None:
    """The numbers of a cell holding only numbers ("$762.7 $650.0" → two), else None."""
    tokens = _SPACED_PERCENT.sub("%", cell).split(" ")
    return tokens if all(_TOKEN.fullmatch(token) for token in tokens) else None


def _is_prose(line: str, cells: list[str]) -> bool:
    """Running text: a long or sentence-like line, or justified text whose words are gap-separated."""
    if any(len(cell) > 120 for cell in cells):
        return True
    if len(cells) == 1:
        return len(line) > 100 or (line.endswith(".") and line.count(" ") >= 7)
    words = sum(1 for cell in cells if cell.isalpha() or cell[:-1].isalpha())
    return len(cells) >= 5 and words >= 0.6 * len(cells)


def _row(cells: list[str]) -> tuple[str, list[str]] | None:
    """(label, value cells) when the line is a table row: a text label, or a year (a schedule's "2021  $138
    $6"), and mostly numeric cells after it."""
    if len(cells) < 2 or not (any(c.isalpha() for c in cells[0]) and not _numeric_tokens(cells[0])
                              or _YEAR.fullmatch(cells[0])):
        return None
    values, numeric = [], []
    for cell in cells[1:]:
        tokens = _numeric_tokens(cell)
        values.extend(tokens or [cell])
        numeric.extend(tokens or [])
    if not _numeric_tokens(values[-1]) or 2 * len(numeric) < len(values):
        return None
    if all(_YEAR.fullmatch(token) for token in numeric):
        return None  # "Summary  2023  2022  2021" is a header line
    return cells[0], values


def _is_subtotal(cells: list[str]) -> bool:
    """An unlabelled line of amounts that are not all years ("$3,260  $3,836"): a subtotal of the rows above."""
    tokens = [_numeric_tokens(cell) for cell in cells]
    return all(tokens) and not all(_YEAR.fullmatch(token) for cell in tokens for token in cell)


def _is_scale_line(cells: list[str]) -> bool:
    """One scale declaration ("(in thousands)"), or one per column and the same ("US$000  US$000")."""
    if len(cells) == 1:
        return len(cells[0]) <= 120 and detect_scale(cells[0]) != (1.0, None)
    scales = {detect_scale(cell) for cell in cells}
    return len(scales) == 1 and scales != {(1.0, None)} and not any(_YEAR.search(cell) for cell in cells)


def _is_header(cells: list[str]) -> bool:
    """A column header line: several short cells, or one short cell with a period/date/unit word."""
    if not cells or _is_scale_line(cells) or any(len(cell) > 80 or ": " in cell for cell in cells):
        return False  # long cells are prose, "Label: value" cells are facts
    numbers = [tokens for tokens in map(_numeric_tokens, cells) if tokens]
    if len(numbers) == len(cells) and not all(_YEAR.fullmatch(tokens[0]) for tokens in numbers):
        return False  # the values of a row whose label is on another line; not years with a note ("2019 (1)")
    if len(cells) >= 2:
        return True
    cell = cells[0]
    return len(cell) <= 40 and cell[-1] not in ":." and (bool(_HEADER_WORD.search(cell)) or cell[0].islower())


def _is_group_label(line: str, cells: list[str]) -> bool:
    """A label-only line that groups the rows below it ("Current assets:", "ASSETS"; a long caption that
    introduces them, "Major classes of line items constituting pretax profit of ...:")."""
    if len(cells) == 1 and cells[0].endswith(":") and len(cells[0]) <= _MAX_CAPTION and ": " not in cells[0]:
        return True
    return _is_title(cells) and not _is_header(cells) and not _is_scale_line(cells) and not _is_prose(line, cells)


def _is_title(cells: list[str]) -> bool:
    """A short single-cell line that is neither a sentence nor a "Label: value" fact."""
    return len(cells) == 1 and 2 <= len(cells[0]) <= 80 and not cells[0].endswith(".") and ": " not in cells[0]


def find_tables(lines: list[str]) -> list[Table]:
    """The tables of one page's lines, in page order."""
    cells = [_cells(line) for line in lines]
    rows = [None if _is_prose(line, c) else _row(c) for line, c in zip(lines, cells)]
    tables: list[Table] = []
    floor = 0  # lines above this belong to the previous table
    for start, stop in _blocks(lines, cells, rows):
        table = _build(lines, cells, rows, start, stop, floor, tables[-1] if tables else None)
        tables.append(table)
        floor = table.last_line + 1
    return tables


def _blocks(lines: list[str], cells: list[list[str]], rows: list) -> list[tuple[int, int]]:
    """(first row, last row) of each run of 2+ rows joined by few blank or label-only lines."""
    blocks = []
    index = 0
    while index < len(lines):
        if rows[index] is None:
            index += 1
            continue
        first = last = index
        count = 1
        index += 1
        while index < len(lines) and index - last <= _MAX_GAP_LINES + 1:
            if rows[index] is not None:
                last, count = index, count + 1
            elif (len(cells[index]) > 1 and not _is_subtotal(cells[index])) or _is_scale_line(cells[index]) \
                    or _is_prose(lines[index], cells[index]):
                break  # a header, scale line or prose: the table has ended
            index += 1
        if count >= 2:
            blocks.append((first, last))
        index = last + 1
    return blocks


def _build(lines: list[str], cells: list[list[str]], rows: list, first: int, last: int, floor: int,
           before: Table | None = None) -> Table:
    """The Table for rows first..last: header, title and scale lines above, cells keyed by column. With
    no header or title line of its own, below a table `before` of as many columns with only blank or
    unlabelled subtotal lines between ("$3,260  $3,836" cuts a block), it goes on under that table's
    columns and scale."""
    top = first
    while top - 1 >= floor and top > first - _MAX_GAP_LINES and _is_group_label(lines[top - 1], cells[top - 1]):
        top -= 1  # group labels such as "ASSETS" / "Current assets:"
    group = _group(cells[first - 1]) if top < first else ""  # the one the first row is printed under
    headers = _header_lines(cells, top, floor)
    if headers:
        top = headers[0]
    titles = _title_lines(lines, cells, top, floor)
    if titles:
        top = titles[-1]

    values = [rows[i][1] for i in range(first, last + 1) if rows[i]]
    width = max(len(row) for row in values)
    full = [row for row in values if len(row) == width]
    percent = {c for c in range(width) if all("%" in row[c] for row in full)}
    columns, dropped = _columns([cells[i] for i in headers], width, percent)
    continued = not headers and not titles and before is not None and len(before.columns) == width \
        and all(all(map(_numeric_tokens, cells[i])) for i in range(before.last_line + 1, top))
    if continued:
        columns = before.columns
    percent |= {c for c in range(width) if PERCENT_HEADER.search(columns[c])}
    title = next((lines[i] for i in titles if not _is_scale_line(cells[i])
                  and (" " in lines[i] or lines[i].isupper())), dropped or "")
    scale, unit = (before.scale, before.unit) if continued else (1.0, None)
    for index in range(first, max(floor, top - 2) - 1, -1):  # the nearest declaration above the rows wins
        declared = detect_scale(lines[index]) if not rows[index] else (1.0, None)
        if declared != (1.0, None):
            scale, unit = declared
            break
    table_rows = _rows(lines, cells, rows, first, last, columns, percent, scale, unit, group)
    return Table(top, last, columns, table_rows, scale, unit, title)


def _header_lines(cells: list[list[str]], top: int, floor: int) -> list[int]:
    """Indexes of the header lines directly above line `top` (up to two blank lines may sit among them,
    and a scale line between them and the rows: "2019  2018" / "(in millions)")."""
    headers: list[int] = []
    index = top - 1
    blanks = 0
    while index >= floor and len(headers) < 6:
        if not cells[index]:
            blanks += 1
            if blanks > 2:
                break
        elif not headers and _is_scale_line(cells[index]) and _under_header(cells, index, floor):
            pass
        elif _is_header(cells[index]):
            headers.insert(0, index)
        else:
            break
        index -= 1
    return headers


def _under_header(cells: list[list[str]], index: int, floor: int) -> bool:
    """Whether the nearest non-blank line above line `index` is a header line of two or more cells."""
    above = next((i for i in range(index - 1, floor - 1, -1) if cells[i]), None)
    return above is not None and len(cells[above]) >= 2 and _is_header(cells[above])


def _title_lines(lines: list[str], cells: list[list[str]], top: int, floor: int) -> list[int]:
    """Indexes of title and scale lines directly above `top`, nearest first."""
    titles: list[int] = []
    index = top - 1
    blanks = 0
    while index >= floor and len(titles) < _MAX_TITLE_LINES:
        if not cells[index]:
            blanks += 1
            if blanks > 2:
                break
            index -= 1
            continue
        if not (_is_title(cells[index]) or _is_scale_line(cells[index])) or _is_prose(lines[index], cells[index]):
            break
        titles.append(index)
        index -= 1
    return titles


def _columns(header_cells: list[list[str]], width: int, percent: set[int]) -> tuple[list[str], str | None]:
    """Column names for `width` value columns from stacked header lines; also a dropped leading label cell.

    A line with width+1 cells starts with the label column's header, which is dropped; a line with
    fewer cells that divide `width` spans groups of columns ("13 Weeks Ended  52 Weeks Ended").
    Repeated names get " %" (percent columns) or " (2)", " (3)"... appended.
    """
    parts: list[list[str]] = [[] for _ in range(width)]
    dropped = None
    for line_cells in header_cells:
        if len(line_cells) == width + 1 or width % len(line_cells) and len(line_cells) > 2 \
                and not width % (len(line_cells) - 1):  # the label column's header, before the columns' (or groups')
            dropped = dropped or line_cells[0]
            line_cells = line_cells[1:]
        if width % len(line_cells):
            continue
        span = width // len(line_cells)
        for position, cell in enumerate(line_cells):
            for column in range(position * span, (position + 1) * span):
                parts[column].append(cell)
    names = [" ".join(part) or f"col{i + 1}" for i, part in enumerate(parts)]
    unique, seen = [], {}
    for column, name in enumerate(names):
        if column in percent and name in seen:
            name = f"{name} %"
        seen[name] = seen.get(name, 0) + 1
        unique.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    if dropped and detect_scale(dropped) != (1.0, None):
        dropped = None
    return unique, dropped


def _cell(text: str, context: str, scale_unit: tuple[float, str | None], percent: bool) -> Value:
    """One cell's Value: percent columns are unscaled, per-share amounts unscaled, share counts unitless."""
    scale, unit = scale_unit
    if percent:
        return parse_value(text, 1.0, "%")
    if _SHARE_COUNT.search(context):
        return parse_value(text, scale, None)  # share counts are scaled but are not money
    if _PER_SHARE.search(context):
        return parse_value(text, 1.0, unit)  # per-share amounts are printed in units
    return parse_value(text, scale, unit)


def _group(cells: list[str]) -> str:
    """The group a label-only line opens ("Current assets:" → "Current assets"), or "" (a blank line, or an
    unlabelled subtotal: it closes the group above it)."""
    return cells[0].rstrip(" :") if len(cells) == 1 and not _numeric_tokens(cells[0]) else ""


def _rows(lines, cells, rows, first, last, columns, percent, scale, unit, group: str) -> list[TableRow]:
    """TableRows for lines first..last, each under the `group` of the label-only line above it (`group`
    above the first); short rows skip percent columns, else fill from the left."""
    width = len(columns)
    column_scales = []
    for column in columns:
        declared = detect_scale(column)
        counted = _UNIT_HEADER.search(column)
        if counted:
            declared = (1.0, counted[1].lower())  # "Useful Life (years)"
        column_scales.append(declared if declared != (1.0, None) else (scale, unit))
    result = []
    for index in range(first, last + 1):
        if rows[index]:
            (label, values), under = rows[index], group
        elif group and _is_subtotal(cells[index]):  # "243,424  221,233" under "Amounts falling due within one year:"
            label, values, under, group = group, [token for cell in cells[index] for token in _numeric_tokens(cell)], "", ""
        else:
            group = _group(cells[index])
            continue
        slots = list(range(width))
        if len(values) < width and width - len(values) == len(percent):
            slots = [c for c in slots if c not in percent]
        context = f"{under} {label}".strip()
        row_cells = {}
        for slot, text in zip(slots, values):
            is_percent = slot in percent or bool(PERCENT_HEADER.search(label))
            row_cells[columns[slot]] = _cell(text, context, column_scales[slot], is_percent)
        result.append(TableRow(label, row_cells, lines[index], index, under))
    return result
