"""The structured route with the scripted LM: lists and aggregates answered from annotations in code,
filters widened when nothing matches, overload and nothing-matched clarifications, export of rows."""
from __future__ import annotations

import csv
import json

import dspy
import pytest

from ferret.corpus.tools import Corpus
from ferret.cli import main
from ferret.programs.iterative import IterativeRetriever
from ferret.programs.structured import (asked_aggregate, asked_list, export_rows, grounded, item_words, measure,
                                        table_query, year_filter)
from ferret.signatures.types import Constraint, RouteDecision
from tests.fakes import scripted_lm


def ask(corpus, decision, question="Which receipts contain tires?", doc_id=None, **options):
    lm, engine = scripted_lm({"route": {"decision": {"route": "structured", **decision}}})
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        result = IterativeRetriever(corpus, **options)(question=question, doc_id=doc_id)
    return result, engine


def structured_step(result):
    return next(step for step in result.trajectory if step["step"] == "structured")


def test_a_list_is_answered_from_every_matching_row_with_verified_citations(small_corpus):
    result, engine = ask(small_corpus, {"intent": "list", "buckets": ["invoices"], "topic_terms": ["tires"]})
    assert result.status == "answer"
    assert result.answer == "2 documents match 'tires': inv1 (All-season tires); inv2 (Winter tires)."
    assert result.citations_verified and {(c["doc_id"], c["page"]) for c in result.citations} == {("inv1", 1), ("inv2", 1)}
    assert engine.steps() == ["route"]  # no LM reads rows the query already selected
    assert [row["label"] for row in result.rows] == ["All-season tires", "Winter tires"]


def test_an_aggregate_sums_the_column_the_rows_have_and_metadata_filters_apply(small_corpus):
    decision = {"intent": "compute", "aggregate": "sum", "buckets": ["invoices"], "topic_terms": ["tires"]}
    result, _ = ask(small_corpus, decision, question="How much was spent on tires?")
    assert result.status == "answer" and result.answer.endswith(": 740.")  # 480.00 + 260.00, not the Qty 4 + 2
    assert result.citations_verified and result.unverified_numbers == []
    filtered = {**decision, "constraints": [{"field": "year", "op": "=", "value": 2023}]}
    result, _ = ask(small_corpus, filtered, question="How much was spent on tires?")
    assert result.answer == "Sum of Amount over 1 rows matching 'tires' in 1 documents: 480."
    assert structured_step(result)["attempts"] == [
        {"query": "tires", "filters": {"year": {"=": 2023}}, "bucket": "invoices", "rows": 1}]


def test_filters_are_widened_when_nothing_matches(small_corpus):
    decision = {"intent": "list", "buckets": ["invoices"], "topic_terms": ["tires"],
                "constraints": [{"field": "year", "op": "=", "value": 2019}]}
    result, _ = ask(small_corpus, decision)
    assert [a["rows"] for a in structured_step(result)["attempts"]] == [0, 2]
    assert result.status == "answer" and len(result.rows) == 2


