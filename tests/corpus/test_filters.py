"""corpus.filters: filters run as parameterized SQL against a real in-memory SQLite table."""
import json
import sqlite3

import pytest

from ferret.corpus.filters import Column, FilterError, Filters, infer_type, to_sql

SCHEMA = {
    "bucket": Column("d.bucket", "text"),
    "vendor": Column("d.vendor", "text"),
    "total": Column("d.total", "number"),
    "date": Column("d.date", "date"),
    "region": Column("json_extract(d.data, '$.region')", "text"),
    "paid": Column("json_extract(d.data, '$.paid')", "bool"),
    "page count": Column("json_extract(d.data, '$.page_count')", "number"),
    "due date": Column("json_extract(d.data, '$.due_date')", "date"),
}

ROWS = [
    (1, "invoices", "Acme Corp", 1200.0, "2023-01-15", {"region": "EU", "paid": True, "page_count": 3, "due_date": "2023-02-15"}),
    (2, "invoices", "Beta LLC", 99.5, "2023-04-01", {"region": "US", "paid": False, "page_count": 12, "due_date": "2023-05"}),
    (3, "invoices", "ACME corp", 5000.0, "2023-12-31", {"region": "EU", "paid": True, "page_count": "7", "due_date": "2024-01-30"}),
    (4, "contracts", "Gamma 100% Ltd", None, "2024-01-01T09:30:00", {"region": "APAC", "paid": False}),
    (5, "contracts", None, 0.0, "2022", {}),
]
ALL = [1, 2, 3, 4, 5]


@pytest.fixture
def db():
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE docs (id INTEGER PRIMARY KEY, bucket TEXT, vendor TEXT, total REAL, date TEXT, data TEXT)")
    conn.executemany("INSERT INTO docs VALUES (?, ?, ?, ?, ?, ?)", [(*row[:5], json.dumps(row[5])) for row in ROWS])
    yield conn
    conn.close()


def ids(db, raw) -> list[int]:
    where, params = to_sql(Filters.parse(raw), SCHEMA)
    return [row[0] for row in db.execute(f"SELECT d.id FROM docs d WHERE {where} ORDER BY d.id", params)]


@pytest.mark.parametrize(
    "raw, expected",
    [
        # text: equality ignores case, NULL never matches a comparison
        ({"vendor": "Acme Corp"}, [1, 3]),
        ({"vendor": {"=": "acme corp"}}, [1, 3]),
        ({"vendor": {"!=": "Acme Corp"}}, [2, 4]),
        ({"vendor": {"in": ["beta llc", "Gamma 100% Ltd"]}}, [2, 4]),
        ({"vendor": {"not in": ["Beta LLC"]}}, [1, 3, 4]),
        ({"vendor": {"like": "acme%"}}, [1, 3]),
        ({"vendor": {"like": "_ETA%"}}, [2]),
        ({"vendor": {"contains": "CORP"}}, [1, 3]),
        ({"vendor": {"contains": "%"}}, [4]),  # contains is literal, not a LIKE pattern
        ({"vendor": {"<": "b"}}, [1, 3]),
        ({"vendor": None}, [5]),
        ({"vendor": {"!=": None}}, [1, 2, 3, 4]),
        ({"bucket": ["contracts"]}, [4, 5]),  # a bare list means "in"
        # numbers, with "1,000" / "$1,000" strings coerced
        ({"total": {">": 1200}}, [3]),
        ({"total": {">=": "1,200"}}, [1, 3]),
        ({"total": {"<": "$100"}}, [2, 5]),
        ({"total": {"<=": 99.5}}, [2, 5]),
        ({"total": {"==": 0}}, [5]),
        ({"total": {"between": [99.5, "1,200"]}}, [1, 2]),
        ({"total": {"in": [0, 5000]}}, [3, 5]),
        ({"total": {"NOT_IN": [0, 5000]}}, [1, 2]),
        ({"total": {"in": []}}, []),
        ({"total": {"not in": []}}, ALL),
        ({"total": {"like": "12%"}}, [1]),
        # dates: partial dates are periods, stored values may be partial or carry a time
        ({"date": "2023"}, [1, 2, 3]),
        ({"date": "2023-04"}, [2]),
        ({"date": "2023-12-31"}, [3]),
        ({"date": "2024-01-01"}, [4]),
        ({"date": {"!=": "2023"}}, [4, 5]),
        ({"date": {">=": "2023"}}, [1, 2, 3, 4]),
        ({"date": {">=": 2023}}, [1, 2, 3, 4]),
        ({"date": {">": "2023"}}, [4]),
        ({"date": {"<=": "2023"}}, [1, 2, 3, 5]),
        ({"date": {"<": "2023"}}, [5]),
        ({"date": {">": "2023-12-31"}}, [4]),
        ({"date": {"<": "2023-04-01"}}, [1, 5]),
        ({"date": {"between": ["2023-04", "2024-01-01"]}}, [2, 3, 4]),
        ({"date": {"in": ["2022", "2023-01"]}}, [1, 5]),
        ({"date": {"not in": ["2023"]}}, [4, 5]),
        ({"date": {"contains": "-12-"}}, [3]),
        # JSON metadata through json_extract; field names ignore case and spaces vs underscores
        ({"region": "eu"}, [1, 3]),
        ({"paid": True}, [1, 3]),
        ({"paid": "no"}, [2, 4]),
        ({"page_count": {">": 5}}, [2, 3]),  # "7" stored as a string still compares as a number
        ({"Page Count": {"between": [1, 3]}}, [1]),
        ({"due_date": "2023-05"}, [2]),
        ({"due date": {"<": "2023-06"}}, [1, 2]),
        # several conditions are ANDed
        ({"bucket": "invoices", "total": {">=": 1000, "<": 5000}}, [1]),
        ({"region": "EU", "date": {">=": "2023-06"}}, [3]),
        # accepted input forms
        ('{"vendor": {"contains": "acme"}, "date": {">=": "2023-06"}}', [3]),
        ({"conditions": {"vendor": "Beta LLC"}}, [2]),
        (Filters(conditions={"bucket": "contracts"}), [4, 5]),
        (None, ALL),
        ({}, ALL),
        ("", ALL),
        ("  ", ALL),
        ("null", ALL),
        ("{}", ALL),
    ],
)
def test_filter_returns_exact_rows(db, raw, expected):
    assert ids(db, raw) == expected


