"""Arithmetic computed in code (never eval), and a read of passages turned into an answer with its findings."""
from __future__ import annotations

import pytest

from ferret.programs.arithmetic import (ExpressionError, asks_calculation, compute, format_result, is_calculation,
                                        may_ask_calculation, operations, written_expression)
from ferret.programs.passage_answer import (COPIED_WORDS, answer_from_passages, asks_yes_no, restates, stated_year,
                                           yes_or_no)

TABLE = {"doc_id": "ctx", "page": 1, "section": "Sales", "node_id": "seg:1", "score": 1.0,
         "text": "Years Ended September 30, 2019 2018 2017\nFixed Price $ 1,452.4 $ 1,146.2\nOther 44.1 56.7 70.8\n"
                 "Total sales $1,496.5 $1,202.9 $1,107.7"}
NOTE = {"doc_id": "ctx", "page": 2, "section": "Notes", "node_id": "seg:2", "score": 0.5,
        "text": "See Note 3. Sales to the U.S. government were the largest share of sales."}


@pytest.mark.parametrize("expression, references, value", [
    ("(44.1 - 56.7) / 56.7 * 100", (), -22.2222),
    ("([1] - [2]) / [2] * 100", (44.1, 56.7), -22.2222),
    ("$1,496.5 + $1,202.9", (), 2699.4),
    ("(12.5% + 7.5%) / 2", (), 10.0),
    ("−5 × 2 ÷ 4", (), -2.5),
])
def test_expressions_are_computed_exactly(expression, references, value):
    assert round(compute(expression, references).value, 4) == value


@pytest.mark.parametrize("expression", ['__import__("os").system("true")', "2 ** 10", "[1].real", "abs(-1)",
                                        "1 / 0", "[3]", "", "1" * 301])
def test_anything_but_arithmetic_is_refused(expression):
    with pytest.raises(ExpressionError):
        compute(expression, (1.0, 2.0))


def test_operands_literals_and_references_are_reported():
    computation = compute("([1] - 1,100) / 1,100 * 100", (1250.0,))
    assert [o.text for o in computation.literals] == ["1,100", "1,100"]  # the 100 that makes it a percentage is its form's
    assert computation.references == [1]
    assert format_result(computation.value) == "13.6364" and format_result(1577.0) == "1,577"


def test_what_is_a_calculation_and_what_asks_for_one():
    assert is_calculation("4.00 - 1.90") and is_calculation("[1] / [2]")
    assert not is_calculation("1,250") and not is_calculation("") and not is_calculation("$3.2")
    assert asks_calculation("What is the percentage change in Other in 2019 from 2018?")
    assert not asks_calculation("In which year was the amount for Sensors the largest?")
    assert not asks_calculation("What were total sales in 2019?") and may_ask_calculation("What were total sales in 2019?")
    assert not may_ask_calculation("What were Other sales in 2019?")


@pytest.mark.parametrize("answer, expression", [
    ("1.949 + 1.987 + 1.747", "1.949 + 1.987 + 1.747"),
    ("7,071 + 7,001 + 5,627 = 21,709", "7,071 + 7,001 + 5,627"),
    ("63 - 57 / 57 * 100 = 100.", "63 - 57 / 57 * 100"),
    ("73260 - 57768", ""),  # two values, as "2019 and 2018 respectively" is often answered
    ("1945-1949", ""), ("$1,496.5", ""), ("12.5%", ""), ("Total sales: 44.1 + 56.7", ""), ("", ""),
])
def test_an_answer_written_as_arithmetic_is_its_expression(answer, expression):
    assert written_expression(answer) == expression


def test_an_answer_written_as_arithmetic_is_computed_or_refused_never_stated():
    asked = answer_from_passages("What is the sum of Other in 2018 and 2019?", [TABLE], "", "44.1 + 56.7", [1])
    assert (asked.answer, asked.problem, asked.computation) == ("100.8", "", "44.1 + 56.7")
    assert [f.value for f in asked.findings] == ["44.1", "56.7"]
    lookup = answer_from_passages("What were Other sales in 2019?", [TABLE], "", "44.1 + 56.7 = 100.8", [1])
    assert lookup.problem == "the answer is an arithmetic expression, not its value"
    given = answer_from_passages("What were Other sales in 2019?", [TABLE], "44.1 - 56.7", "44.1 + 56.7", [1])
    assert given.problem == "the answer is an arithmetic expression, not its value"