def test_an_overload_asks_to_narrow_and_keeps_every_row_for_export(small_corpus, tmp_path):
    result, _ = ask(small_corpus, {"intent": "list", "buckets": ["invoices"], "topic_terms": ["tires"]}, row_limit=1)
    assert result.status == "clarify" and result.answer == ""
    assert result.clarification.startswith("2 rows match 'tires' (in invoices), more than the 1 an answer lists.")
    written = export_rows(result, tmp_path / "tires.csv")
    with open(written["path"], newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert sorted((r["doc_id"], r["label"], r["Amount"]) for r in rows) == [("inv1", "All-season tires", "480.00"),
                                                                            ("inv2", "Winter tires", "260.00")]


def test_nothing_matched_switches_route_then_asks_saying_what_was_tried(small_corpus):
    decision = {"intent": "list", "buckets": ["invoices"], "topic_terms": ["spaceships"], "fallbacks": ["hybrid"],
                "constraints": [{"field": "year", "op": "=", "value": 2023}]}
    result, engine = ask(small_corpus, decision, question="Which receipts list spaceships?", max_iterations=3)
    assert [a["rows"] for a in structured_step(result)["attempts"]] == [0, 0]
    methods = [step["strategy"].split()[0] for step in result.trajectory if step["step"] == "extract"]
    assert methods and "annotations" not in methods  # the widened query already came back empty
    assert result.status == "clarify"
    assert "'spaceships' (in invoices, where year = 2023): 0 rows; 'spaceships' (in invoices): 0 rows" in result.clarification
    assert "hybrid search for passages, global failed" in result.clarification


def test_an_aggregate_over_rows_without_numbers_falls_back_to_the_text_routes(small_corpus):
    decision = {"intent": "compute", "aggregate": "sum", "buckets": ["invoices"], "topic_terms": ["vendor"]}
    result, _ = ask(small_corpus, decision, question="What is the sum of vendors?", max_iterations=1)
    assert structured_step(result)["attempts"] == [
        {"query": "vendor", "filters": {}, "bucket": "invoices", "rows": 2, "error": "no numeric value to sum"}]
    assert any(step["step"] == "read" for step in result.trajectory)  # the first rung of the text routes
    assert result.status == "clarify" and "'vendor' (in invoices): 2 rows (no numeric value to sum)" in result.clarification


def test_a_lookup_question_does_not_take_the_table_path(small_corpus):
    result, _ = ask(small_corpus, {"intent": "lookup", "topic_terms": ["tires"]}, question="What did the tires cost?",
                    max_iterations=1)
    assert not any(step["step"] == "structured" for step in result.trajectory) and result.rows == []


def test_a_comparison_on_a_field_no_bucket_has_queries_that_label_and_filters_values(small_corpus):
    decision = RouteDecision(intent="list", route="structured", topic_terms=["tires"], constraints=[
        {"field": "width", "op": "<=", "value": 1.2}, {"field": "height", "op": "<=", "value": 2},
        {"field": "year", "op": "=", "value": 2023}])
    query = table_query(decision, small_corpus, "Which tires are at most 1.2 wide?", "invoices", None)
    assert (query.label_query, query.filters, query.op) == ("width", {"value": {"<=": 1.2}, "year": {"=": 2023}}, "list")
    # "year" is a field of the invoices only: a question about a report's rows drops it and keeps the terms
    query = table_query(decision.model_copy(update={"constraints": decision.constraints[2:]}), small_corpus,
                        "Which tires?", "reports", None)
    assert (query.label_query, query.filters) == ("tires", {})
    assert table_query(decision.model_copy(update={"route": "hybrid"}), small_corpus, "Which tires?", None, None) is None
    assert table_query(decision.model_copy(update={"constraints": []}), small_corpus, "Which parts?", None, None) is None


def test_measure_prefers_the_column_the_question_names():
    rows = [{"numbers": {"Qty": 4.0, "Unit price": 120.0, "Amount": 480.0}}]
    assert measure(rows, "How many tires, by qty?") == "Qty"
    assert measure(rows, "How much was spent?") == "Amount"
    assert measure(rows, "How many tires did we buy?") == "Qty"
    assert measure(rows, "What is the highest of the unit prices paid?") == "Unit price"  # words as stemmed
    assert measure([{"numbers": {"2023": 1.0, "2022": 2.0}}], "Revenue?") is None
    by_year = [{"numbers": {"Revenue 2023": 412.6, "Revenue 2022": 380.1}}]
    assert measure(by_year, "What was Consumer segment revenue in 2022?") == "Revenue 2022"
    assert measure(by_year, "What was Consumer segment revenue?") == "Revenue 2023"  # the first the rows give


def test_the_routers_terms_and_aggregate_must_come_from_the_question():
    question = "How much was spent on batteries in 2023 in total?"
    # what the embedded Router wrote for it: field names, a made-up vendor, a year, and the question's word
    terms = ["counterparty", "effective_date", "Google", "2023", "Batteries", "battery storage", "spent on"]
    assert grounded(terms, question) == ["Batteries", "spent on"]
    assert grounded(["ACME's 2023 service contract"], "In ACME's 2023 service contract, how many days?") == [
        "ACME's 2023 service contract"]
    assert asked_aggregate("sum", question) == "sum"
    assert asked_aggregate("max", question) == "none"
    assert asked_aggregate("sum", "What was Consumer segment revenue in 2022?") == "none"
    assert asked_aggregate("count", "How many tires did we buy in 2023?") == "count"
    assert asked_aggregate("none", "What is the total of invoice SSD-23-0385?") == "none"
    assert asked_aggregate("none", question) == "sum"  # it ends "in total": a sum whatever the Router read
    assert asked_aggregate("none", "What was the change in Total operating income in 2019?") == "none"


def test_a_total_the_router_read_as_a_lookup_is_summed_over_the_period_on_the_date_field_that_has_it(sample_index):
    # the embedded Router's reading in `ferret demo`: a lookup, the item as a contract's counterparty, and
    # the year on a contract's date field; the receipts' field is `date`
    decision = {"intent": "lookup", "aggregate": "none", "buckets": ["contracts", "datasheets", "invoices"],
                "entities": ["batteries"], "topic_terms": ["batteries"], "constraints": [
                    {"field": "counterparty", "op": "=", "value": "batteries"},
                    {"field": "effective_date", "op": "between", "value": ["2023-01-01", "2023-12-31"]}]}
    result, engine = ask(Corpus(sample_index), decision, question="How much was spent on batteries in 2023 in total?",
                         repairs=True)
    assert result.answer == "Sum of Amount over 11 rows matching 'batteries' in 7 documents: 8,417.43."  # the gold
    assert [(a["filters"], a["rows"]) for a in structured_step(result)["attempts"]][-2:] == [
        ({"effective_date": {"between": ["2023-01-01", "2023-12-31"]}}, 0),
        ({"date": {"between": ["2023-01-01", "2023-12-31"]}}, 11)]
    assert result.citations_verified and engine.steps() == ["route"]


def test_a_question_ending_in_total_goes_to_the_structured_route_whatever_the_router_chose(small_corpus):
    # on an index with a 10-K beside the receipts, the embedded Router routed this question to long_text
    question = "How much was spent on tires in total?"
    lm, engine = scripted_lm({"route": {"decision": {"intent": "lookup", "route": "long_text", "fallbacks": ["hybrid"],
                                                     "buckets": ["invoices"], "topic_terms": ["tires"]}}})
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        result = IterativeRetriever(small_corpus, repairs=True)(question=question)
        plain = IterativeRetriever(small_corpus, repairs=False)(question=question)
    route = next(step for step in result.trajectory if step["step"] == "route")
    assert route["structured_from_wording"] and result.answered_by == "structured"
    assert result.answer == "Sum of Amount over 2 rows matching 'tires' in 2 documents: 740."
    assert plain.answered_by != "structured" and not any(step["step"] == "structured" for step in plain.trajectory)


@pytest.mark.parametrize("question, listed", [
    ("Which receipts contain tires?", True),
    ("From which vendors did we buy batteries in 2023?", True),
    ("Which solar panels are at most 1.2 m wide?", True),
    ("List every cable line item on all receipts, with its quantity and amount.", True),
    ("Which magazine was started first, Arthur's Magazine or First for Women?", False),  # which one, of two
    ("What is the total of invoice SSD-23-0385?", False),
    ("Listed companies with a dividend?", False),
])
def test_a_question_asks_for_a_list_by_its_wording(question, listed):
    assert asked_list(question) is listed


def test_a_list_question_the_router_reads_as_a_lookup_is_answered_as_a_list_but_not_inside_one_document(small_corpus):
    decision = {"intent": "lookup", "topic_terms": ["tires"]}
    result, engine = ask(small_corpus, decision, question="Which receipts contain tires?", max_iterations=1, repairs=True)
    assert result.trajectory[0]["list_from_wording"] and result.status == "answer"
    assert result.answer == "2 documents match 'tires': inv1 (All-season tires); inv2 (Winter tires)."
    assert result.citations_verified and engine.steps() == ["route"]
    scoped, engine = ask(small_corpus, decision, question="Which receipts contain tires?", doc_id="inv1",
                         max_iterations=1, repairs=True)
    assert "list_from_wording" not in scoped.trajectory[0] and "read" in engine.steps()


def test_a_lookup_the_router_calls_an_aggregate_is_not_summed_and_foreign_terms_are_not_counted(small_corpus):
    decision = {"intent": "lookup", "aggregate": "sum", "topic_terms": ["tires"]}
    result, engine = ask(small_corpus, decision, question="What did the tires cost?", max_iterations=1, repairs=True)
    assert result.trajectory[0]["dropped_aggregate"] == "sum"
    assert "structured" not in [step["step"] for step in result.trajectory]
    assert "read" in engine.steps()  # the loop's first rung reads the question instead
    listing = {"intent": "list", "topic_terms": ["tires", "Total"]}
    result, _ = ask(small_corpus, listing, question="Which receipts contain tires?")
    assert structured_step(result)["attempts"][0]["query"] == "tires"  # "Total" would match every receipt


def test_ferret_export_last_writes_the_last_answers_rows(small_corpus, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FERRET_HOME", str(tmp_path))
    lm, _ = scripted_lm({"route": {"decision": {"route": "structured", "intent": "list", "buckets": ["invoices"],
                                                "topic_terms": ["tires"]}}})
    monkeypatch.setattr("ferret.programs.lm.make_lm", lambda spec=None: lm)
    assert main(["ask", "Which receipts contain tires?", "--index", str(small_corpus.store.dir), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "answer"
    assert main(["export", "LAST", "--csv", str(tmp_path / "out.csv")]) == 0
    assert "2 rows written" in capsys.readouterr().out
    assert len((tmp_path / "out.csv").read_text().splitlines()) == 3
    (tmp_path / "runs" / "results" / "last.json").write_text('{"status": "fail", "rows": []}')
    assert main(["export", "LAST", "--csv", str(tmp_path / "none.csv")]) == 2
    assert "no rows to export" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["not json", ""])
def test_ferret_export_names_a_bad_result_file(tmp_path, capsys, value):
    bad = tmp_path / "result.json"
    bad.write_text(value)
    assert main(["export", str(bad), "--csv", str(tmp_path / "x.csv")]) == 2
    assert f"{bad} is not a result JSON" in capsys.readouterr().err


def test_an_aggregate_the_router_named_nothing_of_is_asked_with_the_questions_own_words(sample_index):
    # the embedded Router's reading beside a 10-K: structured, but no entity, term or aggregate
    decision = {"intent": "lookup", "aggregate": "none", "entities": [], "topic_terms": [], "constraints": []}
    question = "How much was spent on batteries in 2023 in total?"
    result, engine = ask(Corpus(sample_index), decision, question=question, repairs=True)
    route = next(step for step in result.trajectory if step["step"] == "route")
    assert route["terms_from_wording"] == "batteries" and engine.steps() == ["route"]
    assert result.answer == "Sum of Amount over 11 rows matching 'batteries' in 7 documents: 8,417.43."  # the gold
    assert route["year_from_wording"]["value"] == ["2023-01-01", "2023-12-31"]
    assert structured_step(result)["attempts"][-1]["filters"] == {"date": {"between": ["2023-01-01", "2023-12-31"]}}
    unrepaired, _ = ask(Corpus(sample_index), decision, question=question, repairs=False)
    assert unrepaired.answered_by != "structured"
    lookup, _ = ask(Corpus(sample_index), {**decision, "aggregate": "sum"}, question="What was total revenue last year?",
                    repairs=True)  # "total" names a line, not a sum over rows: no terms or year made up for it
    route = next(step for step in lookup.trajectory if step["step"] == "route")
    assert "terms_from_wording" not in route and "year_from_wording" not in route and lookup.answered_by != "structured"
    assert item_words("From which vendors did we buy batteries in 2023?", {"vendor", "date"}) == "batteries"
    assert item_words("Which invoices include toner?") == "toner"  # what "which" lists is no item
    assert item_words("How much did we spend on toner in the invoices?", {"invoices"}) == "toner"  # a bucket's name
    assert year_filter([], "How many tires in 2022 and 2023?", {"date"}) is None  # two years: not one period
    assert year_filter([], "How many tires in 2023?", set()) is None
    assert year_filter([Constraint(field="due", op=">", value="2023-06-01")], "Tires in 2023?", {"date", "due"}) is None
