"""The structured route: enumerations and aggregations answered in code from annotations.

The Router's reading becomes one annotation query. Its entities and topic terms are the label query;
constraints on the bucket's metadata fields are metadata filters; a comparison on any other field
("width <= 1.2") queries that label and filters the annotation's value. Every matching row is read
(`Corpus.annotation_rows`, the rows an aggregate or export covers), so counts and sums are exact.

- No row: the filters are widened, dropped one at a time from the last, and each try is recorded
  (query, filters, rows). Still none (or, for an aggregate, no number in the rows found): the loop
  switches route; if that finds nothing either, the question ends in "clarify", saying what was tried.
- A list answers with the values of the metadata field the question names ("from which vendors"), else
  the matching documents (or, inside one document, the matching rows); more
  rows than `row_limit` is an overload: "clarify" with the total and the first rows, and every row
  kept on the result for export (`ferret export LAST --csv FILE`, `export_rows`).
- An aggregate (sum, avg, min, max, count) is `Corpus.annotations_aggregate` over the same rows, on
  the column the question names, else the first of "amount", "total", "cost", "price", "value"
  the rows have ("qty", "quantity", ... first for "how many"), else each row's first number.
Each row is a finding on its page; the numbers computed here (the aggregate, the counts) are
passed to citation verification as derived from those findings.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

from ferret.corpus.numbers import YEAR
from ferret.corpus.words import STOPWORDS
from ferret.corpus.lexical import tokenize
from ferret.corpus.tools import Corpus, write_annotations_csv
from ferret.programs.arithmetic import SUM_ASKED
from ferret.programs.result import outcome
from ferret.signatures.types import Constraint, Finding, RouteDecision

ROW_LIMIT = 50  # rows an answer may list; more is an overload
SHOWN_ROWS = 10  # rows a clarification shows
AGGREGATES = ("sum", "avg", "min", "max", "count")
MEASURES = ("amount", "total", "cost", "price", "value")
QUANTITIES = ("qty", "quantity", "units", "pcs")  # what "how many" adds up
_COMPARISONS = {"=", ">", ">=", "<", "<=", "between"}
_AGGREGATE_CUES = {
    "sum": r"\b(total|sum|altogether|combined|in all|how many|how much)\b",
    "avg": r"\b(average|mean)\b",
    "min": r"\b(min|minimum|lowest|smallest|least|cheapest)\b",
    "max": r"\b(max|maximum|highest|largest|most|biggest|greatest)\b",
    "count": r"\b(how many|number of|count)\b"}
_ASKING_WORDS = frozenset("""much spent spend spending paid pay cost costs bought buy purchased purchase total totals sum
altogether combined average mean number count list show give tell name documents files
contain contains contained include includes included we our us i""".split())
_WHICH = re.compile(r"\bwhich\s+([A-Za-z][\w'-]*)", re.IGNORECASE)  # "which receipts contain ...": what is listed
_OP_WORDS = {"sum": "Sum", "avg": "Average", "min": "Minimum", "max": "Maximum", "count": "Count"}
# "List every...", "Which receipts contain...", "From which vendors did...": which things (a plural, then
# a verb) match, not which one ("Which magazine was started first?")
_LIST_CUE = re.compile(r"^\W*(?:list|enumerate|name (?:all|every)|(?:\w+ )?which (?:\w+ ){0,2}\w+s (?:are|were|have|had"
                       r"|can|could|contain|contained|did|do|does|include|included|use|used|exceed|match))\b",
                       re.IGNORECASE)


@dataclass
class TableQuery:
    """One annotation query: a label query, typed filters and, for an aggregate, its operation."""

    label_query: str
    filters: dict
    bucket: str | None = None
    doc_id: str | None = None
    op: str = "list"


@dataclass
class TableAnswer:
    """What the structured route concluded: an outcome for Synthesis's fields (None when nothing
    matched), the rows read, the findings cited and the numbers computed from them."""

    outcome: dict | None
    attempts: list[dict]
    rows: list[dict] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    derived: list[float] = field(default_factory=list)


def table_query(decision: RouteDecision, corpus: Corpus, question: str, bucket: str | None,
                doc_id: str | None) -> TableQuery | None:
    """The query for a structured list or aggregate question, or None for any other question.

    The label query is the Router's entities and topic terms that the question words (`grounded`).
    Constraints on the bucket's fields are filters (none for a question about one document); a
    constraint on a field of another bucket is dropped; the first numeric comparison on a field no
    bucket has ("width <= 1.2") becomes the label query with a filter on the annotation's value."""
    if decision.route != "structured" or (decision.intent != "list" and decision.aggregate == "none"):
        return None
    fields, known_anywhere = (set() if doc_id else corpus.filter_fields(bucket)), corpus.filter_fields(None)
    filters, label = {}, ""
    for constraint in decision.constraints:
        if constraint.field in fields:
            filters[constraint.field] = {constraint.op: constraint.value}
        elif not label and constraint.field not in known_anywhere and constraint.op in _COMPARISONS \
                and _numeric(constraint):
            label, filters["value"] = constraint.field, {constraint.op: constraint.value}
    label_query = label or " ".join(dict.fromkeys(grounded([*decision.entities, *decision.topic_terms], question)))
    if not label_query.strip():
        return None
    op = decision.aggregate if decision.aggregate in AGGREGATES else "list"
    return TableQuery(label_query, filters, bucket, doc_id, op)


