"""corpus.tables: tables in compacted page text, synthetic and from FinanceBench filings."""
from pathlib import Path

import pytest

from ferret.corpus.tables import find_tables

PDFS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "financebench" / "pdfs"

INVOICE = """INVOICE
Invoice number: INV-2023-0042
Date: 2023-04-01  Vendor: Acme Tire Co.

Item  Qty  Unit price  Amount
Tires  4  $120.00  $480.00
Wiper blades  2  $15.50  $31.00
Labor  1.5 hours  —  $90.00

Thank you for your business."""

PROSE = """Revenue  was  up  12%  compared  with  fiscal  2014  and  margins  improved  to  40%
In 2015 we sold 12 cars and revenue grew by 3% to $1.2 billion, compared with 2014.
As of November 27, 2015, we employed 13,893 people.
Our  results  for  2015  and  2014  reflect  the  strength  of  our  three  business  segments  in  2013"""


def page_lines(name: str, index: int) -> list[str]:
    path = PDFS / name
    if not path.exists():
        pytest.skip(f"FinanceBench PDF not available: {path}")
    from ferret.corpus.pdf import read_pages
    return read_pages(path, index, index + 1)[0].split("\n")


def row(table, label):
    return next(r for r in table.rows if r.label == label)


def test_text_first_table_with_header():
    lines = INVOICE.split("\n")
    [table] = find_tables(lines)
    assert table.columns == ["Qty", "Unit price", "Amount"]
    assert (table.first_line, table.last_line) == (4, 7)
    assert [r.label for r in table.rows] == ["Tires", "Wiper blades", "Labor"]
    tires = row(table, "Tires")
    assert tires.cells["Qty"].number == 4
    assert tires.cells["Amount"].number == 480.0
    assert tires.cells["Amount"].unit == "USD"
    assert tires.line_index == 5 and tires.line == "Tires  4  $120.00  $480.00"
    labor = row(table, "Labor")
    assert (labor.cells["Qty"].number, labor.cells["Qty"].unit) == (1.5, "hours")
    assert labor.cells["Unit price"].number is None


def test_prose_is_not_a_table():
    assert find_tables(PROSE.split("\n")) == []
    assert find_tables(["In fiscal 2015  revenue grew.", "Total  2015"]) == []


def test_year_header_scale_and_percent_column():
    lines = [
        "SUMMARY RESULTS",
        "(In millions, except percentages and per share amounts)  2023  2022  Change",
        "",
        "Revenue  $211,915  $198,270  7%",
        "Net income  72,361  72,738  (1)%",
        "Diluted earnings per share  9.68  9.65  0%",
    ]
    [table] = find_tables(lines)
    assert table.columns == ["2023", "2022", "Change"]
    assert (table.scale, table.unit, table.title) == (1e6, "USD", "SUMMARY RESULTS")
    assert table.first_line == 0
    net = row(table, "Net income")
    assert net.cells["2023"].number == pytest.approx(72_361e6)
    assert (net.cells["Change"].number, net.cells["Change"].unit) == (-1.0, "%")
    assert row(table, "Diluted earnings per share").cells["2022"].number == pytest.approx(9.65)


def test_columns_without_header_fall_back_to_positions():
    [table] = find_tables(["Alpha  1  2", "Beta  3  4"])
    assert table.columns == ["col1", "col2"]
    assert row(table, "Beta").cells["col2"].number == 4


def test_scale_line_between_header_and_rows_and_spaced_year():
    lines = ["December 31", "2019  2 0 1 8", "U.S. $ in thousands",
             "Operating loss carryforward  73,260  57,768", "Valuation allowance  (19,911)  (15,916)"]
    [table] = find_tables(lines)
    assert table.columns == ["December 31 2019", "December 31 2018"]
    assert (table.scale, table.first_line) == (1e3, 0)
    assert row(table, "Valuation allowance").cells["December 31 2018"].number == pytest.approx(-15_916e3)
    # a scale line under a title, not under a header, is no part of the header
    [untitled] = find_tables(["Income taxes", "(in millions)", "Current  5  6", "Deferred  7  8"])
    assert untitled.columns == ["col1", "col2"] and untitled.scale == 1e6


def test_years_with_notes_are_a_header():
    [table] = find_tables(["2019 (1)  2018  2017 (2)", "Impairment charges  $94.2  $394.0  $211.4",
                           "Other operating expenses  27.0  33.7  11.8"])
    assert table.columns == ["2019 (1)", "2018", "2017 (2)"]
    assert row(table, "Other operating expenses").cells["2018"].number == pytest.approx(33.7)


