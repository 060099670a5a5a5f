"""The sample corpus: a deterministic generator, committed output equal to a fresh generation, and
labels that hold against what ferret actually parses (one ingest of data/sample for the module)."""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pypdf
import pytest

from ferret.corpus.ingest import BUCKET_METADATA
from ferret.corpus.numbers import numbers_in, parse_number
from ferret.corpus.tools import Corpus
from ferret.data.annual_report import REPORT_ID
from ferret.data.sample_corpus import BUCKETS, CONTRACT_SPECS, PANEL_SPECS, TRANSISTOR_SPECS, build_invoices, generate
from ferret.optimizers.datasets import load_jsonl
from ferret.programs.verify import same_number

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"
KINDS = {"lookup", "compute", "list", "aggregate", "clause", "xref", "absent", "ambiguous", "overflow"}
STATUS_OF = {"absent": "fail", "ambiguous": "clarify", "overflow": "clarify"}
MINIMUM_PER_KIND = {"lookup": 10, "compute": 4, "list": 5, "aggregate": 4, "clause": 5, "xref": 3, "absent": 2,
                    "ambiguous": 2, "overflow": 1}
SCHEMAS = {
    "invoices": {"invoice_no": "text", "date": "date", "vendor": "text", "total": "number", "currency": "text"},
    "datasheets": {"model": "text", "product": "text", "manufacturer": "text", "width_m": "number",
                   "height_m": "number"},
    "contracts": {"title": "text", "parties": "text", "counterparty": "text", "year": "number",
                  "effective_date": "date", "notice_days": "number"},
    "reports": {"company": "text", "fiscal_year": "number", "pages": "number"},
}


def _files(root: Path) -> dict[str, Path]:
    return {str(path.relative_to(root)): path for path in sorted(root.rglob("*")) if path.is_file()}


def _page_texts(path: Path) -> list[str]:
    return [page.extract_text() for page in pypdf.PdfReader(path).pages]


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("fresh")
    return out, generate(out)


@pytest.fixture(scope="module")
def questions() -> list[dict]:
    return [json.loads(line) for line in (SAMPLE / "qa.jsonl").read_text(encoding="utf-8").splitlines() if line]


@pytest.fixture(scope="module")
def sample(sample_index) -> Corpus:
    return Corpus(sample_index)


# --- 1. deterministic, and committed as generated -------------------------------------------------

def test_generation_is_byte_identical_run_to_run(fresh, tmp_path):
    first, counts = fresh
    assert generate(tmp_path) == counts
    one, two = _files(first), _files(tmp_path)
    assert list(one) == list(two)
    different = [name for name in one if one[name].read_bytes() != two[name].read_bytes()]
    assert not different, f"not deterministic: {different}"


def test_committed_sample_matches_a_fresh_generation(fresh):
    """Nobody edits the PDFs or labels by hand: regenerate with `python -m ferret.data.sample_corpus`.
    PDFs must be byte-identical or, if another fpdf2 version draws them, identical in text page by page."""
    committed, generated = _files(SAMPLE), _files(fresh[0])
    assert list(committed) == list(generated), "regenerate data/sample: python -m ferret.data.sample_corpus"
    for name, path in committed.items():
        if path.read_bytes() == generated[name].read_bytes():
            continue
        assert path.suffix == ".pdf", f"{name} differs from a fresh generation"
        assert _page_texts(path) == _page_texts(generated[name]), f"{name} differs from a fresh generation"


def test_sample_is_small_and_shaped_as_buckets(fresh):
    counts = fresh[1]
    size = sum(path.stat().st_size for path in _files(SAMPLE).values())
    assert size < 5_000_000
    assert {path.name for path in SAMPLE.iterdir() if path.is_dir()} == set(BUCKETS)
    for bucket in BUCKETS:
        metadata = [json.loads(line) for line in (SAMPLE / bucket / BUCKET_METADATA).read_text().splitlines()]
        assert sorted(record["file"] for record in metadata) == sorted(p.name for p in (SAMPLE / bucket).glob("*.pdf"))
        assert all(set(record) - {"file"} <= set(SCHEMAS[bucket]) for record in metadata)
    assert counts["report_pages"] >= 40 and counts["invoices"] >= 30 and counts["questions"] >= 44


# --- 2. what ferret parses out of it ----------------------------------------------------------------

def test_buckets_and_typed_metadata(sample):
    assert set(sample.schemas) == set(BUCKETS)
    for bucket, schema in SCHEMAS.items():
        assert sample.schemas[bucket] == schema
        assert set(schema) <= sample.filter_fields(bucket)


