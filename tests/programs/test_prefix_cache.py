"""The prompt prefix cache's bookkeeping (the KV states themselves are the real model's, in test_lm.py)."""
from __future__ import annotations

from ferret.programs.prefix_cache import Entry, PrefixCache, shared_prefix


def test_the_longest_shared_prefix_wins_and_is_used_last():
    cache = PrefixCache(max_bytes=100)
    cache.put(Entry((1, 2, 3, 4), b"a" * 10))
    cache.put(Entry((1, 2, 9), b"b" * 10))
    cache.put(Entry((7, 8), b"c" * 10))
    assert shared_prefix([1, 2, 3], (1, 2, 9)) == 2
    assert cache.longest([1, 2, 3, 5]) == (3, cache.entries[(1, 2, 3, 4)])
    assert cache.longest([5]) == (0, None)
    assert list(cache.entries)[-1] == (1, 2, 3, 4)  # moved to the end: the most recently used


def test_an_entry_replaces_those_it_extends_and_the_oldest_go_past_the_bound():
    cache = PrefixCache(max_bytes=25)
    cache.put(Entry((1, 2), b"a" * 10))
    cache.put(Entry((1, 2, 3), b"b" * 10))
    assert list(cache.entries) == [(1, 2, 3)] and cache.bytes == 10
    cache.put(Entry((4,), b"c" * 10))
    cache.longest([1, 2, 3])  # used again: (4,) is now the oldest
    cache.put(Entry((5,), b"d" * 10))
    assert list(cache.entries) == [(1, 2, 3), (5,)] and cache.bytes == 20
    cache.put(Entry((6,), b"e" * 30))  # larger than the whole bound: not kept, nothing dropped
    assert list(cache.entries) == [(1, 2, 3), (5,)]
