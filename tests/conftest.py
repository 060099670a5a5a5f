"""Shared fixtures: where the real data is, and a small real index built once per test session."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

# LiteLLM's model map from its package, not fetched from the network (tests never depend on one)
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"
FINANCEBENCH = SHARED_DATA / "financebench"
# Small real filings (8-Ks, earnings releases, a 10-Q) with FinanceBench questions, plus one 10-K without outline.
INDEX_PDFS = ["ULTABEAUTY_2023Q4_EARNINGS", "AMCOR_2023Q4_EARNINGS", "JOHNSON_JOHNSON_2023_8K_dated-2023-08-30",
              "FOOTLOCKER_2022_8K_dated-2022-05-20", "BESTBUY_2024Q2_10Q", "COSTCO_2021_10K"]


@pytest.fixture(autouse=True)
def _runs_in_tmp(tmp_path_factory, monkeypatch):
    """No test writes into the repository's runs/ folder (MLflow store, last results, compiled programs)."""
    monkeypatch.setenv("FERRET_HOME", str(tmp_path_factory.getbasetemp()))


def shared(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"real data not found at {path} (expected ../shared/data beside the repository)")
    return path


@pytest.fixture(scope="session")
def financebench() -> Path:
    return shared(FINANCEBENCH)


@pytest.fixture(scope="session")
def pdf(financebench):
    return lambda name: financebench / "pdfs" / f"{name}.pdf"


@pytest.fixture(scope="session")
def real_index(tmp_path_factory, pdf) -> Path:
    """An index of INDEX_PDFS, ingested once for the session."""
    from ferret.corpus.ingest import ingest

    index = tmp_path_factory.mktemp("real") / "index"
    report = ingest([pdf(name) for name in INDEX_PDFS], index, bucket="filings")
    assert not report.errors and len(report.added) == len(INDEX_PDFS)
    return index


@pytest.fixture(scope="session")
def real_corpus(real_index):
    from ferret.corpus.tools import Corpus

    return Corpus(real_index)


REPORT = """# Annual Report 2023

## Segment Results

Revenue by segment is shown below; see Note 3 for the accounting policy.

Segment  2023  2022
Consumer  1,250  1,100
Enterprise  2,400  2,050
Total revenue  3,650  3,150

## Notes

### Note 3 — Revenue Recognition

Revenue is recognised when control of the goods passes to the customer. Refer to the section entitled "Segment Results".
"""

RECEIPTS = {
    "inv1.txt": "Receipt INV-1\n\nVendor: Acme Tire Co.\nQuantity: 4\n\nItem  Qty  Amount\nAll-season tires  4  480.00\nValve caps  4  12.00\n",
    "inv2.txt": "Receipt INV-2\n\nVendor: Volta\nQuantity: 2\n\nItem  Qty  Amount\nCar batteries  2  300.00\nWinter tires  2  260.00\n",
}


LONG_TOPICS = {"Liquidity": "cash flows from operating activities funded the credit facility and the commercial paper",
               "Revenue": "subscription revenue from the cloud offerings and product licenses in every region",
               "Risk": "cybersecurity incidents, currency exchange rates and the competition could harm results",
               "Employees": "headcount, hiring, retention and the stock-based compensation of our people"}


@pytest.fixture(scope="session")
def long_report(tmp_path_factory):
    """An index of one markdown report long enough to be chunked: four sections of 3,000 to 3,500 tokens,
    a chunk each under a budget of 4,000 tokens."""
    from ferret.corpus import chunks
    from ferret.corpus.ingest import ingest

    folder = tmp_path_factory.mktemp("long")
    text = "".join(f"# {title}\n\n" + "".join(f"In paragraph {i}, {body} (item {title[:3]}{i}).\n\n" for i in range(110))
                   for title, body in LONG_TOPICS.items())
    (folder / "report.md").write_text(text)
    index = folder / "index"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(chunks, "CHUNK_TOKENS", 4000)
        report = ingest([folder / "report.md"], index)
    assert report.added == ["report"]
    return index


