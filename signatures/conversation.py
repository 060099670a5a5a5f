"""The conversation's two steps: RewriteTurn reads a turn as a standalone question, UpdateSummary keeps
the rolling summary that later turns are read against."""
import dspy

from ferret.signatures.types import TurnScope


class RewriteTurn(dspy.Signature):
    """Rewrite the user's turn as one standalone question that needs no earlier context.

    Resolve what the turn leaves out ("it", "those", "and in 2022?") from the summary and the last
    question: keep their company, document, metric and year unless the turn changes them. When the
    last turn asked the user to clarify, the turn is the reply: add it to the last question.
    new_topic: true when the turn asks about something unrelated to the summary; then the question
    is the turn itself, unchanged. scope: the document and bucket the question is limited to (empty
    when none is named), the years and the names of companies, products or parties it is about."""

    summary: str = dspy.InputField(desc="the conversation so far")
    last_question: str = dspy.InputField(desc="the last standalone question")
    last_outcome: str = dspy.InputField(desc="its answer, or the clarification asked of the user")
    turn: str = dspy.InputField()
    new_topic: bool = dspy.OutputField()
    question: str = dspy.OutputField(desc="standalone")
    scope: TurnScope = dspy.OutputField()


class UpdateSummary(dspy.Signature):
    """Update the summary of the conversation with the latest question and its outcome, in at most
    a few sentences. Keep the companies, documents, years, figures and open requests a later turn
    may refer to; drop what no longer matters."""

    summary: str = dspy.InputField(desc="the summary so far")
    question: str = dspy.InputField()
    outcome: str = dspy.InputField()
    new_summary: str = dspy.OutputField()
