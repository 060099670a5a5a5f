"""Typed search filters, turned into parameterized SQL.

Agents and users write filters as {"vendor": "Acme", "total": {">=": 1000}, "date": {"between": ["2023", "2023-06"]}}.
`Filters.parse` accepts that mapping (or its JSON text), `to_sql` checks every field against a schema of
trusted `Column` expressions and returns a WHERE fragment whose values are all "?" parameters: user text
never reaches the SQL string, so neither a value nor a field name can inject SQL.

Dates are ISO strings compared as text. A filter date names a period ("2023", "2023-04", "2023-04-01")
and becomes the half-open string range [start, start of next period), so "<= 2023" keeps "2023-12-31T23:59"
and "= 2023-04" matches "2023-04", "2023-04-09" and "2023-04-09T10:00" alike.
"""
from __future__ import annotations

import contextlib
import json
import math
import re
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

import pydantic

OPERATORS = ("=", "!=", ">", ">=", "<", "<=", "like", "in", "not in", "between", "contains")
COLUMN_TYPES = ("text", "number", "date", "bool")

_ALLOWED_OPS = ", ".join(OPERATORS)
_OP_ALIASES = {"==": "=", "<>": "!="}
_LIST_OPS = ("in", "not in")
_EXAMPLE = '{"vendor": "Acme", "total": {">=": 1000}}'
_EXPECTED = {
    "number": 'a number (e.g. 1000, "1,000" or "$1,000")',
    "date": "a date (YYYY, YYYY-MM or YYYY-MM-DD)",
    "bool": "a bool (true or false)",
}
_NUMBER_NOISE = re.compile(r"[\s,$€£¥]")
_NUMERIC = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_DATE = re.compile(r"(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?")
_TIME = r"[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"
_ISO_DATETIME = re.compile(rf"\d{{4}}(?:-\d{{2}}(?:-\d{{2}}(?:{_TIME})?)?)?")
_TRUE, _FALSE = ("true", "yes", "1"), ("false", "no", "0")


class FilterError(ValueError):
    """A filter that cannot be applied; the message names the offending field or operator and the allowed ones."""


@dataclass(frozen=True)
class Column:
    """A filterable field: a trusted SQL expression written by ferret's code (never user input) and its type."""

    sql: str
    type: str  # "text" | "number" | "date" | "bool"

    def __post_init__(self):
        if self.type not in COLUMN_TYPES:
            raise ValueError(f"unknown column type {self.type!r}; allowed: {', '.join(COLUMN_TYPES)}")


class Filters(pydantic.BaseModel):
    """{"field": {op: value, ...}, ...} — all conditions ANDed.

    ops: "=", "!=", ">", ">=", "<", "<=", "like" (SQL LIKE, case-insensitive), "in" (list), "not in" (list),
    "between" ([low, high], inclusive; works for numbers and ISO dates), "contains" (substring, case-insensitive).
    A bare value {"vendor": "Acme"} means {"=": value}; a bare list means {"in": list}; a null value with
    "=" / "!=" means IS NULL / IS NOT NULL. Operator names are case-insensitive, "not_in" = "not in",
    "==" = "=" and "<>" = "!=". Text comparisons (=, !=, <, in, ...) ignore ASCII case.
    """

    conditions: dict[str, dict[str, Any]]

    @pydantic.model_validator(mode="before")
    @classmethod
    def _accept_bare_mapping(cls, data: Any) -> Any:
        """Accept the bare {"vendor": "Acme"} mapping as well as the dumped {"conditions": {...}} form."""
        if isinstance(data, dict) and not _is_dumped(data):
            return {"conditions": data}
        return data

    @pydantic.field_validator("conditions", mode="before")
    @classmethod
    def _normalize(cls, conditions: Any) -> Any:
        """Give every field an {operator: value} mapping with canonical operators and checked value shapes."""
        if not isinstance(conditions, dict):
            raise FilterError(f"filters must be an object like {_EXAMPLE}, got {conditions!r}")
        return {str(field): _normalize_ops(str(field), spec) for field, spec in conditions.items()}

    @classmethod
    def parse(cls, raw: Filters | dict | str | None) -> Filters | None:
        """Filters from the model, a dict or a JSON string; None for None, {}, "" or "null"."""
        if isinstance(raw, str):
            raw = _load_json(raw)
        if raw is None or raw == {}:
            return None
        try:
            filters = cls.model_validate(raw)
        except pydantic.ValidationError as exc:
            raise _filter_error(exc) from None
        return filters if filters.conditions else None


