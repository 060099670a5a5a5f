"""The agents' tools on a small synthetic corpus and on real filings."""
from __future__ import annotations

import csv
import json

import dspy
import pytest


def test_search_modes_rank_the_relevant_segment_first(small_corpus):
    for hits in (small_corpus.search_text("revenue recognised control of goods"),
                 small_corpus.search_semantic("when is revenue recognised"),
                 small_corpus.search_text("when is revenue recognised", hybrid=True)):
        assert hits[0]["doc_id"] == "report" and "recognised" in hits[0]["text"]
        assert hits[0]["section"].startswith("Note 3")


def test_a_query_is_embedded_once_for_all_its_searches(small_corpus, monkeypatch):
    from ferret.corpus import tools

    embedded, embed = [], small_corpus.embedder
    monkeypatch.setattr(tools, "get_embedder", lambda spec=None: lambda texts: embedded.append(list(texts)) or embed(texts))
    query = "which receipts list a tire, once more"  # searched by no other test
    semantic = small_corpus.search_semantic(query, top_k=3)
    hybrid = small_corpus.search_text(query, top_k=3, hybrid=True)
    assert embedded == [[query]] and semantic[0]["node_id"] in {hit["node_id"] for hit in hybrid}
    small_corpus.search_semantic(query + "?", top_k=3)
    assert embedded == [[query], [query + "?"]]


def test_a_search_inside_one_document_weighs_words_by_how_they_spread_in_it(tmp_path):
    """The company's name is rare in the corpus but printed on every part of its report: inside the report it
    tells the parts apart no more than a stopword, so the part on capital expenditures ranks first; in an open
    search, where the name weighs most, it does not."""
    from ferret.corpus.ingest import ingest
    from ferret.corpus.tools import Corpus

    (tmp_path / "acme.md").write_text(
        "# Overview\n\nAcme overview. Acme is Acme's name for the Acme group: Acme, Acme and Acme.\n\n"
        "# Investment\n\nAcme capital expenditures were $5 million in 2023, for new plants.\n\n"
        "# People\n\nAcme employees work in Acme offices; Acme's staff of Acme grew.")
    for i in range(6):
        (tmp_path / f"other{i}.txt").write_text(
            f"Company {i} reported capital expenditures on machinery and capital expenditures on land in {2010 + i}.")
    ingest(sorted(tmp_path.glob("*.*")), tmp_path / "index")
    corpus = Corpus(tmp_path / "index")
    query = "Acme capital expenditures"
    inside = corpus.search_text(query, doc_id="acme")
    assert [hit["section"] for hit in inside][:1] == ["Investment"] and len(inside) == 3
    assert corpus.search_text(query)[0]["section"] == "Overview"


def test_fetch_section_matches_titles_fuzzily_and_respects_the_budget(small_corpus):
    section = small_corpus.fetch_section("report", "note 3 revenue")
    assert section["title"].startswith("Note 3") and "control of the goods" in section["text"]
    assert section["text"].startswith("[p. 1]")
    notes = small_corpus.fetch_section("report", "Notes")
    assert [sub["title"] for sub in notes["subsections"]][0].startswith("Note 3")
    small = small_corpus.fetch_section("report", "Segment Results", max_tokens=10)
    assert small["truncated"] and len(small["text"]) == 40
    with pytest.raises(ValueError, match="no section 'Item 99'.*Segment Results"):
        small_corpus.fetch_section("report", "Item 99")


def test_neighbors_walk_the_layers_and_cross_references(small_corpus):
    hit = small_corpus.search_text("see Note 3 accounting policy", doc_id="report")[0]
    around = small_corpus.neighbors(hit["node_id"])
    relations = {(n["relation"], n["kind"]) for n in around}
    assert ("parent", "section") in relations
    referenced = [n for n in around if n["relation"] == "references"]
    assert referenced and referenced[0]["title"].startswith("Note 3")
    note = small_corpus.neighbors(referenced[0]["node_id"])
    assert any(n["relation"] == "referenced_by" and n["node_id"] == hit["node_id"] for n in note)
    assert any(n["relation"] == "contains" for n in note)
    sentence = next(n for n in small_corpus.neighbors(note[-1]["node_id"]) if n["kind"] == "sentence")
    assert small_corpus.neighbors(sentence["node_id"])[0]["relation"] == "parent"
    table = small_corpus.search_text("Consumer Enterprise Total revenue", doc_id="report")[0]
    rows = [n for n in small_corpus.neighbors(table["node_id"]) if n["kind"] == "row"]
    assert [r["title"] for r in rows] == ["Consumer", "Enterprise", "Total revenue"]
    assert small_corpus.neighbors(rows[1]["node_id"])[1:] == [
        {**rows[0], "relation": "previous"}, {**rows[2], "relation": "next"}]
    with pytest.raises(ValueError, match="unknown node id"):
        small_corpus.neighbors("chapter:1")


