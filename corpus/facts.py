"""Facts printed as "Label: value" ("Invoice number: INV-2023-0042", "Total: $1,234.50").

A line may hold several facts separated by a column gap ("Date: 2023-04-01  Vendor: Acme Tire Co."),
and a value may sit in the cell after "Label:". Labels are short noun phrases (1-6 words starting
with a capital letter); values are non-empty, at most 80 characters and 10 words, which keeps
prose out.
"""
from __future__ import annotations

import re

from ferret.corpus.numbers import parse_value
from ferret.corpus.records import Fact

_GAP = re.compile(r"[ \xa0]{2,}")
_FACT = re.compile(r"(?P<label>[A-Z][^:]{0,59}?)\s*:(?:\s+(?P<value>\S.*))?")
_MAX_WORDS = 6
_MAX_VALUE = 80
_MAX_VALUE_WORDS = 10
# A label that opens a sentence or ends in a verb introduces prose, not a value.
_SENTENCE_START = {"the", "a", "an", "we", "our", "it", "its", "this", "that", "these", "those", "they",
                   "he", "she", "i", "you", "in", "on", "at", "as", "for", "and", "but", "if", "when", "there"}
_SENTENCE_END = {"said", "says", "stated", "noted", "added", "include", "includes", "including",
                 "follows", "following", "is", "are", "was", "were", "be"}


def _is_label(label: str) -> bool:
    """1-6 words with balanced parentheses, not opening a sentence nor ending in a verb that introduces one."""
    words = label.split()
    return (0 < len(words) <= _MAX_WORDS and label.count("(") == label.count(")") and words[0].lower() not in _SENTENCE_START
            and words[-1].lower() not in _SENTENCE_END)


def find_facts(lines: list[str]) -> list[Fact]:
    """The "Label: value" facts of one page's lines, in order."""
    facts = []
    for index, line in enumerate(lines):
        cells = [cell.strip() for cell in _GAP.split(line) if cell.strip()]
        for position, cell in enumerate(cells):
            match = _FACT.fullmatch(cell)
            if not match or not _is_label(match["label"]):
                continue
            value = match["value"]
            if value is None and position + 1 < len(cells) and ":" not in cells[position + 1]:
                value = cells[position + 1]  # "Total:  $1,234.50"
            if value and len(value) <= _MAX_VALUE and len(value.split()) <= _MAX_VALUE_WORDS:
                facts.append(Fact(match["label"].strip(), parse_value(value), index))
    return facts
