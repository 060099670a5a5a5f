"""The tools agents call: an opened index (`Corpus`) whose public methods are plain, typed,
documented functions, usable directly or as `dspy.Tool`s (see `Corpus.tools()`).

Every hit carries doc_id, file, page (1-based), section and a score. Filters are typed
(`corpus.filters`) and validated against the bucket's metadata schema before becoming SQL.
"""
from __future__ import annotations

import csv
import difflib
import json
import re
import threading
from collections import defaultdict
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ferret.corpus.dense import get_embedder
from ferret.corpus.filters import Column, FilterError, Filters, to_sql
from ferret.corpus.graph import neighbors as graph_neighbors
from ferret.corpus.inputs import MAX_CONTEXT_CHARS, MAX_TOP_K, check_count, check_query
from ferret.corpus.ranking import top_rows
from ferret.corpus.shards import ShardedIndex, compact
from ferret.corpus.snippets import snippet
from ferret.corpus.store import Store
from ferret.corpus.words import stems

SCOPES = {"segments": "segments", "summary": "chunks"}  # what a search's scope searches: the rows of this table
LONG_TEXT_CHUNKS = 2  # chunks a summary-then-segment search drills into
CHUNK_RRF_K = 3  # the reciprocal rank fusion constant of its choice of chunks
CHUNK_VOTERS = 20  # hybrid passages whose pages vote for the chunks that hold them
FUSION_DEPTH = 300  # passages of each of hybrid search's two rankings fused (`_fuse`)
RRF_K = 60  # the reciprocal rank fusion constant of label matches (`_reciprocal_rank_fusion`)
HYBRID = 0.5  # hybrid search's lexical weight: BM25's and dense search's normalised scores count alike (`_fuse`)
LABEL_CANDIDATES = 50
LABEL_MIN_COSINE = 0.45
QUERY_VECTORS = 256  # query vectors kept: a question's searches (its read, hops, long-text route) embed it once
CHARS_PER_TOKEN = 4
AGGREGATE_OPS = ("sum", "avg", "min", "max", "count")
_GROUP_KEYS = ("doc_id", "file", "bucket", "label", "unit", "page", "kind")
_LABEL_WORD = re.compile(r"[a-z]{2,}")
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)%?")
_PAGE_COLUMNS = {"page": Column("a.page", "number")}
_DOCUMENT_COLUMNS = {
    "doc_id": Column("d.doc_id", "text"), "file": Column("d.file", "text"), "bucket": Column("d.bucket", "text"),
    "title": Column("d.title", "text"), "kind": Column("d.kind", "text"), "pages": Column("d.n_pages", "number"),
    "ingested_at": Column("d.ingested_at", "date"),
}
_ANNOTATION_COLUMNS = {
    "label": Column("l.text", "text"), "value": Column("a.value_num", "number"),
    "value_text": Column("a.value_text", "text"), "unit": Column("a.unit", "text"),
    "annotation_kind": Column("a.kind", "text"), **_PAGE_COLUMNS,
}


