"""A filing's metric of a fiscal year from its statements' line items, in code (programs/statement_metric.py)."""
from __future__ import annotations

import pytest

from ferret.corpus.numbers import parse_number
from ferret.programs.arithmetic import compute
from ferret.programs.grounding import GROUNDED, ON_PAGE, asks_direction, ground
from ferret.programs.iterative import IterativeRetriever
from ferret.programs.lm import answering
from ferret.programs.passage_answer import computed_answer
from ferret.programs.row_arithmetic import row_calculation
from ferret.programs.statement_metric import statement_calculation, statement_verdict, verdict_answer
from ferret.programs.table_rung import table_read
from tests.fakes import scripted_lm


class _Filing:
    """A corpus of one filing "f": pages of table rows ({page: (unit line, {label: {header: printed}})})."""

    def __init__(self, pages: dict[int, tuple[str, list[tuple[str, dict[str, str]]]]]):
        self.texts = {page: unit for page, (unit, _) in pages.items()}
        self.rows = [{"annotation_id": f"row:{page}:{i}", "kind": "row", "label": label, "fields": fields, "doc_id": "f",
                      "page": page, "section": "Statements", "score": 1.0,
                      "value": next((parse_number(v) for v in fields.values() if parse_number(v) is not None), None)}
                     for page, (_, rows) in pages.items() for i, (label, fields) in enumerate(rows)]

    def annotations_search(self, query, bucket=None, doc_id=None, top_k=20):
        return [dict(row) for row in self.rows if doc_id in (None, row["doc_id"])][:top_k]

    def page_text(self, doc_id, page):
        return self.texts.get(page)

    def page_cells(self, doc_id, page):
        return [{"label": row["label"], "cells": [(h, v, parse_number(v)) for h, v in row["fields"].items()]}
                for row in self.rows if row["page"] == page]


YEARS = ("Year Ended December 31, 2020", "Year Ended December 31, 2019")
FILING = _Filing({
    1: ("(In millions, except per share data)", [
        ("Net sales", dict(zip(YEARS, ("$2,000", "$1,600")))),
        ("Cost of sales", dict(zip(YEARS, ("1,200", "1,000")))),
        ("Operating income", dict(zip(YEARS, ("300", "200")))),
        ("Net income", dict(zip(YEARS, ("250", "150")))),
        ("Net income", dict(zip(YEARS, ("2.50", "1.50")))),  # per share: a hundredth of the amount
    ]),
    2: ("(In millions)", [
        ("Inventories", {"December 31, 2020": "500", "December 31, 2019": "400"}),
        ("Total current assets", {"December 31, 2020": "1,800", "December 31, 2019": "1,500"}),
        ("Accounts payable", {"col1": "300", "col2": "260"}),  # headers read as none: its page's years
        ("Total current liabilities", {"December 31, 2020": "900", "December 31, 2019": "1,000"}),
    ]),
    3: ("(In millions)", [
        ("Net cash provided by operating activities", {"In Millions": "$700", "Fiscal 2020": "$640"}),  # out of line
        ("Net cash provided by operating activities", dict(zip(YEARS, ("640", "560")))),
        ("Purchases of property and equipment", dict(zip(YEARS, ("(140)", "(120)")))),
        ("Dividends paid", dict(zip(YEARS, ("(100)", "(90)")))),
        ("Inventories", dict(zip(YEARS, ("(100)", "(30)")))),  # a change, beside the balance sheet's amount
    ]),
})


def value(question: str, corpus=FILING) -> float | None:
    calculation = statement_calculation(corpus, question, "f")
    if calculation is None:
        return None
    return round(compute(calculation.expression).value if calculation.expression else parse_number(calculation.answer), 4)


