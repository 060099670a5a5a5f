"""ferret.programs.result.measured: a run's LM calls and tokens, the cached ones among them."""
from __future__ import annotations

import json

import dspy
from dspy.lm15 import Message, Response, TextPart, Usage

from ferret.programs.result import measured


class Cached:
    """An engine that answers every call with 100 prompt tokens, `cached` of them read from its cache."""

    supports_response_schema = True
    supported_params = frozenset({"temperature", "max_tokens", "response_format"})

    def __init__(self, cached: int | None):
        self.cached = cached

    def complete(self, request):
        return Response(id="c", model=request.model, message=Message.assistant([TextPart(json.dumps({"answer": "a"}))]),
                        finish_reason="stop", usage=Usage(input_tokens=100, output_tokens=5, cache_read_tokens=self.cached))


class Ask(dspy.Signature):
    question: str = dspy.InputField()
    answer: str = dspy.OutputField()


def run(cached: int | None) -> dspy.Prediction:
    with dspy.context(lm=dspy.LM("openai/cached", engine=Cached(cached), cache=False), adapter=dspy.JSONAdapter()):
        return measured(lambda: dspy.Predict(Ask)(question="q") and dspy.Predict(Ask)(question="r"))


def test_the_cached_prompt_tokens_an_lm_reports_are_summed_beside_the_tokens():
    result = run(60)
    assert result.lm_calls == 2 and result.tokens == {"input": 200, "output": 10, "cached": 120}


def test_an_lm_that_reports_no_cache_counts_none_cached():
    assert run(None).tokens == {"input": 200, "output": 10, "cached": 0}
