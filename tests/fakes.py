"""The scripted fake LM of the unit tests: a DSPy 3.4 engine that fills each signature's output
fields from a script, through the real adapters (so parsing, typing and errors are exercised)."""
from __future__ import annotations

import inspect
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import dspy

from ferret.programs.code_engine import CodeEngine

DEFAULTS: dict[str, Reply] = {
    "route": {"decision": {"intent": "lookup", "route": "hybrid"}},
    "read": {"calculation": {"expression": ""}, "answer": "", "sources": [], "missing": "not in these passages"},
    "confirm": {"answers_question": True},
    "act": {"next_thought": "I have what I need.", "next_tool_name": "finish", "next_tool_args": {}},
    "extract": {"findings": [], "sections_searched": [], "failure_reason": "not found"},
    "evaluate": {"answered": False, "valid_findings": [], "resolved_subqueries": [], "reason": "no"},
    "synthesize": {"status": "fail", "answer": "", "sources": [], "confidence": 0.0, "need": "",
                   "need_reason": "nothing found", "clarification": ""},
    "plan": {"subqueries": []},
    "rerank": {"ranking": []},
    "judge": {"correct": False, "reason": "scripted"},
    "rewrite": lambda inputs: {"new_topic": False, "question": inputs["turn"], "scope": {}},
    "summarize": lambda inputs: {"new_summary": f"{inputs['summary']} {inputs['question']}".strip()},
    "summarize_chunk": {"sentences": []},
    "propose": {"proposed_instruction": "Answer from the evidence."},
    "describe_program": {"program_description": "Answers questions over documents."},
    "describe_module": {"module_description": "One step of the program."},
    "observe": {"observations": "Questions about figures in documents."},
    "summarize_data": {"summary": "Questions about figures in documents."},
    "reflect": lambda inputs: {"new_instruction": inputs["current_instruction"]},
    "advise": {"discussion": "scripted", "module_advice": {}},
}

Reply = dict | str | Callable[..., "dict | str"]


class ScriptedEngine(CodeEngine):
    """Answers each call from `script[step]`: a list consumed in order (its last entry repeats), each
    entry a dict of output fields, a raw string (to simulate malformed output), or a callable of the
    call's inputs (and, if it takes a second argument, of the whole prompt: system message, demos and
    inputs). Steps without a script get a harmless default. Every call is recorded."""

    def __init__(self, script: dict[str, list[Reply] | Reply] | None = None):
        self.script = {step: list(r) if isinstance(r, list) else [r] for step, r in (script or {}).items()}
        self.calls: list[tuple[str, dict[str, str]]] = []
        self._lock = threading.Lock()

    def reply(self, step: str, inputs: dict[str, str], prompt: str) -> dict | str:
        with self._lock:
            self.calls.append((step, inputs))
            queue = self.script.get(step)
            reply = (queue.pop(0) if len(queue) > 1 else queue[0]) if queue else DEFAULTS.get(step, {})
        if callable(reply):
            reply = reply(inputs, prompt) if len(inspect.signature(reply).parameters) > 1 else reply(inputs)
        return reply

    def steps(self) -> list[str]:
        return [step for step, _ in self.calls]


def scripted_lm(script: dict[str, Any] | None = None, model: str = "scripted/fake") -> tuple[dspy.LM, ScriptedEngine]:
    """The scripted LM and its engine; `model` "local/..." makes it an embedded model as the programs see it
    (the small-model repairs are on for it by default)."""
    engine = ScriptedEngine(script)
    return dspy.LM(model, engine=engine, cache=False), engine


def stop_with_sigterm(command: str) -> None:
    """Send this process a SIGTERM, as `kill` or a job scheduler would; ferret's handler raises
    KeyboardInterrupt in the main thread before the sleep ends."""
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(5)
    raise RuntimeError(f"SIGTERM did not stop the {command}")


@contextmanager
def sigterm_left_to_ferret() -> Iterator[None]:
    """Outside ferret's own handler a SIGTERM is ignored (so a missing handler fails the test instead of
    killing pytest); afterwards, ferret's handler must have been removed."""
    def ignore(signum, frame):
        pass

    before = signal.signal(signal.SIGTERM, ignore)
    try:
        yield
    finally:
        after = signal.signal(signal.SIGTERM, before)
    assert after is ignore, "ferret's SIGTERM handler was left installed"