def grounded(terms: list[str], question: str) -> list[str]:
    """The Router's terms whose words all occur in the question (compared as the label index tokenizes
    them: stemmed, without stopwords; numbers are not checked, and a term of numbers only is dropped: a
    year is a filter, not a label). The embedded 0.5B Router fills
    its terms with field names from the overview and made-up names, and an exact count or sum over
    the labels they match answers nothing that was asked. (The loop's searches, which rank rather
    than count, take every term.)"""
    asked = _words(question)
    return [term for term in terms if (words := _words(term)) and words <= asked]


def item_words(question: str, names: set[str] = frozenset()) -> str:
    """What a list or aggregate question counts, sums or lists, from its wording: its words but the
    stopwords, numbers, the words that ask ("how much was spent", "in total", "which receipts
    contain": the word after "which" names what is listed) and the `names` of metadata fields and
    buckets ("vendors"). The label query when the embedded Router wrote no term the question holds (it
    left the terms empty for "How much was spent on batteries in 2023 in total?" beside a 10-K)."""
    named = _words(" ".join([*names, *_WHICH.findall(question)]))
    return " ".join(word for word in re.findall(r"[A-Za-z][\w'-]*", question)
                    if word.lower() not in STOPWORDS and word.lower() not in _ASKING_WORDS and not _words(word) & named)


def year_filter(constraints: list[Constraint], question: str, date_fields: set[str]) -> Constraint | None:
    """A filter to the one year the question names, on a date field in scope (the answer's widening tries
    the period on the others, `_widened`), when no constraint is on a date field yet ("How much was spent
    on batteries in 2023 in total?" read with no constraint); else None."""
    years = set(YEAR.findall(question))
    if len(years) != 1 or not date_fields or any(c.field in date_fields for c in constraints):
        return None
    (year,) = years
    return Constraint(field=min(date_fields), op="between", value=[f"{year}-01-01", f"{year}-12-31"])


def asked_aggregate(op: str, question: str) -> str:
    """The Router's aggregate when the question's wording asks for it ("total", "how many", "average",
    "highest"...), else "none": an aggregate over the rows of a lookup question sums unrelated rows. A
    question ending "in total" (`SUM_ASKED`) asks for a sum when the Router read none."""
    cue = _AGGREGATE_CUES.get(op)
    if op == "none" and SUM_ASKED.search(question):
        return "sum"
    return op if cue and re.search(cue, question, re.IGNORECASE) else "none"


def asked_list(question: str) -> bool:
    """True when the question's wording asks which things match, or to list them. The embedded 0.5B
    Router reads such questions as lookups (all 6 sample questions of the demo's eval: intent "lookup",
    but for one that begins "List every"), so the loop reads them as lists itself."""
    return bool(_LIST_CUE.search(question))


def answer_from_annotations(corpus: Corpus, query: TableQuery, question: str,
                            row_limit: int = ROW_LIMIT) -> TableAnswer:
    """Run the query, widening its filters until rows match, and answer from the rows."""
    attempts, rows, filters = [], [], query.filters
    for filters in _widened(query.filters, corpus.date_fields(query.bucket)):
        try:
            rows = corpus.annotation_rows(query.label_query, filters or None, query.bucket, query.doc_id)
        except ValueError as error:  # a filter the bucket cannot take: recorded, then widened away
            attempts.append(_attempt(query, filters, 0, str(error)))
            continue
        attempts.append(_attempt(query, filters, len(rows)))
        if rows:
            break
    if not rows:
        return TableAnswer(None, attempts)
    if query.op != "list":
        return _aggregate(corpus, query, filters, rows, question, attempts)
    if len(rows) > row_limit:
        return _overload(query, filters, rows, row_limit, attempts)
    return _listing(query, rows, attempts, question)


