"""Signatures of the baselines: one-shot RAG and a single ReAct agent."""
import dspy

from ferret.signatures.types import PageRef


class AnswerFromPassages(dspy.Signature):
    """Answer the question from the numbered passages only; sources are the numbers of the passages
    used. If the passages do not contain the answer, leave answer empty."""

    question: str = dspy.InputField()
    passages: list[str] = dspy.InputField()
    answer: str = dspy.OutputField()
    sources: list[int] = dspy.OutputField()


class AgentAnswer(dspy.Signature):
    """Answer the question by searching the corpus with the tools. Cite the pages the answer was read
    on. If the corpus does not contain the answer, leave answer empty."""

    question: str = dspy.InputField()
    document: str = dspy.InputField(desc="the doc_id to search, or 'any'")
    answer: str = dspy.OutputField()
    sources: list[PageRef] = dspy.OutputField()
