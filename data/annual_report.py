"""The sample corpus's long document: Northwind Energy Systems, Inc. Annual Report 2023 (40+ pages).

Cover, contents with page numbers, letter to shareholders, business, risk factors, MD&A with a segment
results table that cites Note 7, the four primary statements, fifteen numbered notes that refer to each
other ("see Note 14"), a five-year summary, quarterly data and shareholder information. Sections are
also a PDF outline (fpdf2 `start_section`), which ferret reads as the section tree. The figures tie out:
statements balance, segments sum to the consolidated totals, notes agree with the statements.
Amounts in the tables are in millions of U.S. dollars; prose prints them as "$412.6 million".
"""
from __future__ import annotations

from pathlib import Path

from ferret.data._pdf import Document

REPORT_ID = "northwind-annual-report-2023"
COMPANY = "Northwind Energy Systems, Inc."

# ---------------------------------------------------------------- the figures (millions of USD)
SEGMENTS = {  # revenue 2023, revenue 2022, operating income 2023, operating income 2022
    "Consumer": (412.6, 380.1, 38.2, 29.4),
    "Commercial": (538.9, 466.3, 61.7, 47.9),
    "Utility": (871.4, 702.8, 118.5, 83.6),
}
CORPORATE_OI = (-41.6, -36.2)
SEGMENT_ASSETS = {"Consumer": (356.2, 331.5), "Commercial": (498.7, 436.0), "Utility": (884.1, 801.4),
                  "Corporate and other": (220.3, 197.7)}
SEGMENT_CAPEX_DA = {"Consumer": (18.4, 14.2), "Commercial": (31.2, 22.5), "Utility": (64.9, 39.7),
                    "Corporate and other": (8.3, 8.2)}
INCOME = [  # label, 2023, 2022
    ("Revenue", 1822.9, 1549.2), ("Cost of revenue", 1297.4, 1118.6), ("Gross profit", 525.5, 430.6),
    ("Research and development", 96.3, 84.1), ("Selling, general and administrative", 252.4, 221.8),
    ("Total operating expenses", 348.7, 305.9), ("Operating income", 176.8, 124.7),
    ("Interest expense", -28.4, -24.9), ("Other income, net", 6.1, 3.2),
    ("Income before income taxes", 154.5, 103.0), ("Provision for income taxes (Note 9)", 34.6, 23.2),
    ("Net income", 119.9, 79.8),
]
FIG = {label: (a, b) for label, a, b in INCOME}
TOTAL_ASSETS = (1959.3, 1766.6)
CFO = (206.2, 125.6)
CAPEX = (122.8, 109.5)
NOTES_FAIR_VALUE = 187.6


def m(value: float) -> str:
    """A table cell: 1,234.5, or (28.4) for a negative amount."""
    text = f"{abs(value):,.1f}"
    return f"({text})" if value < 0 else text


def usd(value: float) -> str:
    """Prose: $1,234.5 million."""
    return f"${value:,.1f} million"


def _check_figures() -> None:
    """The statements tie out (a typo in a figure fails generation, not a reader)."""
    def close(a, b):
        assert abs(a - b) < 0.05, (a, b)
    for year in (0, 1):
        close(sum(s[year] for s in SEGMENTS.values()), FIG["Revenue"][year])
        close(sum(s[2 + year] for s in SEGMENTS.values()) + CORPORATE_OI[year], FIG["Operating income"][year])
        close(FIG["Revenue"][year] - FIG["Cost of revenue"][year], FIG["Gross profit"][year])
        close(FIG["Gross profit"][year] - FIG["Total operating expenses"][year], FIG["Operating income"][year])
        close(FIG["Operating income"][year] + FIG["Interest expense"][year] + FIG["Other income, net"][year],
              FIG["Income before income taxes"][year])
        close(FIG["Income before income taxes"][year] - FIG["Provision for income taxes (Note 9)"][year],
              FIG["Net income"][year])
        close(sum(a[year] for a in SEGMENT_ASSETS.values()), TOTAL_ASSETS[year])
    close(sum(c for c, _ in SEGMENT_CAPEX_DA.values()), CAPEX[0])


# ---------------------------------------------------------------- the document

class Report(Document):
    def __init__(self):
        super().__init__(f"{COMPANY} Annual Report 2023", COMPANY)
        self.section_pages: dict[str, int] = {}

    def header(self):
        if self.page_no() == 1:
            return
        self.set_font("Helvetica", "", 8)
        self.set_xy(self.l_margin, 8)
        self.cell(90, 5, COMPANY)
        self.set_xy(self.w - self.r_margin - 60, 8)
        self.cell(60, 5, "Annual Report 2023", align="R")
        self.set_xy(self.l_margin, self.t_margin)

    def footer(self):
        if self.page_no() == 1:
            return
        self.set_y(-14)
        self.set_font("Helvetica", "", 8)
        self.cell(0, 5, str(self.page_no()), align="C")

    def section(self, title: str, level: int = 0, new_page: bool = True) -> None:
        if new_page:
            self.add_page()
        else:
            self.ensure_space(40)
        self.start_section(title, level)
        self.section_pages[title] = self.page_no()
        self.heading(title, 15 if level == 0 else 12.5, space_before=0 if new_page else 4, keep=20)

    def sub(self, title: str) -> None:
        """A bold run-in sub-heading that is not a section of its own."""
        self.heading(title, 10.5, space_before=2, keep=18)


STATEMENT_WIDTHS = [110, 30, 30]
SCALE = "(In millions of U.S. dollars)"


