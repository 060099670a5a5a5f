"""A change, percentage change or average of the question's table row, written in code (programs/row_arithmetic.py)."""
from __future__ import annotations

import pytest

from ferret.programs.arithmetic import compute
from ferret.programs.iterative import IterativeRetriever
from ferret.programs.lm import answering
from ferret.programs.row_arithmetic import row_calculation
from tests.fakes import scripted_lm


class _Rows:
    """A corpus whose label search finds these table rows (label → {header: printed value})."""

    def __init__(self, rows: dict[str, dict[str, str]]):
        self.rows = [{"annotation_id": f"row:{i}", "kind": "row", "label": label, "fields": fields, "doc_id": "d",
                      "page": 1, "section": "Table", "score": 1.0} for i, (label, fields) in enumerate(rows.items())]

    def annotations_search(self, question, bucket=None, doc_id=None, top_k=20):
        return self.rows


ALLOWANCE = _Rows({"Valuation allowance": {"2019": "(123)", "2018": "(109)"},
                   "Deferred tax assets": {"2019": "1,250", "2018": "1,100"}})


def value(corpus, question: str) -> float | None:
    calculation = row_calculation(corpus, question)
    return None if calculation is None else round(compute(calculation.expression).value, 4)


@pytest.mark.parametrize("question, expected", [
    ("What was the percentage change in the valuation allowance between 2018 and 2019?", round((-123 + 109) / -109 * 100, 4)),
    ("What was the change in deferred tax assets from 2018 to 2019?", 150.0),  # the later year less the earlier
    ("How much did the deferred tax assets decrease by between 2018 and 2019?", -150.0),  # how much it fell
    ("What was the average deferred tax assets for 2018 and 2019?", 1175.0),
    ("What is the 2019 average deferred tax assets?", 1175.0),  # one year's average: with the year before
    ("What is the change in deferred tax assets in units of percents from 2018 to 2019?", round(150 / 1100 * 100, 4)),
    ("What was the change in deferred tax assets?", 150.0),  # no year named: the row's two years
])
def test_the_questions_row_and_years_give_the_operation_it_names(question, expected):
    assert value(ALLOWANCE, question) == expected


@pytest.mark.parametrize("question", [
    "What was the average deferred tax assets in 2019?",  # a year's average is printed, not its balances'
    "What is the 2018 average deferred tax assets?",  # no cell of the year before
    "What was the average deferred tax assets from 2017 to 2019?",  # three years
    "Why did the deferred tax assets change between 2018 and 2019?",  # a reason
    "What is the ratio, defined as deferred tax assets / 2, between 2018 and 2019?",  # a formula of its own
    "What was the deferred tax assets in 2019 and 2018?",  # no operation
    "What was the change in goodwill between 2018 and 2019?",  # no row the question names
    "What was the reason for the change in deferred tax assets between 2018 and 2019?",  # a reason
    "What is the change in the valuation allowance and deferred tax assets from 2018 to 2019?",  # two rows
])
def test_a_question_the_rules_do_not_cover_is_left_to_the_reads(question):
    assert row_calculation(ALLOWANCE, question) is None


def test_one_years_cell_of_the_questions_row_is_read_as_printed():
    lookup = row_calculation(ALLOWANCE, "What was the deferred tax assets in 2019?")
    assert (lookup.expression, lookup.answer, lookup.cell) == ("", "1,250", True)
    assert row_calculation(ALLOWANCE, "How much was the valuation allowance as at December 31, 2018?").answer == "(109)"
    rows = _Rows({"License revenue": {"2019 Amount": "$64,798", "2019 % of total revenue": "9%"}})
    assert row_calculation(rows, "What was the License revenue in 2019?").answer == "$64,798"  # the amount, not the share


@pytest.mark.parametrize("question", [
    "What was the deferred tax assets in the third quarter of 2019?",  # a quarter is no cell of the year
    "What was the deferred tax assets as a percentage of total assets in 2019?",  # a share of another row
    "What share of 2019 deferred tax assets came from the valuation allowance?",  # a part of another row
    "What was the valuation allowance and deferred tax assets in 2019?",  # two rows
    "What was the ratio of deferred tax assets in 2019?",  # an operation
])
def test_a_years_cell_is_no_answer_to_a_quarter_a_share_two_rows_or_an_operation(question):
    assert row_calculation(ALLOWANCE, question) is None


