"""A document's section tree, built without any LLM.

Two sources, in order of trust:
1. the PDF outline (bookmarks), when it has at least 3 entries;
2. headings detected in the compacted page text: SEC filing parts and items, notes to the
   financial statements, numbered headings, all-caps heading lines and markdown headings.

Detection ignores running headers/footers (lines repeated in the margins of many pages),
turns table-of-contents pages into one section each, and uses the table of contents to
know which items to expect. Items and notes must appear in increasing order; the longest
increasing run of candidates wins, which drops cross-references such as "see Item 7.".
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from ferret.corpus.records import Section

# Heading ranks before normalisation: Part > Item > Note > sub-heading.
RANK_PART, RANK_ITEM, RANK_NOTE, RANK_SUB = 1, 2, 3, 4
MIN_OUTLINE_ENTRIES = 3
MARGIN_LINES = 2
MIN_RUNNING_PAGES = 3
MIN_TOC_LINES = 5
MAX_TITLE_CHARS = 160

_SEP = r"\s*(?:[.:\-—–]\s*)?"
_PART = re.compile(rf"^part\s+(?P<num>[ivx]+)(?:{_SEP}(?P<title>[^\d,].*)?)?$", re.I)
_ITEM = re.compile(r"^item\s+(?P<num>\d{1,2}(?:\.\d{2})?)(?P<letter>[a-c])?(?![\w,])(?P<title>.*)$", re.I)
_NOTE = re.compile(r"^note\s+(?P<num>\d{1,2})(?![\w,])(?P<title>.*)$", re.I)
_NUMBERED = re.compile(
    r"^(?:(?P<section>section\s+)?(?P<num>\d{1,2}(?:\.\d{1,2}){0,3})(?P<dot>[.)])?)\s+(?P<title>[A-Z].*)$", re.I
)
_MARKDOWN = re.compile(r"^(?P<hashes>#{1,6})\s+(?P<title>[^a-z\s].{0,99}?)\s*#*$")
_FENCE = re.compile(r"^(```|~~~)")
_TITLE_LEAD = re.compile(r"^[\s.:\-—–]+")
_TOC_LINE = re.compile(r"^(?P<title>.*\S)\s{2}(?P<page>\d{1,3}|[ivxl]{1,6}|N/A)$", re.I)
_TOC_TITLE = re.compile(r"^(?:table of contents|contents|index(?: to .*)?)$", re.I)
_NOTES_START = re.compile(r"^notes to (?:the )?(?:condensed )?(?:consolidated )?financial statements\b", re.I)
_TABLE_GAP = re.compile(r"\s{2}[\d$(\-—–%]")
_WORD = re.compile(r"[A-Za-z][\w'’\-]*")
_DIGITS = re.compile(r"\d+")
_SPLIT_BEFORE = re.compile(r"^(?:part|item)$", re.I)
_LETTER = re.compile(r"[A-Za-z]")
_WIDE_GAP = re.compile(r"\s{3,}")
_PARENTHETICAL = re.compile(r"\([^)]*(?:\)|$)")
_ROMAN = {"i": 1, "ii": 2, "iii": 3, "iv": 4, "v": 5, "vi": 6}
_SMALL_WORDS = frozenset(
    "a an and as at by for from in into of on or per than that the to under vs with about "
    "between over its their our".split()
)


@dataclass
class _Heading:
    """A heading candidate: where it is, its rank, and for items and notes its ordering key."""

    page: int
    line: int
    rank: int
    title: str
    kind: str = "sub"
    key: tuple = ()


def build_sections(pages: list[str], outline: list[tuple[int, str, int]] | None = None) -> list[Section]:
    """Section tree for one document. pages[i] is the text of page i+1."""
    n_pages = max(len(pages), 1)
    if outline and len(outline) >= MIN_OUTLINE_ENTRIES:
        entries = sorted(((level, title, min(max(page, 1), n_pages)) for level, title, page in outline),
                         key=lambda entry: entry[2])
    else:
        entries = [(h.rank, h.title, h.page) for h in _detect_headings(pages)]
    return _to_sections(entries, n_pages, _first_line(pages))


# ---------------------------------------------------------------- tree assembly

def _to_sections(entries: list[tuple[int, str, int]], n_pages: int, cover_title: str) -> list[Section]:
    """Sections from (level, title, page) in document order: normalised levels, ends, parents."""
    levels = {level: rank for rank, level in enumerate(sorted({e[0] for e in entries}), start=1)}
    entries = [(levels[level], " ".join(title.split()) or "Untitled", page) for level, title, page in entries]
    if not entries or entries[0][2] > 1:
        entries.insert(0, (1, cover_title, 1))
    sections: list[Section] = []
    for index, (level, title, page) in enumerate(entries):
        end = n_pages
        for next_level, _, next_page in entries[index + 1:]:
            if next_level <= level:
                end = max(page, next_page - 1)
                break
        parent = next((s.id for s in reversed(sections) if s.level < level), None)
        sections.append(Section(f"s{index}", title, level, page, end, parent))
    return sections


def _first_line(pages: list[str]) -> str:
    """The first non-empty line of the document, or "Document"."""
    for page in pages:
        for line in page.splitlines():
            if line.strip():
                return _clean(line)[:MAX_TITLE_CHARS]
    return "Document"


# ---------------------------------------------------------------- detection

def _detect_headings(pages: list[str]) -> list[_Heading]:
    """Heading candidates of all pages, filtered and in document order."""
    page_lines = [_join_split_words([_clean(line) for line in page.splitlines()]) for page in pages]
    markdown = _markdown_headings(page_lines)
    if markdown:
        return markdown
    running = _running_lines(page_lines)
    toc_pages = {index for index, lines in enumerate(page_lines) if _is_toc(lines)}
    expected_items = _toc_item_keys(page_lines, toc_pages)
    headings: list[_Heading] = []
    in_notes = False
    for index, lines in enumerate(page_lines):
        skipped = {i for i in _margin(lines) if _running_key(lines[i]) in running}
        toc_line = _toc_anchor(lines, skipped) if index in toc_pages else None
        for number, line in enumerate(lines):
            if number == toc_line:
                seen_item = any(h.kind == "item" for h in headings)
                rank = RANK_SUB if seen_item else RANK_PART
                headings.append(_Heading(index + 1, number, rank, _toc_title(line), "toc"))
                continue
            if number in skipped or (toc_line is not None and _toc_entry(line)):
                continue
            heading = _classify(line, index + 1, number, in_notes)
            if heading is None:
                in_notes = in_notes or bool(_NOTES_START.match(line))
                continue
            if heading.kind == "item" and expected_items and heading.key not in expected_items:
                continue
            in_notes = (in_notes and heading.kind != "item") or bool(_NOTES_START.match(line))
            headings.append(heading)
    return _merge_caps_runs(_keep_increasing(_assign_parts(headings)))


def _classify(line: str, page: int, number: int, in_notes: bool) -> _Heading | None:
    """The heading a single line stands for, or None."""
    if not line or len(line) > MAX_TITLE_CHARS:
        return None
    if match := _PART.match(line):
        if match["num"].lower() in _ROMAN and _titleish(match["title"] or ""):
            return _Heading(page, number, RANK_PART, line, "part", (_ROMAN[match["num"].lower()],))
        return None
    if match := _ITEM.match(line):
        title = _TITLE_LEAD.sub("", match["title"])
        if title[:1] == "," or not _titleish(title):
            return None
        return _Heading(page, number, RANK_ITEM, line, "item", _item_key(match))
    if match := _NOTE.match(line):
        title = _TITLE_LEAD.sub("", match["title"])
        if not _titleish(title):
            return None
        return _Heading(page, number, RANK_NOTE, line, "note", (int(match["num"]),))
    if match := _NUMBERED.match(line):
        return _numbered(match, line, page, number, in_notes)
    if _is_caps_heading(line):
        return _Heading(page, number, RANK_SUB, line, "caps")
    return None


def _numbered(match: re.Match, line: str, page: int, number: int, in_notes: bool) -> _Heading | None:
    """A numbered heading ("3. Revenue", "2.1 Scope", "Section 4"); a note when inside the notes."""
    title = match["title"]
    if not title[0].isupper() or not _titleish(title) or _TABLE_GAP.search(title) or len(title) > 100:
        return None
    parts = match["num"].split(".")
    if len(parts) == 1 and not (match["dot"] or match["section"]):
        return None
    if in_notes and len(parts) == 1:
        return _Heading(page, number, RANK_NOTE, line, "note", (int(parts[0]),))
    return _Heading(page, number, RANK_SUB + len(parts) - 1, line, "numbered")


def _is_caps_heading(line: str) -> bool:
    """A short all-caps line that is not a table row, a sentence fragment or a number."""
    if len(line) > 80 or line != line.upper():
        return False
    words = _WORD.findall(line)
    letters = sum(ch.isalpha() for ch in line)
    return (
        1 <= len(words) <= 10
        and letters >= 4
        and line[0].isalnum()
        and line[-1] not in ",;:"
        and not _TABLE_GAP.search(line)
        and sum(ch.isdigit() for ch in line) * 3 < letters
    )


def _titleish(title: str) -> bool:
    """Heading-like text: empty, or at most one lowercase word that is not a small word
    (a parenthetical such as "(amounts in millions, except per share data)" is ignored)."""
    words = _WORD.findall(_PARENTHETICAL.sub("", title))
    lower = [w for w in words if w[0].islower() and w.lower() not in _SMALL_WORDS]
    return len(lower) <= 1 and not title.rstrip().endswith(",")


# ---------------------------------------------------------------- markdown

def _markdown_headings(page_lines: list[list[str]]) -> list[_Heading]:
    """Markdown "#" headings outside code fences; level = number of hashes.

    Titles start with a capital, digit or symbol, are short and do not end with a period,
    so a PDF footnote such as "# Indicates a subsidiary ... 90%." is not taken for one.
    """
    headings = []
    in_fence = False
    for index, lines in enumerate(page_lines):
        for number, line in enumerate(lines):
            if _FENCE.match(line):
                in_fence = not in_fence
            elif not in_fence and (match := _MARKDOWN.match(line)) and not line.endswith("."):
                headings.append(_Heading(index + 1, number, len(match["hashes"]), match["title"], "md"))
    return headings


# ---------------------------------------------------------------- running headers

def _margin(lines: list[str]) -> set[int]:
    """Indexes of the first and last non-empty lines of a page, where running headers live."""
    filled = [i for i, line in enumerate(lines) if line]
    return set(filled[:MARGIN_LINES] + filled[-MARGIN_LINES:])


def _running_key(line: str) -> str:
    """A margin line with its numbers masked, so "Page 3" and "Page 4" count as the same line."""
    return _DIGITS.sub("0", line.lower())


def _running_lines(page_lines: list[list[str]]) -> set[str]:
    """Keys of margin lines repeated on at least MIN_RUNNING_PAGES pages."""
    counts: Counter[str] = Counter()
    for lines in page_lines:
        counts.update({_running_key(lines[i]) for i in _margin(lines)})
    return {key for key, count in counts.items() if count >= MIN_RUNNING_PAGES}


# ---------------------------------------------------------------- table of contents

def _toc_entry(line: str) -> re.Match | None:
    """A table-of-contents line ("Item 7.  Management's Discussion ...  35"), or None."""
    match = _TOC_LINE.match(line) if len(line) <= 2 * MAX_TITLE_CHARS else None
    if match and _LETTER.search(match["title"]) and not _TABLE_GAP.search(match["title"]):
        return match
    return None


def _is_toc(lines: list[str]) -> bool:
    """A page with many lines ending in page numbers, in mostly ascending order."""
    pages = [m["page"] for line in lines if (m := _toc_entry(line))]
    numbers = [int(p) for p in pages if p.isdigit()]
    if len(pages) < MIN_TOC_LINES or len(pages) * 3 < sum(1 for line in lines if line):
        return False
    ascending = sum(a <= b for a, b in zip(numbers, numbers[1:]))
    return ascending >= 0.7 * (len(numbers) - 1)


def _toc_anchor(lines: list[str], skipped: set[int]) -> int:
    """Where a table-of-contents page's section starts: its title line, else its first entry."""
    for number, line in enumerate(lines):
        if number not in skipped and _TOC_TITLE.match(line):
            return number
    return next(number for number, line in enumerate(lines) if _toc_entry(line))


