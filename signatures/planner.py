"""Planner: new subqueries after repeated failure."""
import dspy

from signatures.types import FailedSearch, Finding


class Planner(dspy.Signature):
    """The searches so far keep failing. Write one or two new self-contained search tasks that
    could still answer the question, different from the failed ones (other words, another
    statement or section, a component to compute the value from)."""

    question: str = dspy.InputField()
    findings: list[Finding] = dspy.InputField()
    failed_searches: list[FailedSearch] = dspy.InputField()
    subqueries: list[str] = dspy.OutputField()
