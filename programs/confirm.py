"""A text answer that code grounded, confirmed by the model: the sentence that grounds it is the one of
its page that names most of the question, but it can name several things ("... the Lakota and Dakota
Sioux ... in New York"), and code cannot tell which of them the question asks for. One short call of
`ConfirmAnswer` on that sentence can: a value it does not confirm is `on_page`, so a program stating
only grounded answers shows it as an unconfirmed candidate.

Numbers, yes/no claims and computed answers are grounded by their row, column or sentence in code and
are not asked about; nor is anything when the program states `on_page` answers anyway.
"""
from __future__ import annotations

from dataclasses import replace

import dspy
from dspy.utils.exceptions import DSPyError

from ferret.programs.grounding import GROUNDED, ON_PAGE, Grounding
from ferret.programs.result import error_text


def confirmed(confirm: dspy.Predict, question: str, answer: str, grounding: Grounding, accept: str) -> Grounding:
    """`grounding`, or `on_page` with the reason when `confirm` (a `ConfirmAnswer` predictor) does not
    confirm that the grounding sentence answers `question` with `answer`."""
    if grounding.level != GROUNDED or not grounding.sentence or accept != GROUNDED:
        return grounding
    try:
        if confirm(question=question, passage=grounding.sentence, proposed_answer=answer).answers_question:
            return grounding
        why = "the model did not confirm that its sentence answers the question"
    except DSPyError as error:  # an LM failure confirms nothing
        why = f"the model's confirmation failed ({error_text(error)})"
    return _on_page(grounding, f"{answer[:60]!r} is in the sentence of its page that names most of the question, "
                               f"but {why}: {grounding.sentence[:160]!r}")


def _on_page(grounding: Grounding, reason: str) -> Grounding:
    return replace(grounding, level=ON_PAGE, reason=reason,
                   pages={place: ON_PAGE if level == GROUNDED else level for place, level in grounding.pages.items()})