@pytest.mark.parametrize("question, expected", [
    ("What is the FY2020 days payable outstanding (DPO)? DPO is defined as: 365 * (average accounts payable between "
     "FY2019 and FY2020) / (FY2020 COGS + change in inventory between FY2019 and FY2020). Round to two decimal places.",
     round(365 * (300 + 260) / 2 / (1200 + 500 - 400), 4)),
    ("What is the FY2020 working capital ratio? Define working capital ratio as total current assets divided by total "
     "current liabilities. Round your answer to two decimal places.", 2.0),
    ("What is the FY2020 operating cash flow ratio? Operating cash flow ratio is defined as: cash from operations / "
     "total current liabilities.", round(640 / 900, 4)),
    ("What is the FY2019 - FY2020 2 year average unadjusted operating income % margin? Answer in units of percents.",
     round((200 / 1600 * 100 + 300 / 2000 * 100) / 2, 4)),
    ("What is the FY2020 net profit margin (as a %)?", 12.5),  # the amount's row, not the per-share one
    ("What is the year-over-year change in revenue from FY2019 to FY2020 (in units of percents)?", 25.0),
    ("What is the FY2020 retention ratio (using total cash dividends paid and net income attributable to "
     "shareholders)?", 0.6),
    ("What is the FY2020 free cash flow (FCF)? Answer in USD millions.", 500.0),  # a payment's sign aside
    ("What is the FY2020 total amount of inventories? Answer in USD millions.", 500.0),  # the balance, not the change
    ("How much did the company generate in cash flow from operating activities in FY2019?", 560.0),
])
def test_the_metric_is_computed_from_the_rows_and_years_it_needs(question, expected):
    assert value(question) == expected


def test_a_filings_line_item_comes_before_one_rows_cell():
    question = "What were the net sales in FY2020? Answer in USD millions."
    assert row_calculation(FILING, question, doc_id="f").cell  # a row's cell would answer it too
    assert table_read(FILING, question, doc_id="f").how == "the filing's line items"  # with its statement's unit


def test_an_amount_asked_in_millions_of_a_filing_printed_in_thousands_is_divided():
    thousands = _Filing({1: ("(In thousands)", [("Total current liabilities", {"2020": "5,466,312", "2019": "4,586,657"})])})
    calculation = statement_calculation(thousands, "What is the FY2020 total current liabilities (in USD millions)?", "f")
    assert calculation.expression == "(5466312) / 1000"
    assert statement_calculation(thousands, "What is the FY2020 total current liabilities?", "f").answer == "5,466,312"


def test_the_expressions_own_numbers_are_not_quoted_from_a_rows_note_mark():
    marked = _Filing({1: ("(In millions)", [
        ("Revenue", {"2020": "300", "2019": "200", "2018": "100"}),
        ("Net income (3)", {"2020": "30", "2019": "10", "2018": "5"})])})
    question = "What is the FY2018 - FY2020 3 year average net profit margin (as a %)?"
    calculation = statement_calculation(marked, question, "f")
    assert calculation.constants == (100, 100, 100, 3)
    read = computed_answer(question, calculation.expression, calculation.hits, calculation.constants)
    assert read.answer == "6.6667" and sorted(float(f.value) for f in read.findings) == [5, 10, 30, 100, 200, 300]
    quoted = computed_answer(question, calculation.expression, calculation.hits)  # without them: "(3)" is a mark, no number
    assert 3.0 not in [abs(parse_number(f.value)) for f in quoted.findings]


def test_the_rows_of_a_metric_share_their_pages_unit():
    mixed = _Filing({1: ("(In millions)", [("Net cash provided by operating activities", {"2020": "2,912.9"})]),
                     2: ("(In thousands)", [("Net cash provided by operating activities", {"2020": "2,912,853"}),
                                            ("Total current liabilities", {"2020": "3,527,457"})])})
    question = "What is the FY2020 operating cash flow ratio? Operating cash flow ratio is defined as: cash from operations / total current liabilities."
    assert statement_calculation(mixed, question, "f").expression == "2912853 / 3527457"


@pytest.mark.parametrize("question, doc_id", [
    ("What is the FY2020 total amount of inventories?", None),  # no one filing
    ("What is the total amount of inventories in 2020?", "f"),  # no fiscal year named
    ("Does the company have an improving operating margin as of FY2020?", "f"),  # yes or no
    ("Why did the FY2020 net sales change?", "f"),  # a reason
    ("What were the FY2020 net sales and cost of sales?", "f"),  # two items, no metric of them
    ("What is the FY2020 quick ratio? Quick ratio is defined as: (cash + receivables) / total current liabilities.", "f"),
    ("What is the FY2020 goodwill?", "f"),  # no line item the module knows
    ("What is the FY2021 total amount of inventories?", "f"),  # no cell of the year
])
def test_a_question_the_rules_do_not_cover_is_left_to_the_reads(question, doc_id):
    assert statement_calculation(FILING, question, doc_id) is None