def nothing_matched(attempts: list[dict], tried: list[str]) -> dict:
    """The clarification when neither the structured route nor its fallbacks found anything."""
    queries = "; ".join(f"{a['query']!r}{_where(a)}: {a['rows']} rows" + (f" ({a['error']})" if a.get("error") else "")
                        for a in attempts)
    searches = f" Other searches found nothing: {'; '.join(tried)}." if tried else ""
    return outcome("clarify", clarification=(
        f"Nothing matched: {queries}.{searches} Which document, label or period should I look in?"))


def export_rows(result, path: str | Path) -> dict:
    """Write every row a structured answer read (`result["rows"]`, of a result or its JSON) to a CSV
    file; returns path, rows and columns."""
    rows = result.get("rows")
    if not rows:
        raise ValueError("this result has no rows to export (only structured list and aggregate answers do)")
    return write_annotations_csv(rows, path)


# --- outcomes ---------------------------------------------------------------------------------------


def _listing(query: TableQuery, rows: list[dict], attempts: list[dict], question: str) -> TableAnswer:
    rows = sorted(rows, key=lambda row: (row["doc_id"], row["page"]))  # listed in document order
    findings = [_finding(row) for row in rows]
    documents = list(dict.fromkeys(row["doc_id"] for row in rows))
    values: dict[str, list[str]] = {}
    if field := named_field(rows, question):  # "from which vendors...": the field's values, with their documents
        for row in rows:
            values.setdefault(str(row["metadata"][field]), []).append(row["doc_id"])
        items = [f"{value} ({', '.join(dict.fromkeys(docs))})" for value, docs in values.items()]
        answer = f"{len(values)} {field} values over {len(documents)} documents match {query.label_query!r}: {'; '.join(items)}."
    elif len(documents) > 1:
        labels = {doc: list(dict.fromkeys(r["label"] for r in rows if r["doc_id"] == doc)) for doc in documents}
        items = [f"{doc} ({', '.join(labels[doc][:3])})" for doc in documents]
        answer = f"{len(documents)} documents match {query.label_query!r}: {'; '.join(items)}."
    else:
        answer = f"{len(rows)} rows of {documents[0]} match {query.label_query!r}: " + "; ".join(
            f"{r['label']}: {r['value_text']}" for r in rows) + "."
    cited = outcome("answer", answer, sources=list(range(1, len(findings) + 1)), confidence=1.0)
    return TableAnswer(cited, attempts, rows, findings, [float(len(documents)), float(len(rows)), float(len(values))])


def _overload(query: TableQuery, filters: dict, rows: list[dict], row_limit: int, attempts: list[dict]) -> TableAnswer:
    shown = rows[:SHOWN_ROWS]
    lines = "; ".join(f"{r['doc_id']}: {r['label']} {r['value_text']}" for r in shown)
    clarification = (f"{len(rows)} rows match {query.label_query!r}{_where({'filters': filters, 'bucket': query.bucket})}"
                     f", more than the {row_limit} an answer lists. The first {len(shown)}: {lines}. "
                     "Which vendor, period or document should I narrow it to? All rows are kept for export "
                     "(ferret export LAST --csv FILE).")
    return TableAnswer(outcome("clarify", clarification=clarification), attempts, rows,
                       [_finding(row) for row in shown], [float(len(rows)), float(row_limit), float(len(shown))])


def _aggregate(corpus: Corpus, query: TableQuery, filters: dict, rows: list[dict], question: str,
               attempts: list[dict]) -> TableAnswer:
    column = measure(rows, question)
    result = corpus.annotations_aggregate(query.label_query, query.op, filters=filters or None, bucket=query.bucket,
                                          field=column, doc_id=query.doc_id)
    counted = [row for row in rows if query.op == "count" or _number(row, column) is not None]
    findings = [_finding(row, column) for row in counted]
    value = result["value"]
    if value is None:  # the matching rows hold no number: nothing to compute, the loop reads text instead
        attempts[-1]["error"] = f"no numeric value to {query.op}"
        return TableAnswer(None, attempts)
    what = f" of {column}" if column and query.op != "count" else ""
    answer = (f"{_OP_WORDS[query.op]}{what} over {result['n']} rows matching {query.label_query!r} "
              f"in {len({r['doc_id'] for r in counted})} documents: {_format(value)}.")
    derived = [float(value), float(result["n"]), float(len({r["doc_id"] for r in counted}))]
    cited = outcome("answer", answer, sources=list(range(1, len(findings) + 1)), confidence=1.0)
    return TableAnswer(cited, attempts, rows, findings, derived)