def to_sql(filters: Filters | None, schema: dict[str, Column]) -> tuple[str, list]:
    """(" AND ".join of conditions or "1=1", params) for `filters` over the fields of `schema`.

    Field names match schema keys ignoring case and spaces vs underscores. Values are coerced to the
    column type and passed as "?" parameters; unknown fields and values of the wrong type raise FilterError.
    """
    if filters is None:
        return "1=1", []
    columns = {_field_key(name): column for name, column in schema.items()}
    clauses: list[str] = []
    params: list = []
    for field, ops in filters.conditions.items():
        column = columns.get(_field_key(field))
        if column is None:
            known = ", ".join(sorted(schema)) or "(none)"
            raise FilterError(f"unknown filter field {field!r}; known fields: {known}")
        for op, value in ops.items():
            clause, args = _condition(field, column, op, value)
            clauses.append(clause)
            params.extend(args)
    return " AND ".join(clauses) or "1=1", params


def infer_type(values: list) -> str:
    """The column type for observed metadata values: "bool", "number", "date" or "text".

    None and "" are ignored; numeric strings ("1200", "-3.5") count as numbers, ISO dates may be
    YYYY, YYYY-MM or YYYY-MM-DD with an optional time. No values at all gives "text".
    """
    present = [value for value in values if value is not None and value != ""]
    if not present:
        return "text"
    if all(isinstance(value, bool) for value in present):
        return "bool"
    if all(_is_number(value) for value in present):
        return "number"
    if all(isinstance(value, str) and _is_iso_date(value) for value in present):
        return "date"
    return "text"


# --- parsing -------------------------------------------------------------------------------------


def _load_json(text: str) -> Any:
    """Decode a JSON filter string; blank text means no filters."""
    if not text.strip():
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        reason = f"{exc.msg} at position {exc.pos}"
        raise FilterError(f"filters are not valid JSON ({reason}); expected an object like {_EXAMPLE}") from None


def _filter_error(exc: pydantic.ValidationError) -> FilterError:
    """The FilterError behind a pydantic ValidationError, or one describing the first error."""
    error = exc.errors()[0]
    cause = error.get("ctx", {}).get("error")
    if isinstance(cause, FilterError):
        return cause
    return FilterError(f"filters must be an object like {_EXAMPLE} ({error['msg']})")


def _is_dumped(data: dict) -> bool:
    """True for {"conditions": {field: ...}}, not for a metadata field named "conditions" with operators."""
    inner = data.get("conditions")
    return len(data) == 1 and isinstance(inner, dict) and not any(_canonical_op(op) in OPERATORS for op in inner)


def _canonical_op(op: Any) -> str:
    """ "NOT_IN" → "not in", "==" → "="."""
    name = " ".join(str(op).lower().replace("_", " ").split())
    return _OP_ALIASES.get(name, name)


def _normalize_ops(field: str, spec: Any) -> dict[str, Any]:
    """One field's conditions as {canonical operator: value}; a bare value means "=", a bare list "in"."""
    if not isinstance(spec, dict):
        spec = {"in" if isinstance(spec, (list, tuple)) else "=": spec}
    if not spec:
        raise FilterError(f"filter field {field!r} has no condition; allowed operators: {_ALLOWED_OPS}")
    return dict(_normalize_op(field, op, value) for op, value in spec.items())


def _normalize_op(field: str, op: Any, value: Any) -> tuple[str, Any]:
    """Check the operator name and the shape of its value: a list for in/not in, [low, high] for between."""
    name = _canonical_op(op)
    if name not in OPERATORS:
        raise FilterError(f"unknown operator {op!r} for field {field!r}; allowed operators: {_ALLOWED_OPS}")
    if name in _LIST_OPS:
        value = list(value) if isinstance(value, (list, tuple)) else [value]
        items = value
    elif name == "between":
        if not isinstance(value, (list, tuple)) or len(value) != 2:
            raise FilterError(f"operator 'between' for field {field!r} needs [low, high], got {value!r}")
        value = items = list(value)
    else:
        items = [value]
    if any(isinstance(item, (dict, list, tuple)) for item in items):
        raise FilterError(f"operator {name!r} for field {field!r} needs a single value per item, got {value!r}")
    if any(item is None for item in items) and name not in ("=", "!="):
        raise FilterError(f"operator {name!r} for field {field!r} cannot take null; only = and != can (IS NULL)")
    return name, value


# --- SQL -----------------------------------------------------------------------------------------


def _field_key(name: str) -> str:
    """Field names compare ignoring case and spaces vs underscores: "Due Date" == "due_date"."""
    return "_".join(name.lower().replace("_", " ").split())