def test_a_schedules_rows_may_be_years_but_a_line_of_years_stays_a_header():
    lines = ["Operating Leases  Finance Leases", "2021  $138  $6", "2022  135  6", "Thereafter  577  35",
             "", "Summary  2023  2022", "Revenue  100  90", "Cost  50  45"]
    schedule, summary = find_tables(lines)
    assert [row.label for row in schedule.rows] == ["2021", "2022", "Thereafter"]
    assert schedule.rows[0].cells["Finance Leases"].number == 6.0
    assert summary.columns == ["2023", "2022"] and [row.label for row in summary.rows] == ["Revenue", "Cost"]


def test_an_unlabelled_subtotal_does_not_cut_the_table_and_a_row_between_two_subtotals_is_kept():
    lines = ["December 29, 2019  December 30, 2018", "(in thousands)", "Inventories:", "Raw material  $222  $191",
             "Finished goods  668  716", "$890  $907", "Property and equipment:", "Equipment  $10,694  $10,607",
             "12,993  14,149", "Accumulated depreciation and amortization  (12,163)  (12,700)", "$830  $1,449",
             "Other current assets:", "Prepaid expenses  $1,296  $1,483",
             "Other  269  292", "The table below shows the other receivables of the year.", "Receivables",
             "Alpha  1  2", "Beta  3  4"]
    balances, summary = find_tables(lines)
    assert balances.columns == ["December 29, 2019", "December 30, 2018"]
    assert row(balances, "Prepaid expenses").cells["December 30, 2018"].number == pytest.approx(1_483e3)
    depreciation = row(balances, "Accumulated depreciation and amortization")  # alone between two subtotals
    assert depreciation.cells["December 29, 2019"].number == pytest.approx(-12_163e3)
    assert summary.columns == ["col1", "col2"]  # a title of its own: another table


def test_each_row_keeps_the_label_only_line_it_is_printed_under_and_its_unlabelled_subtotal_is_the_groups_row():
    lines = ["2019  2018", "Weighted-average common shares outstanding:", "Basic  57,840  52,798",
             "Diluted  59,082  58,640", "Net income per basic share  $3.57  $4.81", "Earnings per share (cents):",
             "Continuing operations  114.3  123.4", "Discontinued operations  91.9  9.2", "206.2  132.6",
             "Other  1  2", "December 31, 2018", "Total  $15,568  $(168)"]
    [table] = find_tables(lines)
    groups = {(r.label, r.cells["2019"].number): r.group for r in table.rows}
    assert groups[("Basic", 57_840)] == "Weighted-average common shares outstanding"  # above the first row
    assert groups[("Net income per basic share", 3.57)] == "Weighted-average common shares outstanding"
    assert groups[("Continuing operations", 114.3)] == "Earnings per share (cents)"
    assert groups[("Earnings per share (cents)", 206.2)] == ""  # "206.2  132.6": the group's own row
    assert row(table, "Earnings per share (cents)").cells["2018"].number == pytest.approx(132.6)
    assert groups[("Other", 1)] == ""  # after the group's subtotal
    assert groups[("Total", 15_568)] == "December 31, 2018"


def test_header_above_a_unit_line_and_captions_that_introduce_the_rows():
    lines = ["Consolidated", "2019  2018", "US$000  US$000",
             "Profit before income tax includes the following specific expenses:",
             "Included in professional advice expense", "Costs associated with acquisitions  244  572",
             "Finance costs expensed  200  62"]
    [table] = find_tables(lines)
    assert table.columns == ["2019", "2018"] and (table.scale, table.unit) == (1e3, "USD")
    assert row(table, "Finance costs expensed").cells["2018"].number == pytest.approx(62e3)
    caption = "Major classes of line items constituting pretax profit (loss) of discontinued operations for " \
              "Horizon Clinicals and Series2000 Revenue Cycle:"
    [table] = find_tables(["(In thousands)  2018  2017", caption, "Revenue:", "Software delivery  $9,441  $10,949",
                           "Client services  404  1,044"])
    assert table.columns == ["2018", "2017"]
    assert row(table, "Client services").cells["2017"].number == pytest.approx(1_044e3)