class Corpus:
    """An opened index directory. Thread-safe; reloads itself when a new ingest commits."""

    def __init__(self, index_dir: str | Path):
        self.store = Store(index_dir)
        self._query_vector = lru_cache(maxsize=QUERY_VECTORS)(self._embed_query)
        self._lock = threading.Lock()
        self._generation = -1
        self._refresh()

    # --- loading ------------------------------------------------------------------------------
    def _refresh(self) -> None:
        generation = self.store.generation
        if generation == self._generation:
            return
        with self._lock:
            if generation == self._generation:
                return
            if not self.store.has_shards:  # an older layout, or derived files lost: rebuilt from the database
                compact(self.store.dir)
            with self.store.snapshot():
                self._load()
                self._generation = self.store.generation

    def _load(self) -> None:
        """The shards and the rows they search, as the store holds them now."""
        self.doc_ids = [row[0] for row in self.store.conn.execute("SELECT doc_id FROM documents ORDER BY doc_id")]
        code = {doc_id: i for i, doc_id in enumerate(self.doc_ids)}
        self.indexes, self.row_docs = {}, {}
        for table in SCOPES.values():  # segments, and long documents' chunk summaries
            rows = self.store.conn.execute(f"SELECT shard, id, doc_id FROM {table} WHERE shard IS NOT NULL").fetchall()
            owners = np.array([row[:2] for row in rows], dtype=np.int64).reshape(-1, 2)
            self.indexes[table] = ShardedIndex.load(self.store, table, owners)
            self.row_docs[table] = np.full(len(self.indexes[table].ids), -1, dtype=np.int32)  # dead rows: no document
            self.row_docs[table][self.indexes[table].rows_of(owners)] = [code[row[2]] for row in rows]
        self.segments = self.indexes["segments"]
        self.labels = ShardedIndex.load(self.store, "labels")
        self.schemas = self.store.bucket_schemas()
        self.label_words = {word for (text,) in self.store.conn.execute("SELECT text FROM labels")
                            for word in _LABEL_WORD.findall(text.lower())}
        self._masks: dict[str, np.ndarray] = {}

    def __deepcopy__(self, memo) -> "Corpus":
        """An opened index is a shared, read-only handle: programs that DSPy copies share it."""
        return self

    @property
    def embedder(self):
        return get_embedder(self.store.meta("embedder_spec"))

    def _embed_query(self, query: str) -> np.ndarray:
        """The query's vector, read-only: every search of the same text shares it (`_query_vector`)."""
        vector = self.embedder([query])[0]
        vector.setflags(write=False)
        return vector

    def tools(self) -> list:
        """The agent tools as bound methods (wrap each in `dspy.Tool` or pass them to `dspy.ReAct`)."""
        return [self.search_text, self.search_semantic, self.fetch_section, self.get_document_metadata,
                self.neighbors, self.annotations_search, self.annotations_aggregate, self.export_annotations_csv]

    # --- search ---------------------------------------------------------------------------------
    def search_text(self, query: str, bucket: str | None = None, filters: dict | str | None = None,
                    top_k: int = 10, context_chars: int = 400, doc_id: str | None = None,
                    hybrid: bool = False, scope: str = "segments") -> list[dict]:
        """Lexical (BM25) search over document segments, or over long documents' chunk summaries.

        Args:
            query: keywords or a question.
            bucket: restrict to one bucket (e.g. "invoices").
            filters: typed metadata filters, e.g. {"vendor": "Acme", "total": {">=": 1000}}.
            top_k: number of hits.
            context_chars: characters of text returned around the best match.
            doc_id: restrict to one document.
            hybrid: fuse with semantic search (`_fuse`: min-max normalised scores, summed).
            scope: "segments", or "summary": the summaries of long documents' chunks (a section or a run of
                sections each; a hit's node_id is "chunk:N", its pages the chunk's, for fetch_section).
        Returns hits with doc_id, file, title (the document's), page, section, section_id, node_id, kind, text
        and score (a summary's also pages).
        """
        return self._search(query, HYBRID if hybrid else 1.0, bucket, filters, top_k, context_chars, doc_id, scope)

    def search_semantic(self, query: str, bucket: str | None = None, filters: dict | str | None = None,
                        top_k: int = 10, context_chars: int = 400, doc_id: str | None = None,
                        hybrid: bool = False, scope: str = "segments") -> list[dict]:
        """Semantic (embedding) search over document segments, or with scope="summary" over long
        documents' chunk summaries; same arguments and hits as search_text."""
        return self._search(query, HYBRID if hybrid else 0.0, bucket, filters, top_k, context_chars, doc_id, scope)

    def search(self, query: str, lexical_weight: float = HYBRID, bucket: str | None = None,
               filters: dict | str | None = None, top_k: int = 10, context_chars: int = 400,
               doc_id: str | None = None) -> list[dict]:
        """Search over document segments with BM25 and dense search weighed by `lexical_weight`: 1 is
        search_text, 0 search_semantic, HYBRID (0.5) their hybrid search, and a weight between them fuses
        their normalised scores at that weight (`_fuse`). The same arguments and hits as search_text."""
        return self._search(query, check_weight(lexical_weight), bucket, filters, top_k, context_chars, doc_id)

    def search_long_text(self, query: str, bucket: str | None = None, filters: dict | str | None = None,
                         top_k: int = 10, context_chars: int = 400, doc_id: str | None = None,
                         chunks: int = LONG_TEXT_CHUNKS, lexical_weight: float = HYBRID) -> dict:
        """Summary-then-segment search: the `chunks` long-document chunks that best match, then hybrid
        search over the segments inside them. A chunk's match fuses three rankings by reciprocal rank
        (CHUNK_RRF_K): its summary's (hybrid search), the query's words in its title (ties in document
        order), and the votes of the query's top CHUNK_VOTERS hybrid passages on the pages it spans (a
        summary alone chose worse chunks than the filing's own passages: docs/benchmarks.md). Returns
        {"chunks": the chosen chunks' summary hits, best first, "hits": the segments'}; where the scope holds
        no chunk, "hits" are those of plain hybrid search. `lexical_weight` weighs the segments' search
        inside the chunks (`search`)."""
        weight = check_weight(lexical_weight)
        summaries = self._search(query, HYBRID, bucket, filters, MAX_TOP_K, context_chars, doc_id, "summary")
        chosen = rank_chunks(query, summaries, self._search(query, HYBRID, bucket, filters, CHUNK_VOTERS, 0, doc_id))
        chosen = chosen[:chunks]
        inside = self._chunk_mask([int(hit["node_id"].split(":")[1]) for hit in chosen]) if chosen else None
        return {"chunks": chosen,
                "hits": self._search(query, weight, bucket, filters, top_k, context_chars, doc_id, within=inside)}

    def _search(self, query: str, weight: float, bucket, filters, top_k: int, context_chars: int, doc_id,
                scope: str = "segments", within: np.ndarray | None = None) -> list[dict]:
        """The top_k rows of `scope` by BM25 (`weight` 1), dense search (0) or their fusion at `weight`."""
        check_query("query", query)
        check_count("top_k", top_k, 1, MAX_TOP_K)
        check_count("context_chars", context_chars, 0, MAX_CONTEXT_CHARS)
        if scope not in SCOPES:
            raise ValueError(f"unknown scope {scope!r}; allowed: {', '.join(SCOPES)}")
        self._refresh()
        table = SCOPES[scope]
        index, mask = self.indexes[table], self._doc_mask(table, bucket, filters, doc_id)
        if within is not None:
            mask = within if mask is None else mask & within
        if weight == 1.0:
            ranked = top_rows(index.lexical_scores(query, mask), top_k, positive=True)
        elif weight == 0.0:
            ranked = self._semantic_top(index, query, mask, top_k)
        else:
            ranked = _fuse([top_rows(index.lexical_scores(query, mask), FUSION_DEPTH, positive=True),
                            self._semantic_top(index, query, mask, FUSION_DEPTH)], top_k, (weight, 1.0 - weight))
        found = [(int(index.ids[i]), score) for i, score in ranked]
        return self._summary_hits(found, query, context_chars) if scope == "summary" else \
            self._hits(found, query, context_chars)

    def _semantic_top(self, index: ShardedIndex, query: str, mask: np.ndarray | None, k: int) -> list[tuple[int, float]]:
        if len(index.ids) == 0:
            return []
        return index.top(self._query_vector(query), k, mask)

    def _doc_mask(self, table: str, bucket, filters, doc_id) -> np.ndarray | None:
        """Boolean mask over `table`'s rows allowed by bucket, doc_id and metadata filters (cached)."""
        parsed = Filters.parse(filters)
        if bucket is None and doc_id is None and parsed is None:
            return None
        key = json.dumps([table, bucket, doc_id, parsed.model_dump() if parsed else None], sort_keys=True, default=str)
        if key not in self._masks:
            where, params = self._document_where(bucket, parsed, doc_id)
            allowed = {row[0] for row in self.store.conn.execute(f"SELECT d.doc_id FROM documents d WHERE {where}",
                                                                 params)}
            codes = [i for i, d in enumerate(self.doc_ids) if d in allowed]
            self._masks[key] = np.isin(self.row_docs[table], codes)
        return self._masks[key]

    def _chunk_mask(self, chunk_ids: list[int]) -> np.ndarray:
        """Boolean mask over segment rows: those inside the chunks `chunk_ids`."""
        marks = ",".join("?" * len(chunk_ids))
        owners = np.array(self.store.conn.execute(
            "SELECT s.shard, s.id FROM chunks c JOIN segments s ON s.doc_id = c.doc_id "
            f"AND s.ord BETWEEN c.first_segment AND c.last_segment WHERE c.id IN ({marks}) AND s.shard IS NOT NULL",
            chunk_ids).fetchall(), dtype=np.int64).reshape(-1, 2)
        mask = np.zeros(len(self.segments.ids), dtype=bool)
        mask[self.segments.rows_of(owners)] = True
        return mask

    def check_scope(self, bucket: str | None = None, doc_id: str | None = None) -> None:
        """Raise ValueError naming an unknown bucket (with the known ones) or document (with close ids)."""
        self._refresh()
        if bucket is not None and bucket not in self.schemas:
            raise ValueError(f"unknown bucket {bucket!r}; known buckets: {', '.join(sorted(self.schemas)) or '(none)'}")
        if doc_id is not None:
            self._check_doc(doc_id)

    def _document_where(self, bucket, filters: Filters | None, doc_id, extra: dict | None = None) -> tuple[str, list]:
        self.check_scope(bucket, doc_id)
        clauses, params = [], []
        if bucket is not None:
            clauses.append("d.bucket = ?")
            params.append(bucket)
        if doc_id is not None:
            clauses.append("d.doc_id = ?")
            params.append(doc_id)
        # a bucket's own metadata field wins over the document column of the same name (a contract's "title")
        sql, filter_params = to_sql(filters, {**_DOCUMENT_COLUMNS, **self._metadata_columns(bucket), **(extra or {})})
        return " AND ".join([*clauses, sql]), params + filter_params

    def filter_fields(self, bucket: str | None = None) -> set[str]:
        """The field names filters may use in this bucket (or in any bucket): metadata, document and
        annotation fields."""
        return {*self._metadata_columns(bucket), *_DOCUMENT_COLUMNS, *_ANNOTATION_COLUMNS}

    def date_fields(self, bucket: str | None = None) -> set[str]:
        """The date-typed metadata fields of this bucket (or of any bucket)."""
        return {key for key, column in self._metadata_columns(bucket).items() if column.type == "date"}

    def _metadata_columns(self, bucket: str | None) -> dict[str, Column]:
        """Typed columns for the metadata of one bucket (or of all: a key typed differently becomes text)."""
        types: dict[str, str] = {}
        for name, schema in self.schemas.items():
            if bucket is None or name == bucket:
                for key, type_ in schema.items():
                    types[key] = type_ if types.get(key, type_) == type_ else "text"
        return {key: Column(f"json_extract(d.metadata, '$.{key}')", type_) for key, type_ in types.items()}

    def _hits(self, ranked: list[tuple[int, float]], query: str, context_chars: int) -> list[dict]:
        if not ranked:
            return []
        rows = {row["id"]: row for row in self.store.conn.execute(
            "SELECT s.id, s.doc_id, s.page, s.section_id, s.kind, s.text, d.file, d.title, sec.title AS section "
            "FROM segments s JOIN documents d ON d.doc_id = s.doc_id "
            "LEFT JOIN sections sec ON sec.doc_id = s.doc_id AND sec.id = s.section_id "
            f"WHERE s.id IN ({','.join('?' * len(ranked))})", [segment_id for segment_id, _ in ranked])}
        return [{"doc_id": row["doc_id"], "file": row["file"], "title": row["title"], "page": row["page"],
                 "section": row["section"] or "",
                 "section_id": row["section_id"], "node_id": f"seg:{row['id']}", "kind": row["kind"],
                 "text": snippet(row["text"], query, context_chars, row["kind"] == "table"), "score": round(float(score), 4)}
                for segment_id, score in ranked if (row := rows.get(segment_id)) is not None]

    def _summary_hits(self, ranked: list[tuple[int, float]], query: str, context_chars: int) -> list[dict]:
        if not ranked:
            return []
        rows = {row["id"]: row for row in self._chunks([chunk_id for chunk_id, _ in ranked])}
        return [{"doc_id": row["doc_id"], "file": row["file"], "title": row["doc_title"], "page": row["page_start"],
                 "pages": [row["page_start"], row["page_end"]], "section": row["title"], "section_id": None,
                 "node_id": f"chunk:{row['id']}", "kind": "summary", "text": snippet(row["text"], query, context_chars),
                 "score": round(float(score), 4)}
                for chunk_id, score in ranked if (row := rows.get(chunk_id)) is not None]

    # --- documents and sections -------------------------------------------------------------------
    def get_document_metadata(self, doc_id: str) -> dict:
        """A document's file, bucket, title, page count, section count and bucket metadata fields."""
        self._refresh()
        row = self._check_doc(doc_id)
        n_sections = self.store.conn.execute("SELECT COUNT(*) FROM sections WHERE doc_id = ?", (doc_id,)).fetchone()[0]
        return {"doc_id": doc_id, "file": row["file"], "bucket": row["bucket"], "title": row["title"],
                "kind": row["kind"], "pages": row["n_pages"], "sections": n_sections,
                "metadata": json.loads(row["metadata"]), "ingested_at": row["ingested_at"]}

    def section_index(self, doc_id: str) -> list[dict]:
        """The section tree of a document as a flat list (id, title, level, pages, parent) in order."""
        self._check_doc(doc_id)
        return [{"id": row["id"], "title": row["title"], "level": row["level"],
                 "pages": [row["page_start"], row["page_end"]], "parent_id": row["parent_id"]}
                for row in self.store.conn.execute("SELECT * FROM sections WHERE doc_id = ? ORDER BY ord", (doc_id,))]

    def fetch_section(self, doc_id: str, section: str, max_tokens: int = 1500) -> dict:
        """The text of one section (and its subsections) of a document, within a token budget.

        Args:
            doc_id: the document.
            section: a section id ("s12") or title; titles match fuzzily ("Item 7", "segment information"); or a
                chunk's node_id ("chunk:N", from a search with scope="summary").
            max_tokens: budget for the returned text (about 4 characters per token).
        Returns doc_id, section_id, title, pages, text (with [p. N] page markers), truncated and subsections
        (a chunk: its summary instead of subsections).
        """
        self._refresh()
        self._check_doc(doc_id)
        budget = max(1, max_tokens) * CHARS_PER_TOKEN
        if section.startswith("chunk:"):
            return self._fetch_chunk(doc_id, section, budget)
        sections = self.store.conn.execute("SELECT * FROM sections WHERE doc_id = ? ORDER BY ord", (doc_id,)).fetchall()
        target = _match_section(sections, section)
        if target is None:
            titles = "; ".join(f"{row['id']}: {row['title']}" for row in sections[:40])
            raise ValueError(f"no section {section!r} in {doc_id}; sections: {titles}")
        inside = _subtree(sections, target)
        text = _paged(self.store.conn.execute(
            f"SELECT page, text FROM segments WHERE doc_id = ? AND section_id IN ({','.join('?' * len(inside))}) "
            "ORDER BY ord", [doc_id, *[row["id"] for row in inside]]).fetchall())
        return {"doc_id": doc_id, "section_id": target["id"], "title": target["title"],
                "pages": [target["page_start"], max(row["page_end"] for row in inside)],
                "text": text[:budget], "truncated": len(text) > budget,
                "subsections": [{"id": row["id"], "title": row["title"], "pages": [row["page_start"], row["page_end"]]}
                                for row in inside[1:]]}

    def summary_hits(self, node_id: str, limit: int) -> list[dict]:
        """The first `limit` sentences of a chunk's summary ("chunk:N") as hits: each on the segment of the
        chunk that prints it (its node_id, page and section), or an LM's sentence on the first segment of its
        page, with kind "summary" and the chunk's title."""
        self._refresh()
        found = self._chunks([node_id.removeprefix("chunk:")])
        if not found:
            return []
        chunk = found[0]
        segments = self.store.conn.execute(
            "SELECT s.id, s.page, s.section_id, s.text, sec.title AS section FROM segments s LEFT JOIN sections sec "
            "ON sec.doc_id = s.doc_id AND sec.id = s.section_id WHERE s.doc_id = ? AND s.ord BETWEEN ? AND ? ORDER BY s.ord",
            (chunk["doc_id"], chunk["first_segment"], chunk["last_segment"])).fetchall()
        hits = []
        for page, sentence in json.loads(chunk["summary"])[:limit]:
            on_page = [row for row in segments if row["page"] == page]
            where = next((row for row in on_page if sentence in " ".join(row["text"].split())), on_page[0] if on_page else None)
            if where is not None:
                hits.append({"doc_id": chunk["doc_id"], "file": chunk["file"], "title": chunk["doc_title"], "page": page,
                             "section": where["section"] or chunk["title"], "section_id": where["section_id"],
                             "node_id": f"seg:{where['id']}", "kind": "summary", "text": sentence, "score": 0.0})
        return hits

    def _chunks(self, chunk_ids: list) -> list:
        """The chunks' rows with their document's file and title (`doc_title`)."""
        return self.store.conn.execute(
            "SELECT c.*, d.file, d.title AS doc_title FROM chunks c JOIN documents d ON d.doc_id = c.doc_id "
            f"WHERE c.id IN ({','.join('?' * len(chunk_ids))})", chunk_ids).fetchall()

    def _fetch_chunk(self, doc_id: str, node_id: str, budget: int) -> dict:
        chunk = self.store.conn.execute("SELECT * FROM chunks WHERE doc_id = ? AND id = ?",
                                        (doc_id, node_id.removeprefix("chunk:"))).fetchone()
        if chunk is None:
            known = [f"chunk:{row[0]}" for row in self.store.conn.execute("SELECT id FROM chunks WHERE doc_id = ? ORDER BY ord",
                                                                        (doc_id,))]
            raise ValueError(f"no chunk {node_id!r} in {doc_id}; its chunks: {', '.join(known) or '(none: not a long document)'}")
        text = _paged(self.store.conn.execute("SELECT page, text FROM segments WHERE doc_id = ? AND ord BETWEEN ? AND ? "
                                              "ORDER BY ord", (doc_id, chunk["first_segment"], chunk["last_segment"])).fetchall())
        return {"doc_id": doc_id, "section_id": node_id, "title": chunk["title"],
                "pages": [chunk["page_start"], chunk["page_end"]], "text": text[:budget], "truncated": len(text) > budget,
                "summary": [{"page": page, "text": sentence} for page, sentence in json.loads(chunk["summary"])]}

    def neighbors(self, node_id: str) -> list[dict]:
        """Adjacent and linked graph nodes of a node, with titles.

        Node ids: "doc:<doc_id>", "sec:<doc_id>:<section_id>", "seg:<n>" (the node_id of a search hit),
        "sent:<segment>:<i>", "row:<n>" (the annotation_id of an annotation). Relations: parent, child,
        contains, previous, next, references (a cross-reference such as "see Note 19"), referenced_by.
        """
        self._refresh()
        return graph_neighbors(self.store, node_id)

    def page_text(self, doc_id: str, page: int) -> str | None:
        """The stored text of one page (1-based), or None when there is no such page."""
        row = self.store.conn.execute("SELECT text FROM pages WHERE doc_id = ? AND page = ?", (doc_id, page)).fetchone()
        return row[0] if row else None

    def pages_of(self, doc_id: str) -> list[int]:
        """The numbers of a document's pages, in order ([] for an unknown document)."""
        self._refresh()
        return [row[0] for row in self.store.conn.execute("SELECT page FROM pages WHERE doc_id = ? ORDER BY page", (doc_id,))]

    def page_cells(self, doc_id: str, page: int) -> list[dict]:
        """The table rows and "Label: value" facts printed on one page, each as {"label", "section", "cells",
        "group"}: its values as (column header, text, number), a fact's one value under the header ""; the
        title of the section it is printed in (a table's caption: what a row labeled "Total" totals); the
        label-only line a row is printed under in its table (`TableRow.group`), or ""."""
        self._refresh()
        rows = self.store.conn.execute(
            "SELECT l.text AS label, a.kind, a.value_text, a.value_num, a.fields, a.row_group, sec.title AS section "
            "FROM annotations a "
            "JOIN labels l ON l.id = a.label_id LEFT JOIN sections sec ON sec.doc_id = a.doc_id AND sec.id = a.section_id "
            "WHERE a.doc_id = ? AND a.page = ? ORDER BY a.id", (doc_id, page)).fetchall()
        out = []
        for row in rows:
            fields = json.loads(row["fields"])
            cells = [(header, text, number) for header, (text, number, *_) in fields.items()] if row["kind"] == "row" \
                else [("", row["value_text"], row["value_num"])]
            out.append({"label": row["label"], "section": row["section"] or "", "cells": cells,
                        "group": row["row_group"] or ""})
        return out

    def file_of(self, doc_id: str) -> str:
        row = self.store.conn.execute("SELECT file FROM documents WHERE doc_id = ?", (doc_id,)).fetchone()
        return row[0] if row else ""

    def overview(self) -> str:
        """Buckets with their typed metadata fields and document counts. No document ids: on the
        sample corpus the embedded 0.5B Router copied listed ids into its buckets, terms and filters."""
        self._refresh()
        counts = dict(self.store.conn.execute("SELECT bucket, COUNT(*) FROM documents GROUP BY bucket").fetchall())
        return "\n".join(f"bucket {name}: {counts.get(name, 0)} documents; fields: "
                         + (", ".join(f"{key} ({type_})" for key, type_ in schema.items()) or "none")
                         for name, schema in sorted(self.schemas.items()))

    def _check_doc(self, doc_id: str):
        row = self.store.conn.execute("SELECT * FROM documents WHERE doc_id = ?", (doc_id,)).fetchone()
        if row is None:
            close = difflib.get_close_matches(doc_id, self.doc_ids, n=5, cutoff=0.5)
            raise ValueError(f"unknown document {doc_id!r}" + (f"; did you mean: {', '.join(close)}" if close else ""))
        return row

    # --- annotations ------------------------------------------------------------------------------
    def annotations_search(self, label_query: str, filters: dict | str | None = None, bucket: str | None = None,
                           top_k: int = 20, doc_id: str | None = None) -> list[dict]:
        """Structured facts (key-value facts and table rows) whose label matches `label_query`
        lexically or by meaning ("qty" finds "quantity").

        Args:
            label_query: the label to look for, e.g. "total current liabilities" or "tires".
            filters: typed filters on document metadata and on the annotation ("value", "unit", "label",
                "page"), e.g. {"value": {"<=": 1.2}, "date": {"between": ["2023-01", "2023-12"]}}.
            bucket: restrict to one bucket.
            top_k: number of annotations.
            doc_id: restrict to one document.
        Returns annotations with annotation_id, kind, label, value, value_text, unit, fields, doc_id, file,
        page, section and score.
        """
        check_count("top_k", top_k, 1, MAX_TOP_K)
        return self._annotations(label_query, filters, bucket, doc_id, limit=top_k)

    def annotations_aggregate(self, label_query: str, op: str, group_by: str | None = None,
                              filters: dict | str | None = None, bucket: str | None = None,
                              field: str | None = None, doc_id: str | None = None) -> dict:
        """Aggregate the numeric values of all annotations matching `label_query`.

        Args:
            label_query: the label to aggregate, e.g. "batteries".
            op: sum, avg, min, max or count.
            group_by: optional grouping: doc_id, file, bucket, label, unit, page, kind or a metadata field.
            filters: typed filters as in annotations_search.
            bucket: restrict to one bucket.
            field: for table rows, the column to aggregate (e.g. "Amount"); default: the row's first number.
            doc_id: restrict to one document.
        Returns op, n, value (or groups), the matched labels and how many matches had no number.
        """
        if op not in AGGREGATE_OPS:
            raise ValueError(f"unknown op {op!r}; allowed: {', '.join(AGGREGATE_OPS)}")
        matches = self.annotation_rows(label_query, filters, bucket, doc_id)
        groups: dict[str, list[float]] = defaultdict(list)
        skipped = 0
        for match in matches:
            number = _field_number(match, field)
            if number is None and op != "count":
                skipped += 1
                continue
            groups[_group_key(match, group_by)].append(number)
        results = [{"group": key, "value": _apply(op, values), "n": len(values)} for key, values in sorted(groups.items())]
        out = {"op": op, "label_query": label_query, "n": sum(r["n"] for r in results), "skipped_non_numeric": skipped,
               "labels": sorted({m["label"] for m in matches})[:20]}
        if group_by is None:
            out["value"] = results[0]["value"] if results else None
        else:
            out["group_by"], out["groups"] = group_by, results
        return out

    def export_annotations_csv(self, label_query: str, path: str, filters: dict | str | None = None,
                               bucket: str | None = None, doc_id: str | None = None) -> dict:
        """Write every annotation matching `label_query` (with filters) to a CSV file; returns path and rows."""
        return write_annotations_csv(self.annotation_rows(label_query, filters, bucket, doc_id), path)

    def annotation_rows(self, label_query: str, filters: dict | str | None = None, bucket: str | None = None,
                        doc_id: str | None = None) -> list[dict]:
        """Every annotation that annotations_aggregate and export_annotations_csv cover for the same
        arguments (labels matched lexically when any match so; by meaning otherwise), as
        annotations_search returns them, with each row's numbers by column and its document's metadata."""
        return self._annotations(label_query, filters, bucket, doc_id, with_metadata=True, precise=True)

    def _annotations(self, label_query: str, filters, bucket, doc_id, with_metadata: bool = False,
                     precise: bool = False, limit: int = -1) -> list[dict]:
        """The first `limit` (all: -1) annotations whose label matches, best label first, then document
        order (sorted and cut by SQLite: a label of a large index has thousands of rows)."""
        check_query("label_query", label_query)
        self._refresh()
        labels = self._matching_labels(label_query, precise, self._label_mask(bucket, doc_id))
        if not labels:
            return []
        where, params = self._document_where(bucket, Filters.parse(filters), doc_id, _ANNOTATION_COLUMNS)
        rows = self.store.conn.execute(
            "SELECT a.*, l.text AS label, d.file, d.bucket, d.metadata, sec.title AS section "
            "FROM json_each(?) m JOIN annotations a ON a.label_id = CAST(m.key AS INTEGER) "
            "JOIN labels l ON l.id = a.label_id JOIN documents d ON d.doc_id = a.doc_id "
            "LEFT JOIN sections sec ON sec.doc_id = a.doc_id AND sec.id = a.section_id "
            f"WHERE {where} ORDER BY m.value DESC, a.doc_id, a.page, a.id LIMIT ?",
            [json.dumps({key: float(score) for key, score in labels.items()}), *params, limit]).fetchall()
        out, metadata = [], {}  # a document's metadata parsed once
        for row in rows:
            fields = json.loads(row["fields"])
            item = {"annotation_id": f"row:{row['id']}", "kind": row["kind"], "label": row["label"],
                    "value": row["value_num"], "value_text": row["value_text"], "unit": row["unit"],
                    "fields": {k: v[0] for k, v in fields.items()},
                    "doc_id": row["doc_id"], "file": row["file"], "bucket": row["bucket"], "page": row["page"],
                    "section": row["section"] or "", "score": round(labels[row["label_id"]], 4)}
            if with_metadata:
                item["numbers"] = {k: v[1] for k, v in fields.items()}
                if row["doc_id"] not in metadata:
                    metadata[row["doc_id"]] = json.loads(row["metadata"])
                item["metadata"] = dict(metadata[row["doc_id"]])
            out.append(item)
        return out

    def _matching_labels(self, label_query: str, precise: bool = False, mask: np.ndarray | None = None) -> dict[int, float]:
        """label id → score. Lexical matches (abbreviations expanded: "qty" → "quantity") fused with
        labels close in meaning, LABEL_CANDIDATES of each, among the labels `mask` allows; with
        `precise`, every lexical match when there is any."""
        if len(self.labels.ids) == 0:
            return {}
        scores = self.labels.lexical_scores(self._expand_abbreviations(label_query), mask)
        if precise and (every := top_rows(scores, len(scores), positive=True)):  # an aggregate covers every match
            return {int(self.labels.ids[i]): score for i, score in every}
        lexical = top_rows(scores, LABEL_CANDIDATES, positive=True)
        semantic = [(i, s) for i, s in self.labels.top(self._query_vector(label_query), LABEL_CANDIDATES, mask)
                    if s >= LABEL_MIN_COSINE]
        return {int(self.labels.ids[i]): score
                for i, score in _reciprocal_rank_fusion([lexical, semantic], 2 * LABEL_CANDIDATES)}

    def _label_mask(self, bucket: str | None, doc_id: str | None) -> np.ndarray | None:
        """Boolean mask over label rows: the labels of the bucket's or document's annotations. A search
        scoped to one document picks among that document's labels, not among the corpus's best labels
        (which, in a large corpus, are often all other documents')."""
        if bucket is None and doc_id is None:
            return None
        where, params = self._document_where(bucket, None, doc_id)
        present = [row[0] for row in self.store.conn.execute(
            f"SELECT DISTINCT a.label_id FROM annotations a JOIN documents d ON d.doc_id = a.doc_id WHERE {where}", params)]
        return np.isin(self.labels.ids, present)

    def _expand_abbreviations(self, query: str) -> str:
        """Add the label words a short query word abbreviates (same first letter, letters in order)."""
        extra = []
        for token in _LABEL_WORD.findall(query.lower()):
            if len(token) <= 4 and token not in self.label_words:
                extra += [word for word in self.label_words if word[0] == token[0] and len(word) > len(token)
                          and _is_subsequence(token, word)]
        return " ".join([query, *extra])