def _toc_title(line: str) -> str:
    """The table of contents' own title, or "Table of Contents"."""
    return line if _TOC_TITLE.match(line) else "Table of Contents"


def _toc_item_keys(page_lines: list[list[str]], toc_pages: set[int]) -> set[tuple]:
    """Ordering keys of the items a table of contents lists; empty when it lists fewer than 3."""
    keys = set()
    for index in toc_pages:
        for line in page_lines[index]:
            if match := _ITEM.match(line):
                keys.add(_item_key(match))
    return keys if len(keys) >= 3 else set()


def _item_key(match: re.Match) -> tuple:
    """Ordering key of an item: (7.0, "A") for "Item 7A", (2.02, "") for "Item 2.02"."""
    return (float(match["num"]), (match["letter"] or "").upper())


# ---------------------------------------------------------------- ordering

def _assign_parts(headings: list[_Heading]) -> list[_Heading]:
    """Prefix item keys with the current part, so 10-Q items restarting in Part II stay ordered."""
    parts = _increasing([h for h in headings if h.kind == "part"])
    kept_parts = {id(h) for h in parts}
    current = 0
    result = []
    for heading in headings:
        if heading.kind == "part":
            if id(heading) not in kept_parts:
                continue
            current = heading.key[0]
        elif heading.kind == "item":
            heading.key = (current, *heading.key)
        result.append(heading)
    return result


