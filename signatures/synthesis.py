"""Synthesis: answer from findings only (never raw text), or say what is still needed."""
from typing import Literal

import dspy

from signatures.types import FailedSearch, Finding


class Synthesis(dspy.Signature):
    """Answer the question using only the findings, or say what is missing.

    status "answer": answer in one or two sentences, with every number taken from or computed from
    the findings; sources are the indexes of the findings used. status "needs": the findings are not
    enough; need is the one fact to search for next and need_reason why. status "clarify": the
    question is ambiguous or matches too much; clarification is the question to ask the user, saying
    what was tried. status "fail": the corpus does not contain the answer; say why in need_reason."""

    question: str = dspy.InputField()
    findings: list[Finding] = dspy.InputField()
    failed_searches: list[FailedSearch] = dspy.InputField()
    status: Literal["answer", "needs", "clarify", "fail"] = dspy.OutputField()
    answer: str = dspy.OutputField()
    sources: list[int] = dspy.OutputField()
    confidence: float = dspy.OutputField(desc="0 to 1")
    need: str = dspy.OutputField()
    need_reason: str = dspy.OutputField()
    clarification: str = dspy.OutputField()