def write_annotations_csv(rows: list[dict], path: str | Path) -> dict:
    """Annotations (as annotations_search returns them) as a CSV file, one column per table column;
    returns path, rows and columns."""
    keys = list(dict.fromkeys(key for row in rows for key in row["fields"]))
    columns = ["doc_id", "file", "page", "section", "kind", "label", "value", "unit", "value_text", *keys]
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        for row in rows:
            writer.writerow([csv_cell(row[c]) for c in columns[:9]] + [csv_cell(row["fields"].get(key, "")) for key in keys])
    return {"path": str(target), "rows": len(rows), "columns": columns}


def csv_cell(value):
    """A cell a spreadsheet will not run: text starting with =, +, -, @, tab or carriage return gets a
    leading apostrophe (OWASP's CSV injection advice), unless it is a plain number ("-3.2", "+5")."""
    if isinstance(value, str) and value[:1] in _FORMULA_STARTS and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def _is_subsequence(short: str, word: str) -> bool:
    letters = iter(word)
    return all(letter in letters for letter in short)


def _paged(rows) -> str:
    """Segments' (page, text) rows joined, with a "[p. N]" marker where the page changes."""
    parts, page = [], None
    for row in rows:
        if row["page"] != page:
            page = row["page"]
            parts.append(f"[p. {page}]")
        parts.append(row["text"])
    return "\n".join(parts)


