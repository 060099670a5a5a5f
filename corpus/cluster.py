"""Ray, for the work ferret spreads over workers: `ferret ingest --ray` (parsing PDFs, embedding) and
`ferret eval|compile --ray` (answering questions, decoding LM calls: optimizers/distributed.py).

`--ray` alone starts a new local Ray on this machine with `--workers` CPUs (default: the cores this
process may run on), which stops when the command ends. `--ray ADDRESS` (`auto`, `HOST:6379`,
`ray://HOST:10001`) joins a cluster started beforehand with `ray start --head --port 6379` on one node
and `ray start --address HEAD:6379` on the others; `--workers` then defaults to the cluster's CPUs.
Every node needs ferret installed and the files at the same paths (a shared file system). A worker is
a Ray actor with one CPU; an LM call of `compile --ray` is a Ray task with one CPU.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ferret.corpus.dense import get_embedder
from ferret.corpus.pdf import IngestError, read_pages

LOCAL = "local"  # Ray's own address for "start a new local instance", even where a cluster runs


@contextmanager
def ray_workers(address: str, workers: int | None) -> Iterator[int]:
    """Ray connected for the block (to a new local instance, or the cluster at `address`); yields how
    many one-CPU workers to start. A Ray this block started stops with it."""
    import ray

    started = not ray.is_initialized()
    if started:
        cpus = (workers or len(os.sched_getaffinity(0))) if address == LOCAL else None
        ray.init(address=address, num_cpus=cpus, include_dashboard=False, logging_level="WARNING")
    try:
        yield workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
    finally:
        if started:
            ray.shutdown()


def actor_cpus() -> int:
    """The CPUs Ray gave the calling actor."""
    import ray

    return max(1, int(ray.get_runtime_context().get_assigned_resources().get("CPU", 1)))


class IngestWorker:
    """A Ray actor of `ferret ingest --ray`: reads PDF page ranges and embeds texts on its CPU."""

    def __init__(self, embedder: str):
        import torch

        torch.set_num_threads(actor_cpus())
        self.embedder = get_embedder(embedder)

    def read(self, path: str, start: int, stop: int) -> list[str] | IngestError:
        """The pages' texts, or the file's error (returned, so that one bad PDF fails alone)."""
        try:
            return read_pages(Path(path), start, stop)
        except IngestError as error:
            return error

    def embed(self, texts: list[str]) -> np.ndarray:
        return self.embedder(texts)


class RayIngest:
    """`count` IngestWorkers, reading and embedding in order for the ingest that holds them."""

    def __init__(self, embedder: str, count: int):
        import ray
        from ray.util import ActorPool

        worker = ray.remote(num_cpus=1)(IngestWorker)
        self.workers = count
        self.pool = ActorPool([worker.remote(embedder) for _ in range(count)])

    def read(self, tasks: list[tuple[str, int, int]]) -> Iterator[list[str] | IngestError]:
        return self.pool.map(lambda actor, task: actor.read.remote(*task), tasks)

    def embed(self, batches: list[list[str]]) -> Iterator[np.ndarray]:
        return self.pool.map(lambda actor, texts: actor.embed.remote(texts), batches)
