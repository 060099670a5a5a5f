"""A text answer that code grounded, confirmed by the model: the sentence that grounds it is the one of
its page that names most of the question, but it can name several things ("... the Lakota and Dakota
Sioux ... in New York"), and code cannot tell which of them the question asks for. One short call of
`ConfirmAnswer` on that sentence can: a value it does not confirm is `on_page`, so a program stating
only grounded answers shows it as an unconfirmed candidate.

Code can tell when the sentence prints the answer where the question has its wh-word, between the
question's own words (`programs.gap.fills_the_gap`); then the model is not asked. The embedded model did
not confirm "She starred in the sitcom "Mad About You" for seven years" for "starred in what for seven
years?", nor "graduated from Hebron Academy" for "graduated from what college preparatory boys' school?"
(docs/benchmarks.md). Code can also tell when the cited pages fill that gap with another name that
grounds ("Earl of Northumbria" for an answer "Powys and Gwynedd" to "an Earl of which location?",
`programs.gap.other_gap_answer`); then the answer is `on_page`, and the model is not asked either.

Numbers, yes/no claims and computed answers are grounded by their row, column or sentence in code and
are not asked about; nor is anything when the program states `on_page` answers anyway.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import dspy

from ferret.programs.gap import fills_the_gap, other_gap_answer
from ferret.programs.grounding import GROUNDED, ON_PAGE, Grounding
from ferret.programs.result import error_text


def confirmed(confirm: dspy.Predict, question: str, answer: str, grounding: Grounding, accept: str,
              corpus=None, places: Sequence[tuple[str, int]] = (), bridges: Sequence[str] = ()) -> Grounding:
    """`grounding`, or `on_page` with the reason when `confirm` (a `ConfirmAnswer` predictor) does not
    confirm that the grounding sentence answers `question` with `answer`; not asked when the answer
    fills the question's gap in that sentence (`fills_the_gap`), nor when the cited `places` of `corpus`
    fill it with another name that grounds (`other_gap_answer`): then the answer is `on_page`."""
    if (grounding.level != GROUNDED or not grounding.sentence or accept != GROUNDED
            or fills_the_gap(question, grounding.sentence, answer)):
        return grounding
    if corpus is not None and (other := other_gap_answer(question, answer, places, corpus, bridges)):
        why = f"its pages fill the question's gap with {other.answer!r}: {other.sentence[:160]!r}"
        return _on_page(grounding, f"{answer[:60]!r} is in the sentence of its page that names most of the question, "
                                   f"but {why}")
    try:
        if confirm(question=question, passage=grounding.sentence, proposed_answer=answer).answers_question:
            return grounding
        why = "the model did not confirm that its sentence answers the question"
    except Exception as error:  # an LM failure confirms nothing
        why = f"the model's confirmation failed ({error_text(error)})"
    return _on_page(grounding, f"{answer[:60]!r} is in the sentence of its page that names most of the question, "
                               f"but {why}: {grounding.sentence[:160]!r}")


def _on_page(grounding: Grounding, reason: str) -> Grounding:
    return replace(grounding, level=ON_PAGE, reason=reason,
                   pages={place: ON_PAGE if level == GROUNDED else level for place, level in grounding.pages.items()})