def rank_chunks(query: str, summaries: list[dict], passages: list[dict]) -> list[dict]:
    """The chunks of `summaries` (hits, in their summaries' order) in the order of `search_long_text`'s
    fused match: summary rank, the query's words in the title, and `passages`' votes, 1/(5 + rank) from
    each passage to every chunk whose pages hold its page."""
    asked = stems(query, months=False)
    titled = sorted(range(len(summaries)), key=lambda i: (-len(asked & stems(summaries[i]["section"] or "", months=False)),
                                                           int(summaries[i]["node_id"].split(":")[1])))
    votes: dict[int, float] = defaultdict(float)
    for rank, passage in enumerate(passages):
        for i, chunk in enumerate(summaries):
            first, last = chunk["pages"]
            if chunk["doc_id"] == passage["doc_id"] and first <= passage["page"] <= last:
                votes[i] += 1 / (5 + rank)
    fused: dict[int, float] = defaultdict(float)
    for ranking in (list(range(len(summaries))), titled, sorted(votes, key=lambda i: -votes[i])):
        for rank, i in enumerate(ranking):
            fused[i] += 1 / (CHUNK_RRF_K + rank)
    return [summaries[i] for i in sorted(fused, key=lambda i: -fused[i])]


def check_weight(weight: float) -> float:
    """`weight` as a float, if it is a lexical weight (between 0 and 1); else a ValueError naming it."""
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0.0 <= weight <= 1.0:
        raise ValueError(f"lexical_weight must be a number from 0 (dense search) to 1 (BM25), not {weight!r}")
    return float(weight)


