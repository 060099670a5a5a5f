"""Ingestion: real PDFs, bad inputs, idempotency, replacement, crash safety, metadata and passages."""
from __future__ import annotations

import fcntl
import json
import subprocess
import sys
from pathlib import Path

import pypdf
import pytest

from ferret.corpus import ingest as ingest_module
from ferret.corpus import shards as shards_module
from ferret.corpus.ingest import ingest, ingest_bucket_folder
from ferret.corpus.passages import without_title
from ferret.corpus.pdf import IngestError
from ferret.corpus.store import Store
from ferret.corpus.tools import Corpus
from tests.conftest import INDEX_PDFS, SHARED_DATA, shared
from tests.fakes import sigterm_left_to_ferret, stop_with_sigterm


def test_page_counts_equal_pypdf(real_corpus, pdf):
    for name in INDEX_PDFS:
        expected = len(pypdf.PdfReader(pdf(name)).pages)
        assert real_corpus.get_document_metadata(name)["pages"] == expected
        stored = real_corpus.store.conn.execute("SELECT COUNT(*), MIN(page), MAX(page) FROM pages WHERE doc_id = ?",
                                                (name,)).fetchone()
        assert tuple(stored) == (expected, 1, expected)


def test_evidence_texts_find_their_page_in_top5(real_corpus, financebench):
    """FinanceBench evidence text (0-based page in the file) → search_text finds the 1-based page in the top 5."""
    found = total = 0
    for line in (financebench / "financebench_open_source.jsonl").read_text().splitlines():
        record = json.loads(line)
        for evidence in record["evidence"]:
            if evidence["doc_name"] not in INDEX_PDFS:
                continue
            hits = real_corpus.search_text(evidence["evidence_text"], doc_id=evidence["doc_name"], top_k=5)
            total += 1
            found += any(hit["page"] == evidence["evidence_page_num"] + 1 for hit in hits)
    assert total >= 10
    assert found / total >= 0.8, f"evidence page in top 5 for {found}/{total}"


def test_hits_carry_provenance(real_corpus):
    hits = real_corpus.search_text("net sales comparable sales", top_k=5)
    assert hits
    for hit in hits:
        assert set(hit) >= {"doc_id", "file", "page", "section", "text", "score", "node_id"}
        assert hit["file"].endswith(".pdf") and hit["page"] >= 1
        page_text = real_corpus.store.conn.execute("SELECT text FROM pages WHERE doc_id = ? AND page = ?",
                                                   (hit["doc_id"], hit["page"])).fetchone()[0]
        assert hit["text"].strip("…")[:60] in page_text


def test_ten_k_has_a_section_tree(real_corpus):
    sections = real_corpus.section_index("COSTCO_2021_10K")
    assert len(sections) > 10
    titles = [s["title"].lower() for s in sections]
    assert any(t.startswith("item 7") for t in titles) and any(t.startswith("item 8") for t in titles)
    for section in sections:
        assert 1 <= section["pages"][0] <= section["pages"][1] <= 76


def _pdf_bytes_with(writer: pypdf.PdfWriter) -> bytes:
    import io

    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def test_bad_pdfs_get_one_clear_error_each_and_the_rest_ingests(tmp_path, pdf):
    good = pdf("FOOTLOCKER_2022_8K_dated-2022-05-20")
    (tmp_path / "truncated.pdf").write_bytes(good.read_bytes()[:3000])
    (tmp_path / "garbage.pdf").write_bytes(b"%PDF-1.7\n" + b"\x00not really a pdf\xff" * 50)
    (tmp_path / "notes.pdf").write_text("just some text, not a PDF at all")
    (tmp_path / "empty.pdf").write_bytes(b"")
    encrypted = pypdf.PdfWriter(clone_from=good)
    encrypted.encrypt("secret", algorithm="AES-128")
    (tmp_path / "locked.pdf").write_bytes(_pdf_bytes_with(encrypted))
    blank = pypdf.PdfWriter()
    blank.add_blank_page(612, 792)
    (tmp_path / "scan.pdf").write_bytes(_pdf_bytes_with(blank))
    (tmp_path / "good.pdf").write_bytes(good.read_bytes())

    report = ingest([tmp_path], tmp_path / "index")

    assert report.added == ["good"]
    reasons = {error.file.split("/")[-1]: error.reason for error in report.errors}
    assert set(reasons) == {"truncated.pdf", "garbage.pdf", "notes.pdf", "empty.pdf", "locked.pdf", "scan.pdf"}
    assert "corrupt" in reasons["truncated.pdf"] and "corrupt" in reasons["garbage.pdf"]
    assert "not a PDF" in reasons["notes.pdf"] and "empty" in reasons["empty.pdf"]
    assert "encrypted" in reasons["locked.pdf"] and "image-only" in reasons["scan.pdf"]
    for error in report.errors:
        assert "\n" not in str(error) and str(error).startswith(error.file.split("/")[-1])


