"""The table rung, written in code (no LM): a question one table row or a filing's line items answer.

A change, percentage change or average of the one table row the question names, between its two years,
its two cells asked "respectively", or the year of its largest (smallest) cell (`programs.row_arithmetic`);
else a filing's metric of a fiscal year over its statements' line items; else a verdict on that metric's
trend or sign (`programs.statement_metric`); else the row's one cell of the one year the question names.
The read it returns is settled like an LM read's calculation: verified, then grounded (`programs.grounding`),
so a value of the wrong unit, scale or operation is not stated.
The iterative program runs it first; `ferret eval --grounding` measures its reach and precision without an LM.
"""
from __future__ import annotations

from dataclasses import dataclass

from ferret.corpus.numbers import SCALE_NAMES
from ferret.programs.passage_answer import PassageAnswer, answer_from_passages, computed_answer
from ferret.programs.row_arithmetic import RowCalculation, row_calculation
from ferret.programs.statement_metric import statement_calculation, statement_verdict, verdict_answer


@dataclass(frozen=True)
class TableRead:
    hits: list[dict]  # the passages (rows) it read
    read: PassageAnswer
    expression: str  # the calculation, or the printed answer
    how: str  # what it read, for the trajectory


def table_read(corpus, question: str, bucket: str | None = None, doc_id: str | None = None) -> TableRead | None:
    """The table rung's read of `question`; None when the question is none of the module docstring's kinds."""
    calculation = row_calculation(corpus, question, bucket=bucket, doc_id=doc_id)
    if calculation is not None and not calculation.cell:
        return _row_read(question, calculation)
    if (metric := statement_calculation(corpus, question, doc_id)) is not None:
        read = computed_answer(question, metric.expression, metric.hits, metric.constants) if metric.expression else \
            answer_from_passages(question, metric.hits, "", metric.answer, [1])
        return TableRead(metric.hits, read, metric.expression or metric.answer, "the filing's line items")
    if (verdict := statement_verdict(corpus, question, doc_id)) is not None:
        read = verdict_answer(question, verdict)
        return TableRead(verdict.hits, read, read.computation, "the filing's line items, compared")
    return None if calculation is None else _row_read(question, calculation)


def _row_read(question: str, calculation: RowCalculation) -> TableRead:
    """The row's read, an amount stated with the scale its table counts it in ("$(2,780) million", not "$(2,780)"
    from a table "(Dollars in millions)")."""
    read = answer_from_passages(question, calculation.hits, calculation.expression, calculation.answer, [1], repair=False)
    if (scale := SCALE_NAMES.get(calculation.scale)) and read.answer and not read.problem:
        read.answer = " and ".join(f"{part} {scale}" for part in read.answer.split(" and "))
    return TableRead(calculation.hits, read, calculation.expression or calculation.answer, "the question's row")