def test_annotations_search_matches_labels_lexically_and_by_meaning(small_corpus):
    assert small_corpus.annotations_search("qty")[0]["label"] == "Quantity"
    tires = small_corpus.annotations_search("tires", bucket="invoices")
    assert {row["label"] for row in tires[:2]} == {"All-season tires", "Winter tires"}
    assert all(row["page"] == 1 and row["file"].startswith("inv") for row in tires)
    consumer = small_corpus.annotations_search("Consumer", doc_id="report")[0]
    assert consumer["value"] == 1250 and consumer["fields"] == {"2023": "1,250", "2022": "1,100"}
    only_2023 = small_corpus.annotations_search("tires", bucket="invoices", filters={"year": 2023})
    assert {row["doc_id"] for row in only_2023} == {"inv1"}


def test_annotations_search_cuts_the_ranking_after_top_k_best_label_first_then_document_order(real_corpus):
    everything = real_corpus.annotations_search("net sales", top_k=1000)
    assert len({row["score"] for row in everything}) > 1 and len(everything) > 20
    scores = [row["score"] for row in everything]
    assert scores == sorted(scores, reverse=True)
    for label in {row["label"] for row in everything}:
        keys = [(row["doc_id"], row["page"], int(row["annotation_id"][4:])) for row in everything if row["label"] == label]
        assert keys == sorted(keys), label
    assert real_corpus.annotations_search("net sales", top_k=20) == everything[:20]


def test_annotations_aggregate_sums_a_column_with_groups(small_corpus):
    total = small_corpus.annotations_aggregate("tires", "sum", bucket="invoices", field="Amount")
    assert total["value"] == pytest.approx(740.0) and total["n"] == 2
    grouped = small_corpus.annotations_aggregate("tires", "sum", group_by="doc_id", bucket="invoices", field="amount")
    assert {g["group"]: g["value"] for g in grouped["groups"]} == {"inv1": 480.0, "inv2": 260.0}
    assert small_corpus.annotations_aggregate("tires", "count", bucket="invoices")["value"] == 2
    with pytest.raises(ValueError, match="unknown op 'median'"):
        small_corpus.annotations_aggregate("tires", "median")


def test_an_aggregate_covers_every_matching_label_however_many(tmp_path):
    from ferret.corpus.ingest import ingest
    from ferret.corpus.tools import LABEL_CANDIDATES, Corpus

    n = LABEL_CANDIDATES + 10
    (tmp_path / "cables.txt").write_text("Cable list\n\n" + "\n".join(f"Cable type K{i}: {i} m" for i in range(n)))
    ingest([tmp_path / "cables.txt"], tmp_path / "index")
    corpus = Corpus(tmp_path / "index")
    assert corpus.annotations_aggregate("cable", "count")["value"] == len(corpus.annotation_rows("cable")) == n


def test_a_label_search_in_one_document_picks_among_that_documents_labels(tmp_path):
    from ferret.corpus.ingest import ingest
    from ferret.corpus.tools import LABEL_CANDIDATES, Corpus

    # more documents whose labels match the query better than the one document's own label does
    for i in range(LABEL_CANDIDATES + 10):
        (tmp_path / f"other{i}.txt").write_text(f"Report {i}\n\nTotal operating income K{i}: {i} m")
    (tmp_path / "target.txt").write_text("Report\n\nOperating result: 302 m")
    ingest(sorted(tmp_path.glob("*.txt")), tmp_path / "index")
    corpus = Corpus(tmp_path / "index")
    target = next(doc_id for doc_id in corpus.doc_ids if "target" in corpus.file_of(doc_id))
    found = corpus.annotations_search("What was the change in total operating income?", doc_id=target)
    assert [hit["label"] for hit in found] == ["Operating result"]


