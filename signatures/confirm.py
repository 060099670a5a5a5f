"""ConfirmAnswer: does the sentence that grounds a text answer say that it answers the question?"""
import dspy


class ConfirmAnswer(dspy.Signature):
    """Does the passage state that the proposed answer is the answer to the question? Answer false when
    the passage names the proposed answer but says something else about it, or when the question asks
    for something other than what the proposed answer is."""

    question: str = dspy.InputField()
    passage: str = dspy.InputField(desc="the sentence of a cited page that names the proposed answer")
    proposed_answer: str = dspy.InputField()
    answers_question: bool = dspy.OutputField()
