"""The project's sample corpus: fictional receipts, datasheets, contracts and one annual report as
text PDFs, with per-bucket metadata and a labeled QA set that exercises every kind of question the
iterative loop handles (lookups, computations, lists and aggregations over table rows, clause
lookups under filters, cross-reference hops, absent, ambiguous and overflowing questions).

    python -m ferret.data.sample_corpus [--out DIR]        # default: data/sample/ beside this module

Deterministic: the same bytes on every run (fixed seed, creation date and producer). The gold
answers are computed from the same specs the PDFs are drawn from, and `tests/data` checks them
against what ferret actually parses out of the PDFs.

Layout of the output (a folder holding metadata.jsonl is one bucket named after the folder):
invoices/, datasheets/, contracts/, reports/ (PDFs + metadata.jsonl), qa.jsonl and the labeled
conversations chat.jsonl (`data.sample_chat`).
"""
from __future__ import annotations

import argparse
import json
import random
import shutil
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from ferret.data._pdf import LINE, Document
from ferret.data.annual_report import REPORT_ID, render_report, report_questions
from ferret.data.sample_chat import conversations

SEED = 20240115
DEFAULT_OUT = Path(__file__).resolve().parent / "sample"
CUSTOMER = ("ACME Corp", "Fleet & Facilities Department", "1200 Harbor Way, Portland, OR 97209")
BUCKETS = ("invoices", "datasheets", "contracts", "reports")


def money(cents: int) -> str:
    return f"${cents // 100:,}.{cents % 100:02d}"


def long_date(day: date) -> str:
    return f"{day.strftime('%B')} {day.day}, {day.year}"


# ================================================================ invoices

@dataclass(frozen=True)
class Product:
    label: str
    cents: int          # list unit price
    quantities: tuple   # typical quantities
    kind: str           # tire, battery, cable, inverter, panel, other


def _p(label: str, price: float, quantities: tuple, kind: str = "other") -> Product:
    return Product(label, round(price * 100), quantities, kind)


TIRES = [_p("All-season tire 205/55 R16", 96.50, (2, 4), "tire"),
         _p("Winter tire 225/45 R17", 142.00, (4,), "tire"),
         _p("Light truck tire LT245/75 R16", 188.00, (2, 4, 6), "tire"),
         _p("Trailer tire ST225/75 R15", 89.00, (2, 4), "tire")]
BATTERIES = [_p("AGM battery 12V 70Ah", 189.00, (1, 2, 4), "battery"),
             _p("Deep-cycle battery 12V 100Ah", 214.00, (2, 4, 6), "battery"),
             _p("Starter battery Group 31", 162.00, (1, 2, 3), "battery"),
             _p("Lithium battery pack 48V 5.1 kWh", 1875.00, (1, 2), "battery")]
CABLES = [_p("PV cable 6 mm2 (100 m reel)", 119.00, (2, 4, 6), "cable"),
          _p("PV cable 4 mm2 (100 m reel)", 92.00, (2, 3, 5), "cable"),
          _p("DC cable 16 mm2 (per m)", 6.85, (50, 80, 120), "cable"),
          _p("Armored cable 3x4 mm2 (per m)", 4.40, (100, 150, 250), "cable"),
          _p("AC power cable 5x10 mm2 (per m)", 9.75, (40, 60, 90), "cable"),
          _p("Grounding cable 25 mm2 (per m)", 5.20, (30, 50, 75), "cable"),
          _p("Control cable 12x1.5 mm2 (per m)", 3.15, (100, 200), "cable"),
          _p("Ethernet cable Cat6 (305 m box)", 138.00, (1, 2, 3), "cable"),
          _p("Flexible cable H07RN-F 3G2.5 (50 m)", 76.00, (2, 4), "cable")]
INVERTERS = [_p("String inverter 5 kW", 1140.00, (1, 2), "inverter"),
             _p("Hybrid inverter 8 kW", 2390.00, (1, 2), "inverter")]
PANELS = [_p("Solar panel SP-410 (410 W)", 168.00, (10, 12, 20, 24), "panel"),
          _p("Solar panel SP-540 (540 W)", 205.00, (8, 16, 20), "panel")]
SHOP = [_p("Mount and balance (per wheel)", 22.50, (4,)), _p("Wheel alignment", 89.99, (1,)),
        _p("Valve stem replacement", 4.50, (4,)), _p("Disposal fee (per unit)", 3.50, (2, 4))]
BATTERY_EXTRAS = [_p("Smart charger 12V 10A", 64.00, (1, 2)), _p("Terminal protector spray", 8.75, (2, 6)),
                  _p("Hold-down bracket", 14.20, (1, 2, 4))]
SOLAR_EXTRAS = [_p("MC4 connector pair", 3.10, (20, 40, 60)), _p("Mounting rail kit (4 panels)", 148.00, (3, 5, 6))]
ELECTRICAL = [_p("Circuit breaker 2P 32A", 38.50, (4, 6, 10)), _p("DC surge protector 1000V", 64.00, (2, 4)),
              _p("Compression gland M25 (pack of 10)", 18.40, (2, 5)), _p("PVC conduit 1 in (10 ft)", 7.90, (10, 20)),
              _p("Junction box IP66", 23.60, (4, 8))]
FLEET = [_p("Oil change service", 79.00, (1, 2)), _p("Brake pad set (front)", 118.00, (1, 2)),
         _p("Wiper blade pair", 24.00, (1, 2, 4))]


@dataclass(frozen=True)
class Vendor:
    name: str
    prefix: str
    address: str
    count: int