def test_a_bucket_metadata_field_wins_over_the_document_column_of_its_name(tmp_path):
    from ferret.corpus.ingest import ingest
    from ferret.corpus.tools import Corpus

    for name in ("c1", "c2"):
        (tmp_path / f"{name}.txt").write_text("Termination. Either party may terminate on notice.")
    (tmp_path / "meta.jsonl").write_text('{"file": "c1.txt", "title": "Maintenance Agreement"}\n'
                                         '{"file": "c2.txt", "title": "Supply Agreement"}\n')
    ingest([tmp_path / "c1.txt", tmp_path / "c2.txt"], tmp_path / "index", bucket="contracts",
           metadata_file=tmp_path / "meta.jsonl")
    hits = Corpus(tmp_path / "index").search_text("terminate", bucket="contracts",
                                                  filters={"title": {"contains": "maintenance"}})
    assert {hit["doc_id"] for hit in hits} == {"c1"}


def test_export_annotations_csv_writes_every_match(small_corpus, tmp_path):
    out = small_corpus.export_annotations_csv("tires", str(tmp_path / "tires.csv"), bucket="invoices")
    with open(out["path"]) as handle:
        rows = list(csv.DictReader(handle))
    assert out["rows"] == len(rows) == 2
    assert {row["label"]: row["Amount"] for row in rows} == {"All-season tires": "480.00", "Winter tires": "260.00"}


def test_tools_are_usable_as_dspy_tools(small_corpus):
    tools = [dspy.Tool(tool) for tool in small_corpus.tools()]
    names = {tool.name for tool in tools}
    assert names == {"search_text", "search_semantic", "fetch_section", "get_document_metadata", "neighbors",
                     "annotations_search", "annotations_aggregate", "export_annotations_csv"}
    search = next(tool for tool in tools if tool.name == "search_text")
    assert "query" in search.args and "filters" in search.args
    assert search(query="Total revenue", doc_id="report")[0]["doc_id"] == "report"


def test_cli_search_json(small_corpus, capsys):
    from ferret.cli import main

    assert main(["search", "Total revenue", "--index", str(small_corpus.store.dir), "--mode", "text", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert hits and set(hits[0]) >= {"doc_id", "file", "page", "section", "text", "score"}
    assert main(["search", "x", "--index", str(small_corpus.store.dir), "--filters", '{"nope": 1}']) == 2
    assert "unknown filter field 'nope'" in capsys.readouterr().err


def test_real_table_rows_become_annotations_on_their_page(real_corpus):
    """Ulta's Q4 2023 release: the income statement row 'Net sales' lands on a page that prints it."""
    rows = real_corpus.annotations_search("Net sales", doc_id="ULTABEAUTY_2023Q4_EARNINGS")
    assert rows
    for row in rows[:3]:
        page = real_corpus.store.conn.execute("SELECT text FROM pages WHERE doc_id = ? AND page = ?",
                                              (row["doc_id"], row["page"])).fetchone()[0]
        assert row["label"] in page and row["value_text"] in page


def test_financebench_evidence_row_lands_on_its_evidence_page(real_corpus):
    """FinanceBench: Amcor's FY2023 adjusted EBITDA, $2,018mn, is evidenced on 0-based page 11 → page 12."""
    rows = real_corpus.annotations_search("Adjusted EBITDA", doc_id="AMCOR_2023Q4_EARNINGS", top_k=10)
    on_page = [row for row in rows if row["page"] == 12 and row["label"] == "Adjusted EBITDA"]
    assert on_page and "2,018" in on_page[0]["fields"].values()


def test_hybrid_fusion_sums_min_max_normalised_scores():
    from ferret.corpus.tools import _fuse

    lexical = [(1, 10.0), (2, 6.0), (3, 5.0)]  # BM25: row 1 stands out
    semantic = [(4, 0.9), (3, 0.6), (2, 0.5)]  # cosine: row 4 stands out
    # Each ranking onto [0, 1] by its own lowest and highest score, summed: the top of either ranking comes
    # before rows in the middle of both (reciprocal rank fusion would put 2 and 3, found by both, first).
    fused = _fuse([lexical, semantic], 4)
    assert [row for row, _ in fused] == [1, 4, 3, 2]
    assert [score for _, score in fused] == pytest.approx([1.0, 1.0, 0.25, 0.2])
    # The scale of a ranking's scores does not matter, only how far apart they are.
    scaled = _fuse([[(row, 100 * score) for row, score in lexical], semantic], 4)
    assert [row for row, _ in scaled] == [1, 4, 3, 2] and [score for _, score in scaled] == pytest.approx([1.0, 1.0, 0.25, 0.2])
    assert _fuse([lexical, semantic], 2) == fused[:2]
    # A ranking whose scores are all equal gives each of its rows 1; an empty one gives nothing.
    assert _fuse([[(7, 3.0), (8, 3.0)], []], 5) == [(7, 1.0), (8, 1.0)]
