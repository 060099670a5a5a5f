"""`ferret bench lm`: the embedded model's speed on the iterative program's own requests.

The program answers the first sample questions once while every request to the engine is recorded.
The requests are then replayed, in the same order, on two fresh engines: without the prompt prefix cache
(llama-cpp-python reusing only the previous prompt's prefix) and with it (`programs.prefix_cache`, whose
saved prefixes the recording has already written: the replay starts as a user's next process does). For
each, per step (the predictor whose output fields the request asks for): calls, prompt tokens, cached
tokens (restored or reused, not computed), output tokens, prefill seconds (to the first token) and
decode seconds (the rest); the machine's rates (prompt tokens computed a second, output tokens a second,
over the replay without the cache) and the limit they set for the replay with it (its computed prompt
tokens and its output tokens at those rates); and how many texts the two replays share.
"""
from __future__ import annotations

import time
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

from dspy.lm15 import Request

from ferret.corpus.tools import Corpus
from ferret.optimizers.datasets import load_dataset, prepare_index
from ferret.programs.code_engine import output_fields
from ferret.programs.iterative import IterativeRetriever
from ferret.programs.lm import LlamaCppEngine, answering, make_lm
from ferret.paths import SAMPLE

FIGURES = ("prompt_tokens", "cached_tokens", "output_tokens", "prefill_seconds", "decode_seconds")


def bench_lm(index: str | Path, questions: int = 1) -> dict:
    """Record the requests of `questions` sample questions and replay them without and with the prefix
    cache (module rules)."""
    examples, files = load_dataset("sample", SAMPLE)
    prepare_index(files, Path(index))
    lm = make_lm("local")
    engine: LlamaCppEngine = lm.engine
    program = IterativeRetriever(Corpus(index))
    with recording(engine) as requests, answering(lm):
        for example in examples[:questions]:
            program(question=example.question, doc_id=example.get("doc_id"))
    steps = {frozenset(predictor.signature.output_fields): name for name, predictor in program.named_predictors()}
    names = [steps.get(frozenset(output_fields(request)), "other") for request in requests]
    result: dict = {"questions": questions, "requests": len(requests)}
    texts = {}
    for label, megabytes in (("uncached", 0), ("cached", engine.prefix_cache_mb)):
        replay = LlamaCppEngine(engine.model_path, engine.n_ctx, engine.n_threads, megabytes)
        llama, calls, texts[label] = replay._load(), [], []
        started = time.perf_counter()
        for request in requests:
            texts[label].append(replay.complete(request).text)
            calls.append(dict(llama.last_call))
        seconds = time.perf_counter() - started
        replay.close()
        by_step: dict[str, dict] = defaultdict(lambda: dict.fromkeys(("calls", *FIGURES), 0))
        for name, call in zip(names, calls):
            by_step[name]["calls"] += 1
            for figure in FIGURES:
                by_step[name][figure] += call[figure]
        total = {figure: round(sum(call[figure] for call in calls), 2) for figure in FIGURES}
        result[label] = {"seconds": round(seconds, 2), **total,
                         "steps": {name: {key: round(value, 2) for key, value in figures.items()}
                                   for name, figures in by_step.items()}}
    plain = result["uncached"]
    rates = {"prefill_tokens_per_second": (plain["prompt_tokens"] - plain["cached_tokens"]) / plain["prefill_seconds"],
             "decode_tokens_per_second": plain["output_tokens"] / plain["decode_seconds"]}
    cached = result["cached"]
    limit = ((cached["prompt_tokens"] - cached["cached_tokens"]) / rates["prefill_tokens_per_second"]
             + cached["output_tokens"] / rates["decode_tokens_per_second"])
    result.update({key: round(value, 2) for key, value in rates.items()})
    result.update({"limit_seconds": round(limit, 2), "cached_over_limit": round(cached["seconds"] / limit, 2),
                   "speedup": round(plain["seconds"] / cached["seconds"], 2),
                   "identical_texts": sum(a == b for a, b in zip(texts["uncached"], texts["cached"]))})
    return result


@contextmanager
def recording(engine: LlamaCppEngine):
    """Every request the engine completes, in order."""
    requests: list[Request] = []
    complete = engine.complete

    def recorded(request: Request):
        requests.append(request)
        return complete(request)

    engine.complete = recorded
    try:
        yield requests
    finally:
        del engine.complete