def _fuse(rankings: list[list[tuple[int, float]]], k: int,
          weights: tuple[float, ...] = (HYBRID, HYBRID)) -> list[tuple[int, float]]:
    """Hybrid search's fusion: min-max score fusion (CombSUM of per-query min-max normalised scores, equal
    weights by default; the convex combination of lexical and semantic scores at one half). Each ranking's
    scores are mapped onto [0, 1] by its own lowest and highest score (every score 1 when they are equal); a
    row's fused score is the sum over the rankings, each times twice its weight (so that equal weights sum
    the normalised scores), 0 from one that does not hold it; the `k` best rows, best first.

    Unlike reciprocal rank fusion it keeps how far apart the scores are, so a ranking whose top hit stands
    out weighs more than one whose hits score alike; and it has no fitted weight. Chosen on the train splits
    of HotpotQA, FinanceBench, SciFact and TAT-QA (`ferret eval --retrieval --split train`) by the worst set
    against the better of text and semantic search, among reciprocal rank fusion (k=60, of the top 20 to 300
    of each), min-max, z-score and distribution-based (mean ± 3 sd) normalisation (of the top 20 to 300),
    each summed, and fusing only the lexical hits scoring half the top one. Reciprocal rank fusion of the
    top 100 lost to semantic search on FinanceBench (recall@5 0.524 vs 0.548; the held-out FinanceBench and
    multi-hop sets of issue 58 lost more). This fusion of the top FUSION_DEPTH (300) of each was at or
    above the better single mode on every set, in recall@5 (worst +0.003) and nDCG@10 (worst +0.010), and
    held on dev (+0.000 and +0.011) and test (+0.000 and +0.003)."""
    fused: dict[int, float] = defaultdict(float)
    for ranking, weight in zip(rankings, weights, strict=True):
        if not ranking:
            continue
        low, high = min(score for _, score in ranking), max(score for _, score in ranking)
        for row, score in ranking:
            fused[row] += 2 * weight * ((score - low) / (high - low) if high > low else 1.0)
    return sorted(fused.items(), key=lambda item: -item[1])[:k]


