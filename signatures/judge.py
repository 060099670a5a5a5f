"""Judge: is a predicted answer the gold answer? (the optional LLM-judged accuracy metric)"""
import dspy

# Bump whenever JudgeAnswer changes, so judged scores from different prompts are never compared.
JUDGE_PROMPT_VERSION = "judge-v1"


class JudgeAnswer(dspy.Signature):
    """Judge whether the predicted answer gives the gold answer to the question. Numbers are equal when
    they agree at the gold's precision in any notation or scale ("$1577.00" for a question in USD
    millions equals "1,577 million"; "(3.2)%" equals "-3.2%" or "a 3.2% decrease"). A different number,
    a missing part of the gold, the opposite yes/no, or a refusal is incorrect; extra correct detail is
    fine. reason: one short sentence."""

    question: str = dspy.InputField()
    gold_answer: str = dspy.InputField()
    predicted_answer: str = dspy.InputField()
    correct: bool = dspy.OutputField()
    reason: str = dspy.OutputField()