@pytest.mark.parametrize("question, named", [
    ("What is the percentage change in Other in 2019 from 2018?", {"percentage", "change"}),
    ("What was the change in the amount for Appliances in 2019 from 2018?", {"change"}),
    ("What is the difference between the domestic and international discount rate?", {"change"}),
    ("What is the 2019 average defined benefit schemes?", {"average"}),
    ("What were the total liabilities of IMFT in 2018?", set()),
    ("How much was spent on batteries in 2023 in total?", {"sum"}),
    ("What was the net deferred tax asset amount in 2019 and 2018 respectively?", set()),
    ("In which year was the amount for Sensors the largest?", set()),
    ("What was the change in percentage of sales represented by gross profit between 2018 and 2019?", {"change"}),
    ("What was the percentage change in the percent of total sales from APAC?", {"percentage", "change"}),
    ("What percentage of total revenue was APAC in 2019?", {"percentage"}),  # a share to compute, not its change
    ("What was the weighted-average exchange rate for the Euro in 2019?", set()),  # a metric's name, as printed
    ("What was the average weighted average shares outstanding for 2018 and 2019?", {"average"}),
])
def test_the_operations_a_question_names(question, named):
    assert operations(question) == named


def test_a_calculation_becomes_the_answer_with_each_operand_quoted_on_its_page():
    read = answer_from_passages("What is the percentage change in Other in 2019 from 2018?", [NOTE, TABLE],
                                "(44.1 - 56.7) / 56.7 * 100", "-20%", [2])
    assert (read.answer, read.computation, read.problem) == ("-22.2222", "(44.1 - 56.7) / 56.7 * 100", "")
    assert [(f.value, f.page) for f in read.findings] == [("44.1", 1), ("56.7", 1)]
    assert "Other 44.1 56.7 70.8" in read.findings[0].context and read.derived == [pytest.approx(-22.2222, abs=1e-4)]


def test_an_operand_is_quoted_where_it_is_printed_exactly_before_a_cell_within_the_tolerance():
    row = {**TABLE, "text": "Accrued expenses: 2019: 81,731; 2018: 81,912"}  # 81,731 is within half a percent of 81,912
    read = answer_from_passages("What was the change in accrued expenses between 2018 and 2019?", [row], "81731 - 81912", "", [1])
    assert [f.value for f in read.findings] == ["81,731", "81,912"]
    rounded = answer_from_passages("What was the change in accrued expenses between 2018 and 2019?", [row], "81731 - 81910", "", [1])
    assert [f.value for f in rounded.findings] == ["81,731", "81,912"]  # failing an exact one, the closest printed in turn


@pytest.mark.parametrize("question, calculation, answer, problem", [
    ("What is the percentage change in Other in 2019 from 2018?", "(44.1 - 2018) / 2018 * 100", "",
     "the calculation uses the question's year 2018 as a value"),
    ("What is the change in Other from 2018 to 2019?", "3,000 - 44.1", "", "the calculation uses 3,000, which no "
                                                                            "passage read prints"),
    ("What is the change in Other from 2018 to 2019?", "44.1 - ", "", "the calculation could not be computed: "
                                                                        "not an arithmetic expression: '44.1 - '"),
    ("What were Other sales in 2019?", "", "Other sales were 45.0.", "45 not printed in the passages read"),
    ("What were Other sales in 2019?", "", "", "no answer"),
    ("What is the DPO for 2019? DPO = 365 * average payables / cost.", "365 * 44.1 / 56.7 / 2019", "",
     "the calculation uses the question's year 2019 as a value"),
    ("What is the DPO for FY2019? DPO = 365 * average payables / cost.", "365 * 44.1 / 2019", "",
     "the calculation uses the question's year 2019 as a value"),
])
def test_a_read_that_cannot_stand_says_why(question, calculation, answer, problem):
    assert answer_from_passages(question, [TABLE, NOTE], calculation, answer, [1]).problem == problem


def test_an_answer_cites_the_values_it_states_or_else_the_passages_it_names():
    lookup = answer_from_passages("What were Other sales in 2019?", [TABLE], "44.1 + 56.7", "Other sales were 44.1.", [1])
    assert lookup.problem == "" and lookup.computation == "" and [f.value for f in lookup.findings] == ["44.1"]
    text = answer_from_passages("Who bought most?", [TABLE, NOTE], "", "the U.S. government", [2])
    assert [(f.value, f.page) for f in text.findings] == [("U.S. government", 2)] and text.values == text.findings
    yes = answer_from_passages("Is the government the largest buyer?", [TABLE, NOTE], "", "Yes", [2])
    assert [f.page for f in yes.findings] == [2] and yes.whole_passages and yes.values == []
    assert answer_from_passages("Is it?", [TABLE], "", "Yes", []).problem == "no passage cited"


