"""BM25 over segment texts (and annotation labels) with bm25s, English stemming and stopwords."""
from __future__ import annotations

from pathlib import Path

import bm25s
import numpy as np
import Stemmer

_STEMMER = Stemmer.Stemmer("english")


def tokenize(texts: list[str]) -> list[list[str]]:
    return bm25s.tokenize(texts, stopwords="en", stemmer=_STEMMER, return_ids=False, show_progress=False)


class LexicalIndex:
    """A bm25s index whose row i is the item at position i of the caller's id map."""

    def __init__(self, retriever: bm25s.BM25, size: int):
        self.retriever = retriever
        self.size = size

    @classmethod
    def build(cls, texts: list[str]) -> "LexicalIndex":
        retriever = bm25s.BM25()
        tokens = tokenize(texts) if texts else []
        # bm25s cannot index an empty corpus or all-empty documents; a placeholder token keeps rows aligned
        retriever.index([t or ["\x00"] for t in tokens] or [["\x00"]], show_progress=False)
        return cls(retriever, len(texts))

    def save(self, directory: Path) -> None:
        self.retriever.save(str(directory), show_progress=False)
        (directory / "size").write_text(str(self.size))

    @classmethod
    def load(cls, directory: Path) -> "LexicalIndex":
        retriever = bm25s.BM25.load(str(directory), mmap=False, show_progress=False)
        return cls(retriever, int((directory / "size").read_text()))

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every row for `query` (zeros when no query term is in the vocabulary)."""
        if self.size == 0:
            return np.zeros(0, dtype=np.float32)
        terms = [t for t in tokenize([query])[0] if t in self.retriever.vocab_dict]
        if not terms:
            return np.zeros(self.size, dtype=np.float32)
        return self.retriever.get_scores(terms)[: self.size]