def test_cli_exit_codes(tmp_path, capsys):
    from ferret.cli import main

    (tmp_path / "bad.pdf").write_text("nope")
    assert main(["ingest", str(tmp_path / "bad.pdf"), "--index", str(tmp_path / "i")]) == 1
    assert "bad.pdf: not a PDF" in capsys.readouterr().err
    (tmp_path / "ok.md").write_text("# Title\n\nSome text about turbines.")
    assert main(["ingest", str(tmp_path / "bad.pdf"), str(tmp_path / "ok.md"), "--index", str(tmp_path / "i")]) == 0


def test_reingest_is_idempotent_and_a_changed_file_replaces_its_old_version(tmp_path):
    doc = tmp_path / "memo.md"
    doc.write_text("# Memo\n\nThe turbine contract was signed with Zephyr Ltd in March.")
    index = tmp_path / "index"
    assert ingest([doc], index).added == ["memo"]
    generation = Store(index).generation
    again = ingest([doc], index)
    assert again.unchanged == ["memo"] and not again.added and Store(index).generation == generation

    doc.write_text("# Memo\n\nThe contract moved to Boreas GmbH in April.")
    assert ingest([doc], index).replaced == ["memo"]
    corpus = Corpus(index)
    assert corpus.search_text("Boreas")[0]["doc_id"] == "memo"
    assert corpus.search_text("Zephyr") == []
    assert corpus.store.conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0] == 1


def test_crash_mid_ingest_leaves_previous_index_intact(tmp_path, monkeypatch):
    first, second = tmp_path / "a.md", tmp_path / "b.md"
    first.write_text("# Alpha\n\nPhotovoltaic panels from Helios.")
    second.write_text("# Beta\n\nLead-acid batteries from Volta.")
    index = tmp_path / "index"
    ingest([first], index)
    before = Corpus(index).search_text("photovoltaic panels")

    def crash(*args, **kwargs):
        raise KeyboardInterrupt("power cut while building indexes")

    monkeypatch.setattr(shards_module, "write_shard", crash)
    with pytest.raises(KeyboardInterrupt):
        ingest([second], index)
    monkeypatch.undo()

    corpus = Corpus(index)
    assert corpus.search_text("photovoltaic panels") == before
    assert corpus.search_text("batteries") == []
    assert [row[0] for row in corpus.store.conn.execute("SELECT doc_id FROM documents")] == ["a"]
    assert ingest([second], index).added == ["b"]
    assert Corpus(index).search_text("batteries")[0]["doc_id"] == "b"


def test_a_stopped_ferret_ingest_says_what_it_kept_and_the_rerun_does_not_embed_again(tmp_path, monkeypatch, capsys):
    from ferret.cli import main

    first, second = tmp_path / "a.md", tmp_path / "b.md"
    first.write_text("# Alpha\n\nPhotovoltaic panels from Helios.")
    second.write_text("# Beta\n\nLead-acid batteries from Volta.")
    index = tmp_path / "index"
    ingest([first], index)
    monkeypatch.setattr(shards_module, "write_shard", lambda *args, **kwargs: stop_with_sigterm("ingest"))
    with sigterm_left_to_ferret():
        assert main(["ingest", str(second), "--index", str(index)]) == 130
    assert capsys.readouterr().err == (
        "ferret: stopped by signal SIGTERM: no document was committed, the index is as it was; the same command "
        "again skips them and the segment vectors embedded so far\n")
    monkeypatch.undo()
    assert [row[0] for row in Corpus(index).store.conn.execute("SELECT doc_id FROM documents")] == ["a"]

    embedder, embedded = ingest_module.get_embedder(), []

    class Counting:
        name = embedder.name

        def __call__(self, texts):
            embedded.extend(texts)
            return embedder(texts)

    monkeypatch.setattr(ingest_module, "get_embedder", lambda spec=None: Counting())
    assert main(["ingest", str(second), "--index", str(index)]) == 0
    assert embedded == [] and Corpus(index).search_text("batteries")[0]["doc_id"] == "b"


