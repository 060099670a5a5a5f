"""A small fpdf2 layer for the sample corpus: deterministic text PDFs with core fonts.

Every document gets a fixed creation date and producer, so the bytes (and the file id fpdf2
derives from them) are the same on every run. Paragraphs and tables are never split across a
page break, so each printed value has exactly one page, which the QA labels record.
Core fonts are Latin-1 only: no em dashes, curly quotes or euro signs in any text.
"""
from __future__ import annotations

from datetime import datetime, timezone

from fpdf import FPDF

CREATED = datetime(2024, 1, 15, 9, 0, 0, tzinfo=timezone.utc)
PRODUCER = "ferret sample corpus generator"
LINE = 5.0  # mm per line of 10 pt text


class Document(FPDF):
    """Letter-size document with helpers for headings, paragraphs, facts and aligned tables."""

    def __init__(self, title: str, author: str, font: str = "Helvetica"):
        super().__init__(format="letter", unit="mm")
        self.set_creation_date(CREATED)
        self.set_producer(PRODUCER)
        self.set_creator(PRODUCER)
        self.set_title(title)
        self.set_author(author)
        self.set_margins(20, 18, 20)
        self.set_auto_page_break(True, 20)
        self.body_font = font
        self.marks: dict[str, list[int]] = {}

    # --- bookkeeping --------------------------------------------------------------------------
    def mark(self, key: str) -> None:
        """Record that the value named `key` is printed on the current page (1-based)."""
        pages = self.marks.setdefault(key, [])
        if self.page_no() not in pages:
            pages.append(self.page_no())

    def ensure_space(self, height: float) -> None:
        if self.get_y() + height > self.page_break_trigger:
            self.add_page()

    # --- text ---------------------------------------------------------------------------------
    def heading(self, text: str, size: float = 13, space_before: float = 3, keep: float = 25) -> None:
        """A bold heading line, kept on the same page as the next `keep` mm of content."""
        self.ensure_space(space_before + size * 0.5 + keep)
        self.ln(space_before)
        self.set_font(self.body_font, "B", size)
        self.cell(0, size * 0.5, text, new_x="LMARGIN", new_y="NEXT")
        self.ln(1.5)

    def para(self, text: str, size: float = 10, style: str = "", after: float = 2.5, marks: tuple = ()) -> int:
        """A left-aligned paragraph that never breaks across pages; returns its page."""
        self.set_font(self.body_font, style, size)
        height = LINE * size / 10
        lines = self.multi_cell(self.epw, height, text, dry_run=True, output="LINES")
        self.ensure_space(len(lines) * height)
        self.multi_cell(self.epw, height, text, align="L", new_x="LMARGIN", new_y="NEXT")
        self.ln(after)
        for key in marks:
            self.mark(key)
        return self.page_no()

    def facts(self, pairs: list[tuple[str, str]], size: float = 10) -> None:
        """"Label: value" lines, one per line, each printed as one run of text."""
        self.set_font(self.body_font, "", size)
        for label, value in pairs:
            self.cell(0, LINE, f"{label}: {value}", new_x="LMARGIN", new_y="NEXT")

    # --- tables -------------------------------------------------------------------------------
    def table(self, header: list[list[str]], rows: list, widths: list[float], size: float = 10,
              bold_rows: tuple[str, ...] = (), marks: dict[str, str] | None = None, line: float = LINE) -> int:
        """Rows of cells at fixed column positions (first column left, the others right-aligned).

        `header` holds header lines (cells for some or all columns: a shorter line is spread over
        the value columns); a row is a list of cells, or a one-item list for a group label line.
        Cells never overflow their column, so the extracted text keeps a gap between columns.
        """
        height = (len(header) + len(rows)) * line + 2
        self.ensure_space(height)
        x0 = self.l_margin
        starts = [x0 + sum(widths[:i]) for i in range(len(widths))]
        for cells in header:
            self._line(cells, starts, widths, size, "B", line)
        for cells in rows:
            style = "B" if cells[0] in bold_rows else ""
            self._line(cells, starts, widths, size, style, line)
            if marks and cells[0] in marks:
                self.mark(marks[cells[0]])
        self.ln(2)
        return self.page_no()

    def _line(self, cells: list[str], starts: list[float], widths: list[float], size: float, style: str,
              line: float) -> None:
        self.set_font(self.body_font, style, size)
        y = self.get_y()
        if len(cells) == 1:
            self.set_xy(starts[0], y)
            self.cell(sum(widths), line, cells[0])
        else:
            if len(cells) < len(widths):  # a spanning header line over the value columns
                span = (len(widths) - 1) // (len(cells) - 1) if len(cells) > 1 else 1
                positions = [(starts[0], widths[0])] + [
                    (starts[1 + i * span], sum(widths[1 + i * span:1 + (i + 1) * span])) for i in range(len(cells) - 1)]
            else:
                positions = list(zip(starts, widths))
            spanning = len(cells) < len(widths)
            for index, ((x, width), text) in enumerate(zip(positions, cells)):
                if self.get_string_width(text) > width - 2:
                    raise ValueError(f"cell {text!r} is wider than its column ({width} mm)")
                self.set_xy(x, y)
                self.cell(width, line, text, align="L" if index == 0 else "C" if spanning else "R")
        self.set_xy(self.l_margin, y + line)