def test_the_change_of_a_share_is_its_points_from_the_share_column():
    rows = _Rows({"APAC": {"2019 Net Sales": "$479,987", "2019 % of Total": "40.0%",
                           "2018 Net Sales": "$288,764", "2018 % of Total": "38.1%"},
                  "Gross profit": {"2019": "40.0", "2018": "50.9"}})
    assert row_calculation(rows, "What was the change in the percent of total sales from APAC between 2018 and 2019?").expression \
        == "40 - 38.1"
    assert value(rows, "What was the change in percentage of sales represented by gross profit between 2018 and 2019?") == -10.9
    assert value(rows, "What was the percentage change in APAC net sales between 2018 and 2019?") == \
        round((479987 - 288764) / 288764 * 100, 4)  # no share: the amounts' column, relatively


def test_an_operation_word_of_the_rows_label_is_a_metric_not_the_operation():
    rows = _Rows({"Average invested capital": {"2019": "1,000", "2018": "800"},
                  "Shares outstanding": {"2019": "50", "2018": "40"}})
    assert value(rows, "What was the percentage change in the Average invested capital between 2018 and 2019?") == 25.0
    assert row_calculation(rows, "What were the weighted-average shares outstanding in 2018 and 2019?") is None


def test_of_several_columns_of_a_year_the_one_the_question_names_is_read_and_rates_are_not_changed_in_percent():
    rows = _Rows({"Discount rate": {"Domestic 2019": "4.00%", "Domestic 2018": "3.75%",
                                    "International 2019": "2.10%", "International 2018": "2.50%"},
                  "Plan assets": {"Domestic 2019": "500", "Domestic 2018": "400",
                                  "International 2019": "300", "International 2018": "200"}})
    assert value(rows, "What was the change in international plan assets between 2018 and 2019?") == 100.0
    assert value(rows, "What was the change in the domestic discount rate between 2018 and 2019?") == 0.25
    assert row_calculation(rows, "What was the percentage change in the domestic discount rate between 2018 and 2019?") is None
    assert row_calculation(rows, "What was the change in plan assets between 2018 and 2019?") is None  # which column?


def test_a_change_or_average_of_amounts_reads_the_amounts_columns_beside_a_share_column():
    rows = _Rows({"Services": {"2019 Amount": "$243,053", "2019 % of total revenue": "34%",
                               "2018 Amount": "$246,548", "2018 % of total revenue": "38%"}})
    assert value(rows, "What was the average Services for 2018 and 2019?") == 244800.5
    assert value(rows, "What was the change in services between 2018 and 2019?") == -3495.0
    assert row_calculation(rows, "What was the change in the percentage of total revenue from services between 2018 "
                                 "and 2019?").expression == "34 - 38"  # a share's change: its own column


def test_rows_of_one_label_that_disagree_or_one_value_read_twice_compute_nothing():
    twice = _Rows({"Revenue": {"2019": "10", "2018": "10"}})
    assert row_calculation(twice, "What was the change in revenue between 2018 and 2019?") is None
    disagree = _Rows({"Revenue": {"2019": "10", "2018": "8"}})
    disagree.rows.append({**disagree.rows[0], "annotation_id": "row:9", "fields": {"2019": "12", "2018": "8"}})
    assert row_calculation(disagree, "What was the change in revenue between 2018 and 2019?") is None


def test_a_rows_two_years_asked_respectively_are_its_cells_in_the_questions_order():
    rows = _Rows({"License revenue": {"2019 Amount": "$64,798", "2019 % of total revenue": "9%",
                                      "2018 Amount": "$35,452", "2018 % of total revenue": "5%"}})
    lookup = row_calculation(rows, "What was the License revenue in 2019 and 2018 respectively?")
    assert (lookup.expression, lookup.answer) == ("", "$64,798 and $35,452")  # the amounts, not the shares
    assert row_calculation(ALLOWANCE, "What was the deferred tax assets in 2018 and 2019 respectively?").answer \
        == "1,100 and 1,250"
    three = _Rows({"Net income": {"2019": "10", "2018": "8", "2017": "6"}})  # a range asks three years, not two
    assert row_calculation(three, "What was the net income for fiscal years 2019 to 2017 respectively?") is None


SEGMENTS = _Rows({"Sensors": {"2019": "914", "2018": "918", "2017": "814"},
                  "Foreign exchange movements": {"2019": "(4.2)", "2018": "(1.5)"},
                  "Diluted earnings per share": {"2019": "(0.08)", "2018": "(0.19)", "2017": "0.12"}})


@pytest.mark.parametrize("question, year", [
    ("In which year was the amount for Sensors the largest?", "2018"),
    ("Which year has the lowest amount for Sensors?", "2017"),
    ("Between 2017 and 2019, which year had higher Sensors?", "2019"),  # of the years it names
    ("In which year is there a greater foreign exchange movement?", "2019"),  # all negative: by size
    ("In which year is the diluted earnings per share the lowest?", "2018"),  # of mixed signs: by value
])
def test_the_year_of_a_rows_largest_or_smallest_cell(question, year):
    calculation = row_calculation(SEGMENTS, question)
    assert (calculation.expression, calculation.answer) == ("", year)


