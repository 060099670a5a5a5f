"""corpus.numbers: cell, answer and running-text numbers."""
import pytest

from ferret.corpus.numbers import detect_scale, face_value, is_change, number_years, numbers_in, parse_number, parse_value, stated_figures
from ferret.programs.verify import verify_pages


@pytest.mark.parametrize("text, expected", [
    ("$1577.00", 1577.0),
    ("1,577 million", 1.577e9),
    ("$1.5 billion", 1.5e9),
    ("1.2bn", 1.2e9),
    ("3.5k", 3500.0),
    ("€1.2bn", 1.2e9),
    ("$96.9B", 96.9e9),
    ("(3.2)%", -3.2),
    ("-3.2%", -3.2),
    ("−3.2%", -3.2),
    ("(4.8%)", -4.8),
    ("9.5 %", 9.5),
    ("+5%", 5.0),
    ("12 percent", 12.0),
    ("0.66", 0.66),
    ("$8.70", 8.70),
    ("(169,080)", -169080.0),
    ("$(34)", -34.0),
    ("$ 1,234", 1234.0),
    ("1,234 USD", 1234.0),
    ("2015", 2015.0),
    ("$8.70.", 8.70),
])
def test_parse_number(text, expected):
    assert parse_number(text) == pytest.approx(expected)


@pytest.mark.parametrize("text", ["—", "–", "-", "n/a", "NM", "12/31/2022", "2023-04-01", "INV-2023-0042",
                                  "abc", "1,2,3", "(5", "", "Revenue grew 5% to $1.2 billion"])
def test_parse_number_not_numeric(text):
    assert parse_number(text) is None


def test_parse_value_applies_table_scale_but_never_to_percentages():
    value = parse_value("1,577", 1e6, "USD")
    assert value.number == pytest.approx(1.577e9)
    assert (value.text, value.unit, value.scale) == ("1,577", "USD", 1e6)
    percent = parse_value("(3.2)%", 1e6, "USD")
    assert (percent.number, percent.unit, percent.scale) == (-3.2, "%", 1.0)


def test_parse_value_printed_scale_word_replaces_table_scale():
    value = parse_value("1,577 million", 1e3, "USD")
    assert value.number == pytest.approx(1.577e9)
    assert value.scale == 1e6


def test_parse_value_nil_keeps_text_and_has_no_number():
    value = parse_value("—", 1e3, "USD")
    assert (value.text, value.number, value.unit) == ("—", None, "USD")


def test_parse_value_units():
    assert parse_value("$876,560").unit == "USD"
    assert parse_value("€12").unit == "EUR"
    assert parse_value("£7.5").unit == "GBP"
    assert (parse_value("90 days").number, parse_value("90 days").unit) == (90.0, "days")
    metres = parse_value("1.134 m")  # a spaced single letter is a unit, not "million"
    assert (metres.number, metres.unit) == (1.134, "m")
    assert parse_value("$1.5m").number == pytest.approx(1.5e6)


@pytest.mark.parametrize("text, expected", [
    ("(In thousands, except par value)", (1e3, "USD")),
    ("(Dollars in millions)", (1e6, "USD")),
    ("in billions", (1e9, "USD")),
    ("(in %)", (1.0, "%")),
    ("(€ in millions)", (1e6, "EUR")),
    ("(in thousands of shares)", (1e3, None)),
    ("($ in Millions, except EPS)", (1e6, "USD")),
    ("(In millions, except percentages and per share amounts)", (1e6, "USD")),
    ("Selected data was as follows ($ in millions, except per share amounts):", (1e6, "USD")),
    ("2022 $ million", (1e6, "USD")),
    ("CONSOLIDATED BALANCE SHEETS", (1.0, None)),
    ("Revenue increased $1.5 million", (1.0, None)),
])
def test_detect_scale(text, expected):
    assert detect_scale(text) == expected


def test_numbers_in_running_text():
    text = ("Net sales of $14,694 million rose 12% while EBIT fell (3.2)% and costs were -4.5; "
            "we returned $1.2 billion, 1.2bn or 3.5k in 2015.")
    assert numbers_in(text) == pytest.approx([14.694e9, 12.0, -3.2, -4.5, 1.2e9, 1.2e9, 3500.0, 2015.0])


def test_numbers_in_skips_dates_and_identifiers():
    assert numbers_in("On 12/31/2022 and 2023-04-01, COVID-19 in Q4 under Item 1A") == []
    assert numbers_in("our 2022 Form 10-K, an 8-K and a 20-F") == [2022]  # a form's name, not the number 10
    assert numbers_in("a 3-year term") == [3]  # a number's own word
    assert numbers_in("Adjusted EPS of $2.35 increasing by 10.3%*") == pytest.approx([2.35, 10.3])


