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
from pathlib import Path

import numpy as np

from corpus.dense import get_embedder
from corpus.ingest import IngestReport, ingest, remove
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


def bench_add(path: str, index_dir: str) -> dict:
    """The time to add one file to an empty index and to the index at `index_dir` (under a fresh id
    prefix, removed again afterwards), with the embedder loaded beforehand. The ratio without the
    embedding stage is the one that says what the index's size costs: a vector the index has cached
    before is not embedded again, and is cached nowhere in a new index."""
    index = Corpus(index_dir)
    get_embedder(index.store.meta("embedder_spec"))
    with tempfile.TemporaryDirectory(prefix="ferret-bench-") as scratch:
        alone = _timed(path, Path(scratch) / "index")
    prefix = f"bench-{uuid.uuid4().hex[:8]}-"
    onto = _timed(path, index_dir, prefix)
    remove(onto.pop("added"), index_dir)
    alone.pop("added")
    return {"file": str(path), "index": str(index_dir), "index_segments": len(index.segments.live_ids()),
            "index_shards": len(index.segments.numbers), "empty_index": alone, "onto_index": onto,
            "ratio": round(onto["seconds"] / alone["seconds"], 2),
            "ratio_without_embedding": round((onto["seconds"] - onto["stage_seconds"].get("embed", 0))
                                             / (alone["seconds"] - alone["stage_seconds"].get("embed", 0)), 2)}


def _timed(path: str, index_dir: str | Path, id_prefix: str = "") -> dict:
    start = time.perf_counter()
    report: IngestReport = ingest([path], index_dir, id_prefix=id_prefix)
    seconds = time.perf_counter() - start
    if report.errors or not report.added:
        raise ValueError(f"{path}: not added ({'; '.join(map(str, report.errors)) or 'already in the index'})")
    return {"added": report.added, "pages": report.pages,
            "segments": report.segments, "seconds": round(seconds, 2),
            "stage_seconds": {k: round(v, 2) for k, v in report.seconds.items()}}


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
    """Whether unfiltered semantic search is approximate (an HNSW graph) and, if so, the share of the
    exact top `k` rows it returns, over `queries`."""
    vectors = corpus.segments
    if not vectors.approximate:
        return {"approximate": False}
    found = 0
    for query in corpus.embedder(queries):
        exact = {row for row, _ in top_rows(vectors.dense_scores(query), k)}
        found += len(exact & {row for row, _ in vectors.top(query, k)})
    return {"approximate": True, f"recall@{k}_vs_exact": round(found / (k * len(queries)), 4)}