def test_every_line_item_is_a_table_row_with_its_columns(sample):
    invoices = build_invoices()
    stored = sample.store.conn.execute(
        "SELECT a.doc_id, l.text AS label, a.fields FROM annotations a JOIN labels l ON l.id = a.label_id "
        "JOIN documents d ON d.doc_id = a.doc_id WHERE d.bucket = 'invoices' AND a.kind = 'row' "
        "ORDER BY a.doc_id, a.id").fetchall()
    rows: dict[str, list] = {}
    for row in stored:
        rows.setdefault(row["doc_id"], []).append((row["label"], json.loads(row["fields"])))
    assert set(rows) == {invoice.doc_id for invoice in invoices}
    for invoice in invoices:
        parsed = rows[invoice.doc_id]
        assert [label for label, _ in parsed] == [item.product.label for item in invoice.items], invoice.doc_id
        for (_, fields), item in zip(parsed, invoice.items):
            assert set(fields) == {"Qty", "Unit price", "Amount"}
            assert fields["Qty"][1] == item.qty and fields["Amount"][1] == pytest.approx(item.amount_cents / 100)
        total = sample.annotation_rows("Total", bucket="invoices", doc_id=invoice.doc_id)
        assert [fact["value"] for fact in total if fact["kind"] == "kv" and fact["label"] == "Total"] == [
            pytest.approx(invoice.total_cents / 100)]


def test_datasheet_tables_parse_into_numeric_rows(sample):
    for panel in PANEL_SPECS:
        width = sample.annotation_rows("width", doc_id=panel.doc_id)
        assert [row["value"] for row in width if row["label"] == "Width (m)"] == [panel.width]
        voc = [row for row in sample.annotation_rows("Voc", doc_id=panel.doc_id) if "Voc" in row["label"]]
        assert voc[0]["value"] == panel.voc and set(voc[0]["fields"]) == {"STC", "NOCT"}
    for part in TRANSISTOR_SPECS:
        rows = sample.annotation_rows("collector current", doc_id=part.doc_id)
        assert [row["value"] for row in rows if row["label"].startswith("Continuous collector current")] == [part.ic]


def test_report_sections_notes_and_cross_references(sample):
    meta = sample.get_document_metadata(REPORT_ID)
    assert meta["pages"] >= 40 and meta["metadata"]["pages"] == meta["pages"]
    sections = sample.section_index(REPORT_ID)
    titles = [section["title"] for section in sections]
    notes = [s for s in sections if re.match(r"Note \d+\. ", s["title"])]
    assert [int(s["title"].split()[1].rstrip(".")) for s in notes] == list(range(1, 16))
    parent = next(s for s in sections if s["title"] == "Notes to the Consolidated Financial Statements")
    assert {s["parent_id"] for s in notes} == {parent["id"]}
    mdna = next(s for s in sections if s["title"] == "Management's Discussion and Analysis")
    assert {"Segment Results", "Liquidity and Capital Resources"} <= {
        s["title"] for s in sections if s["parent_id"] == mdna["id"]}
    assert "Contents" in titles and "Consolidated Balance Sheets" in titles

    note7 = sample.fetch_section(REPORT_ID, "Note 7")
    assert note7["title"] == "Note 7. Segment Information" and "884.1" in note7["text"]
    segment_results = next(s for s in sections if s["title"] == "Segment Results")
    assert "Note 7. Segment Information" in _referenced(sample, segment_results["id"])
    debt = next(s for s in sections if s["title"] == "Note 12. Debt")
    assert "Note 14. Fair Value Measurements" in _referenced(sample, debt["id"])


def _referenced(sample: Corpus, section_id: str) -> set[str]:
    """Titles of the sections that the segments of one report section refer to."""
    segments = sample.store.conn.execute("SELECT id FROM segments WHERE doc_id = ? AND section_id = ?",
                                         (REPORT_ID, section_id)).fetchall()
    return {n["title"] for (segment,) in segments for n in sample.neighbors(f"seg:{segment}")
            if n["relation"] == "references"}


def test_contract_clauses_are_sections_and_filters_find_them(sample):
    for contract in CONTRACT_SPECS:
        titles = [s["title"] for s in sample.section_index(contract.doc_id)]
        assert {"12. Termination", "13. Notice", "14. Governing Law"} <= set(titles), contract.doc_id
        clause = sample.fetch_section(contract.doc_id, "12. Termination")
        assert f"({contract.notice_days}) days' prior written notice" in " ".join(clause["text"].split())
    hits = sample.search_text("termination for convenience notice", bucket="contracts",
                              filters={"year": 2023, "counterparty": {"contains": "keystone"}}, top_k=3)
    assert hits[0]["doc_id"] == "contract-acme-keystone-2023" and hits[0]["section"] == "12. Termination"
    acme = sample.search_text("agreement", bucket="contracts", filters={"parties": {"contains": "ACME"}}, top_k=50)
    years = {json.loads(sample.store.conn.execute("SELECT metadata FROM documents WHERE doc_id = ?",
                                                  (hit["doc_id"],)).fetchone()[0])["year"] for hit in acme}
    assert years == {2021, 2023}
    assert len({c.notice_days for c in CONTRACT_SPECS}) == len(CONTRACT_SPECS)  # "the notice period" is ambiguous


# --- 3. the labels ----------------------------------------------------------------------------------

