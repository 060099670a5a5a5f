"""The embedded model's prompt prefixes, kept: each call starts from the KV state of the longest prefix of
its prompt that an earlier call computed.

Most of a question's prompt tokens repeat across questions: each step's instructions, field
descriptions and demos come before the question's own fields. llama-cpp-python reuses only the prefix
shared with the call just before, which is another step's prompt. So after each call the KV state of
its prompt (the sequence's cells, `llama_state_seq_get_data`: about 12 KB a token for the 0.5B model)
is kept in a cache bounded in bytes, least recently used first out; before each call the entry sharing
the longest prefix with the new prompt is restored into the context when it shares more than the
context already holds, and only the rest of the prompt is computed. The tokens computed are the same
tokens at the same positions, so the output is the same (as llama.cpp's own prompt caches).
"""
from __future__ import annotations

import ctypes
import time
from collections import OrderedDict
from dataclasses import dataclass

from llama_cpp import Llama
from llama_cpp import llama_cpp as capi

MIN_RESTORED = 32  # a restore is worth it when it spares at least this many tokens


@dataclass
class Entry:
    tokens: tuple[int, ...]
    state: bytes


def shared_prefix(a, b) -> int:
    """How many leading tokens `a` and `b` share."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


class PrefixCache:
    """Prompt KV states by their tokens, at most `max_bytes` in all, least recently used dropped first."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self.entries: OrderedDict[tuple[int, ...], Entry] = OrderedDict()
        self.bytes = 0

    def longest(self, tokens: list[int]) -> tuple[int, Entry | None]:
        """The entry sharing the longest prefix with `tokens`, and that length (0, None when none does)."""
        best, found = 0, None
        for entry in self.entries.values():
            n = shared_prefix(entry.tokens, tokens)
            if n > best:
                best, found = n, entry
        if found is not None:
            self.entries.move_to_end(found.tokens)
        return best, found

    def put(self, entry: Entry) -> None:
        """Keep `entry`, replacing any entry whose tokens it extends; drop the oldest beyond the bound."""
        if len(entry.state) > self.max_bytes:
            return
        for tokens in [t for t in self.entries if entry.tokens[:len(t)] == t]:
            self.bytes -= len(self.entries.pop(tokens).state)
        self.entries[entry.tokens] = entry
        self.bytes += len(entry.state)
        while self.bytes > self.max_bytes:
            self.bytes -= len(self.entries.popitem(last=False)[1].state)


class PrefixCachedLlama(Llama):
    """llama_cpp.Llama whose calls start from the longest cached prompt prefix (module rules), bounded by
    `prefix_cache_mb` (0: no cache, llama-cpp-python's own reuse of the previous prompt only). Each call's
    figures are in `last_call`: prompt tokens, those restored or reused rather than computed, output
    tokens, prefill seconds (to the first token) and decode seconds (the rest)."""

    def __init__(self, *args, prefix_cache_mb: int = 0, **kwargs):
        super().__init__(*args, **kwargs)
        self.prefix_cache = PrefixCache(prefix_cache_mb * 2 ** 20) if prefix_cache_mb else None
        self.last_call: dict = {}

    def generate(self, tokens, *args, **kwargs):
        tokens = list(tokens)
        started = time.perf_counter()
        if self.prefix_cache is not None:
            self._restore(tokens)
        kept = shared_prefix(self.input_ids[:self.n_tokens].tolist(), tokens)
        call = {"prompt_tokens": len(tokens), "cached_tokens": min(kept, len(tokens) - 1), "output_tokens": 0,
                "prefill_seconds": 0.0, "decode_seconds": 0.0}
        self.last_call = call
        inner, first = super().generate(tokens, *args, **kwargs), None
        try:
            token = next(inner)
            first = time.perf_counter()
            call["prefill_seconds"] = round(first - started, 3)
            while True:
                call["output_tokens"] += 1
                token = inner.send((yield token))  # what the caller sends back, as llama-cpp-python takes it
        except StopIteration:
            return
        finally:
            inner.close()
            call["decode_seconds"] = round(time.perf_counter() - (first or started), 3)
            if self.prefix_cache is not None:
                self._keep(len(tokens))

    def _restore(self, tokens: list[int]) -> None:
        """Put the cached state sharing the most of `tokens` into the context, when it shares at least
        MIN_RESTORED more than the context holds."""
        held = shared_prefix(self.input_ids[:self.n_tokens].tolist(), tokens)
        shared, entry = self.prefix_cache.longest(tokens)
        if entry is None or shared < held + MIN_RESTORED:
            return
        self._ctx.kv_cache_seq_rm(-1, 0, -1)
        state = (ctypes.c_uint8 * len(entry.state)).from_buffer_copy(entry.state)
        if capi.llama_state_seq_set_data(self._ctx.ctx, state, len(entry.state), 0) == 0:
            self.n_tokens = 0  # not restored: the prompt is computed whole
            return
        self.input_ids[:len(entry.tokens)] = entry.tokens
        self.n_tokens = len(entry.tokens)
        self._requires_eval = True

    def _keep(self, prompt_tokens: int) -> None:
        """Cache the KV state of the call's prompt (its output's cells dropped first)."""
        if self.n_tokens < prompt_tokens or prompt_tokens < MIN_RESTORED:
            return
        self._ctx.kv_cache_seq_rm(-1, prompt_tokens, -1)
        self.n_tokens = prompt_tokens
        size = capi.llama_state_seq_get_size(self._ctx.ctx, 0)
        state = (ctypes.c_uint8 * size)()
        written = capi.llama_state_seq_get_data(self._ctx.ctx, state, size, 0)
        self.prefix_cache.put(Entry(tuple(self.input_ids[:prompt_tokens].tolist()), bytes(state[:written])))
