"""Rerank: order all gathered evidence for the original question."""
import dspy


class Rerank(dspy.Signature):
    """Order the evidence passages from most to least useful for answering the question;
    ranking lists passage indexes, best first."""

    question: str = dspy.InputField()
    evidence: list[str] = dspy.InputField()
    ranking: list[int] = dspy.OutputField()