def _keep_increasing(headings: list[_Heading]) -> list[_Heading]:
    """Drop items and notes outside the longest increasing run of their keys."""
    items = {id(h) for h in _increasing([h for h in headings if h.kind == "item"])}
    notes = {id(h) for h in _increasing([h for h in headings if h.kind == "note"])}
    return [h for h in headings if (h.kind != "item" or id(h) in items) and (h.kind != "note" or id(h) in notes)]


def _increasing(headings: list[_Heading]) -> list[_Heading]:
    """Longest strictly increasing subsequence by key; ties go to later candidates."""
    if not headings:
        return []
    length = [1] * len(headings)
    previous = [-1] * len(headings)
    for i, heading in enumerate(headings):
        for j in range(i):
            if headings[j].key < heading.key and length[j] + 1 >= length[i]:
                length[i], previous[i] = length[j] + 1, j
    best = max(range(len(headings)), key=lambda i: (length[i], i))
    chain = []
    while best >= 0:
        chain.append(headings[best])
        best = previous[best]
    return chain[::-1]


def _merge_caps_runs(headings: list[_Heading]) -> list[_Heading]:
    """Join consecutive all-caps lines into one heading ("NOTES TO CONSOLIDATED" + "FINANCIAL STATEMENTS")."""
    merged: list[_Heading] = []
    for heading in headings:
        last = merged[-1] if merged else None
        if (last and heading.kind == last.kind == "caps" and heading.page == last.page
                and heading.line == last.line + 1):
            last.title = f"{last.title} {heading.title}"
            last.line = heading.line
        else:
            merged.append(heading)
    return merged


def _join_split_words(lines: list[str]) -> list[str]:
    """Rejoin headings laid out one word per line ("PART" / "I" / "Item" / "1." / "BUSINESS").

    Runs of consecutive single-word lines become one line, split again before "Part" and "Item".
    """
    joined: list[str] = []
    run: list[str] = []
    for line in [*lines, ""]:
        if line and " " not in line:
            if run and _SPLIT_BEFORE.match(line):
                joined.append(" ".join(run))
                run = []
            run.append(line)
            continue
        if run:
            joined.append(" ".join(run))
            run = []
        joined.append(line)
    return joined[:-1]


def _clean(line: str) -> str:
    """A line with non-breaking and repeated spaces kept as at most the two-space column gap."""
    return _WIDE_GAP.sub("  ", line.replace("\xa0", " ").strip())