def _reciprocal_rank_fusion(rankings: list[list[tuple[int, float]]], k: int) -> list[tuple[int, float]]:
    """Reciprocal rank fusion (RRF_K) of several rankings of the same rows: label matches'."""
    fused: dict[int, float] = defaultdict(float)
    for ranking in rankings:
        for rank, (row, _) in enumerate(ranking):
            fused[row] += 1.0 / (RRF_K + rank + 1)
    return sorted(fused.items(), key=lambda item: -item[1])[:k]


def _match_section(sections: list, wanted: str):
    by_id = {row["id"]: row for row in sections}
    if wanted in by_id:
        return by_id[wanted]
    norm = " ".join(wanted.lower().split())
    titles = [(" ".join(row["title"].lower().split()), row) for row in sections]
    for matches in ([r for t, r in titles if t == norm], [r for t, r in titles if t.startswith(norm)],
                    [r for t, r in titles if norm in t]):
        if matches:
            return matches[0]
    close = difflib.get_close_matches(norm, [t for t, _ in titles], n=1, cutoff=0.5)
    return next((r for t, r in titles if close and t == close[0]), None)


def _subtree(sections: list, target) -> list:
    """The target section followed by its descendants (the sections after it until one at its level or above)."""
    out = [target]
    for row in sections[target["ord"] + 1:]:
        if row["level"] <= target["level"]:
            break
        out.append(row)
    return out


def _field_number(match: dict, field: str | None) -> float | None:
    if field is None:
        return match["value"]
    numbers = match["numbers"]
    key = next((k for k in numbers if k.lower() == field.lower()), None)
    if key is None:
        close = difflib.get_close_matches(field.lower(), [k.lower() for k in numbers], n=1, cutoff=0.6)
        key = next((k for k in numbers if close and k.lower() == close[0]), None)
    return numbers.get(key) if key else None


def _group_key(match: dict, group_by: str | None) -> str:
    if group_by is None:
        return ""
    if group_by in _GROUP_KEYS:
        return str(match[group_by])
    if group_by in match["metadata"]:
        return str(match["metadata"][group_by])
    raise FilterError(f"unknown group_by {group_by!r}; use {', '.join(_GROUP_KEYS)} or a metadata "
                      f"field ({', '.join(sorted(match['metadata'])) or 'none in these documents'})")


def _apply(op: str, values: list[Any]) -> float | int:
    if op == "count":
        return len(values)
    numbers = np.array(values, dtype=float)
    return float({"sum": numbers.sum, "avg": numbers.mean, "min": numbers.min, "max": numbers.max}[op]())
