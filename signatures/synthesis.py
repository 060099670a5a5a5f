"""Synthesis: answer from findings only (never raw text), or say what is still needed."""
from typing import Annotated, Literal

import dspy

from ferret.signatures.types import WrittenWhen


class Synthesis(dspy.Signature):
    """Answer the question from the findings only.

    "answer": the findings hold the value asked, or the values to compute it. Answer in one sentence,
    every number taken from the findings or computed from them; sources are the [numbers] of the
    findings used. "needs": a value is still missing; need is the one fact to search for next,
    need_reason why. "clarify": the question is ambiguous; clarification asks the user, saying what
    was tried. "fail": the documents do not hold the answer; need_reason says why.
    When last_chance is true, answer or fail, never needs."""

    question: str = dspy.InputField()
    findings: list[str] = dspy.InputField(desc="numbered from [1]")
    failed_searches: list[str] = dspy.InputField()
    last_chance: bool = dspy.InputField(desc="no search is left")
    status: Literal["answer", "needs", "clarify", "fail"] = dspy.OutputField()
    answer: str = dspy.OutputField()
    sources: list[int] = dspy.OutputField()
    confidence: float = dspy.OutputField(desc="0 to 1")
    need: Annotated[str, WrittenWhen("status", ("needs",))] = dspy.OutputField()
    need_reason: Annotated[str, WrittenWhen("status", ("needs", "fail"))] = dspy.OutputField()
    clarification: Annotated[str, WrittenWhen("status", ("clarify",))] = dspy.OutputField()
