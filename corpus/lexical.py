"""BM25 over segment texts (and annotation labels): bm25s's tokenizer (English stemming and stopwords)
and term counts kept per shard, scored at query time with the statistics of every shard together.

bm25s bakes each term's IDF and the corpus's average length into its index, so an index built per
shard would rank by that shard's statistics. A shard here keeps raw term counts instead, and `BM25`
scores the live rows of all shards with their global row count, average length and document
frequencies: the scores are those of one bm25s index (its default Lucene variant) built over the live
rows, whatever the shards and deletions (tests/corpus/test_lexical.py checks this against bm25s).
"""
from __future__ import annotations

import json
from pathlib import Path

import bm25s
import numpy as np
import Stemmer

_STEMMER = Stemmer.Stemmer("english")
K1, B = 1.5, 0.75  # bm25s's defaults


def tokenize(texts: list[str]) -> list[list[str]]:
    return bm25s.tokenize(texts, stopwords="en", stemmer=_STEMMER, return_ids=False, show_progress=False)


class TermCounts:
    """One shard's term counts: for term t (column `terms[t]`), the rows holding it, ascending,
    `rows[starts[c]:starts[c + 1]]`, with its counts in them; and each row's length in tokens."""

    def __init__(self, terms: dict[str, int], starts: np.ndarray, rows: np.ndarray, counts: np.ndarray,
                 lengths: np.ndarray):
        self.terms, self.starts, self.rows, self.counts, self.lengths = terms, starts, rows, counts, lengths

    @property
    def size(self) -> int:
        return len(self.lengths)

    @classmethod
    def build(cls, texts: list[str]) -> "TermCounts":
        tokenized = bm25s.tokenize(texts, stopwords="en", stemmer=_STEMMER, show_progress=False) if texts else None
        ids = tokenized.ids if tokenized else []
        tokens = np.array([len(row) for row in ids], dtype=np.int64)
        flat = np.fromiter((t for row in ids for t in row), dtype=np.int64, count=int(tokens.sum()))
        pairs, counts = np.unique(flat * max(len(texts), 1) + np.repeat(np.arange(len(texts)), tokens),
                                  return_counts=True)  # sorted by term, then row
        lengths = np.maximum(tokens, 1)  # a row without terms is one token long, as in bm25s (which needs one)
        vocabulary = tokenized.vocab if tokenized else {}
        columns = pairs // max(len(texts), 1)
        starts = np.concatenate([[0], np.cumsum(np.bincount(columns, minlength=len(vocabulary)))])
        return cls(vocabulary, starts.astype(np.int64), (pairs % max(len(texts), 1)).astype(np.int32),
                   counts.astype(np.float32), lengths.astype(np.float32))

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "terms.json").write_text(json.dumps(sorted(self.terms, key=self.terms.get)))
        np.savez(directory / "counts.npz", starts=self.starts, rows=self.rows, counts=self.counts, lengths=self.lengths)

    @classmethod
    def load(cls, directory: Path) -> "TermCounts":
        terms = json.loads((directory / "terms.json").read_text())
        with np.load(directory / "counts.npz") as arrays:
            return cls({term: i for i, term in enumerate(terms)}, arrays["starts"], arrays["rows"], arrays["counts"],
                       arrays["lengths"])

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        column = self.terms.get(term)
        if column is None:
            return None
        start, stop = self.starts[column], self.starts[column + 1]
        return self.rows[start:stop], self.counts[start:stop]


class BM25:
    """BM25 over the live rows of shards' term counts, one row space: shard 0's rows, then shard 1's...
    `live[i]` says which rows of shard i still exist (None: all).

    A search scoped to some rows (`scores(query, within)`: one document, a bucket, a filter) is scored with
    the statistics of those rows, as one bm25s index of them would be: a term printed on every page of
    a filing tells its pages apart no more than a stopword does, however rare it is in the corpus."""

    def __init__(self, shards: list[TermCounts], live: list[np.ndarray | None]):
        self.shards, self.live = shards, live
        self.size = sum(shard.size for shard in shards)
        self.offsets = np.cumsum([0, *(shard.size for shard in shards)])
        self.rows_alive, self.average = self._statistics(live)

    def _statistics(self, live: list[np.ndarray | None]) -> tuple[int, float]:
        """The number of rows `live` keeps, and their average length."""
        lengths = [shard.lengths if alive is None else shard.lengths[alive] for shard, alive in zip(self.shards, live)]
        rows = sum(len(part) for part in lengths)
        return rows, float(sum(part.sum(dtype=np.float64) for part in lengths)) / max(rows, 1)

    def scores(self, query: str, within: np.ndarray | None = None) -> np.ndarray:
        """BM25 score of every row for `query` (zeros for rows without a query term, and dead rows); with
        `within` (a boolean mask over the row space), of the live rows it allows, by their statistics, and
        zero elsewhere."""
        live, rows_alive, average = self.live, self.rows_alive, self.average
        if within is not None:
            live = [within[start:stop] if alive is None else alive & within[start:stop]
                    for alive, start, stop in zip(self.live, self.offsets, self.offsets[1:])]
            rows_alive, average = self._statistics(live)
        tokens = tokenize([query])[0] if self.size else []
        found = {term: [self._live_postings(i, term, live[i]) for i in range(len(self.shards))]
                 for term in dict.fromkeys(tokens)}
        scores = [np.zeros(shard.size, dtype=np.float32) for shard in self.shards]
        for term in tokens:  # a repeated query term counts again, as in bm25s
            postings = found[term]
            frequency = sum(len(rows) for rows, _ in postings)
            if frequency == 0:
                continue
            idf = np.float64(np.float32(np.log(1 + (rows_alive - frequency + 0.5) / (frequency + 0.5))))
            for i, (rows, counts) in enumerate(postings):
                norms = K1 * (1 - B + B * self.shards[i].lengths[rows].astype(np.float64) / max(average, 1e-9))
                # bm25s's arithmetic: a term's score rounded to float32 once, added up in float32 term by term
                scores[i][rows] += (idf * counts / (norms + counts)).astype(np.float32)
        return np.concatenate(scores or [np.zeros(0, dtype=np.float32)])

    def _live_postings(self, shard: int, term: str, alive: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        postings = self.shards[shard].postings(term)
        if postings is None:
            return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float32)
        return postings if alive is None else (postings[0][alive[postings[0]]], postings[1][alive[postings[0]]])