@pytest.mark.parametrize("question", [
    "In which year was Sensors less than 900?",  # a threshold
    "In which year was the change in Sensors larger?",  # an operation over the row, not its cells
    "In which year were Sensors higher or lower?",  # both directions
    "In which year was goodwill the largest?",  # no row the question names
])
def test_a_which_year_question_the_cells_do_not_decide_is_left_to_the_reads(question):
    assert row_calculation(SEGMENTS, question) is None


def test_a_which_year_question_whose_years_tie_is_left_to_the_reads():
    assert row_calculation(_Rows({"Sensors": {"2019": "10", "2018": "10"}}), "In which year were Sensors larger?") is None


@pytest.mark.parametrize("question, computation, answer", [
    ("What was the percentage change in total revenue from 2022 to 2023?", "(3650 - 3150) / 3150 * 100", "15.873"),
    ("What was total revenue in 2023 and 2022 respectively?", "", "3,650 and 3,150"),  # a lookup
    ("What was total revenue in 2023?", "", "3,650"),  # one year's cell
    ("What is the 2023 average total revenue?", "(3650 + 3150) / 2", "3,400"),  # with the year before
    ("In which year was total revenue larger?", "", "2023"),  # the year of the larger cell
])
def test_the_iterative_program_answers_the_rows_question_in_code_with_no_lm_call(small_corpus, question, computation, answer):
    lm, engine = scripted_lm()
    with answering(lm):
        result = IterativeRetriever(small_corpus)(question=question, doc_id="report")
    assert engine.steps() == [] and result.lm_calls == 0  # code first: not even the Router is asked
    assert result.status == "answer" and result.answered_by == "table" and result.grounding == "grounded"
    assert (result.computation, result.answer) == (computation, answer) and result.citations_verified
    assert [step["step"] for step in result.trajectory] == ["table"]
    assert result.trajectory[0]["lm_call"] is False


def test_a_change_that_names_no_year_needs_a_row_of_exactly_two_years():
    rows = _Rows({"Total emissions": {"2019 Tonnes": "4,785.7", "2018 Tonnes": "5,087.6", "2017 Tonnes": "5,210.0"}})
    assert row_calculation(rows, "What was the change in total emissions?") is None  # which two of three?
    assert row_calculation(rows, "What was the total emissions?") is None  # no operation


MILLIONS = """# Annual Report 2023

## Segment Results

Segment  2023  2022
(In millions)
Consumer  1,250  1,100
Total revenue  3,650  3,150
Gross margin %  41%  39%
"""


@pytest.fixture(scope="module")
def millions_corpus(document_corpus):
    return document_corpus("report.md", MILLIONS)


@pytest.mark.parametrize("question, answer", [
    ("What was total revenue in 2023?", "3,650 million"),  # the table counts it in millions
    ("What was total revenue in 2023 and 2022 respectively?", "3,650 million and 3,150 million"),
    ("What was the change in total revenue from 2022 to 2023?", "500 million"),  # an amount's change is an amount
    ("What is the 2023 average total revenue?", "3,400 million"),
    ("What was the percentage change in total revenue from 2022 to 2023?", "15.873"),  # a ratio has no scale
    ("What was the gross margin % in 2023?", "41%"),  # nor has a percent column
    ("In which year was total revenue larger?", "2023"),
])
def test_the_table_rung_states_an_amount_in_the_scale_its_table_counts_it_in(millions_corpus, question, answer):
    lm, _ = scripted_lm()
    with answering(lm):
        result = IterativeRetriever(millions_corpus)(question=question, doc_id="report")
    assert (result.status, result.answered_by, result.answer) == ("answer", "table", answer)
    assert result.grounding == "grounded"


def test_rows_whose_stored_values_disagree_on_their_scale_give_none():
    from ferret.programs.row_arithmetic import rows_scale

    def row(value, text):
        return {"value": value, "value_text": text}
    assert rows_scale([row(2.78e9, "$(2,780)")], "(2,397)") == 1e6
    assert rows_scale([row(2.78e9, "$(2,780)"), row(5.0, "5")], "(2,397)") == 1.0  # two scales: none stated
    assert rows_scale([row(2.78e9, "$(2,780)")], "12%") == 1.0  # a percentage is never scaled
    assert rows_scale([row(2.78e9, "$(2,780)")], "$1.2 billion") == 1.0  # it says its own