def test_questions_load_and_cover_every_kind(questions):
    examples, files = load_jsonl(SAMPLE / "qa.jsonl")
    assert len(examples) == len(questions) >= 44 and files == []
    kinds = Counter(q["kind"] for q in questions)
    assert set(kinds) == KINDS
    assert all(kinds[kind] >= minimum for kind, minimum in MINIMUM_PER_KIND.items()), kinds
    for q in questions:
        assert q["expected_status"] == STATUS_OF.get(q["kind"], "answer"), q["id"]
        if q["expected_status"] == "answer":
            assert q["answer"] and q["evidence"], q["id"]
        elif q["kind"] != "overflow":
            assert q["answer"] == "" and q["evidence"] == [], q["id"]
        if q["kind"] in ("list", "aggregate", "overflow"):
            assert {"query", "bucket", "filters"} <= set(q), q["id"]


def test_evidence_pages_exist(sample, questions):
    for q in questions:
        for item in q["evidence"] + q.get("operands", []):
            pages = sample.get_document_metadata(item["doc_id"])["pages"]
            assert 1 <= item["page"] <= pages, (q["id"], item)


def _printed(number: float, text: str) -> bool:
    return any(same_number(abs(number), abs(printed)) for printed in numbers_in(text))


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


@pytest.mark.parametrize("kind", ["lookup", "clause", "xref"])
def test_answers_are_printed_on_their_evidence_pages(sample, questions, kind):
    """Every evidence page holds part of the gold, and together they hold all of it."""
    checked = 0
    for q in (q for q in questions if q["kind"] == kind):
        pages = [sample.page_text(item["doc_id"], item["page"]) for item in q["evidence"]]
        numbers = numbers_in(q["answer"])
        if numbers:
            for text in pages:
                assert any(_printed(n, text) for n in numbers), (q["id"], text[:200])
            assert all(any(_printed(n, text) for text in pages) for n in numbers), q["id"]
        else:
            assert all(_normal(q["answer"]) in _normal(text) for text in pages), q["id"]
        checked += 1
    assert checked


def test_computed_answers_follow_from_printed_operands(sample, questions):
    computed = [q for q in questions if q["kind"] == "compute"]
    for q in computed:
        a, b = (parse_number(operand["value"]) for operand in q["operands"])
        assert q["formula"] == "a / b * 100" and q["answer"] == f"{a / b * 100:.1f}%", q["id"]
        for operand in q["operands"]:
            assert _printed(parse_number(operand["value"]), sample.page_text(operand["doc_id"], operand["page"]))
        assert {(e["doc_id"], e["page"]) for e in q["evidence"]} == {(o["doc_id"], o["page"]) for o in q["operands"]}
    assert sum(len(q["evidence"]) == 2 for q in computed) >= 4  # computations across sections


def _groups(sample: Corpus, q: dict, group_by: str) -> dict[str, int]:
    result = sample.annotations_aggregate(q["query"], "count", group_by=group_by, filters=q["filters"],
                                          bucket=q["bucket"])
    return {group["group"]: group["n"] for group in result["groups"]}


def test_list_golds_are_what_the_documented_annotation_query_returns(sample, questions):
    lists = [q for q in questions if q["kind"] == "list"]
    for q in lists:
        assert isinstance(q["answer"], list) and len(q["answer"]) >= 2, q["id"]
        assert sorted(_groups(sample, q, q["group_by"])) == q["answer"], q["id"]
        documents = set(_groups(sample, q, "doc_id"))
        assert documents == {e["doc_id"] for e in q["evidence"]}, q["id"]
        pages = [_normal(sample.page_text(e["doc_id"], e["page"])) for e in q["evidence"]]
        for item in q["answer"]:
            assert item in documents or any(_normal(item) in text for text in pages), (q["id"], item)


def test_aggregate_golds_are_what_the_documented_annotation_query_computes(sample, questions):
    aggregates = [q for q in questions if q["kind"] == "aggregate"]
    for q in aggregates:
        result = sample.annotations_aggregate(q["query"], q["op"], field=q["field"], filters=q["filters"],
                                              bucket=q["bucket"])
        assert result["value"] == pytest.approx(parse_number(q["answer"]), abs=0.005), (q["id"], result)
        assert result["n"] >= 3 and result["skipped_non_numeric"] == 0, q["id"]
        assert set(_groups(sample, q, "doc_id")) == {e["doc_id"] for e in q["evidence"]}, q["id"]


def test_overflow_question_matches_more_than_fifty_rows(sample, questions):
    (q,) = [q for q in questions if q["kind"] == "overflow"]
    result = sample.annotations_aggregate(q["query"], "count", filters=q["filters"], bucket=q["bucket"])
    assert result["n"] == int(q["answer"]) > 50
    invoices = build_invoices()
    assert int(q["answer"]) == sum(item.product.kind == "cable" for invoice in invoices for item in invoice.items)


def test_ambiguous_questions_have_several_candidates(sample, questions):
    for q in (q for q in questions if q["kind"] == "ambiguous"):
        assert len(q["candidates"]) >= 2 and all(sample.get_document_metadata(d) for d in q["candidates"])
