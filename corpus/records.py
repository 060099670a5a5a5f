"""The corpus data model: what a parsed file turns into before it is stored.

Plain dataclasses, no I/O. Page numbers are 1-based physical PDF pages everywhere;
passage collections use one pseudo-page per passage.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Value:
    """A parsed cell or fact value: the text as printed and, when numeric, its number.

    `number` already includes `scale` (e.g. "1,577" under "(In millions)" gives 1.577e9);
    `unit` is a currency code, "%" or a unit word, when one is printed or declared.
    """

    text: str
    number: float | None = None
    unit: str | None = None
    scale: float = 1.0


@dataclass
class Section:
    """A node of a document's section tree. `id` is local to the document ("s0", "s1", ...)."""

    id: str
    title: str
    level: int
    page_start: int
    page_end: int
    parent_id: str | None = None


@dataclass
class TableRow:
    """One record of a table: its label (first cell) and header → value cells; `group`: the label-only line
    the row is printed under within its table ("Weighted-average common shares outstanding:" above "Basic",
    "December 31, 2018" above "Total"), or ""."""

    label: str
    cells: dict[str, Value]
    line: str
    line_index: int
    group: str = ""


@dataclass
class Table:
    """A table found in a page's lines: [first_line, last_line] inclusive, header columns, rows."""

    first_line: int
    last_line: int
    columns: list[str]
    rows: list[TableRow]
    scale: float = 1.0
    unit: str | None = None
    title: str = ""


@dataclass
class Fact:
    """A "Label: value" fact found in running text."""

    label: str
    value: Value
    line_index: int


@dataclass
class Annotation:
    """A structured fact with provenance: a key-value fact ("kv") or a table row ("row", with its `group`:
    `TableRow.group`)."""

    kind: str
    label: str
    value: Value
    fields: dict[str, Value] = field(default_factory=dict)
    page: int = 1
    segment_index: int = 0
    group: str = ""


@dataclass
class Segment:
    """A chunk of a page: a paragraph run ("text") or a table ("table"), with char offsets into the page."""

    kind: str
    text: str
    page: int
    char_start: int
    char_end: int
    section_id: str | None = None
    title: str = ""


@dataclass
class Chunk:
    """A macro-chunk of a long document: its segments `first`..`last` (ordinals, inclusive), a section or
    a run of sections within a token budget, and its summary, sentences and table rows each with the page
    it is printed on. `summarizer` names what wrote the summary ("extractive", or an LM's model string)."""

    first: int
    last: int
    title: str
    page_start: int
    page_end: int
    tokens: int
    summary: list[tuple[int, str]] = field(default_factory=list)
    summarizer: str = "extractive"

    @property
    def text(self) -> str:
        """What is searched and embedded: the title, then the summary's sentences, the most telling first."""
        return "\n".join([self.title, *(sentence for _, sentence in self.summary)])


@dataclass
class ParsedDocument:
    """Everything ingest stores for one document: a PDF or text file, or one passage of a collection.

    `doc_id` is the document's stable key in the index (file stem, or the passage's id or title);
    `content_hash` decides whether a re-ingest is a no-op or a replacement.
    """

    doc_id: str
    file: str
    kind: str
    title: str
    pages: list[str]
    content_hash: str
    sections: list[Section] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)
    annotations: list[Annotation] = field(default_factory=list)
    chunks: list[Chunk] = field(default_factory=list)
