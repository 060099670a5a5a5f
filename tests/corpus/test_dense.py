"""Dense search: exact below ANN_MIN_ROWS allowed rows, an HNSW graph (faiss) from there on, with
filters kept, the graph saved beside the vectors, and the tools' semantic hits unchanged on a corpus
small enough for the graph to be exact."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import ferret.corpus.dense
from ferret.corpus.dense import VectorIndex


def unit_vectors(n: int, dim: int = 32, clusters: int = 20, seed: int = 0) -> np.ndarray:
    """Clustered unit vectors, as embeddings of related passages are."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, dim))
    vectors = centres[rng.integers(clusters, size=n)] + 0.6 * rng.standard_normal((n, dim))
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def exact(vectors: np.ndarray, query: np.ndarray, k: int, mask: np.ndarray | None = None) -> list[int]:
    scores = vectors @ query
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    return [int(i) for i in np.argsort(-scores, kind="stable")[:k] if np.isfinite(scores[i])]


def test_below_the_threshold_search_is_exact_and_keeps_to_the_mask():
    vectors = unit_vectors(500)
    index = VectorIndex(vectors)
    assert not index.approximate
    mask = np.arange(500) % 3 == 0
    for query in vectors[:5]:
        assert [row for row, _ in index.top(query, 10)] == exact(vectors, query, 10)
        assert [row for row, _ in index.top(query, 10, mask)] == exact(vectors, query, 10, mask)
    few = np.zeros(500, dtype=bool)
    few[[7, 8]] = True
    assert sorted(row for row, _ in index.top(vectors[0], 10, few)) == [7, 8]


def test_a_read_only_query_vector_is_searched_without_a_warning():
    """The corpus caches query vectors read-only; torch warns when it is handed such an array."""
    vectors = unit_vectors(50)
    query = vectors[3].copy()
    query.setflags(write=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert int(np.argmax(VectorIndex(vectors).scores(query))) == 3


def test_past_the_threshold_the_graph_finds_what_exact_search_finds(monkeypatch, tmp_path):
    monkeypatch.setattr(ferret.corpus.dense, "ANN_MIN_ROWS", 1000)
    vectors, queries = unit_vectors(4000), unit_vectors(30, seed=1)
    index = VectorIndex(vectors)
    assert index.approximate
    found = [len({row for row, _ in index.top(query, 10)} & set(exact(vectors, query, 10))) for query in queries]
    assert sum(found) / (10 * len(queries)) >= 0.95

    mask = np.arange(4000) % 2 == 0  # 2,000 rows allowed: still the graph, filtered
    for query in queries[:10]:
        rows = [row for row, _ in index.top(query, 10, mask)]
        assert len(rows) == 10 and all(mask[row] for row in rows)
    few = np.arange(4000) < 300  # fewer rows than the threshold: exact over them
    for query in queries[:10]:
        assert [row for row, _ in index.top(query, 10, few)] == exact(vectors, query, 10, few)

    index.save(tmp_path / "vectors.npy")
    assert (tmp_path / "vectors.hnsw").exists()
    loaded = VectorIndex.load(tmp_path / "vectors.npy")
    assert loaded._graph is not None  # read, not rebuilt
    assert [loaded.top(query, 10) for query in queries] == [index.top(query, 10) for query in queries]


def test_below_the_threshold_no_graph_is_written(tmp_path):
    VectorIndex(unit_vectors(50)).save(tmp_path / "vectors.npy")
    assert not (tmp_path / "vectors.hnsw").exists()


def test_the_tools_semantic_hits_are_the_same_through_the_graph(monkeypatch, tmp_path):
    """An index ingested with a threshold of one vector has a graph; on a corpus this small the graph's
    search is exact, so every semantic and hybrid search, filtered or not, returns the exact hits."""
    from ferret.corpus.bench import dense_recall
    from ferret.corpus.ingest import ingest
    from ferret.corpus.tools import Corpus
    from tests.conftest import RECEIPTS, REPORT

    (tmp_path / "report.md").write_text(REPORT)
    for name, text in RECEIPTS.items():
        (tmp_path / name).write_text(text)
    monkeypatch.setattr(ferret.corpus.dense, "ANN_MIN_ROWS", 1)
    ingest([tmp_path / "report.md"], tmp_path / "index", bucket="reports")
    ingest([tmp_path / "inv1.txt", tmp_path / "inv2.txt"], tmp_path / "index", bucket="invoices")
    graphed = Corpus(tmp_path / "index")
    assert len(graphed.segments.vectors) == 2 and all(shard._graph is not None for shard in graphed.segments.vectors)
    searches = [("tire prices", {}), ("revenue recognition policy", {}), ("tire prices", {"bucket": "reports"}),
                ("segment revenue", {"doc_id": "inv2"}), ("batteries", {"hybrid": True, "bucket": "invoices"})]
    through_graph = [graphed.search_semantic(query, top_k=5, **options) for query, options in searches]
    assert dense_recall(graphed, [query for query, _ in searches], 5) == {"approximate": True, "recall@5_vs_exact": 1.0}
    monkeypatch.setattr(ferret.corpus.dense, "ANN_MIN_ROWS", 10**9)
    assert [graphed.search_semantic(query, top_k=5, **options) for query, options in searches] == through_graph
    assert dense_recall(graphed, ["tire prices"], 5) == {"approximate": False}
    assert all(hit["doc_id"] == "inv2" for hit in through_graph[3]) and through_graph[3]
    assert {hit["doc_id"] for hit in through_graph[2]} == {"report"}


def test_rows_of_one_text_share_one_vector_and_the_graph_holds_each_vector_once(monkeypatch, tmp_path):
    """Copies (the same texts under many ids) are searched as their distinct vectors: exact search
    scores every row, and past the threshold the graph, built over distinct vectors only, finds the
    copies of what exact search finds, filtered or not."""
    monkeypatch.setattr(ferret.corpus.dense, "ANN_MIN_ROWS", 1000)
    distinct, queries = unit_vectors(1500), unit_vectors(20, seed=1)
    keys = [f"text-{i % 1500}" for i in range(6000)]  # every text four times
    index = VectorIndex.of_rows(keys, [distinct[i % 1500] for i in range(6000)])
    assert index.vectors.shape == (1500, 32) and len(index) == 6000 and index.approximate
    assert index.graph.ntotal == 1500
    rows = np.tile(distinct, (4, 1))
    np.testing.assert_allclose(index.scores(queries[0]), rows @ queries[0], atol=1e-6)
    for mask in (None, np.arange(6000) >= 3000):  # the second half: two copies of each text
        found = 0
        for query in queries:
            expected = exact(rows, query, 10, mask)
            kth = (rows @ query)[expected[-1]]
            hits = index.top(query, 10, mask)
            assert len(hits) == 10 and (mask is None or all(mask[row] for row, _ in hits))
            found += sum(score >= kth - 1e-6 for _, score in hits)
        assert found / (10 * len(queries)) >= 0.95
    index.save(tmp_path / "vectors.npy")
    loaded = VectorIndex.load(tmp_path / "vectors.npy")
    assert (tmp_path / "vectors.rows.npy").exists() and len(loaded) == 6000
    assert loaded.top(queries[0], 10) == index.top(queries[0], 10)
    assert VectorIndex.of_rows(["a", "b"], [distinct[0], distinct[1]]).rows is None  # no copies: no row map