def _cover(pdf: Report) -> None:
    pdf.add_page()
    pdf.ln(55)
    pdf.set_font("Helvetica", "B", 26)
    pdf.cell(0, 14, COMPANY, align="C", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", "", 20)
    pdf.cell(0, 12, "Annual Report 2023", align="C", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(8)
    pdf.set_font("Helvetica", "I", 13)
    pdf.cell(0, 8, "Powering homes, businesses and grids", align="C", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(70)
    pdf.set_font("Helvetica", "", 10)
    pdf.cell(0, 6, "Fiscal year ended December 31, 2023", align="C", new_x="LMARGIN", new_y="NEXT")
    pdf.cell(0, 6, "3300 Lakeview Parkway, Denver, Colorado 80202  |  NYSE: NWES", align="C", new_x="LMARGIN",
             new_y="NEXT")


def _contents(pdf: Report, toc: dict[str, int] | None, entries: list[tuple[str, int]]) -> None:
    pdf.section("Contents")
    rows = [[("    " if level else "") + title, str(toc[title]) if toc else "00"] for title, level in entries]
    pdf.table([], rows, [140, 20], size=9.5, line=5.2)


def _letter(pdf: Report) -> None:
    pdf.section("Letter to Shareholders")
    rev, ni = FIG["Revenue"], FIG["Net income"]
    pdf.para("Dear fellow shareholders,")
    pdf.para(f"2023 was the strongest year in Northwind's history. Revenue grew 17.7% to {usd(rev[0])}, operating "
             f"income rose 41.8% to {usd(FIG['Operating income'][0])}, and net income increased 50.3% to "
             f"{usd(ni[0])}, or $2.38 per diluted share, compared with $1.59 a year earlier. Every one of our three "
             "segments grew revenue by double digits, and every one of them improved its operating margin.",
             marks=("net_income", "eps_diluted"))
    pdf.para("Demand for what we make - solar modules, battery storage systems, inverters and the services that keep "
             "them running - kept rising through the year. Homeowners added storage to ride through outages and to "
             "use more of their own solar power; businesses invested to cut demand charges; and utilities "
             "accelerated procurement of grid-scale storage to integrate the renewable capacity now connecting to "
             "their networks. Our Utility segment, which builds and services storage plants of 20 to 400 megawatt "
             "hours, grew revenue by 24.0% and is now our largest business.")
    pdf.para("We ended the year with an order backlog of $1.46 billion, up from $1.12 billion a year earlier, "
             "giving us good visibility into 2024. Roughly two-thirds of the backlog is in the Utility segment, "
             "where contracts typically run twelve to twenty-four months from award to commissioning.",
             marks=("backlog",))
    pdf.para("We invested for growth while strengthening the balance sheet. Capital expenditures rose to "
             f"{usd(CAPEX[0])}, most of it for a second cell-assembly line in Reno, Nevada, and for test capacity at "
             f"our Denver storage plant. Operating cash flow of {usd(CFO[0])} funded that investment, $25.0 million "
             "of scheduled debt repayment and a higher dividend. In the fourth quarter the Board raised the quarterly "
             "dividend to $0.11 per share, effective with the payment in March 2024.")
    pdf.para("Safety remains our first priority. Our total recordable incident rate fell to 0.62 from 0.81, and "
             "two of our three plants completed the year without a lost-time injury. We also published our third "
             "sustainability report, which shows that 71% of the electricity used in our own operations now comes "
             "from renewable sources.")
    pdf.para("Looking ahead, we expect 2024 revenue of $2.0 billion to $2.1 billion, with further margin improvement "
             "as the Reno line reaches full output in the second quarter. We will keep our focus where it has served "
             "us well: products that work for decades, service that customers can count on, and disciplined "
             "allocation of capital.")
    pdf.para("Thank you to our 4,860 employees for their hard work, to our customers for their trust, and to you, "
             "our shareholders, for your continued support.")
    pdf.para("Elena Marsh\nChair and Chief Executive Officer\nFebruary 23, 2024")


def _glance(pdf: Report) -> None:
    pdf.section("2023 at a Glance")
    pdf.para("Financial highlights for the years ended December 31. Percent changes are calculated from the "
             "amounts in the table.")
    rows = [["Revenue", m(1822.9), m(1549.2), "17.7%"],
            ["Operating income", m(176.8), m(124.7), "41.8%"],
            ["Net income", m(119.9), m(79.8), "50.3%"],
            ["Diluted earnings per share", "2.38", "1.59", "49.7%"],
            ["Net cash provided by operating activities", m(CFO[0]), m(CFO[1]), "64.2%"],
            ["Capital expenditures", m(CAPEX[0]), m(CAPEX[1]), "12.1%"]]
    pdf.set_font("Helvetica", "", 9)
    pdf.cell(0, 5, "(In millions of U.S. dollars, except per share data)", new_x="LMARGIN", new_y="NEXT")
    pdf.table([["", "2023", "2022", "Change"]], rows, [95, 25, 25, 25],
              marks={"Net income": "net_income", "Diluted earnings per share": "eps_diluted"})
    pdf.sub("Revenue by segment")
    pdf.para("Utility 47.8% of revenue, Commercial 29.6%, Consumer 22.6%. Utility revenue grew 24.0%, Commercial "
             "15.6% and Consumer 8.6%.")
    pdf.sub("Operations")
    pdf.para("Three manufacturing plants (Denver, Colorado; Reno, Nevada; Monterrey, Mexico), 41 service depots in "
             "the United States and Canada, 2.9 gigawatt hours of storage systems shipped in 2023, and 1.1 "
             "gigawatts of solar modules.")


def _business(pdf: Report) -> None:
    pdf.section("Our Business")
    pdf.para("Northwind Energy Systems designs, manufactures, installs and services solar modules, battery energy "
             "storage systems, inverters and power electronics. We sell through three reportable segments - "
             "Consumer, Commercial and Utility - which share engineering, manufacturing and supply chain functions "
             "but have their own sales, project delivery and service organizations. Segment financial information "
             "is presented in Note 7 to the consolidated financial statements.")
    pdf.sub("Consumer")
    pdf.para("The Consumer segment sells rooftop solar kits, home batteries and hybrid inverters to homeowners "
             "through a network of about 1,300 independent certified installers and through two national home "
             "improvement retailers. Our flagship home battery, the Northwind Home 13, stores 13.5 kilowatt hours "
             "and pairs with our 8 kilowatt hybrid inverter. Consumer customers buy extended warranties and "
             "monitoring subscriptions, which contributed $37.9 million of service revenue in 2023.")
    pdf.sub("Commercial")
    pdf.para("The Commercial segment serves businesses, schools, hospitals and municipalities with systems of 100 "
             "kilowatts to 5 megawatts. Most customers buy storage to reduce demand charges and to keep critical "
             "loads running during outages. We design each system, supply the equipment, manage installation "
             "through regional contractors and operate the system under multi-year service agreements. Fleet "
             "operators, including several logistics companies in the Pacific Northwest, are a growing customer "
             "group as they electrify depots.")
    pdf.sub("Utility")
    pdf.para("The Utility segment delivers grid-scale storage plants of 20 to 400 megawatt hours to utilities and "
             "independent power producers, usually under engineering, procurement and construction contracts with "
             "long-term service agreements attached. Revenue is recognized over time as the plants are built. At "
             "year end the segment had 23 projects under construction in eleven states.")
    pdf.section("Operations and People", level=1, new_page=False)
    pdf.sub("Manufacturing and supply chain")
    pdf.para("We assemble battery modules and racks in Denver and Reno, and solar modules and inverters in "
             "Monterrey. Battery cells are bought from three suppliers in Korea, Japan and the United States under "
             "multi-year agreements with volume commitments; the largest supplier provided 46% of the cells we used "
             "in 2023. We hold about ten weeks of cell inventory to protect deliveries against shipping delays.")
    pdf.sub("Research and development")
    pdf.para(f"Research and development expense was {usd(FIG['Research and development'][0])} in 2023, or 5.3% of "
             "revenue. Our 640 engineers work on battery management software, power conversion, thermal design and "
             "grid controls. In 2023 we released a new generation of utility inverter with 12% higher power density "
             "and our grid-forming control software, which lets storage plants stabilize weak grids.",
             marks=("rnd",))
    pdf.sub("Employees")
    pdf.para("At December 31, 2023, we had approximately 4,860 employees, of whom 3,940 worked in the United States, "
             "610 in Mexico and 310 in Canada. About 2,100 employees work in manufacturing and 1,450 in installation "
             "and field service. None of our U.S. employees are covered by collective bargaining agreements; our "
             "Monterrey employees are represented by a union under an agreement that runs through 2025.",
             marks=("employees",))
    pdf.sub("Seasonality")
    pdf.para("Consumer and Commercial revenue is usually lowest in the first quarter, when winter weather slows "
             "installations, and highest in the fourth quarter. Utility revenue depends on project milestones and "
             "varies from quarter to quarter with the timing of construction.")
    pdf.sub("Competition")
    pdf.para("We compete with global module and battery manufacturers, with inverter specialists and with "
             "integrators that buy equipment from third parties. We compete on the total cost of ownership of a "
             "system over its life, on the reliability and safety of our products, and on the coverage of our "
             "service network, which lets us offer four-hour response times in most metropolitan areas.")
    pdf.sub("Intellectual property")
    pdf.para("We hold 212 issued patents and have 96 applications pending, mainly for battery management, thermal "
             "design and inverter control. We also rely on trade secrets and on confidentiality agreements with "
             "employees, contractors and suppliers.")


RISKS = [
    ("We depend on a small number of battery cell suppliers.",
     "Battery cells are the largest component of the cost of our storage systems. Three suppliers provide all of our "
     "cells and the largest provided 46% in 2023. A disruption at any of them, a dispute, or a shortage of raw "
     "materials such as lithium and nickel could delay deliveries, raise costs and reduce our margins."),
    ("Our Utility revenue depends on large projects.",
     "A small number of Utility projects account for a large share of revenue in any quarter. Delays in permits, "
     "interconnection approvals or construction can move revenue between periods, and cost overruns on fixed-price "
     "contracts reduce profit. Our ten largest projects represented 31% of 2023 revenue."),
    ("Changes in government incentives could reduce demand.",
     "Demand for our products benefits from federal investment tax credits, state rebates and utility programs. "
     "Changes to these incentives, including to the rules on domestic content, could reduce demand or require us "
     "to change our supply chain at significant cost."),
    ("Product defects could lead to warranty claims and recalls.",
     "Our products carry warranties of ten to twenty-five years. A defect that affects many units, particularly a "
     "safety defect in a battery system, could lead to recalls, claims and reputational harm in excess of our "
     "warranty reserves, which are described in Note 13."),
    ("We face intense competition and price pressure.",
     "Prices of solar modules and battery cells fell sharply in 2023. Competitors with larger scale or government "
     "support may price aggressively, which could force us to lower our prices and accept lower margins."),
    ("Cyber attacks could disrupt our operations and our customers' systems.",
     "Our products are connected to our cloud monitoring platform and to customers' control systems. A security "
     "breach could disrupt our customers' operations, expose confidential data and lead to claims and regulatory "
     "action."),
    ("Our debt agreements restrict how we operate.",
     "Our term loan and revolving credit facility contain covenants that limit additional debt, liens, acquisitions "
     "and distributions, and require a maximum net leverage ratio. The terms of our debt are described in Note 12."),
    ("Currency movements affect our costs and results.",
     "We manufacture in Mexico and buy cells in Korean won and Japanese yen, while most of our revenue is in U.S. "
     "dollars. We hedge part of this exposure with forward contracts, described in Note 14, but hedges do not "
     "eliminate the effect of currency movements."),
    ("We may not successfully integrate acquisitions.",
     "We have grown partly through acquisitions and announced the acquisition of Gridline Controls in January 2024. "
     "Integrating acquired businesses takes management attention and may not deliver the expected benefits."),
]


def _risks(pdf: Report) -> None:
    pdf.section("Risk Factors")
    pdf.para("An investment in our common stock involves risks. The risks below are those we consider most "
             "significant; others that we do not know of or currently consider immaterial could also affect us.")
    for title, text in RISKS:
        pdf.sub(title)
        pdf.para(text)


def _sustainability(pdf: Report) -> None:
    pdf.section("Properties")
    pdf.para("We own our three manufacturing plants and lease our headquarters, service depots and most "
             "warehouses. We believe our facilities are in good condition and adequate for our current needs; the "
             "second Reno line added about 40% to our battery module capacity in 2023.")
    pdf.set_font("Helvetica", "", 9)
    pdf.cell(0, 5, "Principal facilities at December 31, 2023", new_x="LMARGIN", new_y="NEXT")
    pdf.table([["Facility", "Square feet"]],
              [["Denver, Colorado - headquarters (leased)", "86,000"],
               ["Denver, Colorado - storage systems plant (owned)", "420,000"],
               ["Reno, Nevada - battery module plant (owned)", "365,000"],
               ["Monterrey, Mexico - solar module and inverter plant (owned)", "510,000"],
               ["Service depots, 41 locations (leased)", "612,000"],
               ["Regional warehouses, 6 locations (leased)", "298,000"]], [120, 35])
    pdf.para("The Denver storage systems plant operated at about 78% of its capacity in 2023, the Reno plant at 64% "
             "after the start of its second line in September, and the Monterrey plant at 83%. The Monterrey plant "
             "runs three shifts, five days a week; the United States plants run two shifts.")
    pdf.para("Our service depots are located within a two-hour drive of about 85% of the systems under our service "
             "contracts. Each depot holds spare modules, inverters and battery racks for the systems it supports, "
             "and the six regional warehouses replenish the depots at least twice a week.")

    pdf.section("Sustainability")
    pdf.para("Our products help our customers cut emissions, and we work to reduce the footprint of our own "
             "operations. Our third sustainability report, published in June 2023, follows the GRI Standards and "
             "the recommendations of the Task Force on Climate-related Financial Disclosures. The figures below "
             "cover our plants, offices, depots and vehicle fleet.")
    pdf.table([["", "2023", "2022"]],
              [["Scope 1 emissions (tonnes CO2e)", "18,420", "19,860"],
               ["Scope 2 emissions, market-based (tonnes CO2e)", "9,310", "14,270"],
               ["Renewable share of electricity used (%)", "71", "52"],
               ["Water withdrawn (thousand cubic meters)", "412", "398"],
               ["Waste diverted from landfill (%)", "87", "84"],
               ["Total recordable incident rate", "0.62", "0.81"],
               ["Women in management (%)", "31", "29"]], [110, 30, 30])
    pdf.sub("Climate")
    pdf.para("Scope 2 emissions fell 34.8% as the Denver and Reno plants moved to renewable electricity supply "
             "contracts and the Reno rooftop solar array came online. We aim to use 100% renewable electricity in "
             "our own operations by 2026 and to cut combined Scope 1 and Scope 2 emissions by 60% from 2021 levels "
             "by 2030. We are converting our service fleet to electric vans; 214 of our 690 service vehicles were "
             "electric at year end.")
    pdf.sub("Product stewardship")
    pdf.para("We take back batteries at the end of their life from customers in every state where we sell, and we "
             "work with two recyclers that recover more than 90% of the lithium, nickel and cobalt in our cells. "
             "In 2023 we collected 1,140 tonnes of batteries and 2,380 tonnes of solar modules for recycling.")
    pdf.sub("Responsible sourcing")
    pdf.para("Our supplier code of conduct prohibits forced and child labor and requires suppliers to trace the "
             "origin of critical minerals. In 2023 we audited 46 suppliers, including all three cell suppliers, and "
             "closed 92% of the findings within ninety days.")
    pdf.sub("Communities")
    pdf.para("Through the Northwind Foundation we donated $2.8 million in 2023, mainly for solar and storage systems "
             "at rural health clinics and emergency shelters. Employees volunteered 11,600 hours, and our technicians "
             "installed backup power at 38 community centers in areas with frequent outages.")


def _segment_table(pdf: Report) -> None:
    pdf.set_font("Helvetica", "B", 10)
    pdf.cell(0, 5, "Segment results", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", "", 9)
    pdf.cell(0, 5, SCALE, new_x="LMARGIN", new_y="NEXT")
    rows = [[name, m(v[0]), m(v[1]), m(v[2]), m(v[3])] for name, v in SEGMENTS.items()]
    rows.append(["Corporate and other", "-", "-", m(CORPORATE_OI[0]), m(CORPORATE_OI[1])])
    rows.append(["Total", m(FIG["Revenue"][0]), m(FIG["Revenue"][1]), m(FIG["Operating income"][0]),
                 m(FIG["Operating income"][1])])
    page = pdf.table([["", "Revenue", "Operating income"], ["Segment", "2023", "2022", "2023", "2022"]], rows,
                     [70, 25, 25, 25, 25], bold_rows=("Total",))
    pdf.mark("segment_table")
    pdf.para("Segment operating income excludes corporate costs, which are shown as Corporate and other. Segment "
             "assets, capital expenditures and depreciation, and the reconciliation of segment operating income to "
             "income before income taxes, are presented in Note 7.", size=9)
    assert page == pdf.page_no()


def _mdna(pdf: Report) -> None:
    pdf.section("Management's Discussion and Analysis")
    pdf.para("The following discussion should be read together with the consolidated financial statements and "
             "the notes to them. Amounts are in millions of U.S. dollars unless stated otherwise, and comparisons "
             "are with the year ended December 31, 2022.")
    pdf.section("Overview", level=1, new_page=False)
    pdf.para("2023 revenue grew 17.7% to $1,822.9 million on higher volumes in all three segments, led by Utility "
             "storage projects. Gross margin improved to 28.8% from 27.8% as lower cell prices, better factory "
             "utilization in Denver and a richer mix of services more than offset price reductions on solar "
             "modules. Operating income increased 41.8% to $176.8 million and operating margin widened to 9.7% "
             "from 8.0%.")
    pdf.para("Key developments in the year were the start of production on the second Reno line in September, the "
             "award of the 400 megawatt hour Cedar Flats storage project in Arizona, our largest to date, and the "
             "launch of the Northwind Home 13 battery. In January 2024 we agreed to acquire Gridline Controls, a "
             "provider of plant control software, as described in Note 15.")
    pdf.section("Results of Operations", level=1)
    pdf.set_font("Helvetica", "", 9)
    pdf.cell(0, 5, SCALE, new_x="LMARGIN", new_y="NEXT")
    rows = [[label, m(a), m(b), f"{(a - b) / abs(b) * 100:.1f}%"] for label, a, b in INCOME
            if label in ("Revenue", "Gross profit", "Research and development",
                         "Selling, general and administrative", "Operating income")]
    pdf.table([["", "2023", "2022", "Change"]], rows, [95, 25, 25, 25], marks={"Research and development": "rnd"})
    pdf.sub("Revenue")
    pdf.para("Revenue increased $273.7 million. Storage systems contributed most of the growth, with revenue from "
             "energy storage systems up 33.7% to $498.2 million, while solar module revenue grew 11.7% to $604.3 "
             "million as higher volumes were partly offset by lower prices. Service revenue rose 14.2% to $330.7 "
             "million as the installed base under service contracts grew. Revenue by product line is presented in "
             "Note 3.")
    pdf.sub("Gross profit")
    pdf.para("Gross profit increased $94.9 million to $525.5 million. Gross margin rose one percentage point to "
             "28.8%. Lower battery cell prices added about 1.6 points, partly offset by 0.9 points of module price "
             "reductions and by start-up costs of the Reno line of $6.8 million.")
    pdf.sub("Operating expenses")
    pdf.para(f"Research and development expense increased 14.5% to {usd(FIG['Research and development'][0])} as we "
             "added engineers for grid-forming controls and the next-generation utility inverter. Selling, general "
             "and administrative expense increased 13.8% to $252.4 million, mainly for sales and project staff in "
             "the Utility segment and higher incentive compensation, but fell as a share of revenue to 13.8% from "
             "14.3%.", marks=("rnd",))
    pdf.sub("Interest, other income and taxes")
    pdf.para("Interest expense increased to $28.4 million from $24.9 million because of higher floating rates on "
             "the term loan, partly offset by lower average debt. Other income of $6.1 million was mainly interest "
             "earned on cash balances. The effective tax rate was 22.4% compared with 22.5% in 2022; see Note 9.")
    pdf.section("Segment Results", level=1)
    _segment_table(pdf)
    for name, text in [
        ("Consumer", "Consumer revenue increased 8.6% to $412.6 million. Battery attachment rates on new solar "
                     "installations rose to 58% from 44%, which more than offset lower module prices. Operating "
                     "income increased to $38.2 million from $29.4 million on the richer mix."),
        ("Commercial", "Commercial revenue increased 15.6% to $538.9 million, driven by storage systems for fleet "
                       "depots and hospitals. Operating income increased 28.8% to $61.7 million as service revenue "
                       "grew and installation costs per kilowatt hour fell."),
        ("Utility", "Utility revenue increased 24.0% to $871.4 million as 17 projects reached commissioning and "
                    "construction started on the Cedar Flats project. Operating income rose 41.7% to $118.5 million, "
                    "reflecting lower cell costs and better project execution, partly offset by higher bid costs."),
    ]:
        pdf.sub(name)
        pdf.para(text)
    pdf.section("Liquidity and Capital Resources", level=1)
    pdf.para("Our main sources of liquidity are cash from operations, cash on hand of $214.7 million and our "
             "undrawn $300.0 million revolving credit facility. We believe these are sufficient to fund our "
             "operations, capital expenditures, debt service and dividends for at least the next twelve months.")
    pdf.para(f"Net cash provided by operating activities was {usd(CFO[0])} in 2023, compared with {usd(CFO[1])} in "
             "2022. The increase reflects higher net income and a smaller build of inventories, partly offset by "
             "higher receivables from Utility milestone billing.", marks=("cfo",))
    pdf.para(f"Capital expenditures were {usd(CAPEX[0])}, compared with {usd(CAPEX[1])} in 2022, of which $58.3 "
             "million was for the second Reno line. We expect capital expenditures of $130 million to $150 million "
             "in 2024. Free cash flow, which we define as operating cash flow less capital expenditures, was $83.4 "
             "million.", marks=("capex",))
    pdf.para("We repaid $25.0 million of the term loan as scheduled and paid dividends of $19.9 million, or $0.40 "
             "per share. Total debt was $600.0 million at year end and our net leverage ratio was 1.5 times, well "
             "within the 3.5 times maximum in our credit agreement. The terms of our debt are described in Note 12.",
             marks=("dividend",))
    pdf.section("Critical Accounting Estimates", level=1)
    for title, text in [
        ("Revenue recognized over time", "Utility and large Commercial projects are recognized over time using the "
         "ratio of costs incurred to total estimated costs. Changes in estimated costs are recognized in the period "
         "they are identified. A 1% increase in the estimated costs of all projects in progress at year end would "
         "have reduced 2023 operating income by about $6.1 million."),
        ("Product warranties", "We accrue the estimated cost of warranty repairs when products are sold, based on "
         "failure rates observed in our installed base and in accelerated life testing. Because our warranties run "
         "up to twenty-five years, the estimates involve judgment about long-term failure rates and repair costs. "
         "The warranty reserve and its changes are presented in Note 13."),
        ("Goodwill", "We test goodwill for impairment each October at the reporting unit level, which is the same as "
         "our segments. In 2023 the fair value of each reporting unit exceeded its carrying amount by more than "
         "40%. Goodwill by segment is presented in Note 6."),
        ("Income taxes", "We record deferred tax assets and liabilities for temporary differences and assess "
         "whether deferred tax assets will be realized. We have not recorded a valuation allowance, because we "
         "expect sufficient future taxable income in each jurisdiction."),
    ]:
        pdf.sub(title)
        pdf.para(text)
    pdf.section("Outlook for 2024", level=1)
    pdf.para("Our backlog at December 31, 2023 was $1.46 billion, compared with $1.12 billion a year earlier. The "
             "Utility segment accounted for $972.4 million of the backlog, Commercial for $351.8 million and Consumer "
             "for $135.8 million. We expect to recognize about 62% of the backlog as revenue in 2024.",
             marks=("backlog",))
    pdf.para("For 2024 we expect revenue of $2.0 billion to $2.1 billion, operating margin of 10.0% to 10.5%, and "
             "capital expenditures of $130 million to $150 million. The outlook assumes no material change in "
             "federal incentives and includes Gridline Controls from its expected closing in the second quarter.")
    pdf.para("These expectations are forward-looking statements. Actual results may differ materially because of "
             "the risks described under Risk Factors, including supply disruptions, project delays and changes in "
             "government incentives.")


def _governance(pdf: Report) -> None:
    pdf.section("Corporate Governance")
    pdf.para("Our Board of Directors has nine members, eight of whom are independent under the listing standards of "
             "the New York Stock Exchange. The Board has three standing committees - Audit, Compensation, and "
             "Nominating and Governance - each made up only of independent directors. The lead independent "
             "director chairs executive sessions of the independent directors at every regular Board meeting.")
    pdf.para("The Audit Committee oversees our financial reporting, internal controls, the independent auditor and "
             "our enterprise risk management program, including cybersecurity. It met nine times in 2023. The "
             "Compensation Committee sets executive pay, which is tied to revenue growth, operating margin, free "
             "cash flow and safety. The Nominating and Governance Committee oversees Board composition and our "
             "sustainability program.")
    pdf.sub("Executive officers")
    for line in ["Elena Marsh, Chair and Chief Executive Officer, joined Northwind in 2016.",
                 "Marcus Ellery, Chief Financial Officer, joined Northwind in 2019.",
                 "Priya Raman, President, Utility, joined Northwind in 2018.",
                 "Tomas Lindqvist, President, Consumer and Commercial, joined Northwind in 2020.",
                 "Grace Okafor, Chief Technology Officer, joined Northwind in 2015.",
                 "Daniel Cho, General Counsel and Secretary, joined Northwind in 2021."]:
        pdf.para(line, after=1)
    pdf.sub("Board of Directors")
    for line in ["Elena Marsh, Chair of the Board and Chief Executive Officer, Northwind Energy Systems.",
                 "Robert Haines, Lead Independent Director; former Chief Executive Officer, Cascade Utilities.",
                 "Aiko Tanaka, former Chief Financial Officer, Pacific Rim Semiconductor; chair of the Audit Committee.",
                 "Samuel Ortiz, Managing Partner, Ortiz Infrastructure Partners.",
                 "Helen Brandt, former Executive Vice President, Operations, Great Lakes Manufacturing.",
                 "Kwame Mensah, Professor of Electrical Engineering, Colorado School of Mines.",
                 "Laura Petrov, former General Counsel, Summit Energy; chair of the Nominating and Governance Committee.",
                 "Victor Alvarez, Chief Executive Officer, Alvarez Logistics Group; chair of the Compensation Committee.",
                 "Nina Kowalski, former Chief Information Security Officer, Frontier Bank."]:
        pdf.para(line, after=1)
    pdf.sub("Code of conduct")
    pdf.para("All employees and directors must follow our Code of Business Conduct, which covers conflicts of "
             "interest, anti-corruption, fair dealing and the protection of company assets. Concerns can be raised "
             "anonymously through an ethics line operated by an independent provider.")


def _auditor(pdf: Report) -> None:
    pdf.section("Management's Report on Internal Control over Financial Reporting")
    pdf.para("Management is responsible for establishing and maintaining adequate internal control over financial "
             "reporting. Our internal control over financial reporting is a process designed to provide reasonable "
             "assurance about the reliability of financial reporting and the preparation of financial statements "
             "for external purposes in accordance with generally accepted accounting principles.")
    pdf.para("Because of its inherent limitations, internal control over financial reporting may not prevent or "
             "detect misstatements. Projections of any evaluation of effectiveness to future periods are subject to "
             "the risk that controls may become inadequate because of changes in conditions, or that the degree of "
             "compliance with the policies or procedures may deteriorate.")
    pdf.para("Management assessed the effectiveness of our internal control over financial reporting as of December "
             "31, 2023, using the criteria in Internal Control - Integrated Framework (2013) issued by the Committee "
             "of Sponsoring Organizations of the Treadway Commission. Based on this assessment, management concluded "
             "that our internal control over financial reporting was effective as of December 31, 2023.")
    pdf.para("During 2023 we completed the migration of our Monterrey plant to the enterprise resource planning "
             "system used in Denver and Reno. We redesigned the affected controls over inventory and cost of revenue "
             "and tested them before and after the migration. There were no other changes in our internal control "
             "over financial reporting in the fourth quarter of 2023 that materially affected, or are reasonably "
             "likely to materially affect, our internal control over financial reporting.")
    pdf.para("Whitfield & Crane LLP, the independent registered public accounting firm that audited our financial "
             "statements, has issued an attestation report on the effectiveness of our internal control over "
             "financial reporting as of December 31, 2023.")
    pdf.para("Elena Marsh, Chair and Chief Executive Officer\nMarcus Ellery, Chief Financial Officer\nFebruary 23, 2024")

    pdf.section("Report of Independent Registered Public Accounting Firm")
    pdf.para("To the shareholders and the Board of Directors of Northwind Energy Systems, Inc.")
    pdf.sub("Opinion on the financial statements")
    pdf.para("We have audited the accompanying consolidated balance sheets of Northwind Energy Systems, Inc. and "
             "subsidiaries (the Company) as of December 31, 2023 and 2022, the related consolidated statements of "
             "income, stockholders' equity and cash flows for each of the years then ended, and the related notes. "
             "In our opinion, the financial statements present fairly, in all material respects, the financial "
             "position of the Company as of December 31, 2023 and 2022, and the results of its operations and its "
             "cash flows for the years then ended, in conformity with accounting principles generally accepted in "
             "the United States of America.")
    pdf.sub("Basis for opinion")
    pdf.para("These financial statements are the responsibility of the Company's management. Our responsibility is "
             "to express an opinion on them based on our audits, which we conducted in accordance with the "
             "standards of the Public Company Accounting Oversight Board. Those standards require that we plan and "
             "perform the audits to obtain reasonable assurance about whether the financial statements are free of "
             "material misstatement, whether due to error or fraud.")
    pdf.sub("Critical audit matter: revenue recognized over time on Utility projects")
    pdf.para("As described in Note 3, the Company recognizes revenue on Utility projects over time based on costs "
             "incurred relative to total estimated costs. We tested the controls over the estimates, compared "
             "estimated costs with supplier contracts and historical results, and visited a sample of project "
             "sites to assess the stage of completion.")
    pdf.para("Whitfield & Crane LLP\nDenver, Colorado\nFebruary 23, 2024\nWe have served as the Company's auditor "
             "since 2014.")


def _statements(pdf: Report) -> None:
    pdf.section("Consolidated Statements of Income")
    pdf.set_font("Helvetica", "", 9)
    pdf.cell(0, 5, "(In millions of U.S. dollars, except per share data)", new_x="LMARGIN", new_y="NEXT")
    rows = [[label, m(a), m(b)] for label, a, b in INCOME]
    rows += [["Earnings per share:"], ["Basic", "2.41", "1.61"], ["Diluted", "2.38", "1.59"],
             ["Weighted-average shares outstanding:"], ["Basic shares", "49.8", "49.6"],
             ["Diluted shares", "50.4", "50.1"]]
    pdf.table([["Year ended December 31,"], ["", "2023", "2022"]], rows, STATEMENT_WIDTHS,
              bold_rows=("Gross profit", "Operating income", "Net income"),
              marks={"Net income": "net_income", "Diluted": "eps_diluted", "Research and development": "rnd",
                     "Revenue": "income_statement"})
    pdf.para("The accompanying notes are an integral part of these consolidated financial statements.", size=8.5)

    pdf.section("Consolidated Statements of Comprehensive Income")
    pdf.set_font("Helvetica", "", 9)
    pdf.cell(0, 5, SCALE, new_x="LMARGIN", new_y="NEXT")
    pdf.table([["Year ended December 31,"], ["", "2023", "2022"]],
              [["Net income", "119.9", "79.8"], ["Other comprehensive income (loss):"],
               ["Foreign currency translation adjustments", "5.5", "(3.9)"],
               ["Total other comprehensive income (loss)", "5.5", "(3.9)"],
               ["Comprehensive income", "125.4", "75.9"]], STATEMENT_WIDTHS, bold_rows=("Comprehensive income",))
    pdf.para("Translation adjustments arise from our Mexican and Canadian subsidiaries, whose functional currencies "
             "are the Mexican peso and the Canadian dollar. No income taxes are provided on them because the "
             "earnings of these subsidiaries are indefinitely reinvested.", size=9)

    pdf.section("Consolidated Balance Sheets")
    pdf.set_font("Helvetica", "", 9)
    pdf.cell(0, 5, SCALE, new_x="LMARGIN", new_y="NEXT")
    rows = [["ASSETS"], ["Current assets:"],
            ["Cash and cash equivalents", "214.7", "168.3"], ["Accounts receivable, net", "301.2", "254.6"],
            ["Inventories (Note 4)", "388.5", "342.9"], ["Prepaid expenses and other current assets", "46.3", "39.8"],
            ["Total current assets", "950.7", "805.6"],
            ["Property, plant and equipment, net (Note 5)", "701.6", "655.1"], ["Goodwill (Note 6)", "186.4", "186.4"],
            ["Intangible assets, net (Note 6)", "58.9", "67.2"], ["Other non-current assets", "61.7", "52.3"],
            ["Total assets", m(TOTAL_ASSETS[0]), m(TOTAL_ASSETS[1])],
            ["LIABILITIES AND STOCKHOLDERS' EQUITY"], ["Current liabilities:"],
            ["Accounts payable", "247.8", "198.7"], ["Accrued liabilities", "152.6", "128.9"],
            ["Current portion of long-term debt (Note 12)", "25.0", "25.0"],
            ["Total current liabilities", "425.4", "352.6"], ["Long-term debt (Note 12)", "575.0", "600.0"],
            ["Deferred income taxes", "52.4", "41.5"], ["Other long-term liabilities", "71.9", "58.1"],
            ["Total liabilities", "1,124.7", "1,052.2"], ["Stockholders' equity:"],
            ["Common stock and additional paid-in capital", "512.8", "498.1"],
            ["Retained earnings", "336.9", "236.9"], ["Accumulated other comprehensive loss", "(15.1)", "(20.6)"],
            ["Total stockholders' equity", "834.6", "714.4"],
            ["Total liabilities and stockholders' equity", "1,959.3", "1,766.6"]]
    pdf.table([["", "December 31, 2023", "December 31, 2022"]], rows, [100, 35, 35], size=9.5, line=4.8,
              bold_rows=("Total assets", "Total liabilities", "Total stockholders' equity"),
              marks={"Total assets": "total_assets", "Inventories (Note 4)": "inventories"})

    pdf.section("Consolidated Statements of Cash Flows")
    pdf.set_font("Helvetica", "", 9)
    pdf.cell(0, 5, SCALE, new_x="LMARGIN", new_y="NEXT")
    rows = [["Operating activities:"], ["Net income", "119.9", "79.8"],
            ["Depreciation and amortization", "84.6", "78.9"], ["Stock-based compensation", "12.3", "10.8"],
            ["Deferred income taxes", "10.9", "6.2"], ["Changes in operating assets and liabilities:"],
            ["Accounts receivable", "(46.6)", "(31.2)"], ["Inventories", "(45.6)", "(52.7)"],
            ["Prepaid expenses and other assets", "(6.5)", "(3.1)"], ["Accounts payable", "49.1", "22.4"],
            ["Accrued liabilities", "23.7", "11.6"], ["Other, net", "4.4", "2.9"],
            ["Net cash provided by operating activities", m(CFO[0]), m(CFO[1])], ["Investing activities:"],
            ["Capital expenditures", m(-CAPEX[0]), m(-CAPEX[1])],
            ["Net cash used in investing activities", m(-CAPEX[0]), m(-CAPEX[1])], ["Financing activities:"],
            ["Repayment of long-term debt", "(25.0)", "(25.0)"], ["Dividends paid", "(19.9)", "(17.4)"],
            ["Proceeds from exercise of stock options", "2.4", "1.9"],
            ["Net cash used in financing activities", "(42.5)", "(40.5)"],
            ["Effect of exchange rate changes on cash", "5.5", "(2.1)"],
            ["Net increase (decrease) in cash and cash equivalents", "46.4", "(26.5)"],
            ["Cash and cash equivalents at beginning of year", "168.3", "194.8"],
            ["Cash and cash equivalents at end of year", "214.7", "168.3"]]
    pdf.table([["Year ended December 31,"], ["", "2023", "2022"]], rows, STATEMENT_WIDTHS, size=9.5, line=4.8,
              marks={"Net cash provided by operating activities": "cfo", "Capital expenditures": "capex",
                     "Net income": "net_income"})

    pdf.section("Consolidated Statements of Stockholders' Equity")
    pdf.set_font("Helvetica", "", 9)
    pdf.cell(0, 5, SCALE, new_x="LMARGIN", new_y="NEXT")
    rows = [["Balance at December 31, 2022", "498.1", "236.9", "(20.6)", "714.4"],
            ["Net income", "-", "119.9", "-", "119.9"],
            ["Foreign currency translation", "-", "-", "5.5", "5.5"],
            ["Dividends declared", "-", "(19.9)", "-", "(19.9)"],
            ["Stock-based compensation", "12.3", "-", "-", "12.3"],
            ["Exercise of stock options", "2.4", "-", "-", "2.4"],
            ["Balance at December 31, 2023", "512.8", "336.9", "(15.1)", "834.6"]]
    pdf.table([["", "Paid-in", "Retained", "AOCI", "Total"], ["", "capital", "earnings", "", "equity"]], rows,
              [80, 22, 22, 22, 22], size=9.5)
    pdf.para("Dividends declared were $0.40 per share in 2023 ($0.35 in 2022). AOCI is accumulated other "
             "comprehensive loss, which consists of foreign currency translation adjustments.", size=9,
             marks=("dividend",))


def _note_table(pdf: Report, header: list[list[str]], rows: list, widths=None, **kwargs) -> int:
    pdf.set_font("Helvetica", "", 9)
    pdf.cell(0, 5, SCALE, new_x="LMARGIN", new_y="NEXT")
    return pdf.table(header, rows, widths or STATEMENT_WIDTHS, **kwargs)


YEARS = [["", "2023", "2022"]]


def _notes(pdf: Report) -> None:
    pdf.add_page()
    pdf.start_section("Notes to the Consolidated Financial Statements", 0)
    pdf.section_pages["Notes to the Consolidated Financial Statements"] = pdf.page_no()
    pdf.heading("Notes to the Consolidated Financial Statements", 15, space_before=0)

    def note(number: int, title: str, first: bool = False) -> None:
        pdf.section(f"Note {number}. {title}", level=1, new_page=not first)
        pdf.mark(f"note{number}")

    note(1, "Organization and Basis of Presentation", first=True)
    pdf.para("Northwind Energy Systems, Inc. and its subsidiaries design, manufacture, install and service solar "
             "modules, battery energy storage systems, inverters and power electronics in the United States, Canada "
             "and Mexico. The consolidated financial statements include the accounts of the Company and its wholly "
             "owned subsidiaries; intercompany balances and transactions are eliminated.")
    pdf.para("The financial statements are prepared in conformity with U.S. generally accepted accounting "
             "principles. Preparing them requires estimates and assumptions, mainly about revenue recognized over "
             "time, product warranties, inventory valuation, goodwill and income taxes. Actual results could differ "
             "from those estimates. Certain prior-year amounts have been reclassified to conform to the current "
             "presentation; the reclassifications had no effect on net income.")

    note(2, "Summary of Significant Accounting Policies")
    for title, text in [
        ("Cash equivalents", "Highly liquid investments with original maturities of three months or less are cash "
         "equivalents. They consist mainly of money market funds and are measured at fair value (Note 14)."),
        ("Inventories", "Inventories are stated at the lower of cost, determined on a first-in, first-out basis, and "
         "net realizable value. We write down excess and obsolete inventory based on forecast demand. See Note 4."),
        ("Property, plant and equipment", "Property, plant and equipment is stated at cost less accumulated "
         "depreciation, computed on a straight-line basis over useful lives of 25 to 40 years for buildings and 3 "
         "to 12 years for machinery and equipment. See Note 5."),
        ("Goodwill and intangible assets", "Goodwill is tested for impairment annually and when events indicate it "
         "may be impaired. Intangible assets are amortized on a straight-line basis over 5 to 12 years. See Note 6."),
        ("Product warranties", "We accrue the estimated cost of warranty obligations when revenue is recognized. The "
         "accrual is reviewed quarterly against actual claims. See Note 13."),
        ("Foreign currency", "The functional currency of our Mexican and Canadian subsidiaries is the local "
         "currency. Their assets and liabilities are translated at year-end rates and the translation adjustments "
         "are recorded in accumulated other comprehensive loss."),
        ("Recently issued accounting standards", "In November 2023 the FASB issued ASU 2023-07, which expands "
         "segment disclosures. We will adopt it in our 2024 annual report and expect it to add disclosures of "
         "significant segment expenses in Note 7, without any effect on our results."),
    ]:
        pdf.sub(title)
        pdf.para(text)

    note(3, "Revenue Recognition")
    pdf.para("We recognize revenue when control of goods or services passes to the customer. Equipment sold to "
             "Consumer and most Commercial customers is recognized when delivered. Utility projects and large "
             "Commercial installations are recognized over time, measured by costs incurred relative to total "
             "estimated costs. Service contracts are recognized ratably over the service period.")
    pdf.sub("Disaggregation of revenue by product line")
    _note_table(pdf, YEARS, [["Solar modules", "604.3", "541.0"], ["Energy storage systems", "498.2", "372.5"],
                             ["Inverters and power electronics", "389.7", "346.1"],
                             ["Installation and maintenance services", "330.7", "289.6"],
                             ["Total revenue", "1,822.9", "1,549.2"]], bold_rows=("Total revenue",))
    pdf.para("Revenue by segment is presented in Note 7. Remaining performance obligations, which we refer to as "
             "backlog, were $1,462.0 million at December 31, 2023; we expect to recognize about 62% of them within "
             "twelve months and the rest over the following three years. Contract liabilities (customer deposits "
             "and billings in excess of revenue) were $118.3 million at year end and are included in accrued "
             "liabilities.")

    note(4, "Inventories")
    _note_table(pdf, [["", "December 31, 2023", "December 31, 2022"]],
                [["Raw materials", "142.7", "121.4"], ["Work in process", "51.6", "47.3"],
                 ["Finished goods", "194.2", "174.2"], ["Total inventories", "388.5", "342.9"]],
                [100, 35, 35], bold_rows=("Total inventories",), marks={"Total inventories": "inventories"})
    pdf.para("Raw materials consist mainly of battery cells, which we hold for about ten weeks of production. "
             "Inventory write-downs for excess and obsolete items were $7.4 million in 2023 and $5.9 million in "
             "2022, recorded in cost of revenue.")

    note(5, "Property, Plant and Equipment")
    _note_table(pdf, [["", "December 31, 2023", "December 31, 2022"]],
                [["Land", "38.4", "38.4"], ["Buildings", "312.6", "288.1"],
                 ["Machinery and equipment", "596.3", "521.7"], ["Construction in progress", "61.9", "44.6"],
                 ["Property, plant and equipment, gross", "1,009.2", "892.8"],
                 ["Less accumulated depreciation", "(307.6)", "(237.7)"],
                 ["Property, plant and equipment, net", "701.6", "655.1"]], [100, 35, 35])
    pdf.para("Depreciation expense was $76.3 million in 2023 and $70.6 million in 2022. Construction in progress at "
             "year end relates mainly to test equipment for the Denver storage plant. Capital expenditures by "
             "segment are presented in Note 7.")

    note(6, "Goodwill and Intangible Assets")
    pdf.para("Goodwill arose from the acquisitions of Brightline Storage in 2017 and Arcadia Power Controls in 2020. "
             "There were no changes in goodwill in 2023 or 2022 and no impairment has been recorded. Goodwill by "
             "segment, which is how we test it for impairment (see Note 7 for our segments), was:")
    _note_table(pdf, [["", "December 31, 2023", "December 31, 2022"]],
                [["Consumer", "42.8", "42.8"], ["Commercial", "61.3", "61.3"], ["Utility", "82.3", "82.3"],
                 ["Total goodwill", "186.4", "186.4"]], [100, 35, 35], bold_rows=("Total goodwill",))
    pdf.sub("Intangible assets at December 31, 2023")
    _note_table(pdf, [["", "Gross", "Accumulated", "Net"], ["", "amount", "amortization", "amount"]],
                [["Customer relationships", "74.0", "(31.6)", "42.4"], ["Developed technology", "38.5", "(22.0)", "16.5"],
                 ["Total intangible assets", "112.5", "(53.6)", "58.9"]], [85, 28, 28, 28])
    pdf.para("Amortization expense was $8.3 million in each of 2023 and 2022 and is expected to be $8.3 million a "
             "year from 2024 to 2026.")

    note(7, "Segment Information")
    pdf.para("We have three reportable segments - Consumer, Commercial and Utility - organized by customer type, "
             "which is how our Chief Executive Officer, the chief operating decision maker, allocates resources and "
             "assesses performance. Segment operating income excludes corporate costs for finance, legal, "
             "information technology and other shared functions. Revenue and operating income by segment are "
             "presented in Management's Discussion and Analysis under Segment Results; goodwill by segment is in "
             "Note 6.")
    pdf.sub("Segment assets")
    _note_table(pdf, [["", "December 31, 2023", "December 31, 2022"]],
                [[name, m(a), m(b)] for name, (a, b) in SEGMENT_ASSETS.items()]
                + [["Total assets", m(TOTAL_ASSETS[0]), m(TOTAL_ASSETS[1])]], [100, 35, 35],
                bold_rows=("Total assets",), marks={"Utility": "note7_assets", "Total assets": "total_assets"})
    pdf.sub("Capital expenditures and depreciation and amortization, 2023")
    _note_table(pdf, [["", "Capital", "Depreciation and"], ["", "expenditures", "amortization"]],
                [[name, m(a), m(b)] for name, (a, b) in SEGMENT_CAPEX_DA.items()]
                + [["Total", m(CAPEX[0]), "84.6"]], [100, 35, 35], bold_rows=("Total",), marks={"Total": "capex"})
    pdf.sub("Reconciliation of segment operating income to income before income taxes")
    seg_oi = [sum(v[2 + y] for v in SEGMENTS.values()) for y in (0, 1)]
    _note_table(pdf, YEARS, [["Total segment operating income", m(seg_oi[0]), m(seg_oi[1])],
                             ["Corporate and other", m(CORPORATE_OI[0]), m(CORPORATE_OI[1])],
                             ["Operating income", m(FIG["Operating income"][0]), m(FIG["Operating income"][1])],
                             ["Interest expense", "(28.4)", "(24.9)"], ["Other income, net", "6.1", "3.2"],
                             ["Income before income taxes", "154.5", "103.0"]], bold_rows=("Operating income",))
    pdf.para("No customer accounted for 10% or more of revenue in 2023 or 2022. Revenue from customers outside the "
             "United States was $214.6 million in 2023, mainly in Canada.")

    note(8, "Leases")
    pdf.para("We lease offices, service depots, warehouses and vehicles under operating leases with remaining terms "
             "of one to twelve years. Operating lease cost was $14.6 million in 2023 and $13.2 million in 2022. "
             "Right-of-use assets of $48.2 million are included in other non-current assets and lease liabilities "
             "of $51.3 million in accrued and other long-term liabilities. The weighted-average remaining lease "
             "term is 6.4 years and the weighted-average discount rate 4.9%.")
    pdf.sub("Maturities of operating lease liabilities")
    _note_table(pdf, [["", "Amount"]], [["Due in 2024", "14.1"], ["Due in 2025", "12.8"], ["Due in 2026", "10.9"],
                                        ["Due in 2027", "8.4"], ["Due in 2028", "5.7"], ["Due after 2028", "7.9"],
                                        ["Total lease payments", "59.8"], ["Less imputed interest", "(8.5)"],
                                        ["Total lease liabilities", "51.3"]], [100, 35])

    note(9, "Income Taxes")
    pdf.para("The provision for income taxes consisted of current taxes of $23.7 million (2022: $17.0 million) and "
             "deferred taxes of $10.9 million (2022: $6.2 million). Income before income taxes was $141.2 million "
             "in the United States and $13.3 million abroad.")
    pdf.sub("Effective tax rate reconciliation")
    pdf.set_font("Helvetica", "", 9)
    pdf.cell(0, 5, "(In percent)", new_x="LMARGIN", new_y="NEXT")
    pdf.table(YEARS, [["Federal statutory rate", "21.0", "21.0"], ["State income taxes, net", "3.1", "3.0"],
                      ["Research and development credits", "(2.6)", "(2.4)"],
                      ["Foreign rate differential", "0.6", "0.5"], ["Other, net", "0.3", "0.4"],
                      ["Effective tax rate", "22.4", "22.5"]], STATEMENT_WIDTHS, bold_rows=("Effective tax rate",),
              marks={"Effective tax rate": "tax_rate"})
    pdf.para("The effective tax rate was 22.4% in 2023 and 22.5% in 2022. We have no material unrecognized tax "
             "benefits. Our U.S. federal returns are open to examination for 2020 and later years.",
             marks=("tax_rate",))

    note(10, "Earnings per Share")
    pdf.set_font("Helvetica", "", 9)
    pdf.cell(0, 5, "(In millions, except per share data)", new_x="LMARGIN", new_y="NEXT")
    pdf.table(YEARS, [["Net income", "119.9", "79.8"], ["Weighted-average shares - basic", "49.8", "49.6"],
                      ["Dilutive effect of stock awards", "0.6", "0.5"],
                      ["Weighted-average shares - diluted", "50.4", "50.1"],
                      ["Basic earnings per share", "2.41", "1.61"], ["Diluted earnings per share", "2.38", "1.59"]],
              STATEMENT_WIDTHS, marks={"Net income": "net_income", "Diluted earnings per share": "eps_diluted"})
    pdf.para("Stock awards for 0.3 million shares were excluded from diluted earnings per share in 2023 because "
             "their effect would have been anti-dilutive.")

    note(11, "Stock-Based Compensation")
    pdf.para("Our 2019 Equity Incentive Plan provides for restricted stock units, performance stock units and stock "
             "options. Stock-based compensation expense was $12.3 million in 2023 and $10.8 million in 2022. In "
             "2023 we granted 0.42 million restricted stock units with a weighted-average grant-date fair value of "
             "$61.20 per unit. Unrecognized compensation cost was $21.7 million at year end, to be recognized over "
             "a weighted-average period of 2.1 years. Proceeds from the exercise of stock options were $2.4 "
             "million.")

    note(12, "Debt")
    _note_table(pdf, [["", "December 31, 2023", "December 31, 2022"]],
                [["Term loan A due 2027", "400.0", "425.0"], ["4.25% Senior notes due 2029", "200.0", "200.0"],
                 ["Total debt", "600.0", "625.0"], ["Less current portion", "(25.0)", "(25.0)"],
                 ["Long-term debt", "575.0", "600.0"]], [100, 35, 35], bold_rows=("Long-term debt",))
    pdf.para("The term loan bears interest at SOFR plus 1.50% and amortizes by $25.0 million a year, with the "
             "balance due in June 2027. The senior notes bear interest at 4.25%, payable semi-annually, and mature "
             "in March 2029. The fair value of the senior notes is disclosed in Note 14.", marks=("note12_ref",))
    pdf.para("We also have a $300.0 million revolving credit facility maturing in June 2027, which was undrawn at "
             "December 31, 2023 and 2022. The credit agreement requires a net leverage ratio of no more than 3.5 "
             "times; we were in compliance with all covenants. Interest paid was $27.1 million in 2023.")

    note(13, "Commitments and Contingencies")
    pdf.sub("Product warranties")
    _note_table(pdf, YEARS, [["Balance at beginning of year", "38.6", "33.9"], ["Warranties issued", "15.2", "12.8"],
                             ["Settlements", "(9.7)", "(8.1)"], ["Balance at end of year", "44.1", "38.6"]],
                marks={"Balance at end of year": "warranty"})
    pdf.para("The warranty reserve of $44.1 million at December 31, 2023 is included in accrued liabilities ($12.6 "
             "million) and other long-term liabilities ($31.5 million).", marks=("warranty",))
    pdf.sub("Purchase obligations and backlog")
    pdf.para("At December 31, 2023 we had non-cancellable purchase obligations of $214.5 million, mainly for "
             "battery cells to be delivered in 2024. Our backlog of $1.46 billion is described in Note 3.",
             marks=("backlog",))
    pdf.sub("Legal proceedings")
    pdf.para("We are party to claims arising in the ordinary course of business, including warranty, employment "
             "and contract disputes. We do not expect any of them to have a material effect on our financial "
             "position or results.")

    note(14, "Fair Value Measurements")
    pdf.para("Money market funds of $142.0 million included in cash equivalents are measured at fair value using "
             "quoted prices (Level 1). Foreign exchange forward contracts with a notional amount of $85.0 million "
             "had a fair value of $1.2 million, measured using observable forward rates (Level 2).")
    pdf.sub("Debt")
    _note_table(pdf, [["", "Carrying amount", "Fair value"]],
                [["Term loan A due 2027", "400.0", "400.0"],
                 ["4.25% Senior notes due 2029", "200.0", m(NOTES_FAIR_VALUE)]], [100, 35, 35],
                marks={"4.25% Senior notes due 2029": "notes_fair_value"})
    pdf.para(f"The fair value of the senior notes was {usd(NOTES_FAIR_VALUE)} at December 31, 2023, based on quoted "
             "prices in markets that are not active (Level 2). The carrying amount of the term loan approximates "
             "its fair value because it bears a floating rate.", marks=("notes_fair_value",))

    note(15, "Subsequent Events")
    pdf.para("On January 18, 2024, we agreed to acquire Gridline Controls, Inc., a provider of control software for "
             "storage and solar plants, for $42.0 million in cash, subject to customary adjustments. The "
             "acquisition is expected to close in the second quarter of 2024 and will be reported in the Utility "
             "segment.")
    pdf.para("On February 8, 2024, the Board declared a quarterly dividend of $0.11 per share, payable on March 15, "
             "2024 to shareholders of record on March 1, 2024.")


def _supplementary(pdf: Report) -> None:
    pdf.section("Five-Year Summary")
    pdf.set_font("Helvetica", "", 9)
    pdf.cell(0, 5, "(In millions of U.S. dollars, except per share data)", new_x="LMARGIN", new_y="NEXT")
    rows = [["Revenue", "1,822.9", "1,549.2", "1,301.7", "1,088.4", "962.5"],
            ["Operating income", "176.8", "124.7", "98.3", "71.6", "63.2"],
            ["Net income", "119.9", "79.8", "62.1", "44.9", "41.0"],
            ["Diluted earnings per share", "2.38", "1.59", "1.25", "0.91", "0.84"],
            ["Total assets", "1,959.3", "1,766.6", "1,611.2", "1,402.8", "1,255.0"],
            ["Long-term debt", "575.0", "600.0", "625.0", "480.0", "495.0"],
            ["Dividends per share", "0.40", "0.35", "0.30", "0.26", "0.24"]]
    pdf.table([["", "2023", "2022", "2021", "2020", "2019"]], rows, [70, 20, 20, 20, 20, 20],
              marks={"Net income": "net_income", "Diluted earnings per share": "eps_diluted",
                     "Total assets": "total_assets", "Dividends per share": "dividend"})
    pdf.para("Figures for 2019 to 2021 are as previously reported, adjusted for the reclassifications described in "
             "Note 1.", size=9)

    pdf.section("Quarterly Financial Data")
    pdf.para("Unaudited. Quarterly amounts may not add to the annual totals because of rounding.", size=9)
    pdf.set_font("Helvetica", "", 9)
    pdf.cell(0, 5, "(In millions of U.S. dollars, except per share data)", new_x="LMARGIN", new_y="NEXT")
    rows = [["Revenue", "398.2", "441.7", "472.5", "510.5"], ["Gross profit", "110.3", "126.5", "136.9", "151.8"],
            ["Operating income", "31.4", "42.0", "47.9", "55.5"], ["Net income", "20.6", "28.3", "32.4", "38.6"],
            ["Diluted earnings per share", "0.41", "0.56", "0.64", "0.77"]]
    pdf.table([["2023", "Q1", "Q2", "Q3", "Q4"]], rows, [70, 25, 25, 25, 25], marks={"Revenue": "q4_revenue"})

    pdf.section("Stock Performance")
    pdf.para("Our common stock trades on the New York Stock Exchange under the symbol NWES. The table shows the high "
             "and low sales prices and the dividends declared in each quarter of 2023.")
    pdf.table([["", "High", "Low", "Dividend"]],
              [["First quarter", "58.40", "46.15", "0.10"], ["Second quarter", "63.90", "52.70", "0.10"],
               ["Third quarter", "66.25", "54.80", "0.10"], ["Fourth quarter", "71.60", "57.35", "0.10"]],
              [80, 28, 28, 28])
    pdf.para("A $100 investment in our common stock on December 31, 2018, with dividends reinvested, was worth $287 "
             "at December 31, 2023, compared with $207 for the S&P 500 index and $241 for the S&P 500 Electrical "
             "Equipment index over the same period.")
    pdf.para("We repurchased no shares in 2023. The Board's authorization to repurchase up to $150 million of our "
             "common stock, approved in 2021, had $150 million remaining at year end. We intend to keep returning "
             "cash to shareholders mainly through dividends, while keeping our net leverage ratio below 2.0 times.")

    pdf.section("Shareholder Information")
    pdf.facts([("Stock listing", "New York Stock Exchange, symbol NWES"),
               ("Transfer agent", "Equiniti Trust Company, St. Paul, Minnesota"),
               ("Independent auditor", "Whitfield & Crane LLP, Denver, Colorado"),
               ("Annual meeting", "May 16, 2024, 9:00 a.m. Mountain Time, held online"),
               ("Investor relations", "ir@northwind-energy.example")])
    pdf.ln(3)
    pdf.para("Dividends. We paid quarterly dividends of $0.10 per share in 2023, or $0.40 per share for the year, "
             "compared with $0.35 per share in 2022. The Board raised the quarterly dividend to $0.11 per share "
             "beginning with the dividend paid in March 2024.", marks=("dividend",))
    pdf.para("Shareholders of record. At January 31, 2024 there were 1,184 holders of record of our common stock and "
             "49.9 million shares outstanding.")
    pdf.para("Forward-looking statements. This report contains forward-looking statements about our expected "
             "results, backlog, investments and acquisitions. They are based on current expectations and are "
             "subject to the risks described under Risk Factors. We undertake no obligation to update them.")


def _build(pdf: Report, toc: dict[str, int] | None) -> None:
    entries = [("Letter to Shareholders", 0), ("2023 at a Glance", 0), ("Our Business", 0), ("Risk Factors", 0),
               ("Properties", 0), ("Sustainability", 0), ("Management's Discussion and Analysis", 0),
               ("Segment Results", 1), ("Liquidity and Capital Resources", 1), ("Outlook for 2024", 1),
               ("Corporate Governance", 0),
               ("Management's Report on Internal Control over Financial Reporting", 0),
               ("Report of Independent Registered Public Accounting Firm", 0),
               ("Consolidated Statements of Income", 0), ("Consolidated Statements of Comprehensive Income", 0),
               ("Consolidated Balance Sheets", 0), ("Consolidated Statements of Cash Flows", 0),
               ("Consolidated Statements of Stockholders' Equity", 0),
               ("Notes to the Consolidated Financial Statements", 0), ("Note 3. Revenue Recognition", 1),
               ("Note 7. Segment Information", 1), ("Note 9. Income Taxes", 1), ("Note 12. Debt", 1),
               ("Note 13. Commitments and Contingencies", 1), ("Note 14. Fair Value Measurements", 1),
               ("Five-Year Summary", 0), ("Quarterly Financial Data", 0), ("Stock Performance", 0),
               ("Shareholder Information", 0)]
    _cover(pdf)
    _contents(pdf, toc, entries)
    _letter(pdf)
    _glance(pdf)
    _business(pdf)
    _risks(pdf)
    _sustainability(pdf)
    _mdna(pdf)
    _governance(pdf)
    _auditor(pdf)
    _statements(pdf)
    _notes(pdf)
    _supplementary(pdf)


def render_report(path: Path) -> tuple[int, dict[str, list[int]]]:
    """Draw the report (twice: the contents page needs the final page numbers); returns pages and marks."""
    _check_figures()
    draft = Report()
    _build(draft, None)
    final = Report()
    _build(final, draft.section_pages)
    assert final.section_pages == draft.section_pages and final.page_no() == draft.page_no()
    final.output(str(path))
    return final.page_no(), final.marks


# ---------------------------------------------------------------- questions

def report_questions(marks: dict[str, list[int]]) -> list[dict]:
    """The report's labeled questions; evidence pages come from where the generator printed each value."""
    def ev(*keys: str) -> list[dict]:
        pages = sorted({page for key in keys for page in marks[key]})
        return [{"doc_id": REPORT_ID, "page": page} for page in pages]

    def q(qid, kind, question, answer, evidence, status="answer", **extra):
        return {"id": qid, "question": question, "answer": answer, "evidence": evidence, "doc_id": REPORT_ID,
                "kind": kind, "expected_status": status, **extra}

    def pct(a: float, b: float) -> str:
        return f"{a / b * 100:.1f}%"

    def operand(key: str, value: float, label: str) -> dict:
        return {"doc_id": REPORT_ID, "page": marks[key][0], "label": label, "value": m(value)}

    seg = SEGMENTS
    income_page = marks["income_statement"][0]
    total_assets_page = marks["total_assets"][0]  # the balance sheet (printed before Note 7 and the summary)
    capex_page = marks["capex"]
    cash_flow_page = next(p for p in capex_page if p > income_page)
    out = [
        q("rep-consumer-revenue-2022", "lookup", "What was Consumer segment revenue in 2022?",
          usd(seg["Consumer"][1]), ev("segment_table")),
        q("rep-utility-oi-2023", "lookup", "What was the Utility segment's operating income in 2023?",
          usd(seg["Utility"][2]), ev("segment_table")),
        q("rep-net-income-2023", "lookup", "What was Northwind's net income for 2023?", usd(FIG["Net income"][0]),
          ev("net_income")),
        q("rep-total-assets-2023", "lookup", "What were Northwind's total assets at December 31, 2023?",
          usd(TOTAL_ASSETS[0]), ev("total_assets")),
        q("rep-cfo-2023", "lookup", "How much cash did Northwind's operating activities provide in 2023?",
          usd(CFO[0]), ev("cfo")),
        q("rep-capex-2023", "lookup", "What were Northwind's capital expenditures in 2023?", usd(CAPEX[0]),
          ev("capex")),
        q("rep-rnd-2023", "lookup", "How much did Northwind spend on research and development in 2023?",
          usd(FIG["Research and development"][0]), ev("rnd")),
        q("rep-eps-diluted-2023", "lookup", "What were Northwind's diluted earnings per share for 2023?", "$2.38",
          ev("eps_diluted")),
        q("rep-employees-2023", "lookup", "How many employees did Northwind have at the end of 2023?", "4,860",
          ev("employees")),
        q("rep-backlog-2023", "lookup", "What was Northwind's order backlog at the end of 2023?", "$1.46 billion",
          ev("backlog")),
        q("rep-q4-revenue-2023", "lookup", "What was Northwind's revenue in the fourth quarter of 2023?",
          "$510.5 million", ev("q4_revenue")),
        q("rep-inventories-2023", "lookup", "What was the value of Northwind's inventories at December 31, 2023?",
          "$388.5 million", ev("inventories")),
        q("rep-warranty-reserve-2023", "lookup", "How large was the product warranty reserve at the end of 2023?",
          "$44.1 million", ev("warranty")),
        q("rep-dividend-2023", "lookup", "What dividends per share did Northwind pay for 2023?", "$0.40",
          ev("dividend")),
        # computations across pages (operands as printed, formula a / b * 100, one decimal)
        q("rep-roa-2023", "compute",
          "What was Northwind's 2023 return on assets, i.e. net income divided by total assets at year end?",
          pct(FIG["Net income"][0], TOTAL_ASSETS[0]),
          [{"doc_id": REPORT_ID, "page": income_page}, {"doc_id": REPORT_ID, "page": total_assets_page}],
          operands=[operand("income_statement", FIG["Net income"][0], "Net income"),
                    {"doc_id": REPORT_ID, "page": total_assets_page, "label": "Total assets",
                     "value": m(TOTAL_ASSETS[0])}], formula="a / b * 100"),
        q("rep-utility-oi-share-2023", "compute",
          "What share of Northwind's consolidated operating income did the Utility segment contribute in 2023?",
          pct(seg["Utility"][2], FIG["Operating income"][0]),
          [{"doc_id": REPORT_ID, "page": marks["segment_table"][0]}, {"doc_id": REPORT_ID, "page": income_page}],
          operands=[operand("segment_table", seg["Utility"][2], "Utility operating income"),
                    operand("income_statement", FIG["Operating income"][0], "Operating income")],
          formula="a / b * 100"),
        q("rep-capex-intensity-2023", "compute",
          "What were Northwind's 2023 capital expenditures as a percentage of revenue?",
          pct(CAPEX[0], FIG["Revenue"][0]),
          [{"doc_id": REPORT_ID, "page": cash_flow_page}, {"doc_id": REPORT_ID, "page": income_page}],
          operands=[{"doc_id": REPORT_ID, "page": cash_flow_page, "label": "Capital expenditures",
                     "value": m(CAPEX[0])}, operand("income_statement", FIG["Revenue"][0], "Revenue")],
          formula="a / b * 100"),
        q("rep-utility-return-on-assets-2023", "compute",
          "What was the Utility segment's 2023 operating income as a percentage of its segment assets at year end?",
          pct(seg["Utility"][2], SEGMENT_ASSETS["Utility"][0]),
          [{"doc_id": REPORT_ID, "page": marks["segment_table"][0]}, {"doc_id": REPORT_ID, "page": marks["note7_assets"][0]}],
          operands=[operand("segment_table", seg["Utility"][2], "Utility operating income"),
                    operand("note7_assets", SEGMENT_ASSETS["Utility"][0], "Utility segment assets")],
          formula="a / b * 100"),
        q("rep-consumer-margin-2023", "compute", "What was the Consumer segment's operating margin in 2023?",
          pct(seg["Consumer"][2], seg["Consumer"][0]), ev("segment_table"),
          operands=[operand("segment_table", seg["Consumer"][2], "Consumer operating income"),
                    operand("segment_table", seg["Consumer"][0], "Consumer revenue")], formula="a / b * 100"),
        # cross-reference hops
        q("rep-xref-segment-assets", "xref",
          "Which note does the segment results table refer to, and what does that note give as the Utility "
          "segment's assets at the end of 2023?", f"Note 7, {usd(SEGMENT_ASSETS['Utility'][0])}",
          [{"doc_id": REPORT_ID, "page": marks["segment_table"][0]}, {"doc_id": REPORT_ID, "page": marks["note7_assets"][0]}]),
        q("rep-xref-tax-rate", "xref",
          "The income statement refers to a note for the provision for income taxes. Which note is it, and what "
          "effective tax rate does it report for 2023?", "Note 9, 22.4%",
          [{"doc_id": REPORT_ID, "page": income_page}, {"doc_id": REPORT_ID, "page": marks["tax_rate"][0]}]),
        q("rep-xref-notes-fair-value", "xref",
          "Note 12 refers to another note for the fair value of the senior notes. Which note, and what fair value "
          "does it give at December 31, 2023?", f"Note 14, {usd(NOTES_FAIR_VALUE)}",
          [{"doc_id": REPORT_ID, "page": marks["note12_ref"][0]}, {"doc_id": REPORT_ID, "page": marks["notes_fair_value"][0]}]),
        q("rep-absent-marine", "absent", "What was Northwind's revenue from its Marine segment in 2023?", "", [],
          status="fail"),
    ]
    return out
