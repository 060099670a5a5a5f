"""Evaluator: did a step answer its shopping item?"""
import dspy


class Evaluator(dspy.Signature):
    """Do the findings answer the shopping item? valid_findings: the [numbers] of the findings that
    give its value, or a value it is computed from (right quantity, period and entity).
    resolved_subqueries: the open subqueries they also answer."""

    shopping_item: str = dspy.InputField()
    findings: list[str] = dspy.InputField(desc="numbered from [1]")
    open_subqueries: list[str] = dspy.InputField()
    answered: bool = dspy.OutputField()
    valid_findings: list[int] = dspy.OutputField()
    resolved_subqueries: list[str] = dspy.OutputField()
    reason: str = dspy.OutputField()