STATEMENTS = """# Acme Corp Annual Report

## Consolidated Balance Sheets

(In millions)

Item  2023  2022
Inventories  1,200  1,000
Total current assets  5,000  4,400
Accounts payable  900  700
Total current liabilities  2,500  2,000
"""


@pytest.fixture(scope="module")
def filing(document_corpus):
    return document_corpus("acme.md", STATEMENTS)


def test_the_iterative_program_answers_the_filings_metric_in_code_with_no_lm_call(filing):
    question = ("What is the FY2023 working capital ratio for Acme? Define working capital ratio as total current "
                "assets divided by total current liabilities. Round your answer to two decimal places.")
    lm, engine = scripted_lm()
    with answering(lm):
        result = IterativeRetriever(filing)(question=question, doc_id="acme")
    assert engine.steps() == [] and result.lm_calls == 0
    assert result.status == "answer" and result.answered_by == "table" and result.answer == "2"
    assert result.computation == "5000 / 2500" and result.grounding == "grounded" and result.citations_verified
    assert {citation["page"] for citation in result.citations} == {1}
    assert [step["step"] for step in result.trajectory] == ["table"]


def test_a_metric_that_does_not_ground_is_a_recorded_failure_and_the_router_runs(filing):
    question = "What is the FY2023 average working capital ratio for Acme?"  # an average, not the one year's ratio
    lm, engine = scripted_lm()
    with answering(lm):
        result = IterativeRetriever(filing)(question=question, doc_id="acme")
    table = next(step for step in result.trajectory if step["step"] == "table")
    assert table["answer"] == "2" and table["succeeded"] is False and table["grounding"] == "unsupported"
    assert engine.steps()[0] == "route" and result.answered_by != "table"  # then the LM is asked


def test_the_rows_line_items_name_the_metric_a_question_names_without_them(filing):
    question = "What is the FY2023 working capital ratio for Acme?"  # no row's label names its words
    lm, engine = scripted_lm()
    with answering(lm):
        result = IterativeRetriever(filing)(question=question, doc_id="acme")
    assert engine.steps() == [] and result.answer == "2" and result.grounding == "grounded"


@pytest.mark.parametrize("question, asked, answer", [
    ("Does the company have an improving operating margin profile as of FY2020? If operating margin is not a useful "
     "metric for a company like this, then state that and explain why.", "up",
     "Yes. It rose from 12.5 in FY2019 to 15 in FY2020."),
    ("Has the company's gross margin improved or declined between FY2020 and FY2019?", "either",
     "Improved. It rose from 37.5 in FY2019 to 40 in FY2020."),
    ("Did the company's free cash flow conversion decline in FY2020?", "down",  # (640 - 140) / 250 against (560 - 120) / 150
     "Yes. It fell from 293.3333 in FY2019 to 200 in FY2020."),
    ("Did the company's net sales increase or decrease in FY2020?", "either",  # one line item, the year before
     "Increase. It rose from 1,600 in FY2019 to 2,000 in FY2020."),
    ("Does the company have positive working capital based on FY2020 data?", "positive", "Yes. It was 900 in FY2020."),
    ("Does the company have negative working capital based on FY2019 data?", "negative", "No. It was 500 in FY2019."),
])
def test_a_metrics_trend_or_sign_is_a_verdict_over_the_years_values(question, asked, answer):
    verdict = statement_verdict(FILING, question, "f")
    assert verdict.asked == asked and verdict_answer(question, verdict).answer == answer
    assert statement_calculation(FILING, question, "f") is None  # a verdict, not the one year's value


