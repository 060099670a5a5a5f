"""The embedded model's prompt prefixes, kept: each call starts from the KV state of the longest prefix of
its prompt that an earlier call computed.

Most of a question's prompt tokens repeat across questions: each step's instructions, field
descriptions and demos come before the question's own fields. llama-cpp-python reuses only the prefix
shared with the call just before, which is another step's prompt. So after each call the KV state of
its prompt (the sequence's cells, `llama_state_seq_get_data`: about 12 KB a token for the 0.5B model)
is kept in a cache bounded in bytes, least recently used first out; before each call the entry sharing
the longest prefix with the new prompt is restored into the context when it shares more than the
context already holds, and only the rest of the prompt is computed. The tokens computed are the same
tokens at the same positions, as with llama.cpp's own prompt caches. But the rest is computed in other
batches than the whole prompt would be, and llama.cpp's arithmetic depends on the batches (a last batch
of 10 to 110 tokens moved a 2,158-token prompt's logits by up to 0.32): so a text can differ from the
one computed whole, as it can with those caches.

The part of a prompt before its last message (a step's instructions, field descriptions and demos; the
last message holds the question's own fields) is also saved to disk (`SavedPrefixes`), so a new process
(each `ferret ask`, each evaluation) starts its first question from it instead of computing some 6,000
prompt tokens of instructions anew.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import llama_cpp
import numpy as np
from llama_cpp import Llama
from llama_cpp import llama_cpp as capi

from ferret.paths import cache_dir

MIN_RESTORED = 32  # a restore is worth it when it spares at least this many tokens
MIN_SAVED = 256  # a prompt's part before its last message is saved to disk when it is at least this long
# Tokens taken off that part's end: the chat template's tokens after the last message's text, and any
# merged across its edges (so what is saved never holds a token of the last message).
EDGE_TOKENS = 16


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


class SavedPrefixes:
    """Prompt prefixes' KV states in a folder, at most `max_bytes` in all, the least recently used
    dropped first; each entry is its tokens (`<key>.npy`) and its state (`<key>.state`), written whole
    or not at all, so processes can share the folder."""

    def __init__(self, folder: Path, max_bytes: int):
        self.folder, self.max_bytes = Path(folder), max_bytes
        self.folder.mkdir(parents=True, exist_ok=True)
        self.tokens: dict[str, tuple[int, ...]] = {}
        for path in self.folder.glob("*.npy"):
            try:
                self.tokens[path.stem] = tuple(np.load(path).tolist())
            except (OSError, ValueError):  # a file another process is replacing
                continue

    def longest(self, tokens: list[int]) -> tuple[int, str | None]:
        """The saved prefix of `tokens` that is longest (its length and key; 0, None when none is)."""
        best, found = 0, None
        for key, saved in self.tokens.items():
            if len(saved) > best and tuple(tokens[:len(saved)]) == saved:
                best, found = len(saved), key
        return best, found

    def load(self, key: str) -> Entry | None:
        """The entry saved under `key` (None if another process dropped it)."""
        try:
            state = (self.folder / f"{key}.state").read_bytes()
            os.utime(self.folder / f"{key}.state")  # used now: the last to be dropped
        except OSError:
            self.tokens.pop(key, None)
            return None
        return Entry(self.tokens[key], state)

    def save(self, entry: Entry) -> None:
        """Write `entry`, then drop the least recently used entries past the bound."""
        key = hashlib.sha1(np.asarray(entry.tokens, dtype=np.int32).tobytes()).hexdigest()[:20]
        for suffix, data in ((".state", entry.state), (".npy", None)):
            temporary = self.folder / f".{key}{suffix}.{os.getpid()}"
            if data is None:
                with open(temporary, "wb") as handle:
                    np.save(handle, np.asarray(entry.tokens, dtype=np.int32))
            else:
                temporary.write_bytes(data)
            temporary.replace(self.folder / f"{key}{suffix}")
        self.tokens[key] = entry.tokens
        states = sorted(self.folder.glob("*.state"), key=lambda path: path.stat().st_mtime, reverse=True)
        total = 0
        for path in states:
            total += path.stat().st_size
            if total > self.max_bytes:
                path.unlink(missing_ok=True)
                (self.folder / f"{path.stem}.npy").unlink(missing_ok=True)
                self.tokens.pop(path.stem, None)


def saved_prefixes_dir(model: str | Path) -> Path:
    """The folder of a model's saved prompt prefixes: one per model file and llama.cpp build, whose KV
    states only they can read."""
    model = Path(model).resolve()
    stat = model.stat()
    identity = f"{model}:{stat.st_size}:{stat.st_mtime_ns}:{llama_cpp.__version__}"
    return cache_dir("prefixes") / f"{model.stem}-{hashlib.sha1(identity.encode()).hexdigest()[:12]}"


class PrefixCachedLlama(Llama):
    """llama_cpp.Llama whose calls start from the longest cached prompt prefix (module rules), bounded by
    `prefix_cache_mb` (0: no cache, llama-cpp-python's own reuse of the previous prompt only), and the
    part of each prompt before its last message (`before_last_message`) saved on disk, at most
    `saved_prefix_mb` (0: none saved). Each call's
    figures are in `last_call`: prompt tokens, those restored or reused rather than computed, output
    tokens, prefill seconds (to the first token) and decode seconds (the rest)."""

    def __init__(self, *args, prefix_cache_mb: int = 0, saved_prefix_mb: int = 0, **kwargs):
        super().__init__(*args, **kwargs)
        self.prefix_cache = PrefixCache(prefix_cache_mb * 2 ** 20) if prefix_cache_mb else None
        self.saved_prefixes = (SavedPrefixes(saved_prefixes_dir(self.model_path), saved_prefix_mb * 2 ** 20)
                               if prefix_cache_mb and saved_prefix_mb else None)
        self._last_message_tokens: int | None = None
        self.last_call: dict = {}

    def before_last_message(self, text: str) -> None:
        """The next prompt's last message is `text`: the part before it is the one to save."""
        self._last_message_tokens = len(self.tokenize(text.encode(), add_bos=False)) + EDGE_TOKENS

    def generate(self, tokens, *args, **kwargs):
        tokens = list(tokens)
        started = time.perf_counter()
        saved = self._restore(tokens) if self.prefix_cache is not None else 0
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
                self._save(tokens, saved)

    def _restore(self, tokens: list[int]) -> int:
        """Put the cached or saved state sharing the most of `tokens` into the context, when it shares at
        least MIN_RESTORED more than the context holds; the length of the longest saved prefix of `tokens`."""
        held = shared_prefix(self.input_ids[:self.n_tokens].tolist(), tokens)
        shared, entry = self.prefix_cache.longest(tokens)
        saved, key = self.saved_prefixes.longest(tokens) if self.saved_prefixes else (0, None)
        if key is not None and saved > shared and (loaded := self.saved_prefixes.load(key)) is not None:
            shared, entry = saved, loaded
            self.prefix_cache.put(entry)
        if entry is None or shared < held + MIN_RESTORED:
            return saved
        self._ctx.kv_cache_seq_rm(-1, 0, -1)
        state = (ctypes.c_uint8 * len(entry.state)).from_buffer_copy(entry.state)
        if capi.llama_state_seq_set_data(self._ctx.ctx, state, len(entry.state), 0) == 0:
            self.n_tokens = 0  # not restored: the prompt is computed whole
            return saved
        self.input_ids[:len(entry.tokens)] = entry.tokens
        self.n_tokens = len(entry.tokens)
        self._requires_eval = True
        return saved

    def _save(self, tokens: list[int], saved: int) -> None:
        """Save the part of the prompt before its last message, when it is long enough and longer than
        `saved`, the longest saved prefix of the prompt (the context holds the prompt, `_keep`)."""
        last, self._last_message_tokens = self._last_message_tokens, None
        if self.saved_prefixes is None or last is None:
            return
        part = len(tokens) - last
        if part < MIN_SAVED or self.n_tokens < part or saved >= part:
            return
        self._ctx.kv_cache_seq_rm(-1, part, -1)
        self.n_tokens = part
        self.saved_prefixes.save(Entry(tuple(tokens[:part]), self._state()))

    def _state(self) -> bytes:
        """The KV state of the context's tokens."""
        size = capi.llama_state_seq_get_size(self._ctx.ctx, 0)
        state = (ctypes.c_uint8 * size)()
        written = capi.llama_state_seq_get_data(self._ctx.ctx, state, size, 0)
        return bytes(state[:written])

    def _keep(self, prompt_tokens: int) -> None:
        """Cache the KV state of the call's prompt (its output's cells dropped first)."""
        if self.n_tokens < prompt_tokens or prompt_tokens < MIN_RESTORED:
            return
        self._ctx.kv_cache_seq_rm(-1, prompt_tokens, -1)
        self.n_tokens = prompt_tokens
        self.prefix_cache.put(Entry(tuple(self.input_ids[:prompt_tokens].tolist()), self._state()))