def test_metadata_is_typed_per_bucket_and_filters_search(tmp_path):
    for name, vendor in (("r1", "Acme Tire Co."), ("r2", "Volta Batteries"), ("r3", "Acme Tire Co.")):
        (tmp_path / f"{name}.txt").write_text(f"Receipt from {vendor}\n\nItem: tires and batteries for the fleet.")
    (tmp_path / "meta.jsonl").write_text("\n".join(json.dumps(m) for m in [
        {"file": "r1.txt", "vendor": "Acme Tire Co.", "total": 480.0, "date": "2023-03-02"},
        {"file": "r2.txt", "vendor": "Volta Batteries", "total": 1250.5, "date": "2023-07-15"},
        {"file": "r3.txt", "vendor": "Acme Tire Co.", "total": 1900, "date": "2022-11-30"},
    ]))
    index = tmp_path / "index"
    ingest([tmp_path / f"r{i}.txt" for i in (1, 2, 3)], index, bucket="invoices", metadata_file=tmp_path / "meta.jsonl")
    corpus = Corpus(index)
    assert corpus.schemas["invoices"] == {"date": "date", "total": "number", "vendor": "text"}
    assert corpus.get_document_metadata("r2")["metadata"]["total"] == 1250.5

    def docs(**kwargs):
        return sorted({hit["doc_id"] for hit in corpus.search_text("tires batteries", bucket="invoices", **kwargs)})

    assert docs() == ["r1", "r2", "r3"]
    assert docs(filters={"total": {">=": 1000}}) == ["r2", "r3"]
    assert docs(filters={"vendor": {"like": "acme%"}, "date": {"between": ["2023-01", "2023-12"]}}) == ["r1"]
    assert docs(filters='{"vendor": "x\' OR \'1\'=\'1"}') == []
    with pytest.raises(ValueError, match="unknown filter field 'colour'"):
        docs(filters={"colour": "red"})
    with pytest.raises(ValueError, match="unknown bucket 'contracts'"):
        corpus.search_text("tires", bucket="contracts")


def test_a_bucket_folder_ingests_with_its_metadata_which_is_not_a_document(tmp_path):
    folder = tmp_path / "invoices"
    folder.mkdir()
    (folder / "r1.txt").write_text("Receipt from Acme\n\nItem: tires for the fleet.")
    (folder / "metadata.jsonl").write_text('{"file": "r1.txt", "vendor": "Acme", "total": 480.0}\n')
    report = ingest_bucket_folder(folder, tmp_path / "index")
    assert report.added == ["r1"] and not report.errors
    corpus = Corpus(tmp_path / "index")
    assert corpus.doc_ids == ["r1"] and corpus.schemas == {"invoices": {"total": "number", "vendor": "text"}}


def test_bad_metadata_names_file_and_line_and_stores_nothing(tmp_path):
    doc = tmp_path / "r1.txt"
    doc.write_text("Receipt for tires")
    index = tmp_path / "index"
    ingest([doc], index)
    (tmp_path / "meta.jsonl").write_text('{"file": "r1.txt", "total": 1}\n{"file": "r1.txt", "total": ')
    with pytest.raises(IngestError, match=r"meta.jsonl: line 2: invalid JSON"):
        ingest([doc], index, metadata_file=tmp_path / "meta.jsonl")
    assert Corpus(index).get_document_metadata("r1")["metadata"] == {}


def test_passage_collections_ingest_as_they_are(tmp_path):
    hotpot = json.loads(shared(SHARED_DATA / "hotpotqa" / "hotpotqa_train_corpus.json").read_text())
    titles = list(hotpot)[:20]
    (tmp_path / "hotpot.json").write_text(json.dumps({title: hotpot[title] for title in titles}))
    tatqa = json.loads(shared(SHARED_DATA / "tatqa" / "tatqa_dataset_dev.json").read_text())[:2]
    (tmp_path / "tatqa.json").write_text(json.dumps(tatqa))
    (tmp_path / "notes.jsonl").write_text('{"id": "n1", "title": "Note one", "text": "Quantity: 12"}\n')
    index = tmp_path / "index"
    report = ingest([tmp_path], index, bucket="passages")
    assert not report.errors and len(report.added) == 20 + 2 + 1
    corpus = Corpus(index)
    assert set(titles) <= set(corpus.doc_ids)
    first = titles[0]
    assert corpus.search_text(" ".join(hotpot[first])[:200], top_k=1)[0]["doc_id"] == first
    uid = tatqa[0]["table"]["uid"]
    assert corpus.get_document_metadata(uid)["kind"] == "passage"
    total = corpus.annotations_search("Total sales", doc_id=uid)[0]
    assert (total["label"], total["value"], total["value_text"]) == ("Total sales", 1496.5, "$1,496.5")
    assert total["fields"]["Years Ended September 30, 2018"] == "$1,202.9"
    assert corpus.annotations_search("qty")[0]["label"] == "Quantity"
    # the title printed above a passage's text is its first line, and `without_title` takes it off
    page = corpus.page_text("n1", 1)
    assert page.startswith("Note one\n") and without_title(page, "Note one") == "Quantity: 12"
    assert without_title(page, "Note two") == page and without_title("Quantity: 12", "Quantity: 12") == "Quantity: 12"