@pytest.mark.parametrize("label, question", [
    ("Cost of products sold", "What was the FY2020 cost of products sold?"),
    ("Depreciation and amortization of property, equipment and intangibles", "What was the FY2020 D&A?"),
    ("Property, plant and equipment, net", "What was the FY2020 PP&E?"),
])
def test_a_line_item_is_read_from_a_row_labelled_in_a_filings_own_words(label, question):
    worded = _Filing({1: ("(In millions)", [(label, {"2020": "1,234", "2019": "1,000"})])})
    assert statement_calculation(worded, question, "f").answer == "1,234"


def test_a_short_fiscal_year_is_the_centurys():
    plant = _Filing({1: ("(In millions)", [("Property, plant and equipment, net", {"2021": "14,882", "2020": "13,745"}),
                                           ("Purchases of property, plant and equipment", {"2021": "(2,711)", "2020": "(2,226)"})])})
    question = "Did the company grow its PPNE between FY20 and FY21?"
    assert verdict_answer(question, statement_verdict(plant, question, "f")).answer == \
        "Yes. It rose from 13,745 in FY2020 to 14,882 in FY2021."
    assert statement_calculation(plant, "What was the FY21 PP&E?", "f").answer == "14,882"


@pytest.mark.parametrize("question", [
    "Did the company's net sales increase in Q2 of FY2020?",  # a quarter: the statements print years
    "Is the company's quick ratio improving as of FY2020?",  # no one definition
    "Is the company's operating margin healthy in FY2020?",  # no direction asked
    "Did the company's net sales increase in FY2021?",  # no cell of the year
    "Does the company have an improving operating margin profile?",  # no fiscal year
])
def test_a_trend_the_rules_do_not_cover_gets_no_verdict(question):
    assert statement_verdict(FILING, question, "f") is None


def test_a_verdicts_operands_ground_in_the_years_it_names_only(filing):
    question = "Is Acme's working capital ratio improving as of FY2023?"
    verdict = statement_verdict(filing, question, "acme")
    read = verdict_answer(question, verdict)
    assert read.answer == "No. It fell from 2.2 in FY2022 to 2 in FY2023."
    assert read.computation == "5000 / 2500 - (4400 / 2000)" and read.derived == pytest.approx([2.2, 2.0, -0.2])
    values, pages = [4400.0, 2000.0, 5000.0, 2500.0], [("acme", 1)]
    bridges = [hit["via"] for hit in verdict.hits]
    assert ground(question, read.answer, values, pages, filing, read.computation, bridges).level == GROUNDED
    elsewhere = read.answer.replace("FY2022", "FY2021")  # the earlier values are not 2021's
    assert ground(question, elsewhere, values, pages, filing, read.computation, bridges).level == ON_PAGE


def test_the_iterative_program_answers_a_verdict_in_code_with_no_lm_call(filing):
    question = "Does Acme have positive working capital based on FY2023 data?"
    lm, engine = scripted_lm()
    with answering(lm):
        result = IterativeRetriever(filing)(question=question, doc_id="acme")
    assert engine.steps() == [] and result.lm_calls == 0 and result.answered_by == "table"
    assert result.status == "answer" and result.answer == "Yes. It was 2,500 in FY2023." and result.grounding == "grounded"
    assert result.computation == "5000 - 2500" and result.citations_verified


@pytest.mark.parametrize("question, asked", [
    ("Does Adobe have an improving Free cashflow conversion as of FY2022?", "up"),
    ("Has AMCOR's quick ratio improved or declined between FY2023 and FY2022?", "either"),
    ("Was there any drop in cash between FY2022 and FY2023?", "down"),
    ("Does Corning have positive working capital based on FY2022 data?", "positive"),
    ("Did JnJ's net earnings as a percent of sales increase in Q2 of FY2023 compared to Q2 of FY2022?", ""),
    ("Is the company's margin healthy as of FY2022?", ""),
    ("How much did revenue increase from FY2021 to FY2022?", ""),  # asks for an amount, not yes or no
    ("What was the increase or decrease in revenue between FY2021 and FY2022?", ""),  # an amount, not which
    ("Did Ulta Beauty's wages expense as a percent of net sales increase or decrease in FY2023?", "either"),
])
def test_the_direction_a_question_asks_of_a_value(question, asked):
    assert asks_direction(question) == asked
