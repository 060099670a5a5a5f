"""Planner: new subqueries after repeated failure."""
import dspy


class Planner(dspy.Signature):
    """The searches keep failing. Write one or two new search tasks that could still answer the
    question, unlike the failed ones: each names, in a few words, one value to find (another line
    item or statement, or a component to compute the value from)."""

    question: str = dspy.InputField()
    findings: list[str] = dspy.InputField()
    failed_searches: list[str] = dspy.InputField()
    subqueries: list[str] = dspy.OutputField()