VENDORS = [Vendor("Redline Tire & Wheel", "RTW", "455 SE Grand Ave, Portland, OR 97214", 6),
           Vendor("Voltcraft Battery Supply", "VBS", "88 Industrial Pkwy, Tacoma, WA 98421", 5),
           Vendor("Sunfield Solar Distribution", "SSD", "2100 Solar Way, Sacramento, CA 95815", 6),
           Vendor("Copperline Cable Co.", "CCC", "17 Foundry St, Spokane, WA 99201", 8),
           Vendor("Harbor Fleet Services", "HFS", "903 Marine Dr, Vancouver, WA 98660", 5),
           Vendor("Meridian Electrical Wholesale", "MEW", "640 Commerce Blvd, Boise, ID 83705", 5)]


@dataclass
class LineItem:
    product: Product
    qty: int
    unit_cents: int

    @property
    def amount_cents(self) -> int:
        return self.qty * self.unit_cents


@dataclass
class Invoice:
    file: str
    number: str
    day: date
    vendor: Vendor
    items: list[LineItem] = field(default_factory=list)

    @property
    def doc_id(self) -> str:
        return Path(self.file).stem

    @property
    def total_cents(self) -> int:
        return sum(item.amount_cents for item in self.items)

    def metadata(self) -> dict:
        return {"file": self.file, "invoice_no": self.number, "date": self.day.isoformat(),
                "vendor": self.vendor.name, "total": self.total_cents / 100, "currency": "USD"}


def _pick(rng: random.Random, products: list[Product], count: int) -> list[Product]:
    return rng.sample(products, min(count, len(products)))


def _items_for(vendor: Vendor, rng: random.Random, index: int) -> list[Product]:
    """The products on the `index`-th receipt of a vendor (chosen so every question has several rows)."""
    if vendor.prefix == "RTW":
        return _pick(rng, TIRES, 1 + index % 2) + _pick(rng, SHOP, 2)
    if vendor.prefix == "VBS":
        return _pick(rng, BATTERIES, 2 + index % 2) + _pick(rng, BATTERY_EXTRAS, 1)
    if vendor.prefix == "SSD":
        return ([rng.choice(PANELS)] + _pick(rng, CABLES[:2], 1 + index % 2)
                + ([rng.choice(INVERTERS)] if index % 3 != 2 else []) + _pick(rng, SOLAR_EXTRAS, 2))
    if vendor.prefix == "CCC":
        return _pick(rng, CABLES, 5 + index % 3) + _pick(rng, ELECTRICAL[2:], 1)
    if vendor.prefix == "HFS":
        return (([rng.choice(TIRES)] if index % 2 == 0 else []) + ([rng.choice(BATTERIES[:3])] if index != 1 else [])
                + _pick(rng, FLEET, 2))
    return (_pick(rng, CABLES, 2 + index % 2) + _pick(rng, ELECTRICAL[:2], 1)
            + ([rng.choice(INVERTERS)] if index % 2 else []) + ([BATTERIES[1]] if index in (1, 4) else []))


def build_invoices(seed: int = SEED) -> list[Invoice]:
    """~35 receipts from six vendors over 2022-2023, in date order as inv-0001.pdf, inv-0002.pdf, ..."""
    rng = random.Random(seed)
    drafts = []
    for vendor in VENDORS:
        sequence = rng.randint(100, 400)
        for index in range(vendor.count):
            year = 2022 if index < vendor.count // 2 else 2023
            day = date(year, rng.randint(1, 12), rng.randint(1, 28))
            sequence += rng.randint(7, 60)
            items = []
            for product in _items_for(vendor, rng, index):
                # a negotiated price within 5% of list, in whole cents
                unit = round(product.cents * (1 + rng.randint(-50, 50) / 1000))
                items.append(LineItem(product, rng.choice(product.quantities), unit))
            drafts.append((day, vendor, sequence, items))
    drafts.sort(key=lambda draft: (draft[0], draft[1].prefix))
    invoices = []
    for number, (day, vendor, sequence, items) in enumerate(drafts, start=1):
        invoices.append(Invoice(f"inv-{number:04d}.pdf", f"{vendor.prefix}-{day.year % 100}-{sequence:04d}", day,
                                vendor, items))
    return invoices


