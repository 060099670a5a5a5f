"""Benchmarks behind `ferret bench`: ingestion throughput and memory, tool latency percentiles.

Speed and memory targets are measured here, never in unit tests.
"""
from __future__ import annotations

import os
import random
import resource
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ferret.corpus.dense import DEFAULT_EMBEDDER, get_embedder
from ferret.corpus.ingest import Summarizer, ingest, remove
from ferret.corpus.ranking import top_rows
from ferret.corpus.shards import one_commit
from ferret.corpus.store import Store
from ferret.corpus.tools import Corpus


def peak_rss_mb() -> dict[str, float]:
    """Peak resident memory of this process and of its (finished) worker processes, in MB."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"peak_rss_mb": round(own, 1), "peak_rss_workers_mb": round(children, 1)}


def bench_ingest(paths: list[str], index_dir: str | None = None, workers: int | None = None,
                 progress: bool = False, ray: str | None = None, embedder: str | None = None,
                 summaries: str | None = None, summarizer: Callable[[str], Summarizer] | None = None) -> dict:
    """Ingest `paths` into a fresh index (a temporary one unless `index_dir`) and time it (on Ray's
    workers with `ray`, Ray's start included; `summaries` and `summarizer` as for ingest)."""
    with tempfile.TemporaryDirectory(prefix="ferret-bench-") as scratch:
        target = Path(index_dir) if index_dir else Path(scratch) / "index"
        if target.exists() and any(target.iterdir()):
            raise ValueError(f"{target} is not empty: the ingest benchmark needs a fresh index directory")
        cores = workers or os.cpu_count() or 1
        start = time.perf_counter()
        report = ingest(paths, target, workers=cores, progress=progress, ray=ray, embedder=embedder, summaries=summaries,
                        summarizer=summarizer)
        seconds = time.perf_counter() - start
    return {
        "documents": len(report.added), "errors": [str(e) for e in report.errors], "pages": report.pages,
        "segments": report.segments, "annotations": report.annotations, "seconds": round(seconds, 2),
        "pages_per_second": round(report.pages / seconds, 2),
        "pages_per_second_per_core": round(report.pages / seconds / cores, 2),
        "cores": cores, "ray": ray or "", "embedder": embedder or DEFAULT_EMBEDDER, "commits": report.commits, "stage_seconds": {k: round(v, 2) for k, v in report.seconds.items()},
        **({"summaries": report.summaries, "summary_minutes_per_100_pages":
            round(report.seconds.get("summarize", 0.0) / 60 / max(report.pages, 1) * 100, 2)} if report.summaries else {}),
        **peak_rss_mb(),
    }


def bench_add(path: str, index_dir: str, summarizer: Callable[[str], Summarizer] | None = None) -> dict:
    """The time to add one file to an empty index and to the index at `index_dir` (under a fresh id
    prefix, removed again afterwards), with the embedder loaded beforehand. The ratio without the
    embedding stage is the one that says what the index's size costs: a vector the index has cached
    before is not embedded again, and is cached nowhere in a new index. (`summarizer` as for ingest: the
    file's chunks are summarized by the index's writer.)"""
    index = Corpus(index_dir)
    get_embedder(index.store.meta("embedder_spec"))
    with tempfile.TemporaryDirectory(prefix="ferret-bench-") as scratch:
        alone = _timed(path, Path(scratch) / "index", summarizer=summarizer)
    prefix = f"bench-{uuid.uuid4().hex[:8]}-"
    onto = _timed(path, index_dir, prefix, summarizer)
    remove(onto.pop("added"), index_dir)
    alone.pop("added")
    ratio = onto["seconds"] / alone["seconds"]
    without_embedding = ((onto["seconds"] - onto["stage_seconds"].get("embed", 0))
                         / max(alone["seconds"] - alone["stage_seconds"].get("embed", 0), 1e-9))
    for run in (alone, onto):
        run["seconds"] = round(run["seconds"], 3)
        run["stage_seconds"] = {k: round(v, 3) for k, v in run["stage_seconds"].items()}
    return {"file": str(path), "index": str(index_dir), "index_segments": len(index.segments.live_ids()),
            "index_shards": len(index.segments.numbers), "empty_index": alone, "onto_index": onto,
            "ratio": round(ratio, 2), "ratio_without_embedding": round(without_embedding, 2)}


def _timed(path: str, index_dir: str | Path, id_prefix: str = "",
           summarizer: Callable[[str], Summarizer] | None = None) -> dict:
    start = time.perf_counter()
    report = ingest([path], index_dir, id_prefix=id_prefix, summarizer=summarizer)
    seconds = time.perf_counter() - start
    if report.errors or not report.added:
        raise ValueError(f"{path}: not added ({'; '.join(map(str, report.errors)) or 'already in the index'})")
    return {"added": report.added, "pages": report.pages,
            "segments": report.segments, "seconds": seconds, "stage_seconds": dict(report.seconds)}


def grow_index(index_dir: str, copies: int) -> dict:
    """A large index for `bench search` in minutes: every document the index holds now copied `copies`
    times in SQLite, under a prefix per copy (`g<tag>-`), one commit and one shard a copy. A copy's texts
    are the original's, so its vectors come from the embedding cache; the index then holds each segment
    `copies + 1` times, as ingesting the same files under `--id-prefix` would give it."""
    start, store = time.perf_counter(), Store(index_dir)
    try:
        originals = sorted(store.documents())
        for _ in range(copies):
            with one_commit(index_dir) as writing:
                _copy_documents(writing, originals, f"g{uuid.uuid4().hex[:6]}-")
        return {"index": str(index_dir), "segments": store.conn.execute("SELECT COUNT(*) FROM segments").fetchone()[0],
                "shards": len(store.shards), "seconds": round(time.perf_counter() - start, 2)}
    finally:
        store.close()


def window_pages(sources: list[str], out_dir: str, pages: int, words: int = 12, stride: int = 3,
                 pages_per_file: int = 1000) -> dict:
    """A corpus of `pages` distinct one-window pages for an index of distinct vectors at scale (which
    `grow_index`'s copies cannot give): windows of `words` consecutive words, every `stride` words (a
    shorter text whole), over the segment texts of the indexes `sources` in turn, written
    `pages_per_file` pages a text file (pages split by form feeds) under `out_dir`, to be ingested as
    any text file is."""
    out = Path(out_dir)
    if out.exists() and any(out.iterdir()):
        raise ValueError(f"{out_dir}: not empty; window_pages writes a new corpus")
    distinct: dict[str, None] = {}  # in order
    for window in _windows(sources, words, stride):
        distinct.setdefault(window)
        if len(distinct) == pages:
            break
    if len(distinct) < pages:
        raise ValueError(f"{', '.join(sources)}: only {len(distinct)} distinct windows of {words} words every "
                         f"{stride}, not {pages}; add a source or lower --stride")
    windows = list(distinct)
    out.mkdir(parents=True, exist_ok=True)
    for number, start in enumerate(range(0, pages, pages_per_file)):
        (out / f"pages-{number:05d}.txt").write_text("\f".join(windows[start:start + pages_per_file]), encoding="utf-8")
    return {"out": str(out), "pages": pages, "files": -(-pages // pages_per_file), "words": words, "stride": stride}


def _windows(sources: list[str], words: int, stride: int):
    for source in sources:
        store = Store(source)
        try:
            for (text,) in store.conn.execute("SELECT text FROM segments ORDER BY id"):
                tokens = text.split()
                for start in range(0, max(len(tokens) - words, 0) + 1, stride):
                    yield " ".join(tokens[start:start + words])
        finally:
            store.close()


def _copy_documents(store: Store, doc_ids: list[str], prefix: str) -> None:
    """Insert a copy of the documents `doc_ids` (and of their pages, sections, segments, chunks, annotations
    and cross-reference edges) whose ids are prefixed with `prefix`."""
    c = store.conn
    c.execute("CREATE TEMP TABLE IF NOT EXISTS copied (doc_id TEXT PRIMARY KEY)")
    c.execute("DELETE FROM copied")
    c.executemany("INSERT INTO copied VALUES (?)", [(doc_id,) for doc_id in doc_ids])
    base = c.execute("SELECT COALESCE(MAX(id), 0) FROM segments").fetchone()[0]
    c.execute("CREATE TEMP TABLE IF NOT EXISTS segment_copy (old INTEGER PRIMARY KEY, new INTEGER)")
    c.execute("DELETE FROM segment_copy")
    c.execute("INSERT INTO segment_copy SELECT id, ? + ROW_NUMBER() OVER (ORDER BY id) FROM segments "
              "WHERE doc_id IN (SELECT doc_id FROM copied)", (base,))
    c.execute("INSERT INTO documents (doc_id, bucket, file, path, kind, title, content_hash, n_pages, metadata) "
              "SELECT ? || doc_id, bucket, file, path, kind, title, content_hash, n_pages, metadata FROM documents "
              "WHERE doc_id IN (SELECT doc_id FROM copied)", (prefix,))
    c.execute("INSERT INTO pages SELECT ? || doc_id, page, text FROM pages WHERE doc_id IN (SELECT doc_id FROM copied)",
              (prefix,))
    c.execute("INSERT INTO sections SELECT ? || doc_id, id, ord, title, level, page_start, page_end, parent_id "
              "FROM sections WHERE doc_id IN (SELECT doc_id FROM copied)", (prefix,))
    c.execute("INSERT INTO segments SELECT m.new, ? || s.doc_id, s.ord, s.section_id, s.kind, s.page, s.char_start, "
              "s.char_end, s.title, s.text, s.text_hash, NULL FROM segments s JOIN segment_copy m ON m.old = s.id",
              (prefix,))
    c.execute("INSERT INTO chunks (doc_id, ord, first_segment, last_segment, title, page_start, page_end, tokens, summary, "
              "summarizer, text, text_hash) SELECT ? || doc_id, ord, first_segment, last_segment, title, page_start, "
              "page_end, tokens, summary, summarizer, text, text_hash FROM chunks WHERE doc_id IN (SELECT doc_id FROM copied)",
              (prefix,))
    c.execute("INSERT INTO annotations (doc_id, segment_id, section_id, page, kind, label_id, value_text, value_num, "
              "unit, fields) SELECT ? || a.doc_id, m.new, a.section_id, a.page, a.kind, a.label_id, a.value_text, "
              "a.value_num, a.unit, a.fields FROM annotations a LEFT JOIN segment_copy m ON m.old = a.segment_id "
              "WHERE a.doc_id IN (SELECT doc_id FROM copied)", (prefix,))
    c.execute("INSERT INTO edges SELECT ? || e.doc_id, 'seg:' || m.new, 'sec:' || ? || substr(e.dst, 5), e.kind, e.text "
              "FROM edges e JOIN segment_copy m ON m.old = CAST(substr(e.src, 5) AS INTEGER) "
              "WHERE e.doc_id IN (SELECT doc_id FROM copied)", (prefix, prefix))


def sample_queries(corpus: Corpus, n: int, seed: int = 0) -> list[str]:
    """`n` short queries made of 2-5 consecutive words of random segments of the index itself."""
    rng = random.Random(seed)
    ids = corpus.segments.live_ids()
    rows = corpus.store.conn.execute(
        f"SELECT text FROM segments WHERE id IN ({','.join('?' * min(n, len(ids)))})",
        [int(ids[rng.randrange(len(ids))]) for _ in range(min(n, len(ids)))]).fetchall()
    queries = []
    for (text,) in rows:
        words = [w for w in text.split() if w.isalpha() and len(w) > 3] or ["revenue"]
        start = rng.randrange(len(words))
        queries.append(" ".join(words[start:start + rng.randint(2, 5)]))
    return queries


def bench_search(index_dir: str, n: int = 200, top_k: int = 10) -> dict:
    """p50/p95 latency in ms of each tool over `n` calls on an existing index."""
    corpus = Corpus(index_dir)
    queries = sample_queries(corpus, n)
    doc_ids = corpus.doc_ids
    rng = random.Random(1)
    docs = [rng.choice(doc_ids) for _ in queries]
    sections = [rng.choice(corpus.section_index(doc))["title"] for doc in docs]
    ids = corpus.segments.live_ids()
    seg_nodes = [f"seg:{int(ids[rng.randrange(len(ids))])}" for _ in queries]
    calls = {
        "search_text": lambda i: corpus.search_text(queries[i], top_k=top_k),
        "search_text_doc": lambda i: corpus.search_text(queries[i], top_k=top_k, doc_id=docs[i]),
        "search_semantic": lambda i: corpus.search_semantic(queries[i], top_k=top_k),
        "search_hybrid": lambda i: corpus.search_text(queries[i], top_k=top_k, hybrid=True),
        "fetch_section": lambda i: corpus.fetch_section(docs[i], sections[i]),
        "get_document_metadata": lambda i: corpus.get_document_metadata(docs[i]),
        "neighbors": lambda i: corpus.neighbors(seg_nodes[i]),
        "annotations_search": lambda i: corpus.annotations_search(queries[i]),
        "annotations_aggregate": lambda i: corpus.annotations_aggregate(queries[i], "sum"),
    }
    results = {}
    for name, call in calls.items():
        call(0)  # warm-up: embedder load, caches
        timings = []
        for i in range(len(queries)):
            start = time.perf_counter()
            call(i)
            timings.append((time.perf_counter() - start) * 1000)
        results[name] = {"p50_ms": round(float(np.percentile(timings, 50)), 2),
                         "p95_ms": round(float(np.percentile(timings, 95)), 2), "calls": len(timings)}
    return {"index": str(index_dir), "segments": len(ids), "shards": len(corpus.segments.numbers),
            "documents": len(doc_ids), "annotation_labels": len(corpus.labels.live_ids()), "tools": results,
            "dense": dense_recall(corpus, queries, top_k), **peak_rss_mb()}


def dense_recall(corpus: Corpus, queries: list[str], k: int) -> dict:
    """Whether unfiltered semantic search is approximate (an HNSW graph) and, if so, its recall@`k`
    against exact search over `queries`: the share of its rows that are as similar to the query as the
    exact k-th row (as ann-benchmarks counts it, so that of rows tied with it, as copies of a text are,
    any counts)."""
    vectors = corpus.segments
    if not vectors.approximate:
        return {"approximate": False}
    found = 0
    for query in corpus.embedder(queries):
        kth = top_rows(vectors.dense_scores(query), k)[-1][1]
        found += sum(score >= kth - 1e-5 for _, score in vectors.top(query, k))
    return {"approximate": True, f"recall@{k}_vs_exact": round(found / (k * len(queries)), 4)}
