"""PDF pages: page-exact text through pypdf's layout mode, compacted to few tokens.

Layout mode keeps a table row on one line; compaction then drops dot leaders and
indentation and turns every run of 2+ spaces into exactly two, so a column gap stays
visible ("Total assets  $11,726,472  $10,785,829") while single spaces stay inside cells.
This module imports only pypdf so worker processes start fast.
"""
from __future__ import annotations

import gc
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pypdf
from pypdf.errors import FileNotDecryptedError, PdfReadError

_LEADER = re.compile(r"(?:[ \t]*\.){4,}[ \t]*")
_CURRENCY_GAP = re.compile(r"([$€£¥])[ \t]+(?=[\d(])")
_GAP = re.compile(r"[ \t]{2,}")
_BLANKS = re.compile(r"\n{3,}")
COLUMN_GAP = "  "


class IngestError(Exception):
    """A file that cannot be ingested; the message names the file and the reason in one line."""

    def __init__(self, file: str | Path, reason: str):
        self.file = str(file)
        self.reason = reason
        super().__init__(f"{Path(file).name}: {reason}")

    def __reduce__(self):  # rebuilt from (file, reason) when sent back from a worker process
        return IngestError, (self.file, self.reason)


def compact_layout(text: str) -> str:
    """Compact pypdf layout text: one table row per line, column gaps as two spaces."""
    lines = []
    for raw in text.replace("\xa0", " ").splitlines():
        line = _LEADER.sub(COLUMN_GAP, raw).strip()
        line = _CURRENCY_GAP.sub(r"\1", line)
        lines.append(_GAP.sub(COLUMN_GAP, line))
    return _BLANKS.sub("\n\n", "\n".join(lines)).strip()


def open_pdf(path: str | Path) -> pypdf.PdfReader:
    """Open a PDF, decrypting an empty user password; raise IngestError with the reason otherwise."""
    path = Path(path)
    with open(path, "rb") as handle:
        head = handle.read(1024)
    if not head.strip():
        raise IngestError(path, "empty file")
    if b"%PDF" not in head:
        raise IngestError(path, "not a PDF (no %PDF header)")
    try:
        reader = pypdf.PdfReader(path)
        if reader.is_encrypted and not reader.decrypt(""):
            raise IngestError(path, "encrypted PDF (a password is required)")
        count = len(reader.pages)
    except FileNotDecryptedError:
        raise IngestError(path, "encrypted PDF (a password is required)") from None
    except (PdfReadError, ValueError, KeyError, TypeError, OSError) as exc:
        raise IngestError(path, f"corrupt PDF ({type(exc).__name__}: {exc})") from None
    if count == 0:
        raise IngestError(path, "PDF has no pages")
    return reader


def page_count(path: str | Path) -> int:
    return len(open_pdf(path).pages)


def read_pages(path: str | Path, start: int, stop: int) -> list[str]:
    """Compacted layout text of pages [start, stop) (0-based indexes). Runs in worker processes."""
    reader = open_pdf(path)
    texts = []
    with _cyclic_gc_paused():
        for index in range(start, stop):
            try:
                raw = reader.pages[index].extract_text(extraction_mode="layout")
            except Exception as exc:  # pypdf raises many types on damaged content streams
                raise IngestError(path, f"corrupt page {index + 1} ({type(exc).__name__}: {exc})") from None
            texts.append(compact_layout(raw))
    return texts


@contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    """pypdf allocates millions of short-lived objects, and every full collection they trigger walks each
    object the process holds (torch's 180,000 once the embedder is loaded): with the collector paused
    while pages are read, a 116-page 10-K read in 10.0 s, not 15.4 (the cycles left, about 11,000 objects
    for those pages, are collected after)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def outline_entries(reader: pypdf.PdfReader) -> list[tuple[int, str, int]]:
    """The PDF outline (bookmarks) flattened to (level, title, 1-based page); empty when absent or broken."""
    entries: list[tuple[int, str, int]] = []

    def walk(items, level: int) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item, level + 1)
                continue
            try:
                page = reader.get_destination_page_number(item)
            except Exception:
                continue
            if page is not None and page >= 0:
                entries.append((level, str(item.title).strip(), page + 1))

    try:
        walk(reader.outline, 1)
    except Exception:
        return []
    return entries
