"""Property-based tests (hypothesis): the filter parser and its SQL, the number normaliser that
verification uses, and the CSV export."""
from __future__ import annotations

import csv
import json
import math
import re
import sqlite3

from hypothesis import given, settings
from hypothesis import strategies as st

from ferret.corpus.filters import Column, FilterError, Filters, to_sql
from ferret.corpus.numbers import numbers_in, parse_value
from ferret.corpus.tools import csv_cell, write_annotations_csv
from ferret.programs.verify import same_number

SCHEMA = {"vendor": Column("t.vendor", "text"), "total": Column("t.total", "number"),
          "date": Column("t.date", "date")}
SQL_WORDS = {"t.vendor", "t.total", "t.date", "AND", "OR", "NOT", "IS", "NULL", "IN", "BETWEEN", "LIKE", "lower",
             "instr", "CAST", "AS", "REAL", "COLLATE", "NOCASE", "0", "1", "1=1"}
ROWS = [("Acme", 1200.0, "2023-04-01"), ("O'Brien; DROP TABLE t", -3.5, "2022-12-31"), ("acme", None, None)]
texts = st.text(max_size=30)
json_scalars = st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False, allow_infinity=False) | texts
operators = st.sampled_from(["=", "==", "!=", "<>", ">", ">=", "<", "<=", "like", "in", "not in", "between",
                             "contains", "~", "; DROP"])
conditions = st.dictionaries(st.sampled_from(["vendor", "total", "date", "Vendor", "nope"]),
                             json_scalars | st.dictionaries(operators, json_scalars | st.lists(json_scalars, max_size=3),
                                                            min_size=1, max_size=2), min_size=1, max_size=3)


def table() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (vendor TEXT, total REAL, date TEXT)")
    conn.executemany("INSERT INTO t VALUES (?, ?, ?)", ROWS)
    return conn


@settings(max_examples=300, deadline=None)
@given(conditions)
def test_filters_become_parameterized_sql_or_a_filter_error(raw):
    try:
        sql, params = to_sql(Filters.parse(raw), SCHEMA)
    except FilterError:
        return
    assert sql.count("?") == len(params)
    # every value travels as a parameter: the SQL text holds only columns, keywords and operators
    assert set(re.findall(r"[^\s()<>=!,?]+", sql)) <= SQL_WORDS, sql
    table().execute(f"SELECT count(*) FROM t WHERE {sql}", params).fetchone()


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_any_filter_text_parses_or_is_refused_with_a_filter_error(text):
    try:
        Filters.parse(text)
    except FilterError as error:
        assert str(error)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([row[0] for row in ROWS] + ["ACME", "nobody", "'; --"]))
def test_text_equality_matches_what_python_says(vendor):
    sql, params = to_sql(Filters.parse(json.dumps({"vendor": vendor})), SCHEMA)
    found = table().execute(f"SELECT vendor FROM t WHERE {sql}", params).fetchall()
    assert sorted(v for (v,) in found) == sorted(r[0] for r in ROWS if r[0].lower() == vendor.lower())


amounts = st.decimals(min_value=0, max_value=10**9, places=2, allow_nan=False, allow_infinity=False)


@given(amounts, st.sampled_from(["{:,.2f}", "${:,.2f}", "({:,.2f})", "{:.2f}%", "-{:,.2f}", "{:,.2f} million"]))
def test_printed_numbers_read_back_as_themselves(amount, style):
    printed = style.format(amount)
    number = float(amount) * (1e6 if "million" in style else 1.0) * (-1 if style[0] in "(-" else 1)
    assert math.isclose(parse_value(printed).number, number, rel_tol=1e-9, abs_tol=1e-9)
    assert any(math.isclose(found, number, rel_tol=1e-9, abs_tol=1e-9) for found in numbers_in(f"it was {printed} in"))


@given(st.floats(min_value=-1e12, max_value=1e12, allow_nan=False), st.floats(min_value=-1e12, max_value=1e12, allow_nan=False))
def test_same_number_is_reflexive_and_symmetric(a, b):
    assert same_number(a, a) and same_number(a, b) == same_number(b, a)


cells = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=20) | st.floats(allow_nan=False) | st.none()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(texts, cells, cells), min_size=1, max_size=5))
def test_csv_export_round_trips_and_no_cell_starts_a_formula(tmp_path_factory, rows):
    annotations = [{"doc_id": "d", "file": "d.pdf", "page": 1, "section": "s", "kind": "row", "label": label,
                    "value": value, "unit": None, "value_text": str(value), "fields": {"Amount": amount}}
                   for label, value, amount in rows]
    path = tmp_path_factory.mktemp("csv") / "out.csv"
    write_annotations_csv(annotations, path)
    with open(path, newline="", encoding="utf-8") as handle:
        read = list(csv.reader(handle))
    assert len(read) == len(rows) + 1
    for line, (label, value, amount) in zip(read[1:], rows):
        assert line[5] == str(csv_cell(label)) and line[9] == ("" if amount is None else str(csv_cell(amount)))
        for cell in line:
            assert not cell[:1] in ("=", "+", "-", "@", "\t", "\r") or _plain_number(cell)


def _plain_number(cell: str) -> bool:
    try:
        float(cell.replace(",", "").rstrip("%"))
        return True
    except ValueError:
        return False


def test_a_formula_cell_is_escaped_and_a_negative_number_is_not():
    assert csv_cell("=HYPERLINK(\"http://x\")") == "'=HYPERLINK(\"http://x\")"
    assert csv_cell("@SUM(A1)") == "'@SUM(A1)" and csv_cell("-2+3") == "'-2+3" and csv_cell("\tx") == "'\tx"
    assert csv_cell("-3.2") == "-3.2" and csv_cell("+1,250") == "+1,250" and csv_cell(-3.2) == -3.2