def test_a_reference_mark_after_a_word_is_no_number_but_a_cell_is():
    """A footnote mark "(1)" glued to or one space after a label, or opening its footnote, is not -1; the
    same "(1)" as a cell (two spaces from its label, as `corpus.tables` splits cells), or after "and" or
    "of" (a TAT-QA train gold, "(19) and (41)"), is. A FinanceBench dev read computed "1 - 1%" from
    AMCOR's "EBIT / Sales %(1)" and "(1) Return"."""
    assert numbers_in("Cost of sales (1)  675  822 | Revenues by region of shipment(1)") == [675.0, 822.0]
    assert numbers_in("EBIT / Sales %(1)  Net sales\nOther(2)  —  (105)\n\n(1) Return on average funds") == [-105.0]
    assert numbers_in("(1)  2  3\n(2) 100% of it") == [-1.0, 2.0, 3.0, -2.0, 100.0]
    assert numbers_in("(19) and (41), the greater of (1) 100%") == [-19.0, -41.0, -1.0, 100.0]
    assert numbers_in("Other adjustments  (1)  2 | Total (123)  5 | fell (3)% | down (1) million") == \
        pytest.approx([-1.0, 2.0, -123.0, 5.0, -3.0, -1e6])
    assert numbers_in("Net income (loss) (3)  4 | Item 7(1)") == [-3.0, 4.0, 7.0, 1.0]
    assert numbers_in("not less than ninety\n(90) days' notice, or thirty-six (36) months") == [-90.0, -36.0]


def test_a_number_too_long_for_a_float_is_no_number():
    """A react answer on FinanceBench at a505311 ran a thousands-separated number past 310 digits: it
    was read as infinity and crashed the citation check."""
    endless = "$5,409" + ",000" * 110
    assert numbers_in(f"Inventories were {endless}, or 5,409.") == [5409.0]
    assert verify_pages(endless, [("d", 1)], lambda doc, page: "Inventories 5,409", lambda doc: "d.pdf").citations


@pytest.mark.parametrize("span, face", [("$60.3 million", 60.3), ("(1.2)bn", -1.2), ("1,577", 1577.0), ("12%", 12.0), ("none", None)])
def test_the_face_value_is_the_number_as_printed_before_its_scale_word(span, face):
    assert face_value(span) == face


def test_figures_are_read_with_the_period_printed_after_each_and_a_change_is_checked_against_them():
    figures, others = stated_figures("Yes, stores declined by 1.32% from 982 stores in Q2 FY 2023 to 969 by the end of Q2 "
                                     "FY2024, and 12 more opened.")
    assert [(f.value, f.printed, f.period) for f in figures] == [(982.0, "982", (2023, 2)), (969.0, "969", (2024, 2))]
    assert others == ["1.32%", "12"]  # no period follows them before the next number
    assert is_change("1.32%", figures) and is_change("13", figures)  # the percentage change and the difference
    assert not is_change("1.3%", figures[:1]) and not is_change("1.4%", figures) and not is_change("12", figures)
    assert [f.period for f in stated_figures("It rose from 13,745 in FY20 to 14,882 in fiscal 2021.")[0]] == [(2020, 0), (2021, 0)]


@pytest.mark.parametrize("text, number, unit", [
    ("RMB77 million", 77e6, "CNY"), ("RMB 77 million", 77e6, "CNY"), ("HK$1.2 billion", 1.2e9, "HKD"),
    ("US$3.5m", 3.5e6, "USD"), ("EUR5.2 million", 5.2e6, "EUR"), ("CHF 100", 100.0, "CHF")])
def test_a_number_is_read_after_its_currency_code_or_prefixed_symbol_glued_or_a_space_apart(text, number, unit):
    assert numbers_in(f"The Group reported exchange gains of {text} in 2019.") == [number, 2019.0]
    assert (parse_value(text).number, parse_value(text).unit) == (number, unit)
    assert numbers_in("FY2019 and MUSD 5") == [5.0]  # a code inside a word is none


@pytest.mark.parametrize("sentence, years", [
    ("The Group reported exchange gains of RMB77 million (2018: RMB229 million).", {"RMB229 million": "2018"}),
    ("Deposits of £3.5 million (2017: £2.1 million; FY2016: £1.0 million) were held.",
     {"£2.1 million": "2017", "£1.0 million": "2016"}),
    ("It was $610 million in 2019, compared to $533 million and $308 million in 2018 and 2017, respectively.",
     {"$533 million": "2018", "$308 million": "2017"}),  # the amounts nearest before the years it lists
    ("In 2019 and 2018, revenue was $5.2 million and $4.1 million, respectively.",
     {"$5.2 million": "2019", "$4.1 million": "2018"}),  # else the amounts after them
    ("Revenue rose to $5.2 million in 2019 from $4.1 million.", {}),  # no label, no "respectively": no year said
    ("Sales were $5.2 million and $4.1 million in 2019, 2018 and 2017, respectively.", {}),  # three years, two amounts
])
def test_a_sentence_says_the_year_of_a_number_in_a_label_or_a_respectively_list(sentence, years):
    assert {sentence[start:start + len(printed)]: year for start, year in number_years(sentence).items()
            for printed in years if sentence.startswith(printed, start)} == years
    assert len(number_years(sentence)) == len(years)
