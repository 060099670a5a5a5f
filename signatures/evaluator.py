"""Evaluator: did a step answer its shopping item?"""
import dspy

from signatures.types import Finding


class Evaluator(dspy.Signature):
    """Judge whether the findings answer the shopping item. valid_findings are the indexes of the
    findings that really answer it (a value of the right quantity, period and entity);
    resolved_subqueries are the open subqueries these findings also answer."""

    shopping_item: str = dspy.InputField()
    findings: list[Finding] = dspy.InputField()
    open_subqueries: list[str] = dspy.InputField()
    answered: bool = dspy.OutputField()
    valid_findings: list[int] = dspy.OutputField()
    resolved_subqueries: list[str] = dspy.OutputField()
    reason: str = dspy.OutputField()
