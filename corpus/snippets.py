"""What a search shows of a long passage: the `context_chars` of it that hold most of the query's words.

A passage is cut at its sentences and lines (`corpus.words.sentences`), and the shown run of them is the one
that holds the most distinct words of the query (content words and numbers, `corpus.words.stems`); of equal
runs, the one whose first sentence holds most, then the earliest; a passage that holds none is shown from its
start. A table's title and header lines (the lines above its first row, `corpus.tables.find_tables`) are shown
above the run of its rows, so that every value shown keeps its column's name, unless they take half the
characters or more. This is what a search engine's highlighter does (the best
fragment by query terms), with no weight: the earlier rule (the window around the first query word found,
a function word's as much as a name's) showed most passages from their start whatever they were found for.
"""
from __future__ import annotations

from ferret.corpus.tables import find_tables
from ferret.corpus.words import sentences, stems

GAP = "…"


def snippet(text: str, query: str, context_chars: int, table: bool = False) -> str:
    """`context_chars` of `text` (module rules): all of it when it fits; else the run of its sentences and
    lines that holds most of the query's words, with "…" where text is left out; a `table` keeps its head."""
    if len(text) <= context_chars:
        return text
    if context_chars <= 0:  # a search for its ranking alone (a retrieval eval, a settings compile)
        return ""
    head = _head(text) if table else ""
    if len(head) >= context_chars // 2:
        head = ""
    body = text[len(head):]
    budget = context_chars - len(head)
    start = _best_start(body, stems(query, numbers=True), budget)
    start = max(0, min(start, len(body) - budget))
    shown = body[start:start + budget]
    cut = (GAP + ("\n" if head else "")) if start else ""
    return head + cut + shown + (GAP if start + budget < len(body) else "")


def _head(text: str) -> str:
    """A table passage's lines above its first row (title, scale and header lines), "" when it has no rows."""
    lines = text.split("\n")
    rows = [row.line_index for table in find_tables(lines) for row in table.rows]
    return "\n".join(lines[:min(rows)]) + "\n" if rows and min(rows) > 0 else ""


def _best_start(text: str, asked: set[str], budget: int) -> int:
    """The offset of the sentence or line that starts the run of whole sentences and lines, within `budget`
    characters, holding most of `asked`; of equal runs, the one whose first sentence holds most, then the
    first (0 when none holds any)."""
    parts, position = [], 0
    for part in sentences(text, lines=True):
        position = text.find(part, position)
        parts.append((position, position + len(part), stems(part, numbers=True) & asked))
        position += len(part)
    best, best_start = (0, 0), 0
    for index, (start, _, first) in enumerate(parts):
        found = set(first)
        for _, end, words in parts[index + 1:]:
            if end > start + budget:
                break
            found |= words
        if (len(found), len(first)) > best:
            best, best_start = (len(found), len(first)), start
    return best_start