def test_a_label_columns_header_before_headers_that_span_two_columns_each():
    lines = ["(Dollars in thousands)  2019  2018  Change",
             "Software license  $275,792  99%  $282,950  98%  $(7,158)  (3)%",
             "Maintenance  254,924  91%  239,310  91%  15,614  7%"]
    [table] = find_tables(lines)
    assert table.columns == ["2019", "2019 %", "2018", "2018 %", "Change", "Change %"]
    assert row(table, "Maintenance").cells["2018"].number == pytest.approx(239_310e3)
    assert row(table, "Maintenance").cells["2018 %"].number == pytest.approx(91)


def test_adobe_2015_balance_sheet():
    lines = page_lines("ADOBE_2015_10K.pdf", 58)
    [table] = find_tables(lines)
    assert table.title == "CONSOLIDATED BALANCE SHEETS"
    assert (table.scale, table.unit) == (1e3, "USD")
    assert lines[table.first_line] == "ADOBE SYSTEMS INCORPORATED"
    assert lines[table.last_line].startswith("Total liabilities and stockholders")
    assert "2015" in table.columns[0] and "2014" in table.columns[1]
    assert table.columns[0] == "November 27, 2015"
    liabilities = row(table, "Total current liabilities")
    assert liabilities.cells[table.columns[0]].number == pytest.approx(2_213_556e3)
    assert liabilities.cells[table.columns[1]].number == pytest.approx(2_494_435e3)
    assert lines[liabilities.line_index] == liabilities.line
    aoci = row(table, "Accumulated other comprehensive income (loss)")
    assert aoci.cells[table.columns[0]].number == pytest.approx(-169_080e3)
    deferred = next(r for r in table.rows if r.label == "Deferred income taxes")
    assert deferred.cells[table.columns[0]].text == "—"
    assert deferred.cells[table.columns[0]].number is None
    assert deferred.cells[table.columns[1]].number == pytest.approx(95_279e3)
    assert len(table.rows) == 34


def test_ulta_income_statement_with_percent_columns():
    lines = page_lines("ULTABEAUTY_2023Q4_EARNINGS.pdf", 5)
    quarter, year = find_tables(lines)
    assert quarter.title == "Consolidated Statements of Income"
    assert quarter.columns[0] == "13 Weeks Ended January 28, 2023 (Unaudited)"
    assert quarter.columns[1] == "13 Weeks Ended January 28, 2023 (Unaudited) %"
    net_sales = row(year, "Net sales")
    assert net_sales.cells[year.columns[0]].number == pytest.approx(10_208_580e3)
    assert (net_sales.cells[year.columns[1]].number, net_sales.cells[year.columns[1]].unit) == (100.0, "%")
    interest = row(quarter, "Interest (income) expense, net")
    assert interest.cells[quarter.columns[0]].number == pytest.approx(-4_378e3)
    assert interest.cells[quarter.columns[1]].number == pytest.approx(-0.1)
    basic_eps = next(r for r in quarter.rows if r.label == "Basic")  # under "Net income per common share:"
    assert basic_eps.cells[quarter.columns[0]].number == pytest.approx(6.73)  # per share: not scaled
    assert basic_eps.cells[quarter.columns[2]].number == pytest.approx(5.44)  # skips the percent column
    shares = [r for r in quarter.rows if r.label == "Basic"][1]
    assert shares.cells[quarter.columns[0]].number == pytest.approx(50_624e3)
    assert shares.cells[quarter.columns[0]].unit is None


def test_bestbuy_2023_segment_percent_table():
    lines = page_lines("BESTBUY_2023_10K.pdf", 24)
    consolidated, domestic = find_tables(lines)[:2]
    assert consolidated.columns == ["2023", "2022", "2021"]
    assert (consolidated.scale, consolidated.unit) == (1e6, "USD")
    assert row(consolidated, "Revenue").cells["2023"].number == pytest.approx(46_298e6)
    change = row(consolidated, "Revenue % change")
    assert (change.cells["2023"].number, change.cells["2023"].unit) == (-10.6, "%")
    assert change.cells["2022"].number == pytest.approx(9.5)
    assert row(consolidated, "Restructuring charges").cells["2022"].number == pytest.approx(-34e6)
    assert row(consolidated, "Diluted earnings per share").cells["2021"].number == pytest.approx(6.84)
    assert row(domestic, "Gross profit as a % of revenue").cells["2023"].number == pytest.approx(21.3)
    assert row(domestic, "Operating income").cells["2022"].number == pytest.approx(2_795e6)


def test_adobe_2015_prose_page_has_no_table():
    assert find_tables(page_lines("ADOBE_2015_10K.pdf", 15)) == []
