"""corpus.facts: "Label: value" facts."""
import pytest

from ferret.corpus.facts import find_facts


def facts_of(*lines):
    return [(f.label, f.value.text, f.value.number, f.value.unit, f.line_index) for f in find_facts(list(lines))]


def test_simple_facts():
    assert facts_of("Invoice number: INV-2023-0042", "Total: $1,234.50", "Date: 2023-04-01") == [
        ("Invoice number", "INV-2023-0042", None, None, 0),
        ("Total", "$1,234.50", 1234.5, "USD", 1),
        ("Date", "2023-04-01", None, None, 2),
    ]


def test_units_and_words():
    assert facts_of("Notice period: 90 days", "Width: 1.134 m") == [
        ("Notice period", "90 days", 90.0, "days", 0),
        ("Width", "1.134 m", 1.134, "m", 1),
    ]


def test_several_facts_on_one_line_and_value_after_a_gap():
    assert facts_of("Date: 2023-04-01  Vendor: Acme Tire Co.", "Amount due:  $601.00") == [
        ("Date", "2023-04-01", None, None, 0),
        ("Vendor", "Acme Tire Co.", None, None, 0),
        ("Amount due", "$601.00", 601.0, "USD", 1),
    ]


@pytest.mark.parametrize("line", [
    "The company noted: revenue grew",
    "We said: this is fine",
    "Amcor CEO Ron Delia said: “Throughout fiscal 2023, our teams did an excellent job",
    "including the following: (1) the lapping of strong sales",
    "In fiscal 2023, we generated revenue across many segments and markets: $46.3 billion",
    "At Ulta Beauty (NASDAQ: ULTA), the possibilities are beautiful.",
    "Entertainment: The 9.3% comparable sales growth was driven primarily by gaming and other items",
    "Note: All amounts referenced throughout this document are in US dollars unless otherwise indicated and",
    "Current assets:",
    "Meeting at 10:30 a.m. see http://example.com",
])
def test_prose_and_labels_without_values_are_not_facts(line):
    assert find_facts([line]) == []


def test_long_label_is_rejected():
    assert find_facts(["Total amount of revenue for the fiscal year ended: $5"]) == []
    assert facts_of("Commission File Number: 0-15175") == [("Commission File Number", "0-15175", None, None, 0)]
