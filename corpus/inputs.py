"""What the tools accept: limits on counts, and checks that raise ValueError naming the bad value
(light to import: the CLI checks its options with them before loading anything)."""
from __future__ import annotations

MAX_TOP_K = 1000
MAX_CONTEXT_CHARS = 100_000


def check_query(name: str, text) -> None:
    """Raise ValueError unless `text` is a string with something to search for."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{name} {text!r} is empty: give words to search for")


def check_count(name: str, value, low: int, high: int) -> None:
    """Raise ValueError unless `value` is a whole number from `low` to `high`."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name} must be a whole number from {low} to {high}, not {value!r}")