def test_a_text_answer_read_from_table_rows_cites_their_labels_which_verify_on_their_page():
    """A row passage ("Other: 2019: 44.1; 2018: 56.7") is not printed as one string: its label is."""
    from ferret.programs.row_arithmetic import row_passage
    from ferret.programs.verify import verify

    rows = [row_passage({"doc_id": "ctx", "page": 1, "section": "Sales", "annotation_id": f"row:{n}", "score": 1.0,
                         "label": label, "fields": fields}) for n, (label, fields) in
            enumerate([("Fixed Price", {"2019": "$ 1,452.4", "2018": "$ 1,146.2"}), ("Other", {"2019": "44.1", "2018": "56.7"})])]
    read = answer_from_passages("What are the kinds of sales?", rows, "", "Fixed Price and Other", [1, 2])
    assert [f.value for f in read.findings] == ["Fixed Price", "Other"] and read.findings[1].context.startswith("Other: 2019")
    check = verify(read.answer, [0, 1], read.findings, lambda doc_id, page: TABLE["text"], lambda doc_id: "ctx.txt")
    assert check.ok and all(citation.verified for citation in check.citations)


@pytest.mark.parametrize("expression, literals", [
    ("(44.1 + 56.7 + 70.8) / 3", ["44.1", "56.7", "70.8"]),  # an average's count
    ("-(44.1 + 56.7) / 2", ["44.1", "56.7"]),
    ("44.1 / 56.7 * 100", ["44.1", "56.7"]), ("100 * 44.1 / 56.7", ["44.1", "56.7"]),  # a percentage's 100
    ("(44.1 + 56.7) / 3", ["44.1", "56.7", "3"]),  # three is not the count of two terms
    ("100 / 4", ["100", "4"]), ("(100 + 56.7) / 2", ["100", "56.7"]), ("5 / 100 * 100", ["5", "100"]),  # 100 as a value
])
def test_the_numbers_a_calculations_form_writes_are_no_printed_operands(expression, literals):
    assert [o.text for o in compute(expression).literals] == literals


def test_an_averages_count_is_not_quoted_from_a_page_that_prints_the_same_number():
    """NOTE prints "Note 3": the 3 an average of three values divides by is not that footnote."""
    read = answer_from_passages("What was the average of Other sales?", [NOTE, TABLE], "(44.1 + 56.7 + 70.8) / 3", "", [2])
    assert read.problem == "" and [(f.value, f.page) for f in read.findings] == [("44.1", 1), ("56.7", 1), ("70.8", 1)]


def test_a_number_the_question_gives_is_an_operand_no_page_needs_to_print():
    read = answer_from_passages("What is the DPO? DPO is defined as: 365 * average payables / cost.", [TABLE],
                                "365 * 44.1 / 56.7", "", [1])
    assert read.problem == "" and read.answer == "283.8889" and [f.value for f in read.findings] == ["44.1", "56.7"]
    assert answer_from_passages("What is the average DPO?", [TABLE], "365 * 44.1 / 56.7", "", [1]).problem == \
        "the calculation uses 365, which no passage read prints"


def test_an_operand_is_printed_as_the_amount_before_its_scale_word():
    """"$60.3 million" prints 60.3 (and 60,300,000): an operand copied from it; "Note 3" prints no 3,000."""
    billed = {**NOTE, "page": 3, "text": "Amounts billed include $60.3 million and $80.5 million due at September 30, 2019 "
                                          "and 2018, respectively."}
    read = answer_from_passages("What is the sum of amounts billed in 2018 and 2019?", [billed], "60.3 + 80.5", "", [1])
    assert read.problem == "" and read.answer == "140.8" and [f.value for f in read.findings] == ["$60.3 million", "$80.5 million"]
    assert answer_from_passages("What is the sum?", [billed], "60300000 + 80.5", "", [1]).problem == ""
    assert answer_from_passages("What is the sum?", [NOTE], "3000 + 3", "", [1]).problem.startswith("the calculation uses 3000")


@pytest.mark.parametrize("answer, stated, computation", [
    ("Total sales were $1,496.5", "Total sales were $1,496.5", ""),  # printed: a lookup
    ("2,699.5", "2,699.4", "$1,496.5 + $1,202.9"),  # not printed: the calculation
])
def test_a_total_is_a_printed_value_unless_the_answer_is_not_printed(answer, stated, computation):
    read = answer_from_passages("What were total sales in 2019 and 2018?", [TABLE], "$1,496.5 + $1,202.9", answer, [1])
    assert (read.answer, read.computation, read.problem) == (stated, computation, "")