def render_invoice(invoice: Invoice, path: Path) -> int:
    pdf = Document(f"Invoice {invoice.number}", invoice.vendor.name)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 16)
    pdf.cell(0, 8, invoice.vendor.name, new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", "", 9)
    pdf.cell(0, 5, invoice.vendor.address, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(4)
    pdf.set_font("Helvetica", "B", 13)
    pdf.cell(0, 7, "SALES RECEIPT", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(1)
    due = invoice.day.toordinal() + 30
    pdf.facts([("Invoice number", invoice.number), ("Date", invoice.day.isoformat()),
               ("Vendor", invoice.vendor.name), ("Total", money(invoice.total_cents)),
               ("Payment terms", "Net 30"), ("Due date", date.fromordinal(due).isoformat())])
    pdf.ln(3)
    pdf.set_font("Helvetica", "", 10)
    pdf.multi_cell(0, LINE, f"Bill to: {CUSTOMER[0]}, {CUSTOMER[1]}\n{CUSTOMER[2]}", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(4)
    rows = [[item.product.label, str(item.qty), money(item.unit_cents), money(item.amount_cents)]
            for item in invoice.items]
    pdf.table([["Item", "Qty", "Unit price", "Amount"]], rows, [100, 18, 28, 30])
    pdf.ln(4)
    pdf.para("All amounts in U.S. dollars. Prices include delivery to the bill-to address; sales tax is not "
             "charged because a resale and exemption certificate is on file for the customer.", size=9)
    pdf.para(f"Please pay by ACH or check within 30 days and quote invoice {invoice.number} on the remittance. "
             "Returns of unused goods in their original packaging are accepted within 30 days of delivery.", size=9)
    pdf.output(str(path))
    return pdf.page_no()


# ================================================================ datasheets

@dataclass(frozen=True)
class Panel:
    model: str
    manufacturer: str
    pmax: int
    voc: float
    isc: float
    vmp: float
    width: float
    height: float
    depth_mm: int
    weight_kg: float
    cells: str

    @property
    def doc_id(self) -> str:
        return self.model  # datasheets are filed by model number: SP-410.pdf

    @property
    def imp(self) -> float:
        return round(self.pmax / self.vmp, 2)

    @property
    def efficiency(self) -> float:
        return round(self.pmax / (self.width * self.height * 1000) * 100, 1)

    def metadata(self) -> dict:
        return {"file": f"{self.doc_id}.pdf", "model": self.model, "product": "solar_panel",
                "manufacturer": self.manufacturer, "width_m": self.width, "height_m": self.height}


PANEL_SPECS = [
    Panel("SP-360", "Helio Modules Inc.", 360, 41.20, 11.05, 34.10, 1.038, 1.755, 35, 19.5, "120 half-cut mono PERC"),
    Panel("SP-390", "Helio Modules Inc.", 390, 36.90, 13.42, 30.80, 1.134, 1.690, 30, 20.8, "108 half-cut mono PERC"),
    Panel("SP-410", "Helio Modules Inc.", 410, 37.45, 13.87, 31.40, 1.134, 1.722, 30, 21.5, "108 half-cut mono PERC"),
    Panel("SP-425", "Brightwave Photovoltaic", 425, 38.60, 13.95, 32.20, 1.134, 1.762, 30, 21.9, "108 half-cut N-type TOPCon"),
    Panel("SP-450", "Brightwave Photovoltaic", 450, 49.70, 11.52, 41.60, 1.048, 2.026, 35, 23.5, "144 half-cut N-type TOPCon"),
    Panel("SP-540", "Brightwave Photovoltaic", 540, 49.90, 13.85, 41.95, 1.303, 2.094, 35, 28.6, "144 half-cut mono PERC"),
    Panel("SP-580", "Solenne Energy", 580, 51.30, 14.35, 43.10, 1.303, 2.172, 35, 30.9, "156 half-cut N-type TOPCon"),
    Panel("SP-620", "Solenne Energy", 620, 53.80, 14.62, 45.20, 1.303, 2.384, 35, 33.4, "132 half-cut HJT bifacial"),
]


@dataclass(frozen=True)
class Transistor:
    model: str
    polarity: str
    package: str
    vceo: int
    vcbo: int
    vebo: int
    ic: float
    ptot: float
    hfe: tuple
    vcesat: float
    ft: float
    use: str

    @property
    def doc_id(self) -> str:
        return self.model  # datasheets are filed by model number: SP-410.pdf

    def metadata(self) -> dict:
        return {"file": f"{self.doc_id}.pdf", "model": self.model, "product": "transistor",
                "manufacturer": "Nexon Semiconductor"}


TRANSISTOR_SPECS = [
    Transistor("NX2222A", "NPN", "TO-92", 40, 75, 6, 0.6, 0.625, (100, 300), 0.3, 300, "general-purpose switching and amplification"),
    Transistor("NX3906", "PNP", "TO-92", 40, 40, 5, 0.2, 0.625, (100, 300), 0.25, 250, "general-purpose switching and amplification"),
    Transistor("NXD882", "NPN", "TO-126", 30, 40, 6, 3.0, 1.25, (60, 400), 0.5, 90, "audio output stages and relay drivers"),
    Transistor("NXT3055", "NPN", "TO-220", 60, 100, 7, 10.0, 75.0, (20, 70), 1.1, 2.5, "power switching and linear regulators"),
]


def _num(value: float, places: int) -> str:
    return f"{value:.{places}f}"


def render_panel(panel: Panel, path: Path) -> int:
    pdf = Document(f"{panel.model} datasheet", panel.manufacturer)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 18)
    pdf.cell(0, 9, f"{panel.model} Monocrystalline Solar Module", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", "", 10)
    pdf.cell(0, 6, f"{panel.manufacturer}  |  Product datasheet, revision C", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(3)
    pdf.facts([("Model", panel.model), ("Manufacturer", panel.manufacturer), ("Cell type", panel.cells),
               ("Rated power", f"{panel.pmax} W")])
    pdf.ln(2)
    pdf.para(f"The {panel.model} is a {panel.pmax} W module built on {panel.cells} cells for residential and "
             f"commercial rooftops. Its anodized aluminum frame is {panel.depth_mm} mm deep and the module weighs "
             f"{panel.weight_kg} kg, so two installers can handle it without lifting equipment. The module carries "
             "a 25-year product warranty and a linear power warranty of 87.4% of rated output after 30 years.")
    pdf.heading("Electrical data", 12)
    noct = 0.746
    rows = [["Maximum power Pmax (W)", str(panel.pmax), str(round(panel.pmax * noct))],
            ["Open-circuit voltage Voc (V)", _num(panel.voc, 2), _num(panel.voc * 0.94, 2)],
            ["Short-circuit current Isc (A)", _num(panel.isc, 2), _num(panel.isc * 0.806, 2)],
            ["Voltage at Pmax Vmp (V)", _num(panel.vmp, 2), _num(panel.vmp * 0.93, 2)],
            ["Current at Pmax Imp (A)", _num(panel.imp, 2), _num(panel.imp * 0.802, 2)],
            ["Module efficiency (%)", _num(panel.efficiency, 1)],
            ["Power tolerance (W)", "5"]]
    pdf.table([["Parameter", "STC", "NOCT"]], rows, [95, 35, 35])
    pdf.para("STC: irradiance 1000 W/m2, cell temperature 25 C, air mass 1.5. NOCT: irradiance 800 W/m2, "
             "ambient temperature 20 C, wind speed 1 m/s. Measurement tolerance of Pmax is 3%.", size=8.5)
    pdf.heading("Mechanical data", 12)
    rows = [["Width (m)", _num(panel.width, 3)], ["Height (m)", _num(panel.height, 3)],
            ["Depth (mm)", str(panel.depth_mm)], ["Weight (kg)", _num(panel.weight_kg, 1)]]
    pdf.table([["Parameter", "Value"]], rows, [95, 35])
    pdf.heading("Operating conditions", 12)
    rows = [["Maximum system voltage (V)", "1500"], ["Maximum series fuse rating (A)", "25"],
            ["Temperature coefficient of Pmax (%/C)", "-0.34"], ["Operating temperature, minimum (C)", "-40"],
            ["Operating temperature, maximum (C)", "85"]]
    pdf.table([["Parameter", "Value"]], rows, [95, 35])
    pdf.para("Install the module according to the installation manual. The specifications in this datasheet may "
             "change without notice; the values given are typical and apply to modules shipped from January 2023.",
             size=8.5)
    pdf.output(str(path))
    return pdf.page_no()


def render_transistor(part: Transistor, path: Path) -> int:
    pdf = Document(f"{part.model} datasheet", "Nexon Semiconductor")
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 18)
    pdf.cell(0, 9, f"{part.model} {part.polarity} Bipolar Transistor", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", "", 10)
    pdf.cell(0, 6, f"Nexon Semiconductor  |  {part.package} package  |  Product data sheet", new_x="LMARGIN",
             new_y="NEXT")
    pdf.ln(3)
    pdf.facts([("Model", part.model), ("Polarity", part.polarity), ("Package", part.package)])
    pdf.ln(2)
    pdf.para(f"The {part.model} is a silicon {part.polarity} bipolar junction transistor in a {part.package} "
             f"package, intended for {part.use}. It is lead-free, RoHS compliant and qualified to AEC-Q101.")
    pdf.heading("Absolute maximum ratings (Tamb = 25 C)", 12)
    rows = [["Collector-emitter voltage VCEO (V)", str(part.vceo)],
            ["Collector-base voltage VCBO (V)", str(part.vcbo)],
            ["Emitter-base voltage VEBO (V)", str(part.vebo)],
            ["Continuous collector current IC (A)", _num(part.ic, 1)],
            ["Total power dissipation Ptot (W)", f"{part.ptot:g}"],
            ["Junction temperature Tj (C)", "150"]]
    pdf.table([["Parameter", "Rating"]], rows, [100, 35])
    pdf.heading("Electrical characteristics (Tamb = 25 C)", 12)
    rows = [["DC current gain hFE", str(part.hfe[0]), "-", str(part.hfe[1])],
            ["Collector-emitter saturation voltage VCEsat (V)", "-", _num(part.vcesat * 0.6, 2), _num(part.vcesat, 2)],
            ["Transition frequency fT (MHz)", f"{part.ft:g}", "-", "-"],
            ["Collector cut-off current ICBO (nA)", "-", "-", "50"]]
    pdf.table([["Parameter", "Min", "Typ", "Max"]], rows, [100, 22, 22, 22])
    pdf.para("Stresses above the absolute maximum ratings may cause permanent damage. Characteristics are measured "
             "with pulsed tests (pulse width 300 us, duty cycle 2%) so that junction heating stays negligible.",
             size=8.5)
    pdf.output(str(path))
    return pdf.page_no()


# ================================================================ contracts

@dataclass(frozen=True)
class Contract:
    slug: str
    title: str
    first: tuple        # (name, description, short name)
    second: tuple
    effective: date
    notice_days: int
    cure_days: int
    term_years: int
    law: str
    cap: str
    subject: str        # what the second party provides
    fees: str

    @property
    def doc_id(self) -> str:
        return f"contract-{self.slug}"

    @property
    def parties(self) -> str:
        return f"{self.first[0]}; {self.second[0]}"

    @property
    def counterparty(self) -> str:
        return self.second[0] if self.first[0] == "ACME Corp" else self.first[0]

    def metadata(self) -> dict:
        return {"file": f"{self.doc_id}.pdf", "title": self.title, "parties": self.parties,
                "counterparty": self.counterparty, "year": self.effective.year,
                "effective_date": self.effective.isoformat(), "notice_days": self.notice_days}


ACME = ("ACME Corp", "a Delaware corporation with offices at 1200 Harbor Way, Portland, Oregon", "ACME")
CONTRACT_SPECS = [
    Contract("acme-borealis-2021", "Master Logistics Services Agreement", ACME,
             ("Borealis Logistics LLC", "an Oregon limited liability company with offices at 75 Riverside Dr, Portland, "
              "Oregon", "Borealis"), date(2021, 3, 1), 60, 30, 3, "Oregon", "the fees paid in the twelve (12) months "
             "before the claim", "warehousing, freight forwarding and last-mile delivery services",
             "the rates in Schedule B, invoiced monthly in arrears"),
    Contract("acme-keystone-2023", "Facilities Maintenance Services Agreement", ACME,
             ("Keystone Facilities Management Inc.", "a Washington corporation with offices at 400 Pine St, Seattle, "
              "Washington", "Keystone"), date(2023, 2, 15), 90, 15, 3, "Washington", "$500,000",
             "preventive and corrective maintenance of HVAC, electrical and solar installations at the Sites",
             "a fixed monthly fee of $18,400 plus approved call-out work at the rates in Schedule C"),
    Contract("acme-sunfield-2023", "Equipment Supply Agreement", ACME,
             ("Sunfield Solar Distribution LLC", "a California limited liability company with offices at 2100 Solar "
              "Way, Sacramento, California", "Sunfield"), date(2023, 7, 1), 120, 30, 2, "Delaware", "$1,000,000",
             "solar modules, inverters, mounting systems and cabling ordered by purchase order",
             "the prices in the price list in Schedule A, fixed for each calendar half-year"),
    Contract("northwind-meridian-2022", "Distribution Agreement",
             ("Northwind Energy Systems, Inc.", "a Delaware corporation with offices at 3300 Lakeview Pkwy, Denver, "
              "Colorado", "Northwind"),
             ("Meridian Electrical Wholesale Co.", "an Idaho corporation with offices at 640 Commerce Blvd, Boise, "
              "Idaho", "Meridian"), date(2022, 9, 1), 180, 45, 5, "Texas", "$2,000,000",
             "the non-exclusive distribution of Northwind storage systems and inverters in Idaho, Montana and Utah",
             "the distributor prices in Schedule A less the volume rebates in Schedule D"),
    Contract("halvorsen-borealis-2022", "Warehouse Lease Agreement",
             ("Halvorsen Properties LLC", "a Washington limited liability company with offices at 12 Dock St, "
              "Tacoma, Washington", "Landlord"),
             ("Borealis Logistics LLC", "an Oregon limited liability company with offices at 75 Riverside Dr, "
              "Portland, Oregon", "Tenant"), date(2022, 5, 1), 45, 10, 5, "Washington", "$250,000",
             "the lease of Building C, 2400 Port Industrial Way, Tacoma, with 86,000 square feet of warehouse space",
             "base rent of $61,200 per month, increasing by 3% on each anniversary of the Effective Date"),
    Contract("pinecrest-northwind-2024", "Software Subscription Agreement",
             ("Pinecrest Software Ltd", "a company incorporated in England and Wales with offices at 9 Quay Street, "
              "Bristol", "Pinecrest"),
             ("Northwind Energy Systems, Inc.", "a Delaware corporation with offices at 3300 Lakeview Pkwy, Denver, "
              "Colorado", "Northwind"), date(2024, 1, 1), 30, 20, 1, "New York", "the subscription fees paid in the "
             "twelve (12) months before the claim",
             "access to the Pinecrest fleet telemetry platform for up to 2,500 connected sites",
             "an annual subscription fee of $148,000, invoiced in advance"),
]

_WORDS = {10: "ten", 15: "fifteen", 20: "twenty", 30: "thirty", 45: "forty-five", 60: "sixty", 90: "ninety",
          120: "one hundred twenty", 180: "one hundred eighty", 1: "one", 2: "two", 3: "three", 5: "five"}


def _clauses(c: Contract) -> list[tuple[str, list[tuple[str, str]]]]:
    """(heading, [(key, paragraph)]) for each numbered clause; keys name paragraphs QA points at."""
    a, b = c.first[2], c.second[2]
    years = f"{_WORDS[c.term_years]} ({c.term_years}) year{'s' if c.term_years > 1 else ''}"
    notice = f"{_WORDS[c.notice_days]} ({c.notice_days}) days'"
    cure = f"{_WORDS[c.cure_days]} ({c.cure_days}) days"
    return [
        ("1. Definitions", [
            ("", f"1.1 \"Agreement\" means this {c.title}, including its schedules, as amended from time to time in "
                 "accordance with clause 16."),
            ("", f"1.2 \"Services\" or \"Goods\" means {c.subject}, as further described in Schedule A."),
            ("", "1.3 \"Business Day\" means a day other than a Saturday, Sunday or public holiday in the state whose "
                 "law governs this Agreement."),
        ]),
        ("2. Scope", [
            ("", f"2.1 {b} shall provide {c.subject} to {a} in accordance with this Agreement and with good industry "
                 "practice, using personnel who are suitably qualified and experienced."),
            ("", f"2.2 {a} may request changes to the scope in writing. No change is binding unless both parties "
                 "sign a change order that states its effect on price and schedule."),
        ]),
        ("3. Term", [
            ("term", f"3.1 This Agreement commences on the Effective Date and continues for an initial term of "
                     f"{years}. It then renews automatically for successive one (1) year terms unless either party "
                     "gives notice of non-renewal under clause 12."),
        ]),
        ("4. Fees and Payment", [
            ("fees", f"4.1 In consideration of the Services, the fees are {c.fees}."),
            ("", "4.2 Invoices are payable within thirty (30) days of receipt. Undisputed amounts not paid when due "
                 "bear interest at one percent (1%) per month. Disputed amounts shall be notified in writing within "
                 "fifteen (15) days of receipt of the invoice."),
        ]),
        ("5. Service Levels", [
            ("", f"5.1 {b} shall meet the service levels in Schedule E. If a service level is missed in two "
                 "consecutive months, the parties shall agree a remediation plan within ten (10) Business Days."),
        ]),
        ("6. Personnel and Subcontracting", [
            ("", f"6.1 {b} may subcontract parts of its obligations with the prior written consent of {a}, which "
                 f"shall not be unreasonably withheld. {b} remains responsible for the acts and omissions of its "
                 "subcontractors."),
        ]),
        ("7. Confidentiality", [
            ("", "7.1 Each party shall keep the other party's confidential information secret, use it only to "
                 "perform this Agreement and disclose it only to employees and advisers who need to know it. These "
                 "obligations survive for five (5) years after termination."),
        ]),
        ("8. Intellectual Property", [
            ("", "8.1 Each party retains its pre-existing intellectual property. Deliverables created specifically "
                 f"for {a} under this Agreement vest in {a} on payment of the related fees."),
        ]),
        ("9. Warranties", [
            ("", f"9.1 {b} warrants that the Services will be performed with reasonable skill and care and that "
                 "the Goods will be free from defects in materials and workmanship for twelve (12) months from "
                 "delivery."),
        ]),
        ("10. Indemnification", [
            ("", "10.1 Each party shall indemnify the other against third-party claims for death, personal injury "
                 "or damage to tangible property caused by its negligence or wilful misconduct."),
        ]),
        ("11. Limitation of Liability", [
            ("cap", f"11.1 Except for liability that cannot be limited by law, each party's total liability under "
                    f"this Agreement is limited to {c.cap}."),
            ("", "11.2 Neither party is liable for loss of profit, revenue or goodwill, or for any indirect or "
                 "consequential loss."),
        ]),
        ("12. Termination", [
            ("notice", f"12.1 Either party may terminate this Agreement for convenience by giving the other party not "
                       f"less than {notice} prior written notice."),
            ("cure", f"12.2 Either party may terminate this Agreement with immediate effect by written notice if the "
                     f"other party commits a material breach and fails to cure it within {cure} after receiving "
                     "written notice of the breach."),
            ("", "12.3 On termination, each party shall return the other party's confidential information, and "
                 f"{a} shall pay for Services performed and Goods delivered up to the date of termination."),
        ]),
        ("13. Notice", [
            ("", "13.1 Notices under this Agreement must be in writing and delivered by hand, by courier or by email "
                 "with confirmation of receipt, to the addresses set out above or to any other address a party "
                 "notifies in accordance with this clause."),
            ("", "13.2 A notice is deemed received on delivery if delivered by hand or courier, and on the next "
                 "Business Day if sent by email."),
        ]),
        ("14. Governing Law", [
            ("law", f"14.1 This Agreement is governed by the laws of the State of {c.law}. The parties submit to "
                    f"the exclusive jurisdiction of the state and federal courts located in {c.law}."),
        ]),
        ("15. Assignment", [
            ("", "15.1 Neither party may assign this Agreement without the other party's prior written consent, "
                 "except to a successor to all or substantially all of its business."),
        ]),
        ("16. General", [
            ("", "16.1 This Agreement is the entire agreement between the parties about its subject matter. It may "
                 "be amended only in writing signed by both parties. If any provision is held invalid, the other "
                 "provisions remain in force."),
        ]),
    ]


def render_contract(c: Contract, path: Path) -> tuple[int, dict[str, list[int]]]:
    pdf = Document(c.title, c.first[0], font="Times")
    pdf.add_page()
    pdf.set_font("Times", "B", 15)
    pdf.cell(0, 8, c.title.upper(), align="C", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(3)
    pdf.para(f"This {c.title} (the \"Agreement\") is entered into as of {long_date(c.effective)} (the \"Effective "
             f"Date\") by and between {c.first[0]}, {c.first[1]} (\"{c.first[2]}\"), and {c.second[0]}, "
             f"{c.second[1]} (\"{c.second[2]}\").", size=11, marks=("effective",))
    pdf.para("The parties agree as follows.", size=11)
    for heading, paragraphs in _clauses(c):
        pdf.heading(heading, 11.5, space_before=2, keep=12)
        for key, text in paragraphs:
            pdf.para(text, size=11, after=2, marks=(key,) if key else ())
    pdf.ln(4)
    pdf.para("IN WITNESS WHEREOF, the parties have executed this Agreement by their authorized representatives as "
             "of the Effective Date.", size=11)
    signers = {"ACME Corp": ("Dana Whitaker", "Chief Operating Officer"),
               "Northwind Energy Systems, Inc.": ("Marcus Ellery", "Chief Financial Officer")}
    pdf.ensure_space(40)
    for party in (c.first, c.second):
        name, role = signers.get(party[0], ("Jordan Reyes", "Managing Director"))
        pdf.set_font("Times", "B", 11)
        pdf.cell(0, LINE, f"For {party[0]}", new_x="LMARGIN", new_y="NEXT")
        pdf.facts([("Signed by", name), ("Title", role), ("Date signed", long_date(c.effective))], size=11)
        pdf.ln(3)
    pdf.output(str(path))
    return pdf.page_no(), pdf.marks


# ================================================================ QA

def _items(items) -> list[str]:
    """A list gold: the sorted distinct items (the metrics match each item on its own)."""
    return sorted(set(items))


def _line(qid: str, kind: str, question: str, answer: str, evidence: list[tuple[str, int]], status: str = "answer",
          **extra) -> dict:
    record = {"id": qid, "question": question, "answer": answer,
              "evidence": [{"doc_id": doc, "page": page} for doc, page in evidence], "kind": kind,
              "expected_status": status}
    record.update(extra)
    return record


def _invoice_questions(invoices: list[Invoice]) -> list[dict]:
    def rows(kind: str, year: int | None = None) -> list[tuple[Invoice, LineItem]]:
        return [(inv, item) for inv in invoices for item in inv.items
                if item.product.kind == kind and (year is None or inv.day.year == year)]

    year_2023 = {"date": {"between": ["2023-01-01", "2023-12-31"]}}
    year_2022 = {"date": {"between": ["2022-01-01", "2022-12-31"]}}
    out = []
    tires = rows("tire")
    out.append(_line("inv-list-tires", "list", "Which receipts contain tires?",
                     _items(inv.doc_id for inv, _ in tires), sorted({(inv.doc_id, 1) for inv, _ in tires}),
                     query="tires", bucket="invoices", filters=None, group_by="doc_id"))
    batteries_2023 = rows("battery", 2023)
    out.append(_line("inv-list-battery-vendors-2023", "list", "From which vendors did we buy batteries in 2023?",
                     _items(inv.vendor.name for inv, _ in batteries_2023),
                     sorted({(inv.doc_id, 1) for inv, _ in batteries_2023}),
                     query="batteries", bucket="invoices", filters=year_2023, group_by="vendor"))
    out.append(_line("inv-sum-batteries-2023", "aggregate", "How much was spent on batteries in 2023 in total?",
                     money(sum(item.amount_cents for _, item in batteries_2023)),
                     sorted({(inv.doc_id, 1) for inv, _ in batteries_2023}),
                     query="batteries", bucket="invoices", filters=year_2023, op="sum", field="Amount"))
    tires_2022 = rows("tire", 2022)
    out.append(_line("inv-sum-tires-2022", "aggregate", "What was the total amount spent on tires in 2022?",
                     money(sum(item.amount_cents for _, item in tires_2022)),
                     sorted({(inv.doc_id, 1) for inv, _ in tires_2022}),
                     query="tires", bucket="invoices", filters=year_2022, op="sum", field="Amount"))
    tires_2023 = rows("tire", 2023)
    out.append(_line("inv-qty-tires-2023", "aggregate", "How many tires did we buy in 2023?",
                     str(sum(item.qty for _, item in tires_2023)), sorted({(inv.doc_id, 1) for inv, _ in tires_2023}),
                     query="tires", bucket="invoices", filters=year_2023, op="sum", field="Qty"))
    inverters = rows("inverter")
    out.append(_line("inv-max-inverter", "aggregate",
                     "What is the highest amount paid for a single inverter line item on any receipt?",
                     money(max(item.amount_cents for _, item in inverters)),
                     sorted({(inv.doc_id, 1) for inv, _ in inverters}),
                     query="inverter", bucket="invoices", filters=None, op="max", field="Amount"))
    cables = rows("cable")
    out.append(_line("inv-overflow-cables", "overflow",
                     "List every cable line item on all receipts, with its quantity and amount.",
                     str(len(cables)), [], status="clarify", query="cable", bucket="invoices", filters=None))
    # an exact fact lookup: one receipt named by its number
    target = next(inv for inv in invoices if inv.vendor.prefix == "SSD" and inv.day.year == 2023)
    out.append(_line("inv-total-lookup", "lookup", f"What is the total of invoice {target.number}?",
                     money(target.total_cents), [(target.doc_id, 1)]))
    redline = [inv for inv in invoices if inv.vendor.prefix == "RTW"]
    out.append(_line("inv-ambiguous-redline", "ambiguous", "What was the total of the Redline Tire & Wheel invoice?",
                     "", [], status="clarify", candidates=[inv.doc_id for inv in redline]))
    return out


def _datasheet_questions() -> list[dict]:
    out = []
    narrow = [p for p in PANEL_SPECS if p.width <= 1.2]
    out.append(_line("ds-list-narrow-panels", "list", "Which solar panels are at most 1.2 m wide?",
                     _items(p.model for p in narrow), [(p.doc_id, 1) for p in narrow],
                     query="width", bucket="datasheets", filters={"value": {"<=": 1.2}}, group_by="model"))
    efficient = [p for p in PANEL_SPECS if p.efficiency >= 21.0]
    out.append(_line("ds-list-efficient-panels", "list", "Which solar panels have a module efficiency of at least 21%?",
                     _items(p.model for p in efficient), [(p.doc_id, 1) for p in efficient],
                     query="efficiency", bucket="datasheets", filters={"value": {">=": 21}}, group_by="model"))
    hot = [t for t in TRANSISTOR_SPECS if t.ptot >= 1]
    out.append(_line("ds-list-power-transistors", "list", "Which transistors can dissipate at least 1 W?",
                     _items(t.model for t in hot), [(t.doc_id, 1) for t in hot],
                     query="power dissipation", bucket="datasheets",
                     filters={"product": "transistor", "value": {">=": 1}}, group_by="model"))
    sp410 = next(p for p in PANEL_SPECS if p.model == "SP-410")
    out.append(_line("ds-voc-sp410", "lookup", "What is the Voc of the SP-410?", f"{sp410.voc:.2f} V",
                     [(sp410.doc_id, 1)]))
    sp540 = next(p for p in PANEL_SPECS if p.model == "SP-540")
    out.append(_line("ds-width-sp540", "lookup", "How wide is the SP-540 solar panel?", f"{sp540.width:.3f} m",
                     [(sp540.doc_id, 1)]))
    nxd = next(t for t in TRANSISTOR_SPECS if t.model == "NXD882")
    out.append(_line("ds-ic-nxd882", "lookup", "What is the maximum continuous collector current of the NXD882?",
                     f"{nxd.ic:g} A", [(nxd.doc_id, 1)]))
    out.append(_line("ds-absent-sp700", "absent", "What is the open-circuit voltage of the SP-700 solar panel?",
                     "", [], status="fail"))
    return out


def _contract_questions(pages: dict[str, dict[str, list[int]]]) -> list[dict]:
    by_slug = {c.slug: c for c in CONTRACT_SPECS}

    def ev(slug: str, key: str) -> list[tuple[str, int]]:
        return [(by_slug[slug].doc_id, page) for page in pages[slug][key]]

    keystone, borealis = by_slug["acme-keystone-2023"], by_slug["acme-borealis-2021"]
    sunfield, pinecrest = by_slug["acme-sunfield-2023"], by_slug["pinecrest-northwind-2024"]
    lease, meridian = by_slug["halvorsen-borealis-2022"], by_slug["northwind-meridian-2022"]
    return [
        _line("ctr-notice-acme-2023-service", "clause",
              "In ACME's 2023 service contract, how many days' notice does termination for convenience require?",
              f"{keystone.notice_days} days", ev(keystone.slug, "notice")),
        _line("ctr-notice-acme-borealis-2021", "clause",
              "How much notice must a party give to terminate the 2021 agreement between ACME Corp and Borealis "
              "Logistics for convenience?", f"{borealis.notice_days} days", ev(borealis.slug, "notice")),
        _line("ctr-law-acme-supply-2023", "clause", "Which state's law governs ACME's 2023 equipment supply agreement?",
              sunfield.law, ev(sunfield.slug, "law")),
        _line("ctr-cure-pinecrest", "clause",
              "Under the Pinecrest software subscription agreement, within how many days must a material breach be "
              "cured?", f"{pinecrest.cure_days} days", ev(pinecrest.slug, "cure")),
        _line("ctr-cap-lease", "clause",
              "What is the liability cap in the warehouse lease between Halvorsen Properties and Borealis Logistics?",
              lease.cap, ev(lease.slug, "cap")),
        _line("ctr-notice-sunfield", "clause",
              "How many days' notice does ACME's 2023 equipment supply agreement require for termination for "
              "convenience?", f"{sunfield.notice_days} days", ev(sunfield.slug, "notice")),
        _line("ctr-effective-meridian", "lookup",
              "When did the distribution agreement between Northwind and Meridian take effect?",
              long_date(meridian.effective), ev(meridian.slug, "effective")),
        _line("ctr-term-keystone", "lookup", "How long is the initial term of ACME's facilities maintenance agreement?",
              f"{keystone.term_years} years", ev(keystone.slug, "term")),
        _line("ctr-ambiguous-notice", "ambiguous", "What is the termination notice period?", "", [],
              status="clarify", candidates=[c.doc_id for c in CONTRACT_SPECS]),
    ]


# ================================================================ generate

def _write_jsonl(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records), encoding="utf-8")


KIND_ORDER = ("list", "aggregate", "lookup", "overflow", "clause", "compute", "xref", "absent", "ambiguous")


def _interleaved(questions: list[dict]) -> list[dict]:
    """The questions taking each kind in turn (first of every kind, then second, ...; kinds in
    KIND_ORDER, the ones answered from table rows first), so that the first N of the file (`ferret
    demo`, `ferret eval --limit N`) cover every kind."""
    kinds: dict[str, list[dict]] = {kind: [] for kind in KIND_ORDER}
    for question in questions:
        kinds[question["kind"]].append(question)
    rounds = max(len(group) for group in kinds.values())
    return [group[i] for i in range(rounds) for group in kinds.values() if i < len(group)]


def generate(out_dir: Path) -> dict:
    """Write the sample corpus and qa.jsonl into `out_dir` (replacing its buckets); returns counts."""
    out_dir = Path(out_dir)
    for bucket in BUCKETS:
        if (out_dir / bucket).exists():
            shutil.rmtree(out_dir / bucket)
        (out_dir / bucket).mkdir(parents=True)
    pages = {}

    invoices = build_invoices()
    for invoice in invoices:
        pages[invoice.doc_id] = render_invoice(invoice, out_dir / "invoices" / invoice.file)
    _write_jsonl(out_dir / "invoices" / "metadata.jsonl", [inv.metadata() for inv in invoices])

    for panel in PANEL_SPECS:
        pages[panel.doc_id] = render_panel(panel, out_dir / "datasheets" / f"{panel.doc_id}.pdf")
    for part in TRANSISTOR_SPECS:
        pages[part.doc_id] = render_transistor(part, out_dir / "datasheets" / f"{part.doc_id}.pdf")
    _write_jsonl(out_dir / "datasheets" / "metadata.jsonl",
                 [p.metadata() for p in PANEL_SPECS] + [t.metadata() for t in TRANSISTOR_SPECS])

    contract_marks = {}
    for contract in CONTRACT_SPECS:
        pages[contract.doc_id], contract_marks[contract.slug] = render_contract(
            contract, out_dir / "contracts" / f"{contract.doc_id}.pdf")
    _write_jsonl(out_dir / "contracts" / "metadata.jsonl", [c.metadata() for c in CONTRACT_SPECS])

    report_pages, report_marks = render_report(out_dir / "reports" / f"{REPORT_ID}.pdf")
    pages[REPORT_ID] = report_pages
    _write_jsonl(out_dir / "reports" / "metadata.jsonl",
                 [{"file": f"{REPORT_ID}.pdf", "company": "Northwind Energy Systems, Inc.", "fiscal_year": 2023,
                   "pages": report_pages}])

    questions = _interleaved(report_questions(report_marks) + _invoice_questions(invoices) + _datasheet_questions()
                             + _contract_questions(contract_marks))
    _write_jsonl(out_dir / "qa.jsonl", questions)
    chats = conversations(questions, invoices)
    _write_jsonl(out_dir / "chat.jsonl", chats)
    return {"invoices": len(invoices), "datasheets": len(PANEL_SPECS) + len(TRANSISTOR_SPECS),
            "contracts": len(CONTRACT_SPECS), "reports": 1, "pages": sum(pages.values()),
            "report_pages": report_pages, "line_items": sum(len(inv.items) for inv in invoices),
            "questions": len(questions), "conversations": len(chats), "turns": sum(len(c["turns"]) for c in chats)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Generate ferret's sample corpus and its labeled QA set.")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT})")
    args = parser.parse_args(argv)
    clock = time.perf_counter()
    counts = generate(args.out)
    print(json.dumps({**counts, "out": str(args.out), "seconds": round(time.perf_counter() - clock, 2)}))


if __name__ == "__main__":
    main()
