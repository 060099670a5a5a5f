"""SQLite storage of an index directory: documents, pages, sections, segments, a long document's
chunks and their summaries, annotations, bucket metadata schemas, cross-reference edges, and the caches of
embeddings and of LM-written summaries.

The index directory holds `corpus.db` and the `shard-N/` folders of derived search indexes listed in
its meta table (see corpus/shards.py). Each batch of an ingest writes everything inside one SQLite
transaction, writes the shard of what it added from that uncommitted state, then commits: a crash at
any point leaves the previous state both in SQLite and on disk, intact and usable.
"""
from __future__ import annotations

import fcntl
import json
import logging
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import numpy as np

from ferret.corpus.passages import content_hash
from ferret.corpus.records import Chunk, ParsedDocument, Section, Segment

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS buckets (name TEXT PRIMARY KEY, schema TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY, bucket TEXT NOT NULL, file TEXT NOT NULL, path TEXT NOT NULL,
    kind TEXT NOT NULL, title TEXT NOT NULL, content_hash TEXT NOT NULL, n_pages INTEGER NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}', ingested_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP);
CREATE INDEX IF NOT EXISTS documents_bucket ON documents (bucket);
CREATE TABLE IF NOT EXISTS pages (
    doc_id TEXT NOT NULL, page INTEGER NOT NULL, text TEXT NOT NULL, PRIMARY KEY (doc_id, page));
CREATE TABLE IF NOT EXISTS sections (
    doc_id TEXT NOT NULL, id TEXT NOT NULL, ord INTEGER NOT NULL, title TEXT NOT NULL,
    level INTEGER NOT NULL, page_start INTEGER NOT NULL, page_end INTEGER NOT NULL, parent_id TEXT,
    PRIMARY KEY (doc_id, id));
CREATE TABLE IF NOT EXISTS segments (
    id INTEGER PRIMARY KEY, doc_id TEXT NOT NULL, ord INTEGER NOT NULL, section_id TEXT,
    kind TEXT NOT NULL, page INTEGER NOT NULL, char_start INTEGER NOT NULL, char_end INTEGER NOT NULL,
    title TEXT NOT NULL, text TEXT NOT NULL, text_hash TEXT NOT NULL, shard INTEGER);
CREATE INDEX IF NOT EXISTS segments_doc ON segments (doc_id, ord);
CREATE INDEX IF NOT EXISTS segments_section ON segments (doc_id, section_id, ord);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY, doc_id TEXT NOT NULL, ord INTEGER NOT NULL, first_segment INTEGER NOT NULL,
    last_segment INTEGER NOT NULL, title TEXT NOT NULL, page_start INTEGER NOT NULL, page_end INTEGER NOT NULL,
    tokens INTEGER NOT NULL, summary TEXT NOT NULL, summarizer TEXT NOT NULL, text TEXT NOT NULL,
    text_hash TEXT NOT NULL, shard INTEGER);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks (doc_id, ord);
CREATE TABLE IF NOT EXISTS labels (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE, shard INTEGER);
CREATE TABLE IF NOT EXISTS annotations (
    id INTEGER PRIMARY KEY, doc_id TEXT NOT NULL, segment_id INTEGER, section_id TEXT,
    page INTEGER NOT NULL, kind TEXT NOT NULL, label_id INTEGER NOT NULL REFERENCES labels (id),
    value_text TEXT NOT NULL, value_num REAL, unit TEXT, fields TEXT NOT NULL DEFAULT '{}', row_group TEXT);
CREATE INDEX IF NOT EXISTS annotations_doc ON annotations (doc_id);
CREATE INDEX IF NOT EXISTS annotations_label ON annotations (label_id);
CREATE INDEX IF NOT EXISTS annotations_segment ON annotations (segment_id);
CREATE TABLE IF NOT EXISTS edges (
    doc_id TEXT NOT NULL, src TEXT NOT NULL, dst TEXT NOT NULL, kind TEXT NOT NULL, text TEXT NOT NULL,
    PRIMARY KEY (src, dst, kind));
