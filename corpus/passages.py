"""Non-PDF inputs: .txt/.md files and JSON/JSONL passage collections, as ParsedDocuments.

A text file is one document (pages split on form feeds). A collection holds one passage per
record, each its own document: `{title: [sentences]}` maps (HotpotQA's corpus), lists or JSONL
of records with a text field and an id/title field, and TAT-QA contexts (a table as a grid plus
paragraphs). Tables given as grids are rendered in the compacted layout format of `corpus.pdf`
(cells separated by a two-space column gap), so the one table parser handles them like PDF tables.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ferret.corpus.pdf import COLUMN_GAP, IngestError, compact_layout
from ferret.corpus.records import ParsedDocument

TEXT_SUFFIXES = {".txt", ".md", ".markdown"}
JSON_SUFFIXES = {".json", ".jsonl", ".ndjson"}
TEXT_FIELDS = ("text", "contents", "content", "body", "paragraph", "passage", "abstract")
TITLE_FIELDS = ("title", "name", "heading")
ID_FIELDS = ("id", "_id", "doc_id", "uid", "passage_id")


def content_hash(data: bytes | str) -> str:
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def load_text_file(path: Path, doc_id: str) -> ParsedDocument:
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise IngestError(path, "not UTF-8 text") from None
    pages = [page.strip() for page in text.split("\f")]
    if not any(pages):
        raise IngestError(path, "empty file")
    title = next((line.strip("# ").strip() for line in text.splitlines() if line.strip()), path.stem)
    return ParsedDocument(doc_id, path.name, "text", title, pages, content_hash(raw))


def without_title(text: str, title: str) -> str:
    """A passage page's text without the title `load_passages` prints above it as its first line."""
    first, _, rest = text.strip().partition("\n")
    return rest if rest and title.strip() and first.strip() == title.strip() else text


def load_passages(path: Path, id_prefix: str = "") -> list[ParsedDocument]:
    """One ParsedDocument per passage of a JSON or JSONL collection."""
    records = _read_records(path)
    documents: dict[str, ParsedDocument] = {}
    for number, (key, record) in enumerate(records, start=1):
        title, text, printed_title = _title_and_text(path, number, key, record)
        doc_id = id_prefix + _passage_id(record, key, title, number)
        if doc_id in documents:
            raise IngestError(path, f"record {number}: duplicate passage id {doc_id!r}")
        page = f"{title}\n{text}" if printed_title else text
        digest = content_hash(json.dumps([key, record], sort_keys=True, default=str))
        documents[doc_id] = ParsedDocument(doc_id, path.name, "passage", title or doc_id, [page], digest)
    if not documents:
        raise IngestError(path, "no passages found")
    return list(documents.values())


def _read_records(path: Path) -> list[tuple[str | None, object]]:
    text = path.read_text(encoding="utf-8", errors="replace")
    if not text.strip():
        raise IngestError(path, "empty file")
    if path.suffix != ".json":
        records = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                records.append((None, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise IngestError(path, f"line {number}: invalid JSON ({exc.msg})") from None
        return records
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise IngestError(path, f"invalid JSON at line {exc.lineno} ({exc.msg})") from None
    if isinstance(data, dict):
        return list(data.items())
    if isinstance(data, list):
        return [(None, record) for record in data]
    raise IngestError(path, "expected a JSON object or list of passages")


def _title_and_text(path: Path, number: int, key: str | None, record: object) -> tuple[str, str, bool]:
    """(title, text, whether the title is printed above the text as the passage's first line)."""
    if isinstance(record, (str, list)) and key is not None:
        return key, _join(record), True
    if not isinstance(record, dict):
        raise IngestError(path, f"record {number}: expected an object, got {type(record).__name__}")
    if isinstance(record.get("table"), dict) and "paragraphs" in record:
        return _tatqa_title_and_text(record)
    text_field = next((name for name in TEXT_FIELDS if record.get(name)), None)
    if text_field is None:
        raise IngestError(path, f"record {number}: no text field (expected one of {', '.join(TEXT_FIELDS)})")
    title = next((str(record[name]) for name in TITLE_FIELDS if record.get(name)), key or "")
    return title, _join(record[text_field]), bool(title)


def _tatqa_title_and_text(record: dict) -> tuple[str, str, bool]:
    """A table (grid of cells) followed by its paragraphs in their printed order; the title, taken
    from the first paragraph, is not printed again."""
    # a cell's own runs of spaces ("2019  $’000") are one space: a column gap would split it in two
    rows = [COLUMN_GAP.join(" ".join(str(cell).split()) for cell in row if str(cell).strip()) for row in record["table"]["table"]]
    table = compact_layout("\n".join(row for row in rows if row))
    paragraphs = sorted(record["paragraphs"], key=lambda paragraph: paragraph.get("order", 0))
    text = "\n\n".join([table, *(paragraph["text"].strip() for paragraph in paragraphs)])
    title = paragraphs[0]["text"].split(".")[0][:80] if paragraphs else "Table"
    return title, text, False


def _passage_id(record: object, key: str | None, title: str, number: int) -> str:
    if isinstance(record, dict):
        if isinstance(record.get("table"), dict) and record["table"].get("uid"):
            return str(record["table"]["uid"])
        for name in ID_FIELDS:
            if record.get(name) not in (None, ""):
                return str(record[name])
    return key or title or f"passage-{number}"


def _join(value: object) -> str:
    if isinstance(value, list):
        return " ".join(str(part).strip() for part in value).strip()
    return str(value).strip()
