"""Rerank: order all gathered evidence for the original question."""
import dspy


class Rerank(dspy.Signature):
    """Order the evidence from most to least useful for answering the question; ranking lists the
    [numbers] of the evidence, best first."""

    question: str = dspy.InputField()
    evidence: list[str] = dspy.InputField(desc="numbered from [1]")
    ranking: list[int] = dspy.OutputField()
