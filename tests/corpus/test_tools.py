"""The agents' tools on a small synthetic corpus and on real filings."""
from __future__ import annotations

import csv
import json

import dspy
import pytest

from corpus.ingest import ingest
from corpus.tools import Corpus

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


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Corpus:
    root = tmp_path_factory.mktemp("docs")
    (root / "report.md").write_text(REPORT)
    for name, text in RECEIPTS.items():
        (root / name).write_text(text)
    (root / "meta.jsonl").write_text('{"file": "inv1.txt", "year": 2023}\n{"file": "inv2.txt", "year": 2022}\n')
    index = root / "index"
    ingest([root / "report.md"], index, bucket="reports")
    ingest([root / "inv1.txt", root / "inv2.txt"], index, bucket="invoices", metadata_file=root / "meta.jsonl")
    return Corpus(index)


def test_search_modes_rank_the_relevant_segment_first(corpus):
    for hits in (corpus.search_text("revenue recognised control of goods"),
                 corpus.search_semantic("when is revenue recognised"),
                 corpus.search_text("when is revenue recognised", hybrid=True)):
        assert hits[0]["doc_id"] == "report" and "recognised" in hits[0]["text"]
        assert hits[0]["section"].startswith("Note 3")


def test_fetch_section_matches_titles_fuzzily_and_respects_the_budget(corpus):
    section = corpus.fetch_section("report", "note 3 revenue")
    assert section["title"].startswith("Note 3") and "control of the goods" in section["text"]
    assert section["text"].startswith("[p. 1]")
    notes = corpus.fetch_section("report", "Notes")
    assert [sub["title"] for sub in notes["subsections"]][0].startswith("Note 3")
    small = corpus.fetch_section("report", "Segment Results", max_tokens=10)
    assert small["truncated"] and len(small["text"]) == 40
    with pytest.raises(ValueError, match="no section 'Item 99'.*Segment Results"):
        corpus.fetch_section("report", "Item 99")


def test_neighbors_walk_the_layers_and_cross_references(corpus):
    hit = corpus.search_text("see Note 3 accounting policy", doc_id="report")[0]
    around = corpus.neighbors(hit["node_id"])
    relations = {(n["relation"], n["kind"]) for n in around}
    assert ("parent", "section") in relations
    referenced = [n for n in around if n["relation"] == "references"]
    assert referenced and referenced[0]["title"].startswith("Note 3")
    note = corpus.neighbors(referenced[0]["node_id"])
    assert any(n["relation"] == "referenced_by" and n["node_id"] == hit["node_id"] for n in note)
    assert any(n["relation"] == "contains" for n in note)
    sentence = next(n for n in corpus.neighbors(note[-1]["node_id"]) if n["kind"] == "sentence")
    assert corpus.neighbors(sentence["node_id"])[0]["relation"] == "parent"
    table = corpus.search_text("Consumer Enterprise Total revenue", doc_id="report")[0]
    rows = [n for n in corpus.neighbors(table["node_id"]) if n["kind"] == "row"]
    assert [r["title"] for r in rows] == ["Consumer", "Enterprise", "Total revenue"]
    assert corpus.neighbors(rows[1]["node_id"])[1:] == [
        {**rows[0], "relation": "previous"}, {**rows[2], "relation": "next"}]
    with pytest.raises(ValueError, match="unknown node id"):
        corpus.neighbors("chapter:1")


def test_annotations_search_matches_labels_lexically_and_by_meaning(corpus):
    assert corpus.annotations_search("qty")[0]["label"] == "Quantity"
    tires = corpus.annotations_search("tires", bucket="invoices")
    assert {row["label"] for row in tires[:2]} == {"All-season tires", "Winter tires"}
    assert all(row["page"] == 1 and row["file"].startswith("inv") for row in tires)
    consumer = corpus.annotations_search("Consumer", doc_id="report")[0]
    assert consumer["value"] == 1250 and consumer["fields"] == {"2023": "1,250", "2022": "1,100"}
    only_2023 = corpus.annotations_search("tires", bucket="invoices", filters={"year": 2023})
    assert {row["doc_id"] for row in only_2023} == {"inv1"}


def test_annotations_aggregate_sums_a_column_with_groups(corpus):
    total = corpus.annotations_aggregate("tires", "sum", bucket="invoices", field="Amount")
    assert total["value"] == pytest.approx(740.0) and total["n"] == 2
    grouped = corpus.annotations_aggregate("tires", "sum", group_by="doc_id", bucket="invoices", field="amount")
    assert {g["group"]: g["value"] for g in grouped["groups"]} == {"inv1": 480.0, "inv2": 260.0}
    assert corpus.annotations_aggregate("tires", "count", bucket="invoices")["value"] == 2
    with pytest.raises(ValueError, match="unknown op 'median'"):
        corpus.annotations_aggregate("tires", "median")


def test_export_annotations_csv_writes_every_match(corpus, tmp_path):
    out = corpus.export_annotations_csv("tires", str(tmp_path / "tires.csv"), bucket="invoices")
    with open(out["path"]) as handle:
        rows = list(csv.DictReader(handle))
    assert out["rows"] == len(rows) == 2
    assert {row["label"]: row["Amount"] for row in rows} == {"All-season tires": "480.00", "Winter tires": "260.00"}


def test_tools_are_usable_as_dspy_tools(corpus):
    tools = [dspy.Tool(tool) for tool in corpus.tools()]
    names = {tool.name for tool in tools}
    assert names == {"search_text", "search_semantic", "fetch_section", "get_document_metadata", "neighbors",
                     "annotations_search", "annotations_aggregate", "export_annotations_csv"}
    search = next(tool for tool in tools if tool.name == "search_text")
    assert "query" in search.args and "filters" in search.args
    assert search(query="Total revenue", doc_id="report")[0]["doc_id"] == "report"


def test_cli_search_json(corpus, capsys):
    from programs.cli import main

    assert main(["search", "Total revenue", "--index", str(corpus.store.dir), "--mode", "text", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert hits and set(hits[0]) >= {"doc_id", "file", "page", "section", "text", "score"}
    assert main(["search", "x", "--index", str(corpus.store.dir), "--filters", '{"nope": 1}']) == 2
    assert "unknown filter field 'nope'" in capsys.readouterr().err


def test_real_table_rows_become_annotations_on_their_page(real_corpus):
    """Ulta's Q4 2023 release: the income statement row 'Net sales' lands on a page that prints it."""
    rows = real_corpus.annotations_search("Net sales", doc_id="ULTABEAUTY_2023Q4_EARNINGS")
    assert rows
    for row in rows[:3]:
        page = real_corpus.store.conn.execute("SELECT text FROM pages WHERE doc_id = ? AND page = ?",
                                              (row["doc_id"], row["page"])).fetchone()[0]
        assert row["label"] in page and row["value_text"] in page