def _condition(field: str, column: Column, op: str, value: Any) -> tuple[str, list]:
    """One parameterized condition for a canonical operator and its already shape-checked value."""
    expr = f"({column.sql})"
    if value is None:
        return f"{expr} IS {'NOT ' if op == '!=' else ''}NULL", []
    if op == "like":
        return f"lower({expr}) LIKE lower(?)", [str(value)]
    if op == "contains":
        return f"instr(lower({expr}), lower(?)) > 0", [str(value)]
    if column.type == "date":
        return _date_condition(field, expr, op, value)
    if column.type == "number":
        expr = f"CAST({expr} AS REAL)"  # numeric strings in JSON metadata compare as numbers
    elif column.type == "text":
        expr = f"{expr} COLLATE NOCASE"

    def coerce(item: Any) -> Any:
        return _coerce(field, column.type, item)

    if op in _LIST_OPS:
        if not value:
            return ("0" if op == "in" else "1"), []
        return f"{expr} {op.upper()} ({', '.join('?' * len(value))})", [coerce(item) for item in value]
    if op == "between":
        return f"{expr} BETWEEN ? AND ?", [coerce(item) for item in value]
    return f"{expr} {op} ?", [coerce(value)]


def _date_condition(field: str, expr: str, op: str, value: Any) -> tuple[str, list]:
    """A date condition over the half-open period ranges [start, next) of the filter dates."""
    within = f"({expr} >= ? AND {expr} < ?)"
    if op in _LIST_OPS:
        if not value:
            return ("0" if op == "in" else "1"), []
        periods = [_date_period(field, item) for item in value]
        anyof = f"({' OR '.join([within] * len(periods))})"
        return (anyof if op == "in" else f"NOT {anyof}"), [bound for period in periods for bound in period]
    if op == "between":
        (start, _), (_, end) = _date_period(field, value[0]), _date_period(field, value[1])
        return within, [start, end]
    start, end = _date_period(field, value)
    return {
        "=": (within, [start, end]),
        "!=": (f"NOT {within}", [start, end]),
        ">": (f"{expr} >= ?", [end]),
        ">=": (f"{expr} >= ?", [start]),
        "<": (f"{expr} < ?", [start]),
        "<=": (f"{expr} < ?", [end]),
    }[op]


# --- values --------------------------------------------------------------------------------------


def _type_error(field: str, type_: str, value: Any) -> FilterError:
    return FilterError(f"filter field {field!r} expects {_EXPECTED[type_]}, got {value!r}")


def _coerce(field: str, type_: str, value: Any) -> Any:
    """A filter value as the SQL parameter for a text, number or bool column."""
    if type_ == "number":
        return _to_number(field, value)
    if type_ == "bool":
        return _to_bool(field, value)
    return str(value)


def _to_number(field: str, value: Any) -> int | float:
    """1000, 1000.5, "1,000" or "$1,000" as a number."""
    number = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str):
        with contextlib.suppress(ValueError):
            number = float(_NUMBER_NOISE.sub("", value))
    if number is None or not math.isfinite(number):
        raise _type_error(field, "number", value)
    return number


def _to_bool(field: str, value: Any) -> int:
    """true/false, "yes"/"no" or 1/0 as SQLite's 1/0."""
    text = str(value).strip().lower()
    if text in _TRUE:
        return 1
    if text in _FALSE:
        return 0
    raise _type_error(field, "bool", value)


def _period(text: str) -> tuple[str, str] | None:
    """An ISO date's [start, next) period, or None if invalid.

    "2023" → ("2023", "2024"), "2023-12" → ("2023-12", "2024-01"), "2023-04-30" → ("2023-04-30", "2023-05-01").
    """
    match = _DATE.fullmatch(text.strip())
    if not match:
        return None
    year, month, day = (int(part) if part else None for part in match.groups())
    try:
        if day is not None:
            start = date(year, month, day)
            return start.isoformat(), (start + timedelta(days=1)).isoformat()
        if month is not None:
            date(year, month, 1)
            return f"{year:04d}-{month:02d}", f"{year + 1:04d}-01" if month == 12 else f"{year:04d}-{month + 1:02d}"
    except ValueError:
        return None
    return f"{year:04d}", f"{year + 1:04d}"


def _date_period(field: str, value: Any) -> tuple[str, str]:
    """A filter date (str, int year or datetime.date) as its ISO [start, next) period."""
    if isinstance(value, bool):
        raise _type_error(field, "date", value)
    period = _period(value.isoformat() if isinstance(value, date) else str(value))
    if period is None:
        raise _type_error(field, "date", value)
    return period


def _is_number(value: Any) -> bool:
    if isinstance(value, str):
        return _NUMERIC.fullmatch(value.strip()) is not None
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_iso_date(text: str) -> bool:
    text = text.strip()
    return _ISO_DATETIME.fullmatch(text) is not None and _period(text[:10]) is not None
