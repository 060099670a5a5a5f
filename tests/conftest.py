"""Shared fixtures: where the real data is, and a small real index built once per test session."""
from __future__ import annotations

from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
FINANCEBENCH = SHARED_DATA / "financebench"
# Small real filings (8-Ks, earnings releases, a 10-Q) with FinanceBench questions, plus one 10-K without outline.
INDEX_PDFS = ["ULTABEAUTY_2023Q4_EARNINGS", "AMCOR_2023Q4_EARNINGS", "JOHNSON_JOHNSON_2023_8K_dated-2023-08-30",
              "FOOTLOCKER_2022_8K_dated-2022-05-20", "BESTBUY_2024Q2_10Q", "COSTCO_2021_10K"]


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
    from corpus.ingest import ingest

    index = tmp_path_factory.mktemp("real") / "index"
    report = ingest([pdf(name) for name in INDEX_PDFS], index, bucket="filings")
    assert not report.errors and len(report.added) == len(INDEX_PDFS)
    return index


@pytest.fixture(scope="session")
def real_corpus(real_index):
    from corpus.tools import Corpus

    return Corpus(real_index)
