"""A number grounds only in the unit, scale and sign its question names (`programs.grounding.unit_type`):
a computed answer whose operands all ground is `on_page` at most when its result is not the question's."""
from __future__ import annotations

import pytest

from ferret.corpus.tools import Corpus
from ferret.programs.grounding import GROUNDED, ON_PAGE, UNSUPPORTED, expected_type, ground, unit_type

REPORT = "northwind-annual-report-2023"
SEGMENTS = [(REPORT, 13)]  # the segment table: Consumer 412.6 (2023) / 380.1 (2022), Total 1,822.9 / 1,549.2
CHANGE = "What was the percentage change in Consumer segment revenue from 2022 to 2023?"
RELATIVE = "(412.6 - 380.1) / 380.1 * 100"


@pytest.fixture(scope="module")
def corpus(sample_index):
    return Corpus(sample_index)


def test_a_computed_percentage_grounds_through_its_operands(corpus):
    assert ground(CHANGE, "8.55%", [412.6, 380.1], SEGMENTS, corpus, RELATIVE).level == GROUNDED


@pytest.mark.parametrize("answer", ["8,550", "$8.55 million"])
def test_a_computed_value_in_the_thousands_or_an_amount_where_a_percentage_is_asked_is_on_the_page_only(corpus, answer):
    grounding = ground(CHANGE, answer, [412.6, 380.1], SEGMENTS, corpus, RELATIVE)
    assert grounding.level == ON_PAGE and "percentage" in grounding.reason
    assert grounding.pages == {SEGMENTS[0]: ON_PAGE}  # no citation is shown as grounding it either


def test_a_stated_amount_asked_in_billions_grounds_converted_not_copied_from_a_millions_table(corpus):
    question = "What was Consumer segment revenue in 2022, in USD billions?"
    assert ground("What was Consumer segment revenue in 2022?", "380.1", None, SEGMENTS, corpus).level == GROUNDED
    copied = ground(question, "380.1", None, SEGMENTS, corpus)  # the page is "(In millions of U.S. dollars)"
    assert copied.level == ON_PAGE and "scale" in copied.reason
    assert ground(question, "0.3801", None, SEGMENTS, corpus).level == GROUNDED
    assert ground(question, "$380.1 million", None, SEGMENTS, corpus).level == GROUNDED  # its scale said: it converts
    assert ground("What was Consumer segment revenue in 2022, in USD millions?", "380.1", None, SEGMENTS, corpus).level == GROUNDED


@pytest.mark.parametrize("question, answer, why", [
    # a computed value in the thousands where a percentage is asked
    ("What is the percentage of Consumer revenue in total revenue in 2023?", "41,260", "percentage"),
    # a raw line item where a growth rate is asked
    ("What was the revenue growth rate from FY2021 to FY2022?", "$12,345 million", "percentage"),
    # a negative figure in millions where cash paid in USD billions is asked
    ("How much cash did the company pay for acquisitions in FY2022, in USD billions?", "-4,500", "scale"),
    ("How much cash did the company pay for acquisitions in FY2022, in USD billions?", "-4.5", "negative"),
    # an amount in millions where a per-share amount is asked
    ("What was diluted earnings per share in 2022?", "$2,345 million", "per-share"),
    ("What was the FY2022 EPS?", "2,345", "per-share"),
    ("What was FY2016 COGS? Please state answer in USD millions.", "12%", "percentage"),
    ("How much did the company spend on capital expenditures in 2023?", "(1,234)", "negative"),
    # an amount where a tax or interest rate is asked
    ("How much has the effective tax rate of the company changed between FY2021 and FY2022?", "$38 million", "percentage"),
    ("What was the interest rate on the notes?", "$2.2 billion", "percentage"),
])
def test_a_number_of_another_unit_scale_or_sign_than_the_question_names_is_said_why(question, answer, why):
    assert why in unit_type(question, answer)


@pytest.mark.parametrize("question, answer", [
    ("What is the percentage change in revenue from 2022 to 2023?", "8.55"),  # a percent without its sign
    ("What is the percentage change in revenue from 2022 to 2023?", "6.14 per cent"),
    ("How much cash did the company pay for acquisitions in FY2022, in USD billions?", "4.5"),
    ("How much cash did the company pay for acquisitions in FY2022, in USD billions?", "$4,500 million"),  # converts
    ("What was FY2016 COGS? Please state answer in USD millions.", "$32780.00"),
    ("What was diluted earnings per share in 2022?", "$2.35"),
    # a count of shares, though it names earnings per share
    ("What were the shares used in computing basic earnings per share in 2018?", "268,000"),
    # a signed line item (provided by / used in) and a difference are no amount paid
    ("What is the average net cash used in investing activities?", "-1284"),
    ("What was the change in dividends paid from 2018 to 2019?", "-32"),
    ("What was revenue in 2019 when it grew by 30%?", "1,234"),  # the question's own "30%" names no unit asked
    ("Who audits the company?", "KPMG"),  # no number, nothing to check
    ("What is the 2019 notional amount of the interest rate swaps?", "$29,423 million"),  # a rate names the swaps
])
def test_a_number_in_the_questions_unit_scale_and_sign_passes(question, answer):
    assert unit_type(question, answer) == ""


def test_a_growth_rate_is_a_change_divided():
    question = "What was the revenue growth rate from FY2021 to FY2022?"
    assert "growth rate" in unit_type(question, "12.3", "1500 - 1335")
    assert unit_type(question, "12.4%", "(1500 - 1335) / 1335 * 100") == ""


def test_a_growth_rate_computed_as_a_difference_does_not_ground(corpus):
    question = "What was the growth rate of Consumer segment revenue from 2022 to 2023?"
    assert ground(question, "32.5", [412.6, 380.1], SEGMENTS, corpus, "412.6 - 380.1").level == UNSUPPORTED
    assert ground(question, "8.55%", [412.6, 380.1], SEGMENTS, corpus, RELATIVE).level == GROUNDED


def test_a_count_is_no_sum_of_money():
    assert expected_type("How many all-season tires were bought?", "480.00") == "the question asks how many, the answer is an amount"
    assert expected_type("How many tires were bought?", "$12") == "the question asks how many, the answer is an amount"
    assert expected_type("In how many years is the cost to be recognized?", "2.5 years") == ""
    assert expected_type("How many tires were bought?", "4") == ""
    assert expected_type("How many percent of sales came from tires?", "12.50%") == ""
