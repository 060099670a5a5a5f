"""Ray for `ferret eval|compile ... --ray [ADDRESS]` (corpus/cluster.py).

`ferret eval`: each worker is a Ray actor with one CPU that builds its own program, corpus and LM from
the eval's `Setup` (the embedded model loads once per worker process and decodes on the actor's CPU).
Questions go to whichever worker is free and their rows come back in the questions' order, so the
run's table is the one a run without Ray writes (the embedded model decodes greedily at temperature 0).

`ferret compile`: the optimizer runs in the command's process, its candidate evaluations on as many
threads as there are workers (DSPy's own `num_threads`), and every call of an in-process LM is a Ray
task with one CPU (`on_ray`): the program's searches stay local, the decoding, nearly all of a
question's time, runs on the workers.
"""
from __future__ import annotations

from collections.abc import Iterator
from functools import cache

import dspy
from dspy.lm15 import Request, Response, response_to_events
from tqdm import tqdm

from ferret.corpus.cluster import actor_cpus, ray_workers
from ferret.optimizers.evaluate import Setup, answer_row
from ferret.programs.lm import LlamaCppEngine, shared_engine


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


def complete_on_worker(model_path: str | None, n_ctx: int, request: Request) -> Response:
    """One completion on a Ray worker, by the engine that worker process keeps loaded, decoding on the
    CPUs Ray gave the task."""
    return shared_engine(model_path, n_ctx, actor_cpus()).complete(request)


@cache
def _complete_remote():
    import ray

    return ray.remote(num_cpus=1)(complete_on_worker)


class RayEngine:
    """A DSPy engine whose completions are Ray tasks of one CPU, each on a worker process that loads
    the GGUF model once (`complete_on_worker`). Ray sends a task to a free CPU of the cluster; DSPy's
    response cache stays in the calling process, keyed by the request as for the in-process engine."""

    supports_response_schema = LlamaCppEngine.supports_response_schema
    supported_params = LlamaCppEngine.supported_params

    def __init__(self, model_path: str | None, n_ctx: int):
        self.model_path, self.n_ctx = model_path, n_ctx

    def complete(self, request: Request) -> Response:
        import ray

        return ray.get(_complete_remote().remote(self.model_path, self.n_ctx, request))

    def stream(self, request: Request):
        return response_to_events(self.complete(request))


def on_ray(lm: dspy.LM) -> dspy.LM:
    """`lm` with its calls decoded on Ray workers when it runs in-process (the embedded model, a GGUF
    file); an API model as it is, whose calls already run elsewhere."""
    engine = lm.engine
    if not isinstance(engine, LlamaCppEngine):
        return lm
    return lm.copy(engine=RayEngine(engine.model_path, engine.n_ctx))