def test_a_grid_cells_own_spaces_do_not_split_it_into_two_columns(tmp_path):
    """TAT-QA prints "2019  $’000" in one header cell: it stays that column's header, not "2019" and a "$’000"
    that takes the 2019 column's place."""
    context = {"table": {"uid": "t1", "table": [["", "2019  $’000", "2018 $’000"], ["Gross profit", "52,963", "45,139"],
                                     ["EBITDA", "7,202", "10,878"]]},
               "paragraphs": [{"uid": "p1", "order": 1, "text": "Results of the year."}], "questions": []}
    (tmp_path / "contexts.json").write_text(json.dumps([context]))
    ingest([tmp_path / "contexts.json"], tmp_path / "index")
    row = Corpus(tmp_path / "index").page_cells("t1", 1)[0]
    assert [(header, printed) for header, printed, _ in row["cells"]] == [("2019 $’000", "52,963"), ("2018 $’000", "45,139")]


def test_a_rows_group_is_stored_and_an_index_stored_without_groups_opens_with_its_rows_kept(tmp_path, caplog):
    context = {"table": {"uid": "t1", "table": [["", "2019", "2018"], ["Net income", "206,587", "254,127"],
                                                ["Weighted-average shares outstanding:", "", ""],
                                                ["Basic", "57,840", "52,798"], ["Diluted", "59,082", "58,640"]]},
               "paragraphs": [{"uid": "p1", "order": 1, "text": "Shares of the year."}], "questions": []}
    (tmp_path / "contexts.json").write_text(json.dumps([context]))
    index = tmp_path / "index"
    ingest([tmp_path / "contexts.json"], index)
    assert [(row["label"], row["group"]) for row in Corpus(index).page_cells("t1", 1)] == [
        ("Net income", ""), ("Basic", "Weighted-average shares outstanding"),
        ("Diluted", "Weighted-average shares outstanding")]
    store = Store(index)  # as an index written before rows had groups
    store.conn.execute("ALTER TABLE annotations DROP COLUMN row_group")
    store.close()
    assert [(row["label"], row["group"]) for row in Corpus(index).page_cells("t1", 1)] == [
        ("Net income", ""), ("Basic", ""), ("Diluted", "")]
    assert "written before table rows kept the line they are printed under" in caplog.text  # said once, on opening
    caplog.clear()
    Corpus(index)
    assert "written before" not in caplog.text


def test_a_second_ingest_into_one_index_waits_for_the_first_and_searches_see_the_last_commit(tmp_path):
    first, second = tmp_path / "a.md", tmp_path / "b.md"
    first.write_text("# Alpha\n\nPhotovoltaic panels from Helios.")
    second.write_text("# Beta\n\nLead-acid batteries from Volta.")
    index = tmp_path / "index"
    ingest([first], index)
    with open(index / "ingest.lock", "a") as held:  # another ingest holds the index
        fcntl.flock(held, fcntl.LOCK_EX)
        waiting = subprocess.Popen([sys.executable, "-m", "ferret", "ingest", str(second), "--index", str(index)],
                                   stderr=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[2])
        line = waiting.stderr.readline()
        while line and "waiting" not in line:
            line = waiting.stderr.readline()
        assert f"waiting for another ingest into {index} to finish" in line
        assert waiting.poll() is None and Corpus(index).search_text("batteries") == []
        assert Corpus(index).search_text("photovoltaic panels")[0]["doc_id"] == "a"
    assert waiting.wait(timeout=120) == 0
    assert [hit["doc_id"] for hit in Corpus(index).search_text("batteries")] == ["b"]
    assert Store(index).generation == 2


KILLED_AFTER_FIRST_COMMIT = """
import os, signal, sys
from ferret.corpus import ingest as module
commit = module._commit
def commit_then_die(*args, **kwargs):
    commit(*args, **kwargs)
    os.kill(os.getpid(), signal.SIGKILL)
module._commit = commit_then_die
module.ingest(sys.argv[2:], sys.argv[1], commit_pages=1)
"""