def test_a_yes_no_question_is_answered_yes_or_no_first_when_the_answer_states_its_claim():
    question = "Sales are listed. Were Other sales 44.1 in 2019 (as stated)?"
    read = answer_from_passages(question, [TABLE], "", "Other sales were 44.1 in 2019.", [1])
    assert read.answer == "Yes. Other sales were 44.1 in 2019." and [f.value for f in read.findings] == ["44.1"]
    assert yes_or_no(question, "Other sales were not 44.1 in 2019. Total sales were.") == "No"
    assert yes_or_no(question, "No, they were 56.7") == ""  # the claim's words are not stated
    assert yes_or_no(question, "Fixed price sales were 1,452.4") == ""  # about something else
    assert yes_or_no("What were Other sales in 2019?", "Other sales were 44.1 in 2019.") == ""
    assert asks_yes_no("Did Other sales increase or decrease in 2019?") == ""
    assert answer_from_passages(question, [TABLE], "", "No, Other sales were 44.1 in 2019", [1]).answer == \
        "No, Other sales were 44.1 in 2019"


def test_an_answer_that_restates_the_question_or_copies_a_passage_does_not_stand():
    question = "Who performed in both Welcome to the Show and the band f(x)?"
    assert answer_from_passages(question, [NOTE], "", "The band f(x) performed in both Welcome to the Show", [1]).problem \
        == "the answer only restates the question"
    assert restates("How many times was he premier?", "He was premier 3 times.") is False  # the number is new
    assert restates("Are Nantong and Jingdezhen in the same province?", "No") is False  # the verdict is new
    assert restates("Which is in the same province, Nantong or Jingdezhen?", "Nantong") is False  # the choice is new
    assert restates("Which is in the same province, Nantong or Jingdezhen?", "Nantong or Jingdezhen") is True
    copied = ("Sales to the U.S. government were the largest share of sales in each of the three years, "
              "followed by sales to foreign governments through the Foreign Military Sales program and by "
              "sales to commercial customers in transportation")
    assert len(copied.split()) > COPIED_WORDS
    read = answer_from_passages("Who bought most?", [{**NOTE, "text": copied + "."}], "", copied, [1])
    assert read.problem == "the answer copies a passage instead of answering" and read.values == read.findings
    with_numbers = f"{copied} in 2019, 2018 and 2017"  # numbers or not
    read = answer_from_passages("Who bought most?", [{**NOTE, "text": with_numbers}], "", with_numbers, [1])
    assert read.problem == "the answer copies a passage instead of answering"
    assert answer_from_passages("Who bought most?", [NOTE], "", "the U.S. government", [1]).problem == ""


def test_a_sentence_that_answers_in_what_year_is_its_one_new_year():
    book = {"doc_id": "How to Eat", "page": 1, "section": "How to Eat", "score": 1.0, "node_id": "b",
            "text": "How to Eat is a 1998 book of English cuisine by the celebrity cook Nigella Lawson."}
    question = "How to Eat, released in which year, is a book of English cuisine by Nigella Lawson?"
    read = answer_from_passages(question, [book], "", book["text"], [1])
    assert read.answer == "1998" and [f.value for f in read.findings] == ["1998"] and read.problem == ""
    assert answer_from_passages(question, [book], "", book["text"], [1], repair=False).answer == book["text"]
    assert stated_year("In what year did the 2012 outbreak end?", "It began in 2012 and ended in 2013.") == "2013"
    assert stated_year(question, "It was published in 1998 and reprinted in 2000.") == ""  # two years
    assert stated_year("When was the book released?", "It was released in 1998.") == ""  # "when" may ask a date
    assert stated_year(question, "1998") == ""  # already the year


def test_a_count_printed_nowhere_is_the_readers_count_of_its_cited_passages_for_grounding_to_check():
    count = answer_from_passages("How many years did Other sales exceed 40?", [TABLE, NOTE], "", "27", [1])
    assert count.problem == "" and count.derived == [27.0] and count.whole_passages and count.values == []
    assert answer_from_passages("What were Other sales in 2019?", [TABLE], "", "27", [1]).problem == \
        "27 not printed in the passages read"  # no count: a value must be printed
    assert answer_from_passages("How many years did Other sales exceed 40?", [TABLE], "", "27", []).problem == \
        "27 not printed in the passages read"  # nothing cited to count
