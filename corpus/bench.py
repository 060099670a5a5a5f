"""Benchmarks behind `ferret bench`: ingestion throughput and memory, tool latency percentiles.

Speed and memory targets are measured here, never in unit tests.
"""
from __future__ import annotations

import os
import random
import resource
import tempfile
import time
from pathlib import Path

import numpy as np

from corpus.ingest import ingest
from corpus.ranking import top_rows
from corpus.tools import Corpus


def peak_rss_mb() -> dict[str, float]:
    """Peak resident memory of this process and of its (finished) worker processes, in MB."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"peak_rss_mb": round(own, 1), "peak_rss_workers_mb": round(children, 1)}


def bench_ingest(paths: list[str], index_dir: str | None = None, workers: int | None = None,
                 progress: bool = False, ray: str | None = None) -> dict:
    """Ingest `paths` into a fresh index (a temporary one unless `index_dir`) and time it (on Ray's
    workers with `ray`, Ray's start included)."""
    with tempfile.TemporaryDirectory(prefix="ferret-bench-") as scratch:
        target = Path(index_dir) if index_dir else Path(scratch) / "index"
        if target.exists() and any(target.iterdir()):
            raise ValueError(f"{target} is not empty: the ingest benchmark needs a fresh index directory")
        cores = workers or os.cpu_count() or 1
        start = time.perf_counter()
        report = ingest(paths, target, workers=cores, progress=progress, ray=ray)
        seconds = time.perf_counter() - start
    return {
        "documents": len(report.added), "errors": [str(e) for e in report.errors], "pages": report.pages,
        "segments": report.segments, "annotations": report.annotations, "seconds": round(seconds, 2),
        "pages_per_second": round(report.pages / seconds, 2),
        "pages_per_second_per_core": round(report.pages / seconds / cores, 2),
        "cores": cores, "ray": ray or "", "commits": report.commits, "stage_seconds": {k: round(v, 2) for k, v in report.seconds.items()},
        "parse_pages_per_second": round(report.pages / max(report.seconds["parse"], 1e-9), 2),
        **peak_rss_mb(),
    }


def sample_queries(corpus: Corpus, n: int, seed: int = 0) -> list[str]:
    """`n` short queries made of 2-5 consecutive words of random segments of the index itself."""
    rng = random.Random(seed)
    count = len(corpus.segment_ids)
    rows = corpus.store.conn.execute(
        f"SELECT text FROM segments WHERE id IN ({','.join('?' * min(n, count))})",
        [int(corpus.segment_ids[rng.randrange(count)]) for _ in range(min(n, count))]).fetchall()
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
    seg_nodes = [f"seg:{int(corpus.segment_ids[rng.randrange(len(corpus.segment_ids))])}" for _ in queries]
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
    return {"index": str(index_dir), "segments": int(len(corpus.segment_ids)), "documents": len(doc_ids),
            "annotation_labels": int(len(corpus.label_ids)), "tools": results,
            "dense": dense_recall(corpus, queries, top_k), **peak_rss_mb()}


def dense_recall(corpus: Corpus, queries: list[str], k: int) -> dict:
    """Whether unfiltered semantic search is approximate (an HNSW graph) and, if so, the share of the
    exact top `k` rows it returns, over `queries`."""
    vectors = corpus.vectors
    if not vectors.approximate:
        return {"approximate": False}
    found = 0
    for query in corpus.embedder(queries):
        exact = {row for row, _ in top_rows(vectors.scores(query), k)}
        found += len(exact & {row for row, _ in vectors.top(query, k)})
    return {"approximate": True, f"recall@{k}_vs_exact": round(found / (k * len(queries)), 4)}
