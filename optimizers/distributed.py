"""`ferret eval ... --ray [ADDRESS]`: a dataset's questions answered on Ray workers (corpus/cluster.py).

Each worker is a Ray actor with one CPU that builds its own program, corpus and LM from the eval's
`Setup` (the embedded model loads once per worker process and decodes on the actor's CPU). Questions
go to whichever worker is free and their rows come back in the questions' order, so the run's table
is the one a run without Ray writes (the embedded model decodes greedily at temperature 0).
"""
from __future__ import annotations

from collections.abc import Iterator

import dspy
from tqdm import tqdm

from corpus.cluster import actor_cpus, ray_workers
from optimizers.evaluate import Setup, answer_row


class QuestionWorker:
    """A Ray actor answering questions with its own program and LM."""

    def __init__(self, setup: Setup):
        self.module, self.lm, self.metrics = setup.build(actor_cpus())

    def answer(self, example: dspy.Example) -> dict:
        return answer_row(self.module, self.lm, example, self.metrics)


def answer_on_ray(setup: Setup, examples: list[dspy.Example], address: str, workers: int | None = None,
                  progress: bool = False) -> Iterator[dict]:
    """Each question's row (`answer_row`), in the examples' order, answered by `workers` Ray workers."""
    import ray
    from ray.util import ActorPool

    with ray_workers(address, workers) as count:
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
