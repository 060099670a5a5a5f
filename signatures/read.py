"""ReadPassages: the loop's first rung, one typed read of the question's top passages."""
import dspy

from ferret.signatures.types import Calculation


class ReadPassages(dspy.Signature):
    """Answer the question from the numbered passages only.

    calculation: only when the question asks for a change, difference, percentage, ratio, sum or
    average of printed numbers: its expression, with those numbers copied from the passages, such as
    (A - B) / B * 100 for a percentage change from B to A; do not compute it. Otherwise empty.
    answer: the answer in a few words, its values copied as printed.
    sources: the [numbers] of the passages used.
    missing: empty when the passages hold the answer; otherwise what they lack."""

    question: str = dspy.InputField()
    passages: list[str] = dspy.InputField(desc="numbered from [1]")
    calculation: Calculation = dspy.OutputField()
    answer: str = dspy.OutputField()
    sources: list[int] = dspy.OutputField()
    missing: str = dspy.OutputField()
