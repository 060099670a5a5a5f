"""Ray: `ferret eval ... --ray [ADDRESS]` answers a dataset's questions on Ray workers.

Each worker is a Ray actor with one CPU that builds its own program, corpus and LM from the eval's
`Setup` (the embedded model loads once per worker process and decodes on the actor's CPUs). Questions
go to whichever worker is free and their rows come back in the questions' order, so the run's table
is the one a run without Ray writes (the embedded model decodes greedily at temperature 0).

Without an address (`--ray` alone) a local Ray starts on this machine with `--workers` CPUs (default:
the cores this process may run on) and stops with the eval. With one (`--ray auto`, `--ray HOST:6379`,
`--ray ray://HOST:10001`) ferret joins that cluster, started beforehand with `ray start --head` (and
`ray start --address HOST:6379` on the other nodes); `--workers` then defaults to the cluster's CPUs.
Every node must have ferret installed and read the index, the data and a `--compiled` file at the
same paths (a shared file system).
"""
from __future__ import annotations

import os
from collections.abc import Iterator

import dspy
from tqdm import tqdm

from optimizers.evaluate import Setup, answer_row

LOCAL = "local"  # `--ray` without an address: a Ray started on this machine for the run


class QuestionWorker:
    """A Ray actor answering questions with its own program and LM."""

    def __init__(self, setup: Setup):
        import ray

        threads = max(1, int(ray.get_runtime_context().get_assigned_resources().get("CPU", 1)))
        self.module, self.lm, self.metrics = setup.build(threads)

    def answer(self, example: dspy.Example) -> dict:
        return answer_row(self.module, self.lm, example, self.metrics)


def answer_on_ray(setup: Setup, examples: list[dspy.Example], address: str = LOCAL, workers: int | None = None,
                  progress: bool = False) -> Iterator[dict]:
    """Each question's row (`answer_row`), in the examples' order, answered by `workers` Ray workers."""
    import ray
    from ray.util import ActorPool

    started = not ray.is_initialized()
    if started:  # Ray's own "local" starts a new instance even where a cluster runs
        cpus = (workers or len(os.sched_getaffinity(0))) if address == LOCAL else None
        ray.init(address=address, num_cpus=cpus, include_dashboard=False, logging_level="WARNING")
    count = workers or int(ray.cluster_resources().get("CPU", 1))
    worker = ray.remote(num_cpus=1)(QuestionWorker)
    actors = [worker.remote(setup) for _ in range(min(count, len(examples)))]
    bar = tqdm(total=len(examples), desc=f"questions on {len(actors)} Ray workers", unit="q", disable=not progress)
    try:
        for row in ActorPool(actors).map(lambda actor, example: actor.answer.remote(example), examples):
            bar.update()
            yield row
    finally:  # interrupted: the workers stop with the questions they hold
        bar.close()
        for actor in actors:
            ray.kill(actor)
        if started:
            ray.shutdown()