def test_an_ingest_commits_as_it_goes_and_after_kill_9_the_same_command_goes_on(tmp_path, capsys):
    from ferret.cli import main

    files = []
    for name, text in (("a", "Photovoltaic panels from Helios."), ("b", "Lead-acid batteries from Volta."),
                       ("c", "Winter tires from Boreas.")):
        files.append(tmp_path / f"{name}.md")
        files[-1].write_text(f"# {name}\n\n{text}")
    index = tmp_path / "index"
    killed = subprocess.run([sys.executable, "-c", KILLED_AFTER_FIRST_COMMIT, str(index), *map(str, files)],
                            cwd=Path(__file__).resolve().parents[2], capture_output=True, text=True, timeout=300)
    assert killed.returncode == -9, killed.stderr
    corpus = Corpus(index)  # the first batch is committed and searchable, the rest is not there
    assert [row[0] for row in corpus.store.conn.execute("SELECT doc_id FROM documents")] == ["a"]
    assert corpus.search_text("photovoltaic panels")[0]["doc_id"] == "a" and corpus.search_text("batteries") == []

    report = ingest(files, index, commit_pages=1)
    assert (report.unchanged, report.added, report.commits) == (["a"], ["b", "c"], 2)
    corpus = Corpus(index)
    assert [hit["doc_id"] for hit in corpus.search_text("batteries")] == ["b"]
    assert [hit["doc_id"] for hit in corpus.search_semantic("winter tires")][:1] == ["c"]
    stored = [row[0] for row in corpus.store.conn.execute("SELECT id FROM segments ORDER BY id")]
    assert sorted(int(i) for i in corpus.segments.live_ids()) == stored  # the index is whole: every segment searchable once
    assert main(["ingest", *map(str, files), "--index", str(index), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert (printed["unchanged"], printed["added"], printed["commits"]) == (["a", "b", "c"], [], 0)


def test_batches_hold_at_least_commit_pages(tmp_path):
    from ferret.corpus.records import ParsedDocument

    def doc(pages):
        return (ParsedDocument("d", "d.md", "text", "d", ["page"] * pages, "hash"), None, {})

    assert [len(batch) for batch in ingest_module._batches([doc(1) for _ in range(10)], 2)] == [2, 2, 2, 2, 2]
    assert [len(batch) for batch in ingest_module._batches([doc(3), doc(1), doc(1), doc(2)], 2)] == [1, 2, 1]
    assert ingest_module._batches([], 2) == []


def test_two_workers_parse_the_next_batch_while_this_one_is_indexed_and_build_what_one_process_builds(tmp_path, pdf,
                                                                                                       monkeypatch):
    names = ("FOOTLOCKER_2022_8K_dated-2022-05-20", "AMCOR_2022_8K_dated-2022-07-01", "AMCOR_2023Q4_EARNINGS")
    files = [pdf(name) for name in names]
    (tmp_path / "truncated.pdf").write_bytes(files[0].read_bytes()[:3000])
    files.insert(1, tmp_path / "truncated.pdf")
    events = []
    read, index = ingest_module._read_pdfs, ingest_module._index_batch
    monkeypatch.setattr(ingest_module, "_read_pdfs", lambda pending, *rest: events.append(
        ("read", [item.doc_id for item in pending])) or read(pending, *rest))
    monkeypatch.setattr(ingest_module, "_index_batch", lambda store, spec, model, documents, *rest: events.append(
        ("index", [doc.doc_id for doc, _, _ in documents])) or index(store, spec, model, documents, *rest))

    two = ingest(files, tmp_path / "two", workers=2, commit_pages=1)
    assert events == [("read", [names[0]]), ("read", [names[1]]), ("index", [names[0]]),
                      ("read", [names[2]]), ("index", [names[1]]), ("index", [names[2]])]
    one = ingest(files, tmp_path / "one", workers=1, commit_pages=1)
    assert two.added == one.added == list(names) and two.commits == one.commits == 3
    assert [(e.file, e.reason) for e in two.errors] == [(e.file, e.reason) for e in one.errors]
    assert [e.file.split("/")[-1] for e in two.errors] == ["truncated.pdf"]
    query = "SELECT doc_id, page, text FROM segments ORDER BY id"
    rows = Corpus(tmp_path / "two").store.conn.execute(query).fetchall()
    assert rows == Corpus(tmp_path / "one").store.conn.execute(query).fetchall() and len(rows) > 20