def test_empty_filters_parse_to_none():
    assert Filters.parse({"conditions": {}}) is None
    assert to_sql(None, SCHEMA) == ("1=1", [])


def test_bare_value_means_equals():
    assert Filters(conditions={"vendor": "Acme"}).conditions == {"vendor": {"=": "Acme"}}


def test_in_expands_one_placeholder_per_value():
    where, params = to_sql(Filters.parse({"total": {"in": [1, "2", "$3"]}}), SCHEMA)
    assert (where, params) == ("CAST((d.total) AS REAL) IN (?, ?, ?)", [1, 2.0, 3.0])


@pytest.mark.parametrize(
    "raw",
    [
        {"vendor": "x' OR '1'='1"},
        {"vendor": "x'; DROP TABLE docs; --"},
        {"vendor": {"like": "%' OR 1=1 --"}},
        {"region": {"in": ["EU') OR 1=1 --"]}},
        {"date": {"contains": "' OR ''='"}},
    ],
)
def test_values_cannot_inject_sql(db, raw):
    where, params = to_sql(Filters.parse(raw), SCHEMA)
    assert all(str(param) not in where for param in params)
    assert ids(db, raw) == []
    assert db.execute("SELECT count(*) FROM docs").fetchone() == (5,)


@pytest.mark.parametrize(
    "raw, fragments",
    [
        (
            {"vendor; DROP TABLE docs": "x"},
            ["unknown filter field 'vendor; DROP TABLE docs'", f"known fields: {', '.join(sorted(SCHEMA))}"],
        ),
        ({"nope": 1}, ["unknown filter field 'nope'"]),
        ({"vendor": {"~": "x"}}, ["unknown operator '~'", "'vendor'", "allowed operators: =, !=, >, >=, <, <=, like, in"]),
        ({"vendor": {"= 1 OR 1=1 --": "x"}}, ["unknown operator '= 1 OR 1=1 --'"]),
        ({"vendor": {}}, ["'vendor' has no condition", "allowed operators"]),
        ({"total": "lots"}, ["'total'", "a number", "'lots'"]),
        ({"total": {"in": [1, "many"]}}, ["'total'", "a number", "'many'"]),
        ({"total": True}, ["'total'", "a number"]),
        ({"date": "April 2023"}, ["'date'", "a date (YYYY, YYYY-MM or YYYY-MM-DD)"]),
        ({"date": "2023-13"}, ["'date'", "a date", "'2023-13'"]),
        ({"due date": {"between": ["2023", "2023-02-30"]}}, ["'due date'", "a date"]),
        ({"paid": "maybe"}, ["'paid'", "a bool"]),
        ({"total": {"between": [1]}}, ["'between'", "'total'", "[low, high]"]),
        ({"total": {">": [1, 2]}}, ["'>'", "'total'", "single value"]),
        ({"total": {">": None}}, ["'>'", "'total'", "null"]),
        ('{"vendor": ', ["not valid JSON"]),
        ('["vendor"]', ["filters must be an object"]),
        (42, ["filters must be an object"]),
    ],
)
def test_errors_name_the_problem(raw, fragments):
    with pytest.raises(FilterError) as info:
        to_sql(Filters.parse(raw), SCHEMA)
    for fragment in fragments:
        assert fragment in str(info.value)


def test_filter_error_is_a_value_error():
    assert issubclass(FilterError, ValueError)


def test_column_rejects_unknown_type():
    with pytest.raises(ValueError, match="float"):
        Column("d.total", "float")


@pytest.mark.parametrize(
    "values, expected",
    [
        ([1, 2.5, None], "number"),
        (["1200", "-3.5", 7, ""], "number"),
        (["2023", "2024"], "number"),
        ([True, False, None], "bool"),
        ([True, 1], "text"),
        (["2023", "2023-04", "2023-04-01", "2023-04-01T10:00:00Z", "2023-04-01 10:00"], "date"),
        (["2023-13-01"], "text"),
        (["2023-04-01", "soon"], "text"),
        (["1,000"], "text"),
        (["Acme", 1], "text"),
        ([], "text"),
        ([None, ""], "text"),
    ],
)
def test_infer_type(values, expected):
    assert infer_type(values) == expected
