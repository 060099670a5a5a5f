"""Citation verification against real stored pages and real FinanceBench-style numbers."""
import pytest

from ferret.corpus.snippets import GAP, snippet
from ferret.programs.passage_answer import answer_from_passages
from ferret.programs.verify import answer_numbers, same_number, verify
from ferret.signatures.types import Finding

PAGE = ("CONSOLIDATED BALANCE SHEETS\n(In thousands)\nTotal current liabilities  2,213,556  2,494,435\n"
        "Accumulated other comprehensive income (loss)  (169,080)  (8,094)")


def pages(doc_id, page):
    return PAGE if (doc_id, page) == ("ADOBE_2015_10K", 59) else None


def files(doc_id):
    return f"{doc_id}.pdf"


@pytest.mark.parametrize("a, b, same", [
    (2_213_556_000, 2_213_556, True),       # scale: thousands
    (169_080, -(-169_080), True),
    (1.5e9, 1_496.5e6, True),               # rounded to the printed precision
    (0.66, 0.66, True),
    (2_213_556, 2_213_557_000, True),       # within half a percent after scaling
    (2_213_556, 2_494_435, False),
    (3.2, 32, False),
])
def test_same_number(a, b, same):
    assert same_number(a, b) is same


def test_answer_numbers_skip_years_but_keep_amounts():
    assert [n for _, n in answer_numbers("In FY2015 total current liabilities were $2,213,556 thousand (2014: 2,494,435).")] \
        == [2_213_556_000.0, 2_494_435.0]
    # a year ending the sentence is a year; a year-like amount with decimals or a percent is a number
    assert [n for _, n in answer_numbers("Consumer revenue was 1,250 in 2023. It grew 4%, against 2,023.5 and 2021%.")] \
        == [1250.0, 4.0, 2023.5, 2021.0]
    # a change computed between the two figures an answer states is checked against them, not looked for on a page
    assert [n for _, n in answer_numbers("Yes, down 1.32% from 982 in Q2 FY2023 to 969 in Q2 FY2024.")] == [982.0, 969.0]
    assert [n for _, n in answer_numbers("Yes, down 2% from 982 in Q2 FY2023 to 969 in Q2 FY2024.")] == [2.0, 982.0, 969.0]


def test_a_cited_number_on_its_page_verifies():
    finding = Finding(label="Total current liabilities", value=2_213_556_000.0, unit="USD",
                      doc_id="ADOBE_2015_10K", page=59, section="Balance sheet", context="Total current liabilities  2,213,556")
    result = verify("Total current liabilities were $2,213,556 thousand.", [0], [finding], pages, files)
    assert result.ok and result.citations[0].verified and result.citations[0].file == "ADOBE_2015_10K.pdf"


def test_a_number_absent_from_its_page_is_rejected():
    wrong_page = Finding(label="Total current liabilities", value="2,213,556", doc_id="ADOBE_2015_10K", page=59)
    invented = Finding(label="Total current liabilities", value=2_300_000, doc_id="ADOBE_2015_10K", page=59)
    result = verify("They were 2,300,000.", [1], [wrong_page, invented], pages, files)
    assert not result.ok and result.unverified_findings == [1] and not result.citations[0].verified


def test_unknown_sources_and_numbers_not_in_findings_are_flagged():
    finding = Finding(label="AOCI", value="(169,080)", doc_id="ADOBE_2015_10K", page=59)
    result = verify("AOCI was -169,080 and cash was 876,560.", [0, 3], [finding], pages, files)
    assert result.unknown_sources == [3]
    assert result.unverified_numbers == ["876,560"]
    assert result.citations[0].verified


def test_text_values_verify_by_presence_on_the_page():
    finding = Finding(label="Statement", value="Consolidated balance sheets", doc_id="ADOBE_2015_10K", page=59)
    missing = Finding(label="Statement", value="Cash flow statement", doc_id="ADOBE_2015_10K", page=59)
    assert verify("See the balance sheet.", [0], [finding], pages, files).ok
    assert verify("See the cash flows.", [0], [missing], pages, files).unverified_findings == [0]


def test_a_cited_table_snippet_verifies_on_its_page_though_it_shows_the_tables_head_above_a_gap():
    """A search shows a long table as its head, "…", and the rows that hold the question's words; no page prints
    that whole, so the finding a cited snippet gives is the run it shows whole."""
    rows = "\n".join(f"Item {n}  {n}  {n + 1}" for n in range(1, 30))
    page = f"Cash flow measures\n2019  2018\n€m  €m\n{rows}\nTaxation  (35)  (36)\nDividends received  12  11"
    shown = snippet(page, "Which items are taxation and dividends received?", 120, table=True)
    assert GAP in shown.strip(GAP) and shown.startswith("Cash flow measures")  # head … rows
    hit = {"doc_id": "report", "page": 4, "section": "Cash flow", "node_id": "seg:4", "score": 1.0, "text": shown}
    read = answer_from_passages("Which items are taxation and dividends received?", [hit], "",
                                "Taxation, Dividends received", [1])
    check = verify(read.answer, [0], read.findings, lambda doc_id, page_number: page, lambda doc_id: "report.pdf")
    assert check.ok and not check.unverified_findings
    assert read.findings[0].context == shown.strip(GAP).strip()  # what was shown, kept as the citation's quote
