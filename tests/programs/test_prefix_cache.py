"""The prompt prefix cache's and the saved prefixes' bookkeeping (the KV states themselves are the real
model's, in test_lm.py)."""
from __future__ import annotations

import os

from ferret.programs.prefix_cache import Entry, PrefixCache, SavedPrefixes, shared_prefix


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


def test_saved_prefixes_are_read_by_another_instance_and_the_least_recently_used_go_past_the_bound(tmp_path):
    saved = SavedPrefixes(tmp_path, max_bytes=25)
    saved.save(Entry((1, 2, 3), b"a" * 10))
    saved.save(Entry((4, 5), b"b" * 10))
    other = SavedPrefixes(tmp_path, max_bytes=25)  # another process, later
    assert other.longest([1, 2, 3, 9]) == (3, other.longest([1, 2, 3])[1])
    assert other.longest([1, 2]) == (0, None)  # a saved prefix must be whole
    entry = other.load(other.longest([1, 2, 3, 9])[1])
    assert entry.tokens == (1, 2, 3) and entry.state == b"a" * 10
    os.utime(tmp_path / f"{other.longest([4, 5])[1]}.state", (1, 1))  # (4, 5) used longest ago
    other.save(Entry((6,), b"c" * 10))
    assert other.longest([4, 5]) == (0, None) and other.longest([1, 2, 3])[0] == 3
    assert sorted(path.suffix for path in tmp_path.iterdir()) == [".npy", ".npy", ".state", ".state"]