CREATE INDEX IF NOT EXISTS edges_dst ON edges (dst);
CREATE INDEX IF NOT EXISTS edges_doc ON edges (doc_id);
CREATE TABLE IF NOT EXISTS embeddings (
    model TEXT NOT NULL, text_hash TEXT NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (model, text_hash));
CREATE TABLE IF NOT EXISTS summaries (key TEXT PRIMARY KEY, summary TEXT NOT NULL);
"""

# after the columns an index of an older layout is given on opening
SHARD_INDEXES = """
CREATE INDEX IF NOT EXISTS segments_shard ON segments (shard);
CREATE INDEX IF NOT EXISTS labels_shard ON labels (shard);
CREATE INDEX IF NOT EXISTS chunks_shard ON chunks (shard);
"""
logger = logging.getLogger(__name__)

DOC_TABLES = ("pages", "sections", "segments", "chunks", "annotations", "edges", "documents")


class Store:
    """One index directory's SQLite database. Safe to share across threads for reads."""

    def __init__(self, index_dir: str | Path, create: bool = False):
        self.dir = Path(index_dir)
        db = self.dir / "corpus.db"
        if not db.exists() and not create:
            raise FileNotFoundError(f"no ferret index at {self.dir} (run `ferret ingest ... --index {self.dir}`)")
        self.dir.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(db, check_same_thread=False, isolation_level=None)
        self.conn.row_factory = sqlite3.Row
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.executescript(SCHEMA)
        for table in ("segments", "labels"):
            if "shard" not in {row[1] for row in self.conn.execute(f"PRAGMA table_info({table})")}:
                self.conn.execute(f"ALTER TABLE {table} ADD COLUMN shard INTEGER")
        if "row_group" not in {row[1] for row in self.conn.execute("PRAGMA table_info(annotations)")}:
            self.conn.execute("ALTER TABLE annotations ADD COLUMN row_group TEXT")  # a row's group: NULL for the
            # documents stored before, until a changed file replaces them or they go into a new index
            if self.conn.execute("SELECT 1 FROM annotations WHERE kind = 'row' LIMIT 1").fetchone():
                logger.warning("%s was written before table rows kept the line they are printed under: ingest its "
                               "files into a new index for the grounding that reads it", self.dir)
        self.conn.executescript(SHARD_INDEXES)

    # --- shards of derived indexes ------------------------------------------------------------
    def meta(self, key: str, default: str | None = None) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    @property
    def generation(self) -> int:
        """How many times the index has changed: a search handle reloads when it grows."""
        return int(self.meta("generation", "0"))

    @property
    def shards(self) -> list[int]:
        return json.loads(self.meta("shards", "[]"))

    def set_shards(self, numbers: list[int]) -> None:
        self.set_meta("shards", json.dumps(numbers))

    @property
    def has_shards(self) -> bool:
        """Whether the shards are listed and on disk (not so for an index of an older layout)."""
        return self.meta("shards") is not None and all(self.shard_dir(n).is_dir() for n in self.shards)

    def next_shard(self) -> int:
        """A shard number never used before in this index."""
        number = int(self.meta("next_shard", "1"))
        self.set_meta("next_shard", str(number + 1))
        return number

    def shard_dir(self, number: int) -> Path:
        return self.dir / f"shard-{number}"

    def remove_unlisted_shards(self) -> None:
        """Delete the shard folders the committed list does not hold (and an older layout's gen-N/)."""
        keep = {self.shard_dir(number).name for number in self.shards}
        for path in [*self.dir.glob("shard-*"), *self.dir.glob("gen-*")]:
            if path.name not in keep:
                shutil.rmtree(path, ignore_errors=True)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction: committed when the block ends, rolled back if it raises."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Reads that all see one committed state, whatever commits meanwhile."""
        self.conn.execute("BEGIN")
        try:
            yield
        finally:
            self.conn.execute("COMMIT")

    # --- writes (inside a transaction opened by the caller) ----------------------------------
    def delete_document(self, doc_id: str) -> None:
        for table in DOC_TABLES:
            self.conn.execute(f"DELETE FROM {table} WHERE doc_id = ?", (doc_id,))

    def insert_document(self, doc: ParsedDocument, bucket: str, path: str, metadata: dict,
                        text_hashes: list[str], xrefs: list[tuple[int, str, str]]) -> None:
        """Insert a parsed document; `text_hashes[i]` keys segment i's embedding; xrefs are
        (segment index, target section id, referring text)."""
        c = self.conn
        c.execute(
            "INSERT INTO documents (doc_id, bucket, file, path, kind, title, content_hash, n_pages, metadata)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (doc.doc_id, bucket, doc.file, path, doc.kind, doc.title, doc.content_hash, len(doc.pages),
             json.dumps(metadata, sort_keys=True)),
        )
        c.executemany("INSERT INTO pages (doc_id, page, text) VALUES (?, ?, ?)",
                      [(doc.doc_id, number, text) for number, text in enumerate(doc.pages, start=1)])
        c.executemany(
            "INSERT INTO sections (doc_id, id, ord, title, level, page_start, page_end, parent_id)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(doc.doc_id, s.id, i, s.title, s.level, s.page_start, s.page_end, s.parent_id)
             for i, s in enumerate(doc.sections)],
        )
        segment_ids = []
        for ordinal, (segment, text_hash) in enumerate(zip(doc.segments, text_hashes)):
            cursor = c.execute(
                "INSERT INTO segments (doc_id, ord, section_id, kind, page, char_start, char_end, title, text,"
                " text_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (doc.doc_id, ordinal, segment.section_id, segment.kind, segment.page, segment.char_start,
                 segment.char_end, segment.title, segment.text, text_hash),
            )
            segment_ids.append(cursor.lastrowid)
        section_of = {s.id: s for s in doc.sections}
        for annotation in doc.annotations:
            segment_id = segment_ids[annotation.segment_index] if segment_ids else None
            section_id = doc.segments[annotation.segment_index].section_id if segment_ids else None
            c.execute(
                "INSERT INTO annotations (doc_id, segment_id, section_id, page, kind, label_id, value_text,"
                " value_num, unit, fields, row_group) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (doc.doc_id, segment_id, section_id if section_id in section_of else None, annotation.page,
                 annotation.kind, self.label_id(annotation.label), annotation.value.text,
                 annotation.value.number, annotation.value.unit,
                 json.dumps({key: [v.text, v.number, v.unit] for key, v in annotation.fields.items()}),
                 annotation.group),
            )
        self.insert_chunks(doc.doc_id, doc.chunks)
        c.executemany(
            "INSERT OR IGNORE INTO edges (doc_id, src, dst, kind, text) VALUES (?, ?, ?, 'xref', ?)",
            [(doc.doc_id, f"seg:{segment_ids[index]}", f"sec:{doc.doc_id}:{target}", text)
             for index, target, text in xrefs],
        )

    def insert_chunks(self, doc_id: str, chunks: list[Chunk]) -> None:
        """A document's chunks (in place of any it had), each shard-less until the commit's shard holds it."""
        self.conn.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))
        self.conn.executemany(
            "INSERT INTO chunks (doc_id, ord, first_segment, last_segment, title, page_start, page_end, tokens,"
            " summary, summarizer, text, text_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(doc_id, i, chunk.first, chunk.last, chunk.title, chunk.page_start, chunk.page_end, chunk.tokens,
              json.dumps(chunk.summary), chunk.summarizer, chunk.text, content_hash(chunk.text))
             for i, chunk in enumerate(chunks)])

    def label_id(self, text: str) -> int:
        row = self.conn.execute("SELECT id FROM labels WHERE text = ?", (text,)).fetchone()
        if row:
            return row[0]
        return self.conn.execute("INSERT INTO labels (text) VALUES (?)", (text,)).lastrowid

    def update_document_info(self, doc_id: str, bucket: str, metadata: dict) -> None:
        self.conn.execute("UPDATE documents SET bucket = ?, metadata = ? WHERE doc_id = ?",
                          (bucket, json.dumps(metadata, sort_keys=True), doc_id))

    def refresh_bucket_schemas(self, infer_type) -> None:
        """Recompute each bucket's typed metadata schema from the documents it holds."""
        self.conn.execute("DELETE FROM buckets")
        for (bucket,) in self.conn.execute("SELECT DISTINCT bucket FROM documents").fetchall():
            values: dict[str, list] = {}
            for (raw,) in self.conn.execute("SELECT metadata FROM documents WHERE bucket = ?", (bucket,)):
                for key, value in json.loads(raw).items():
                    values.setdefault(key, []).append(value)
            schema = {key: infer_type(vals) for key, vals in sorted(values.items())}
            self.conn.execute("INSERT INTO buckets (name, schema) VALUES (?, ?)", (bucket, json.dumps(schema)))

    # --- embedding cache ---------------------------------------------------------------------
    def cached_vectors(self, model: str, hashes: list[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        unique = list(dict.fromkeys(hashes))
        for start in range(0, len(unique), 900):
            chunk = unique[start:start + 900]
            marks = ",".join("?" * len(chunk))
            for text_hash, blob in self.conn.execute(
                f"SELECT text_hash, vector FROM embeddings WHERE model = ? AND text_hash IN ({marks})",
                [model, *chunk],
            ):
                found[text_hash] = np.frombuffer(blob, dtype=np.float32)
        return found

    def cache_vectors(self, model: str, vectors: dict[str, np.ndarray]) -> None:
        self.conn.executemany(
            "INSERT OR REPLACE INTO embeddings (model, text_hash, vector) VALUES (?, ?, ?)",
            [(model, key, np.asarray(vector, dtype=np.float32).tobytes()) for key, vector in vectors.items()],
        )

    def cached_summary(self, key: str) -> list[tuple[int, str]] | None:
        """An LM's summary written before under `key` (what it read), as (page, sentence) pairs; None if none."""
        row = self.conn.execute("SELECT summary FROM summaries WHERE key = ?", (key,)).fetchone()
        return [tuple(pair) for pair in json.loads(row[0])] if row else None

    def cache_summary(self, key: str, summary: list[tuple[int, str]]) -> None:
        """Kept at once (outside any commit): an interrupted ingest does not ask for it again."""
        self.conn.execute("INSERT OR REPLACE INTO summaries (key, summary) VALUES (?, ?)", (key, json.dumps(summary)))

    # --- reads -------------------------------------------------------------------------------
    def sections_and_segments(self, doc_id: str) -> tuple[list[Section], list[Segment]]:
        """A stored document's section tree and segments, in order, as ingest made them."""
        sections = [Section(row["id"], row["title"], row["level"], row["page_start"], row["page_end"], row["parent_id"])
                    for row in self.conn.execute("SELECT * FROM sections WHERE doc_id = ? ORDER BY ord", (doc_id,))]
        segments = [Segment(row["kind"], row["text"], row["page"], row["char_start"], row["char_end"], row["section_id"],
                            row["title"])
                    for row in self.conn.execute("SELECT * FROM segments WHERE doc_id = ? ORDER BY ord", (doc_id,))]
        return sections, segments

    def documents(self) -> dict[str, sqlite3.Row]:
        return {row["doc_id"]: row for row in self.conn.execute("SELECT * FROM documents")}

    def bucket_schemas(self) -> dict[str, dict[str, str]]:
        return {name: json.loads(schema) for name, schema in self.conn.execute("SELECT name, schema FROM buckets")}

    def close(self) -> None:
        self.conn.close()


def one_writer_at_a_time(index_dir: Path) -> AbstractContextManager[None]:
    """Hold the index's write lock: a second ingest or compaction of the same index waits for the first,
    and says so. Searches need no lock: they read the last committed state."""
    return exclusive(index_dir / "ingest.lock", f"another ingest into {index_dir} to finish")


@contextmanager
def exclusive(lock: Path, waiting_for: str) -> Iterator[None]:
    """Hold the lock file `lock` (released when the process ends however it ends); a second holder waits,
    logging "waiting for WAITING_FOR"."""
    with open(lock, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            logger.warning("waiting for %s", waiting_for)
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield
