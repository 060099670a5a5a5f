"""The derived search indexes of an index directory, in immutable shards.

Each ingest commit writes one shard, `shard-N/`, for the segments, annotation labels and chunk
summaries it added: their ids, vectors (`dense.VectorIndex`) and term counts (`lexical.TermCounts`),
under `segments/`, `labels/` and `chunks/`. The `shard` column of a segments or labels row names the shard that holds it, so a row
deleted or replaced leaves its shard's files as they are and is simply no longer live there. An
ingest's cost therefore follows what it adds, not what the index holds.

Searches run over the live rows of every shard at once (`ShardedIndex`): BM25 with the statistics of
all of them (exactly one index's scores, see `corpus.lexical`), dense search as the best rows of each
shard (exact, or an HNSW graph in a shard of `dense.ANN_MIN_ROWS` distinct vectors or more). `compact` writes
one shard of every live row in place of all the others.
"""
from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ferret.corpus.dense import VectorIndex, embedder_name
from ferret.corpus.filters import infer_type
from ferret.corpus.lexical import BM25, TermCounts
from ferret.corpus.passages import content_hash
from ferret.corpus.ranking import top_rows
from ferret.corpus.store import Store, one_writer_at_a_time

KINDS = ("segments", "labels", "chunks")


def build_shard(store: Store, model_name: str, number: int, everything: bool = False) -> bool:
    """Write shard `number` of the segments, labels and chunk summaries not in a shard yet (of every one
    with `everything`) and make them its rows, inside the caller's transaction; False, and nothing
    written, when there are none."""
    directory = store.shard_dir(number)
    shutil.rmtree(directory, ignore_errors=True)  # left by a transaction that did not commit
    pending = "" if everything else " WHERE s.shard IS NULL"
    segments, chunks = (store.conn.execute(
        f"SELECT s.id, s.title, s.text, s.text_hash, e.vector FROM {table} s LEFT JOIN embeddings e "
        f"ON e.model = ? AND e.text_hash = s.text_hash{pending} ORDER BY s.id", (model_name,)).fetchall()
        for table in ("segments", "chunks"))
    labels = store.conn.execute(f"SELECT s.id, s.text FROM labels s{pending} ORDER BY s.id").fetchall()
    if not segments and not labels and not chunks:
        return False
    label_keys = [content_hash(row["text"]) for row in labels]
    label_vectors = store.cached_vectors(model_name, label_keys)
    for table, rows in (("segments", segments), ("chunks", chunks)):
        _write(directory / table, [row["id"] for row in rows],
               VectorIndex.of_rows([row["text_hash"] for row in rows], [row["vector"] for row in rows]),
               [_indexed_text(row["title"], row["text"]) for row in rows])
    _write(directory / "labels", [row["id"] for row in labels],
           VectorIndex.of_rows(label_keys, [label_vectors.get(key) for key in label_keys]), [row["text"] for row in labels])
    for table in KINDS:
        store.conn.execute(f"UPDATE {table} SET shard = ?{pending.replace('s.', '')}", (number,))
    return True


def _write(directory: Path, ids: list[int], vectors: VectorIndex, texts: list[str]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    np.save(directory / "ids.npy", np.array(ids, dtype=np.int64))
    vectors.save(directory / "vectors.npy")
    TermCounts.build(texts).save(directory / "terms")


def _indexed_text(title: str, text: str) -> str:
    return text if not title or title in text else f"{title}\n{text}"


def write_shard(store: Store, model_name: str, everything: bool = False) -> None:
    """After documents were inserted, deleted or moved (in the caller's transaction): drop labels no
    annotation uses, recompute the buckets' schemas, write the shard of the rows added (of every row
    with `everything`) and list it, unlist the shards left without live rows, and count one more
    generation."""
    store.conn.execute("DELETE FROM labels WHERE id NOT IN (SELECT label_id FROM annotations)")
    store.refresh_bucket_schemas(infer_type)
    number = store.next_shard()
    if build_shard(store, model_name, number, everything):
        store.set_shards([*store.shards, number])
    drop_empty_shards(store)
    store.set_meta("generation", str(store.generation + 1))


def drop_empty_shards(store: Store) -> None:
    """Take the shards no live row is in any more off the list (inside the caller's transaction)."""
    store.set_shards([number for number in store.shards if any(
        store.conn.execute(f"SELECT 1 FROM {table} WHERE shard = ? LIMIT 1", (number,)).fetchone() for table in KINDS)])


@contextmanager
def one_commit(index_dir: str | Path, everything: bool = False) -> Iterator[Store]:
    """The index's store, under its write lock, for changes that commit with the shard of what they
    added (see write_shard), or roll back if the block raises."""
    store = Store(index_dir)
    try:
        with one_writer_at_a_time(store.dir), committing(store, everything):
            yield store
    finally:
        store.close()


@contextmanager
def committing(store: Store, everything: bool = False) -> Iterator[Store]:
    """`store`'s changes in the block, committed with the shard of what they added (all when
    `everything`), or rolled back if the block raises; the caller holds the write lock."""
    with store.transaction():
        yield store
        write_shard(store, embedder_name(store.meta("embedder_spec")), everything)
    store.remove_unlisted_shards()


def compact(index_dir: str | Path) -> dict:
    """Merge every shard of the index into one (live rows only), atomically; an index whose shards are
    missing or of an older layout gets them this way too. Returns what it did."""
    clock = time.perf_counter()
    with one_commit(index_dir, everything=True) as store:
        before = len(store.shards)
    store = Store(index_dir)
    try:
        return {"index": str(store.dir), "shards_before": before, "shards_after": len(store.shards),
                "segments": store.conn.execute("SELECT COUNT(*) FROM segments").fetchone()[0],
                "seconds": round(time.perf_counter() - clock, 2)}
    finally:
        store.close()


class ShardedIndex:
    """The segments (or labels) of every shard as one row space: shard 0's rows, then shard 1's, ...
    `ids[row]` is the row's item id. Rows whose item was deleted since are dead: never returned."""

    def __init__(self, numbers: list[int], ids: list[np.ndarray], vectors: list[VectorIndex], terms: list[TermCounts],
                 live: list[np.ndarray | None]):
        self.numbers = numbers
        self.ids = np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64)
        self.offsets = np.cumsum([0, *map(len, ids)])
        self.parts, self.vectors, self.live = ids, vectors, live
        self.lexical = BM25(terms, live)

    @classmethod
    def load(cls, store: Store, table: str, owners: np.ndarray | None = None) -> "ShardedIndex":
        """The shards' files of `table`'s rows; a row is live when its (shard, id) pair is in `owners`
        (read from the table when not given)."""
        if owners is None:
            owners = np.array(store.conn.execute(f"SELECT shard, id FROM {table} WHERE shard IS NOT NULL").fetchall(),
                              dtype=np.int64).reshape(-1, 2)
        ids, vectors, terms, live = [], [], [], []
        for number in store.shards:
            directory = store.shard_dir(number) / table
            if directory.is_dir():
                ids.append(np.load(directory / "ids.npy"))
                vectors.append(VectorIndex.load(directory / "vectors.npy"))
                terms.append(TermCounts.load(directory / "terms"))
            else:  # a shard written before the index had this kind of row (chunks) holds none of them
                ids.append(np.zeros(0, dtype=np.int64))
                vectors.append(VectorIndex.of_rows([], []))
                terms.append(TermCounts.build([]))
            alive = np.isin(ids[-1], owners[owners[:, 0] == number, 1])
            live.append(None if alive.all() else alive)
        return cls(list(store.shards), ids, vectors, terms, live)

    def rows_of(self, owners: np.ndarray) -> np.ndarray:
        """The rows of live items given as (shard, id) pairs."""
        rows = np.zeros(len(owners), dtype=np.int64)
        for i, number in enumerate(self.numbers):
            chosen = owners[:, 0] == number
            rows[chosen] = self.offsets[i] + np.searchsorted(self.parts[i], owners[chosen, 1])
        return rows

    def live_ids(self) -> np.ndarray:
        return np.concatenate([ids if alive is None else ids[alive] for ids, alive in zip(self.parts, self.live)]
                              or [np.zeros(0, dtype=np.int64)])

    @property
    def approximate(self) -> bool:
        """Whether an unfiltered dense search walks an HNSW graph in some shard."""
        return any(vectors.approximate for vectors in self.vectors)

    def lexical_scores(self, query: str, within: np.ndarray | None = None) -> np.ndarray:
        """BM25 of every row; with `within`, of the rows it allows, by their own statistics (a search inside one
        filing weighs its terms by how they spread over that filing's pages; `BM25.scores`), zero elsewhere."""
        return self.lexical.scores(query, within)

    def top(self, query_vector: np.ndarray, k: int, mask: np.ndarray | None = None) -> list[tuple[int, float]]:
        """The `k` live rows most similar to `query_vector` among those `mask` allows, best first: the
        shards searched exactly are scored into one vector, those with a graph searched on their own."""
        exact, found = np.full(len(self.ids), -np.inf, dtype=np.float32), []
        for i, vectors in enumerate(self.vectors):
            allowed, start = self._allowed(i, mask), int(self.offsets[i])
            if vectors.approximate_for(allowed):
                found += [(start + row, score) for row, score in vectors.top(query_vector, k, allowed)]
            elif len(vectors):
                scores = vectors.scores(query_vector)
                exact[start:start + len(scores)] = scores if allowed is None else np.where(allowed, scores, -np.inf)
        return sorted(found + top_rows(exact, k), key=lambda hit: -hit[1])[:k]

    def dense_scores(self, query_vector: np.ndarray) -> np.ndarray:
        """Exact similarity of every row (dead rows: -inf)."""
        return np.concatenate([np.where(alive, scores, -np.inf) if alive is not None else scores
                               for scores, alive in ((v.scores(query_vector), a) for v, a in zip(self.vectors, self.live))]
                              or [np.zeros(0, dtype=np.float32)])

    def _allowed(self, shard: int, mask: np.ndarray | None) -> np.ndarray | None:
        alive = self.live[shard]
        if mask is None:
            return alive
        part = mask[self.offsets[shard]:self.offsets[shard + 1]]
        return part if alive is None else part & alive
