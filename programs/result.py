"""What every program returns: a dspy.Prediction with the same fields, measured the same way."""
from __future__ import annotations

import time
from collections.abc import Callable

import dspy
from dspy.utils.usage_tracker import track_usage

RESULT_FIELDS = ("status", "answer", "citations", "citations_verified", "unverified_numbers", "findings",
                 "failed_searches", "evidence", "iterations", "lm_calls", "tokens", "seconds", "confidence",
                 "need", "reason", "clarification", "trajectory")


def measured(run: Callable[[], dspy.Prediction]) -> dspy.Prediction:
    """Run a program body, adding its LM calls, input/output tokens and wall seconds to the result."""
    started = time.perf_counter()
    with track_usage() as usage:
        result = run()
    totals = usage.get_total_tokens().values()
    result.lm_calls = sum(len(entries) for entries in usage.usage_data.values())
    result.tokens = {"input": sum(t.get("prompt_tokens") or 0 for t in totals),
                     "output": sum(t.get("completion_tokens") or 0 for t in totals)}
    result.seconds = round(time.perf_counter() - started, 2)
    return result


def as_json(result: dspy.Prediction) -> dict:
    """The result as one JSON-ready object (what `ferret ask --json` prints)."""
    return {name: result.get(name) for name in RESULT_FIELDS}


def error_text(error: Exception) -> str:
    first = str(error).splitlines()[0][:200] if str(error) else ""
    return f"{type(error).__name__}: {first}"
