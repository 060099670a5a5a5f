"""`ferret bench lm`: the embedded model's decoding speed on the iterative program's own requests.

The program answers the first sample questions once while every request to the engine is recorded.
The requests are then replayed twice, in the same order (so llama.cpp's reuse of the previous
prompt's prefix is the same in both): with `GrammarCheckedGreedy` (the engine's sampler) and with
llama-cpp-python's stock sampler chain. Both replays are timed and their texts compared.
"""
from __future__ import annotations

import time
from contextlib import contextmanager, nullcontext
from pathlib import Path

from dspy.lm15 import Request

from ferret.corpus.tools import Corpus
from ferret.optimizers.datasets import load_dataset, prepare_index
from ferret.programs.iterative import IterativeRetriever
from ferret.programs.lm import LlamaCppEngine, answering, make_lm
from ferret.paths import SAMPLE


def bench_lm(index: str | Path, questions: int = 1) -> dict:
    """Record the requests of `questions` sample questions, replay them with both samplers, and report
    tokens, seconds and output tokens per second for each, and how many texts are identical."""
    examples, files = load_dataset("sample", SAMPLE)
    prepare_index(files, Path(index))
    lm = make_lm("local")
    engine: LlamaCppEngine = lm.engine
    with recording(engine) as requests, answering(lm):
        program = IterativeRetriever(Corpus(index))
        for example in examples[:questions]:
            program(question=example.question, doc_id=example.get("doc_id"))
    result = {"questions": questions, "requests": len(requests)}
    texts = {}
    for sampler in ("grammar_checked", "stock"):
        with stock_sampler(engine) if sampler == "stock" else nullcontext():
            start, replies = time.perf_counter(), [engine.complete(request) for request in requests]
        seconds = time.perf_counter() - start
        output = sum(reply.usage.output_tokens or 0 for reply in replies)
        texts[sampler] = [reply.text for reply in replies]
        result[sampler] = {"input_tokens": sum(reply.usage.input_tokens or 0 for reply in replies),
                           "output_tokens": output, "seconds": round(seconds, 2),
                           "output_tokens_per_second": round(output / seconds, 2)}
    result["identical_texts"] = sum(a == b for a, b in zip(texts["grammar_checked"], texts["stock"]))
    result["speedup"] = round(result["stock"]["seconds"] / result["grammar_checked"]["seconds"], 2)
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


@contextmanager
def stock_sampler(engine: LlamaCppEngine):
    """The engine's model decoding with llama-cpp-python's stock sampler chain."""
    from llama_cpp import Llama

    llama = engine._load()
    llama._init_sampler = lambda **options: Llama._init_sampler(llama, **options)
    try:
        yield
    finally:
        llama.__dict__.pop("_init_sampler", None)
