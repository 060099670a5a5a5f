"""Tests for corpus.sections: outline trees, heading detection on real SEC filings, synthetic pages."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from ferret.corpus.pdf import open_pdf, outline_entries, read_pages
from ferret.corpus.records import Section
from ferret.corpus.sections import build_sections

PDFS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "financebench" / "pdfs"
needs_data = pytest.mark.skipif(not PDFS.is_dir(), reason=f"financebench PDFs not found at {PDFS}")

# 10-Ks without an outline: physical page of "Item 7." and "Item 8." checked by reading the text.
NO_OUTLINE_ITEMS = {
    "AMAZON_2017_10K": (19, 35),
    "BESTBUY_2019_10K": (27, 49),
    "MICROSOFT_2023_10K": (40, 58),
    "PFIZER_2021_10K": (32, 55),
}
# Short or unusual documents, read in full for the structural invariants.
SMALL = ["AMCOR_2022_8K_dated-2022-07-01", "FOOTLOCKER_2022_8K_dated-2022-05-20",
         "ULTABEAUTY_2023Q4_EARNINGS", "JOHNSON_JOHNSON_2023Q2_EARNINGS", "BESTBUY_2024Q2_10Q"]


@pytest.fixture(scope="module")
def documents() -> dict[str, tuple[list[str], list[tuple[int, str, int]]]]:
    """Pages and outline of the sampled PDFs, read once for the whole module."""
    loaded = {}
    for name in [*NO_OUTLINE_ITEMS, *SMALL]:
        path = PDFS / f"{name}.pdf"
        reader = open_pdf(path)
        loaded[name] = (read_pages(path, 0, len(reader.pages)), outline_entries(reader))
    return loaded


def assert_valid_tree(sections: list[Section], n_pages: int) -> None:
    """Ids in order, page ranges inside the document, parents earlier and of a smaller level."""
    assert sections, "at least one section"
    seen: dict[str, Section] = {}
    previous_start = 1
    for index, section in enumerate(sections):
        assert section.id == f"s{index}"
        assert 1 <= section.page_start <= section.page_end <= n_pages, section
        assert section.page_start >= previous_start, "sections in document order"
        assert section.level >= 1 and section.title
        if section.parent_id is not None:
            assert section.parent_id in seen, section
            assert seen[section.parent_id].level < section.level, section
        seen[section.id] = section
        previous_start = section.page_start
    assert min(s.level for s in sections) == 1


def find(sections: list[Section], pattern: str) -> list[Section]:
    return [s for s in sections if re.match(pattern, s.title, re.I)]


# ---------------------------------------------------------------- outline

@needs_data
@pytest.mark.parametrize("name", ["ADOBE_2015_10K", "ADOBE_2016_10K", "ADOBE_2017_10K", "ADOBE_2022_10K",
                                  "AMCOR_2023Q4_EARNINGS"])
def test_outline_pdfs_give_valid_trees(name):
    reader = open_pdf(PDFS / f"{name}.pdf")
    outline = outline_entries(reader)
    assert len(outline) >= 3
    sections = build_sections([""] * len(reader.pages), outline)
    assert_valid_tree(sections, len(reader.pages))
    assert len(sections) >= len(outline)


@needs_data
def test_adobe_outline_has_item_7_at_page_35_under_part_ii():
    reader = open_pdf(PDFS / "ADOBE_2015_10K.pdf")
    sections = build_sections([""] * len(reader.pages), outline_entries(reader))
    by_id = {s.id: s for s in sections}
    (item7,) = find(sections, r"Item 7\. Management")
    assert item7.page_start == 35
    assert item7.page_end == 54  # Item 7A starts on page 55
    assert by_id[item7.parent_id].title.startswith("Part II")
    (note1,) = find(sections, r"NOTE 1\.")
    assert by_id[note1.parent_id].title == "Notes to Consolidated Financial Statements"


def test_outline_page_ends_levels_and_parents():
    outline = [(2, "Intro", 1), (3, "Scope", 1), (3, "Terms", 2), (2, "Body", 4), (2, "End", 4)]
    sections = build_sections(["p"] * 6, outline)
    got = [(s.title, s.level, s.page_start, s.page_end, s.parent_id) for s in sections]
    assert got == [
        ("Intro", 1, 1, 3, None),
        ("Scope", 2, 1, 1, "s0"),
        ("Terms", 2, 2, 3, "s0"),
        ("Body", 1, 4, 4, None),
        ("End", 1, 4, 6, None),
    ]


# ---------------------------------------------------------------- detection on real 10-Ks

@needs_data
@pytest.mark.parametrize("name", sorted(NO_OUTLINE_ITEMS))
def test_items_detected_without_outline(documents, name):
    pages, outline = documents[name]
    assert len(outline) < 3, "this test is about PDFs without a usable outline"
    sections = build_sections(pages, outline)
    assert_valid_tree(sections, len(pages))
    assert len(sections) > 10
    item7_page, item8_page = NO_OUTLINE_ITEMS[name]
    assert [s.page_start for s in find(sections, r"item\s+7\b\.?(?!a)")] == [item7_page]
    assert [s.page_start for s in find(sections, r"item\s+8\b")] == [item8_page]
    assert len(find(sections, r"item\s+\d")) >= 15, "nearly all 10-K items found"
    parts = find(sections, r"part\s+i+v?\b")
    assert [s.level for s in parts] == [1] * len(parts) and len(parts) >= 3


@needs_data
def test_table_of_contents_page_is_one_section(documents):
    pages, _ = documents["AMAZON_2017_10K"]
    sections = build_sections(pages)
    on_toc_page = [s for s in sections if s.page_start == 2]
    assert [s.title for s in on_toc_page] == ["INDEX"]


@needs_data
def test_running_headers_do_not_become_sections(documents):
    pages, _ = documents["MICROSOFT_2023_10K"]  # "PART II" / "Item 8" head every page of Item 8
    sections = build_sections(pages)
    assert len(find(sections, r"part ii$")) == 1
    assert all(s.title not in ("Item 7", "Item 8", "Table of Contents") for s in sections)


@needs_data
def test_notes_sit_under_item_8(documents):
    pages, _ = documents["BESTBUY_2019_10K"]  # notes numbered "1.  Summary of Significant ..."
    sections = build_sections(pages)
    by_id = {s.id: s for s in sections}
    notes = find(sections, r"\d+\.\s+\S")
    summary = [s for s in notes if "Summary of Significant Accounting Policies" in s.title]
    assert summary and summary[0].page_start == 57

    def ancestors(section):
        while section.parent_id:
            section = by_id[section.parent_id]
            yield section.title

    assert any(title.startswith("Item 8") for title in ancestors(summary[0]))


@needs_data
@pytest.mark.parametrize("name", [*NO_OUTLINE_ITEMS, *SMALL])
def test_structural_invariants(documents, name):
    """(Speed is measured by `ferret bench ingest`, not here.)"""
    pages, outline = documents[name]
    assert_valid_tree(build_sections(pages, outline), len(pages))


# ---------------------------------------------------------------- synthetic pages

def test_markdown_headings():
    pages = ["# Guide\nIntro text.\n## Install\npip install x", "```\n# not a heading\n```\n## Usage\nRun it.",
             "# Appendix\nMore."]
    sections = build_sections(pages)
    got = [(s.title, s.level, s.page_start, s.page_end, s.parent_id) for s in sections]
    assert got == [
        ("Guide", 1, 1, 2, None),
        ("Install", 2, 1, 1, "s0"),
        ("Usage", 2, 2, 2, "s0"),
        ("Appendix", 1, 3, 3, None),
    ]


def test_notes_and_numbered_notes():
    pages = [
        "ACME CORP\nItem 8.  Financial Statements\nNotes to Consolidated Financial Statements\n"
        "1. Summary of Significant Accounting Policies\nWe follow GAAP.\n",
        "ACME CORP\n2. Revenue Recognition\nRevenue is recognized when control transfers.\n"
        "1. we review contracts, identify obligations and allocate prices.\n",
        "ACME CORP\nNOTE 3 — Leases\nWe lease stores.\n",
        "ACME CORP\nItem 9.  Changes in and Disagreements with Accountants\nNone.\n",
    ]
    sections = build_sections(pages)
    assert_valid_tree(sections, len(pages))
    titles = [s.title for s in sections]
    assert "ACME CORP" not in titles, "running header skipped"
    by_title = {s.title: s for s in sections}
    item8 = by_title["Item 8. Financial Statements"]
    for title, page in [("1. Summary of Significant Accounting Policies", 1), ("2. Revenue Recognition", 2),
                        ("NOTE 3 — Leases", 3)]:
        note = by_title[title]
        assert note.page_start == page and note.level > item8.level
    assert by_title["NOTE 3 — Leases"].page_end == 3
    assert item8.page_end == 3
    assert not any(t.startswith("1. we review") for t in titles)


def test_caps_and_numbered_headings_but_not_table_rows():
    pages = ["RISK FACTORS\nWe face risks.\nREVENUE  2023  2022\nTotal  $1,200  $1,100\n"
             "1. Scope\nThis covers x.\n1.1 Definitions\nTerms.\nSection 2 Obligations\nDo things."]
    titles = [s.title for s in build_sections(pages)]
    assert titles == ["RISK FACTORS", "1. Scope", "1.1 Definitions", "Section 2 Obligations"]


def test_no_headings_gives_one_root_section():
    pages = ["\n  A plain letter to shareholders.\nIt has no headings at all.", "Just more prose here."]
    assert build_sections(pages) == [Section("s0", "A plain letter to shareholders.", 1, 1, 2, None)]
    assert build_sections([]) == [Section("s0", "Document", 1, 1, 1, None)]
    assert build_sections(["", ""]) == [Section("s0", "Document", 1, 1, 2, None)]


def test_short_outline_falls_back_to_text():
    pages = ["PART I\nItem 1.  Business\nWe sell.", "Item 2.  Properties\nWe own."]
    sections = build_sections(pages, outline=[(1, "Press release", 1)])
    assert [s.title for s in sections] == ["PART I", "Item 1. Business", "Item 2. Properties"]