@pytest.fixture(scope="session")
def document_corpus(tmp_path_factory):
    """A maker of one-document corpora: `document_corpus("acme.md", text)` ingests `text` as that file into
    an index of its own and opens it."""
    from ferret.corpus.ingest import ingest
    from ferret.corpus.tools import Corpus

    def make(name: str, text: str):
        root = tmp_path_factory.mktemp(name.split(".")[0])
        (root / name).write_text(text)
        ingest([root / name], root / "index")
        return Corpus(root / "index")
    return make


@pytest.fixture(scope="session")
def small_corpus(tmp_path_factory):
    """A report with a table, notes and a cross-reference, and two receipts with line items."""
    from ferret.corpus.ingest import ingest
    from ferret.corpus.tools import Corpus

    root = tmp_path_factory.mktemp("docs")
    (root / "report.md").write_text(REPORT)
    for name, text in RECEIPTS.items():
        (root / name).write_text(text)
    (root / "meta.jsonl").write_text('{"file": "inv1.txt", "year": 2023}\n{"file": "inv2.txt", "year": 2022}\n')
    index = root / "index"
    ingest([root / "report.md"], index, bucket="reports")
    ingest([root / "inv1.txt", root / "inv2.txt"], index, bucket="invoices", metadata_file=root / "meta.jsonl")
    return Corpus(index)


# Wikipedia-like passages ({title: [sentences]}) for multi-hop questions: the answer to "Who directed the
# film that was shot in Leland in 1986?" is on the page of the film the Leland page names; the others
# are near misses of the question's words.
HOP_PASSAGES = {
    "Leland, North Carolina": ["Leland is a town in Brunswick County, North Carolina, United States.",
                               "The film Maximum Overdrive was shot in and around Leland in 1986."],
    "Maximum Overdrive": ["Maximum Overdrive is a horror picture written and made by Stephen King."],
    "Wilmington, North Carolina": ["Wilmington is a port city in North Carolina.",
                                   "Many films were shot in Wilmington, and it hosts a film festival."],
    "Blue Velvet (film)": ["Blue Velvet is a 1986 film directed by David Lynch and shot in North Carolina."],
    "Brunswick Town": ["Brunswick Town was a colonial port on the Cape Fear River in North Carolina."],
    "Cape Fear (1991 film)": ["Cape Fear is a thriller directed by Martin Scorsese, shot in Florida."],
    "The Exies": ["The Exies are an American rock band formed in Los Angeles in 1997."],
    "Circus Diablo": ["Circus Diablo was an American hard rock supergroup put together in 2004."],
    "Rock music": ["Rock music is a genre of popular music; a rock band plays it.",
                   "Many a band was formed in the 1960s."],
    "Los Angeles": ["Los Angeles is the largest city in California, where many a band was formed."],
    "Garage band": ["A garage band is formed first in a garage: which band plays first is decided there."],
    "Battle of the bands": ["In a battle of the bands, the band formed first plays first."],
}


@pytest.fixture(scope="session")
def hop_corpus(tmp_path_factory):
    """HOP_PASSAGES as a passage collection, ingested."""
    import json

    from ferret.corpus.ingest import ingest
    from ferret.corpus.tools import Corpus

    root = tmp_path_factory.mktemp("hops")
    (root / "passages.json").write_text(json.dumps(HOP_PASSAGES))
    ingest([root / "passages.json"], root / "index")
    return Corpus(root / "index")


@pytest.fixture(scope="session")
def sample_index(tmp_path_factory) -> Path:
    """The committed sample corpus (data/sample), ingested once: each bucket folder as its bucket, with its metadata."""
    from ferret.corpus.ingest import ingest_bucket_folder, is_bucket_folder

    index = tmp_path_factory.mktemp("sample") / "index"
    for folder in sorted(f for f in SAMPLE.iterdir() if is_bucket_folder(f)):
        report = ingest_bucket_folder(folder, index)
        assert not report.errors and report.added, (folder.name, report.summary())
    return index
