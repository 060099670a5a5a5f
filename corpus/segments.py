"""Segments and annotations: paragraph- and table-aware chunks of each page, with provenance.

A table is one segment (split into line runs only when very long), prose is packed paragraph by
paragraph up to MAX_CHARS (about the embedder's 256-token window), and no segment crosses a page
or a section boundary. Every table row becomes a "row" annotation and every "Label: value" line a
"kv" annotation, each pointing back to its page and segment.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ferret.corpus.facts import find_facts
from ferret.corpus.records import Annotation, ParsedDocument, Section, Segment, Table
from ferret.corpus.tables import find_tables

MAX_CHARS = 1200
MAX_TABLE_CHARS = 2400
_NON_WORD = re.compile(r"\W+")


@dataclass
class _Block:
    kind: str
    first_line: int
    last_line: int
    table: Table | None = None


def segment_document(doc: ParsedDocument) -> None:
    """Fill `doc.segments` and `doc.annotations` from `doc.pages` and `doc.sections`."""
    starts = _section_starts(doc.pages, doc.sections)
    current = doc.sections[0].id if doc.sections else None
    for page_number, page in enumerate(doc.pages, start=1):
        lines = page.split("\n")
        offsets = _line_offsets(lines)
        tables = find_tables(lines)
        section_lines = starts.get(page_number, {})
        first_segment = len(doc.segments)
        for block in _blocks(lines, tables, section_lines):
            for line in range(block.first_line, block.last_line + 1):
                current = section_lines.get(line, current)
            _emit(doc, block, lines, offsets, page_number, current)
        for fact in find_facts(lines):
            segment_index = _segment_at(doc, first_segment, offsets[fact.line_index])
            doc.annotations.append(Annotation("kv", fact.label, fact.value, page=page_number,
                                              segment_index=segment_index))


def _section_starts(pages: list[str], sections: list[Section]) -> dict[int, dict[int, str]]:
    """page → {line index → id of the section whose title starts there} (deepest wins on a tie)."""
    starts: dict[int, dict[int, str]] = {}
    for section in sections:
        if not 1 <= section.page_start <= len(pages):
            continue
        lines = pages[section.page_start - 1].split("\n")
        starts.setdefault(section.page_start, {})[_title_line(lines, section.title)] = section.id
    return starts


def _title_line(lines: list[str], title: str) -> int:
    wanted = _NON_WORD.sub(" ", title.lower()).strip()[:40]
    for index, line in enumerate(lines):
        normal = _NON_WORD.sub(" ", line.lower()).strip()
        if normal and (normal.startswith(wanted) or (len(normal) > 3 and wanted.startswith(normal))):
            return index
    return 0


def _line_offsets(lines: list[str]) -> list[int]:
    offsets, position = [], 0
    for line in lines:
        offsets.append(position)
        position += len(line) + 1
    return offsets


def _blocks(lines: list[str], tables: list[Table], section_lines: dict[int, str]) -> list[_Block]:
    """Tables as single blocks; prose as paragraphs split on blank lines and section titles."""
    table_at = {table.first_line: table for table in tables}
    blocks: list[_Block] = []
    index = 0
    while index < len(lines):
        table = table_at.get(index)
        if table is not None:
            blocks.append(_Block("table", table.first_line, table.last_line, table))
            index = table.last_line + 1
            continue
        if not lines[index].strip():
            index += 1
            continue
        start = index
        index += 1
        while (index < len(lines) and lines[index].strip() and index not in table_at
               and index not in section_lines):
            index += 1
        blocks.append(_Block("text", start, index - 1))
    return blocks


def _emit(doc: ParsedDocument, block: _Block, lines: list[str], offsets: list[int], page: int,
          section_id: str | None) -> None:
    if block.kind == "table":
        _emit_table(doc, block, lines, offsets, page, section_id)
        return
    start, end = offsets[block.first_line], offsets[block.last_line] + len(lines[block.last_line])
    previous = doc.segments[-1] if doc.segments else None
    if (previous is not None and previous.kind == "text" and previous.page == page
            and previous.section_id == section_id and end - previous.char_start <= MAX_CHARS):
        previous.text = doc.pages[page - 1][previous.char_start:end]
        previous.char_end = end
        return
    for chunk_start, chunk_end in _split(doc.pages[page - 1], start, end, MAX_CHARS):
        doc.segments.append(Segment("text", doc.pages[page - 1][chunk_start:chunk_end], page,
                                    chunk_start, chunk_end, section_id))


def _emit_table(doc: ParsedDocument, block: _Block, lines: list[str], offsets: list[int], page: int,
                section_id: str | None) -> None:
    table = block.table
    first_segment = len(doc.segments)
    chunk_first = block.first_line
    for line in range(block.first_line, block.last_line + 1):
        chunk_chars = offsets[line] + len(lines[line]) - offsets[chunk_first]
        if line == block.last_line or chunk_chars > MAX_TABLE_CHARS:
            start, end = offsets[chunk_first], offsets[line] + len(lines[line])
            doc.segments.append(Segment("table", doc.pages[page - 1][start:end], page, start, end,
                                        section_id, table.title))
            chunk_first = line + 1
    for row in table.rows:
        segment_index = _segment_at(doc, first_segment, offsets[row.line_index])
        value = next((cell for cell in row.cells.values() if cell.number is not None),
                     next(iter(row.cells.values()), None))
        if value is not None:
            doc.annotations.append(Annotation("row", row.label, value, dict(row.cells), page, segment_index, row.group))


def _split(text: str, start: int, end: int, limit: int) -> list[tuple[int, int]]:
    """Split [start, end) into pieces of at most `limit` chars, at a line or sentence end when possible."""
    pieces = []
    while end - start > limit:
        cut = max(text.rfind("\n", start, start + limit), text.rfind(". ", start, start + limit) + 1)
        if cut <= start + limit // 3:
            cut = text.rfind(" ", start, start + limit)
        if cut <= start:
            cut = start + limit
        pieces.append((start, cut))
        start = cut
        while start < end and text[start] in " \n":
            start += 1
    if start < end:
        pieces.append((start, end))
    return pieces


def _segment_at(doc: ParsedDocument, first: int, offset: int) -> int:
    """Index of the segment, among this page's (from index `first`), that holds char `offset`."""
    best = first
    for index in range(first, len(doc.segments)):
        if doc.segments[index].char_start <= offset:
            best = index
    return min(best, len(doc.segments) - 1)
