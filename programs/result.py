"""What every program takes (a question, checked) and returns: a dspy.Prediction with the same fields,
measured the same way."""
from __future__ import annotations

import time
from collections.abc import Callable

import dspy
from dspy.utils.callback import BaseCallback
from dspy.utils.usage_tracker import track_usage

from ferret.corpus.inputs import check_query

MAX_QUESTION_CHARS = 4000  # about 1,000 tokens: an eighth of the embedded model's 8,192-token context
RESULT_FIELDS = ("status", "answer", "citations", "citations_verified", "unverified_numbers", "findings",
                 "failed_searches", "evidence", "iterations", "lm_calls", "tokens", "seconds", "confidence",
                 "need", "reason", "clarification", "trajectory", "lm_seconds", "rows", "computation", "answered_by",
                 "grounding", "grounding_reason", "grounded_values", "candidate")


class _LMTimer(BaseCallback):
    """Adds up the wall time spent inside LM calls (including waiting for a shared local model)."""

    def __init__(self):
        self.started: dict[str, float] = {}
        self.seconds = 0.0

    def on_lm_start(self, call_id, instance, inputs):
        self.started[call_id] = time.perf_counter()

    def on_lm_end(self, call_id, outputs, exception=None):
        self.seconds += time.perf_counter() - self.started.pop(call_id, time.perf_counter())


def check_input(corpus, question, doc_id: str | None = None, bucket: str | None = None) -> None:
    """Refuse, before any work, a question without words or too long, or a document or bucket the
    corpus lacks."""
    check_query("question", question)
    if len(question) > MAX_QUESTION_CHARS:
        raise ValueError(f"question of {len(question):,} characters: at most {MAX_QUESTION_CHARS:,} (every step's prompt "
                         "holds it beside its passages within the model's context)")
    corpus.check_scope(bucket=bucket, doc_id=doc_id)


def measured(run: Callable[[], dspy.Prediction]) -> dspy.Prediction:
    """Run a program body, adding its LM calls, input/output tokens (and the input tokens an LM reported
    as cached, not computed anew), wall seconds and seconds spent in the LM to the result."""
    started, timer = time.perf_counter(), _LMTimer()
    with track_usage() as usage, dspy.context(callbacks=[*dspy.settings.get("callbacks", []), timer]):
        result = run()
    totals = usage.get_total_tokens().values()
    result.lm_calls = sum(len(entries) for entries in usage.usage_data.values())
    result.tokens = {"input": sum(t.get("prompt_tokens") or 0 for t in totals),
                     "output": sum(t.get("completion_tokens") or 0 for t in totals),
                     "cached": sum((t.get("prompt_tokens_details") or {}).get("cached_tokens") or 0 for t in totals)}
    result.seconds = round(time.perf_counter() - started, 2)
    result.lm_seconds = round(timer.seconds, 2)
    return result


def as_json(result: dspy.Prediction) -> dict:
    """The result as one JSON-ready object (what `ferret ask --json` prints)."""
    return {name: result.get(name) for name in RESULT_FIELDS}


def outcome(status: str, answer: str = "", sources: list[int] | None = None, reason: str = "",
            clarification: str = "", confidence: float = 0.0) -> dict:
    """An outcome decided in code, in the fields of Synthesis (status, answer, sources from 1, ...)."""
    return {"status": status, "answer": answer, "sources": sources or [], "confidence": confidence, "need": "",
            "need_reason": reason, "clarification": clarification}


def error_text(error: Exception) -> str:
    first = str(error).splitlines()[0][:200] if str(error) else ""
    return f"{type(error).__name__}: {first}"