def named_field(rows: list[dict], question: str) -> str | None:
    """The document metadata field the question names ("vendors" → vendor) that every row has, if any."""
    asked = set(tokenize([question])[0])
    fields = [key for key in rows[0]["metadata"] if all(row["metadata"].get(key) not in (None, "") for row in rows)]
    return next((key for key, words in zip(fields, tokenize(fields) if fields else []) if words and set(words) <= asked),
                None)


def measure(rows: list[dict], question: str) -> str | None:
    """The column to aggregate: one the question names (its words compared as in `grounded`; with the
    question's year, if a column has it), else for "how many" the first of QUANTITIES the rows have,
    else the first of MEASURES, else None (each row's first number)."""
    columns = list(dict.fromkeys(key for row in rows for key, number in row["numbers"].items() if number is not None))
    asked = _words(question)
    named = [c for c in columns if (names := _words(c)) and names <= asked]
    if named:  # "Revenue 2022" over "Revenue 2023" for a question about 2022
        years = set(re.findall(r"\d+", question))
        return max(named, key=lambda column: len(set(re.findall(r"\d+", column)) & years))
    preferred = (*QUANTITIES, *MEASURES) if re.search(r"\bhow many\b", question, re.IGNORECASE) else MEASURES
    return next((c for name in preferred for c in columns if name in c.lower()), None)


# --- helpers ----------------------------------------------------------------------------------------


def _words(text: str) -> set[str]:
    """The text's words as the label index tokenizes them (stemmed, no stopwords), without numbers."""
    return {token for token in tokenize([text])[0] if not token.isdigit()}


def _widened(filters: dict, date_fields: set[str]) -> list[dict]:
    """The filters, then every way of dropping one of them, then two, and so on down to none; each
    period on a date field is also tried on the other date fields. The embedded Router put "2023" on
    a contract's `effective_date` and the word "batteries" in `counterparty` for a question about
    receipts (whose field is `date`): dropping the last filter first summed every year's rows."""
    keys, widened = list(filters), []
    for size in range(len(keys), -1, -1):
        for kept in combinations(keys, size):
            variants = [{key: filters[key] for key in kept}]
            for key in (key for key in kept if key in date_fields):
                variants += [{**{k: v for k, v in variant.items() if k != key}, other: variant[key]}
                             for variant in list(variants) for other in sorted(date_fields - set(variant))]
            widened += [variant for variant in variants if variant not in widened]
    return widened


def _attempt(query: TableQuery, filters: dict, rows: int, error: str = "") -> dict:
    attempt = {"query": query.label_query, "filters": filters, "bucket": query.bucket, "rows": rows}
    return {**attempt, "error": error} if error else attempt


def _where(attempt: dict) -> str:
    """" (in invoices, where year = 2023, value <= 1.2)" for a query's bucket and filters."""
    parts = [f"in {attempt['bucket']}"] if attempt.get("bucket") else []
    conditions = [f"{name} {op} {_shown(value)}" for name, condition in (attempt.get("filters") or {}).items()
                  for op, value in condition.items()]
    if conditions:
        parts.append(f"where {', '.join(conditions)}")
    return f" ({', '.join(parts)})" if parts else ""


def _shown(value) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_shown(v) for v in value) + "]"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _finding(row: dict, column: str | None = None) -> Finding:
    value = _number(row, column) if column else None
    return Finding(label=row["label"][:80], value=value if value is not None else row["value_text"][:40],
                   unit=row["unit"] or None, doc_id=row["doc_id"], page=row["page"], section=row["section"][:80],
                   context=f"{row['label']}: {row['value_text']}"[:200])


def _number(row: dict, column: str | None) -> float | None:
    return row["numbers"].get(column) if column else row["value"]


def _numeric(constraint: Constraint) -> bool:
    values = constraint.value if isinstance(constraint.value, list) else [constraint.value]
    return all(isinstance(v, (int, float)) for v in values)


def _format(value: float | int) -> str:
    return f"{value:,.2f}".rstrip("0").rstrip(".") if isinstance(value, float) else f"{value:,}"
