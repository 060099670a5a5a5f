"""Shards: an ingest writes only what it adds, replaced and removed documents stop being found, a
compaction merges the shards without changing any search, and an index of the older layout opens."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from ferret.corpus.bench import grow_index
from ferret.corpus.ingest import ingest, remove
from ferret.corpus.shards import compact
from ferret.corpus.store import Store
from ferret.corpus.tools import Corpus
from tests.conftest import RECEIPTS, REPORT

SEARCHES = ["tire prices", "segment revenue", "batteries", "revenue recognition policy", "valve caps"]


def searched(corpus: Corpus) -> list:
    return [[corpus.search_text(query, top_k=5), corpus.search_semantic(query, top_k=5),
             corpus.search_text(query, top_k=5, hybrid=True, bucket="invoices"), corpus.annotations_search(query)]
            for query in SEARCHES]


@pytest.fixture
def docs(tmp_path):
    (tmp_path / "report.md").write_text(REPORT)
    for name, text in RECEIPTS.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def shard_ids(index, number: int) -> list[int]:
    return np.load(Store(index).shard_dir(number) / "segments" / "ids.npy").tolist()


def test_each_commit_writes_a_shard_of_only_the_segments_it_adds(docs):
    index = docs / "index"
    ingest([docs / "report.md"], index, bucket="reports")
    ingest([docs / "inv1.txt", docs / "inv2.txt"], index, bucket="invoices", commit_pages=1)
    store = Store(index)
    assert len(store.shards) == 3 and sorted(p.name for p in index.glob("shard-*")) == \
        sorted(f"shard-{n}" for n in store.shards)
    for number, doc_id in zip(store.shards, ["report", "inv1", "inv2"]):
        stored = [row[0] for row in store.conn.execute("SELECT id FROM segments WHERE doc_id = ? ORDER BY id", (doc_id,))]
        assert shard_ids(index, number) == stored
    hits = Corpus(index).search_text("tires", top_k=10)
    assert {hit["doc_id"] for hit in hits} == {"inv1", "inv2"}


def test_a_replaced_document_is_found_only_in_its_new_version_and_an_emptied_shard_goes(docs):
    index = docs / "index"
    ingest([docs / "report.md", docs / "inv1.txt"], index, commit_pages=1)
    first = Store(index).shards
    corpus = Corpus(index)
    (docs / "inv1.txt").write_text("Receipt INV-1\n\nSnow chains from Boreas for the winter.\n")  # no label kept
    assert ingest([docs / "inv1.txt"], index).replaced == ["inv1"]
    shards = Store(index).shards
    assert shards[0] == first[0] and first[1] not in shards and not Store(index).shard_dir(first[1]).exists()
    assert corpus.search_text("valve caps") == [] and corpus.search_text("snow chains")[0]["doc_id"] == "inv1"
    assert all(hit["doc_id"] == "report" or "Boreas" in hit["text"] or "chains" in hit["text"]
               for hit in corpus.search_semantic("tires", top_k=10))

    (docs / "report.md").write_text(REPORT.replace("Consumer", "Retail"))  # the report's old rows die, its shard stays
    ingest([docs / "report.md"], index)
    assert corpus.search_text("consumer") == [] and corpus.search_text("retail")[0]["doc_id"] == "report"
    assert len(corpus.segments.ids) > len(corpus.segments.live_ids())
    live = corpus.store.conn.execute("SELECT id FROM segments ORDER BY id").fetchall()
    assert sorted(corpus.segments.live_ids().tolist()) == [row[0] for row in live]


def test_compaction_merges_every_shard_into_one_and_changes_no_search(docs):
    index = docs / "index"
    ingest([docs / "report.md"], index, bucket="reports")
    ingest([docs / "inv1.txt", docs / "inv2.txt"], index, bucket="invoices", commit_pages=1)
    (docs / "inv2.txt").write_text(RECEIPTS["inv2.txt"].replace("Car batteries", "Truck batteries"))
    ingest([docs / "inv2.txt"], index, bucket="invoices")
    corpus = Corpus(index)
    before, dead = searched(corpus), len(corpus.segments.ids) - len(corpus.segments.live_ids())
    assert dead > 0 and len(Store(index).shards) == 4  # inv2's first shard still holds its labels

    result = compact(index)
    assert (result["shards_before"], result["shards_after"]) == (4, 1)
    assert [p.name for p in index.glob("shard-*")] == [f"shard-{Store(index).shards[0]}"]
    assert searched(corpus) == before  # the open handle reloads the new state
    assert len(corpus.segments.ids) == len(corpus.segments.live_ids())
    assert ingest([docs / "inv2.txt"], index, bucket="invoices").unchanged == ["inv2"]


def test_an_index_without_its_shards_is_rebuilt_from_the_database_on_opening(docs):
    """As an index of the older layout (gen-N/ folders, no shard list) or one whose files were lost."""
    index = docs / "index"
    ingest([docs / "report.md", docs / "inv1.txt"], index, bucket="invoices", commit_pages=1)
    before = searched(Corpus(index))
    store = Store(index)
    for number in store.shards:
        store.shard_dir(number).rename(index / f"gen-{number}")
    store.conn.execute("DELETE FROM meta WHERE key = 'shards'")
    store.conn.execute("UPDATE segments SET shard = NULL")
    assert searched(Corpus(index)) == before
    assert len(Store(index).shards) == 1 and not list(index.glob("gen-*"))


def test_removed_documents_leave_every_search_and_an_unknown_id_removes_nothing(docs, capsys):
    from ferret.cli import main

    index = docs / "index"
    ingest([docs / "report.md", docs / "inv1.txt", docs / "inv2.txt"], index)
    corpus = Corpus(index)
    assert main(["remove", "inv1", "nope", "--index", str(index)]) == 2
    assert capsys.readouterr().err == f"ferret: error: not in {index}: nope\n"
    assert corpus.search_text("valve caps")[0]["doc_id"] == "inv1"

    assert main(["remove", "inv1", "--index", str(index)]) == 0
    assert corpus.search_text("valve caps") == []
    assert all(hit["doc_id"] != "inv1" for hit in corpus.search_semantic("tires", top_k=20))
    assert all(row["doc_id"] != "inv1" for row in corpus.annotations_search("amount"))
    assert corpus.store.conn.execute("SELECT COUNT(*) FROM documents WHERE doc_id = 'inv1'").fetchone()[0] == 0
    assert main(["compact", "--index", str(index), "--json"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["shards_after"] == 1
    assert corpus.search_text("batteries")[0]["doc_id"] == "inv2" and corpus.search_text("valve caps") == []
    assert ingest([docs / "inv1.txt"], index).added == ["inv1"]
    assert corpus.search_text("valve caps")[0]["doc_id"] == "inv1"


def test_bench_add_times_a_file_into_an_empty_index_and_onto_the_index_and_leaves_the_index_as_it_was(docs, capsys):
    from ferret.cli import main

    index = docs / "index"
    ingest([docs / "report.md", docs / "inv1.txt"], index)
    documents = [row[0] for row in Store(index).conn.execute("SELECT doc_id FROM documents ORDER BY doc_id")]
    before = Corpus(index).search_text("batteries")
    assert main(["bench", "add", str(docs / "inv2.txt"), "--index", str(index), "--json"]) == 0
    result = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert result["index_segments"] == Store(index).conn.execute("SELECT COUNT(*) FROM segments").fetchone()[0]
    for run in (result["empty_index"], result["onto_index"]):
        assert run["pages"] == 1 and run["segments"] > 0 and run["seconds"] > 0
    assert result["empty_index"]["segments"] == result["onto_index"]["segments"] and result["ratio"] > 0
    assert [row[0] for row in Store(index).conn.execute("SELECT doc_id FROM documents ORDER BY doc_id")] == documents
    assert Corpus(index).search_text("batteries") == before == []


def test_bench_grow_copies_every_document_with_its_rows_and_one_shard_a_copy(docs, capsys):
    from ferret.cli import main

    index = docs / "index"
    ingest([docs / "report.md", docs / "inv1.txt", docs / "inv2.txt"], index)
    store = Store(index)
    counts = {table: store.conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
              for table in ("documents", "pages", "sections", "segments", "annotations", "edges")}
    assert counts["edges"] > 0 and counts["annotations"] > 0
    assert main(["bench", "grow", "--index", str(index), "--copies", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["segments"] == 3 * counts["segments"]
    for table, count in counts.items():
        assert store.conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == 3 * count, table
    assert len(store.shards) == 3
    corpus = Corpus(index)
    hits = corpus.search_text("valve caps", top_k=10)
    assert len(hits) == 3 and {hit["doc_id"].split("-")[-1] for hit in hits} == {"inv1"}
    assert len({hit["text"] for hit in hits}) == 1 and len({hit["score"] for hit in hits}) == 1
    misplaced = store.conn.execute(
        "SELECT COUNT(*) FROM annotations a JOIN segments s ON s.id = a.segment_id WHERE s.doc_id != a.doc_id").fetchone()[0]
    dangling = store.conn.execute(
        "SELECT COUNT(*) FROM edges e LEFT JOIN segments s ON 'seg:' || s.id = e.src "
        "WHERE s.id IS NULL OR s.doc_id != e.doc_id OR e.dst NOT LIKE 'sec:' || e.doc_id || ':%'").fetchone()[0]
    assert (misplaced, dangling) == (0, 0)  # a copy's annotations and edges are on the copy's own segments


def test_bench_grow_copies_a_long_documents_chunks_and_their_summaries_are_searched(long_report, tmp_path):
    index = tmp_path / "index"
    shutil.copytree(long_report, index)
    chunks = Store(index).conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
    assert chunks == 4
    grow_index(str(index), 1)
    store = Store(index)
    rows = store.conn.execute("SELECT doc_id, ord, first_segment, last_segment, summary FROM chunks ORDER BY doc_id, ord").fetchall()
    copies = [tuple(row)[1:] for row in rows if row["doc_id"] != "report"]
    assert len(rows) == 2 * chunks and copies == [tuple(row)[1:] for row in rows if row["doc_id"] == "report"]
    assert store.conn.execute("SELECT COUNT(*) FROM chunks WHERE shard IS NULL").fetchone()[0] == 0
    hits = Corpus(index).search_text("cybersecurity incidents", scope="summary", top_k=2)
    assert {hit["doc_id"].split("-")[-1] for hit in hits} == {"report"} and len({hit["doc_id"] for hit in hits}) == 2


def test_bench_pages_writes_distinct_word_windows_that_ingest_as_one_segment_a_page(docs, capsys):
    from ferret.cli import main

    index, out = docs / "index", docs / "pages"
    ingest([docs / "report.md", docs / "inv1.txt", docs / "inv2.txt"], index)
    assert main(["bench", "pages", "--from", str(index), "--pages", "30", "--words", "5", "--stride", "2",
                 "--out", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["files"] == 1
    pages = (out / "pages-00000.txt").read_text().split("\f")
    assert len(pages) == len(set(pages)) == 30 and max(len(page.split()) for page in pages) == 5
    texts = " ".join(row[0] for row in Store(index).conn.execute("SELECT text FROM segments ORDER BY id"))
    assert all(page in " ".join(texts.split()) for page in pages)
    report = ingest([out / "pages-00000.txt"], docs / "pages-index")
    assert (report.pages, report.segments) == (30, 30)
    assert len({row[0] for row in Store(docs / "pages-index").conn.execute("SELECT text FROM segments")}) == 30
    assert main(["bench", "pages", "--from", str(index), "--pages", "100000", "--out", str(docs / "more")]) == 2
    assert "not 100000" in capsys.readouterr().err and not (docs / "more").exists()
