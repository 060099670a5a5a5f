"""Code capabilities as DSPy tools: what code does best on any corpus, which an LM step may call, returning a
typed result that the program checks as it checks any read's answer (verified, then grounded).

`table_calculation` is the table rung's reading (`programs.table_rung.table_read`: a change, percentage change,
average or extreme of the one table row a question names; a filing's metric from its statement line items;
that metric's trend), given to the extraction agent as `dspy.Tool`. The iterative program runs the same reading
first, with no LM; an agent calls the tool with the question in its own words (a select rung's item, a
rephrasing that names the row), and a result that answers the question settles it like the table rung's."""
from __future__ import annotations

import dspy
from pydantic import BaseModel, Field

from ferret.programs.passage_answer import PassageAnswer
from ferret.programs.table_rung import table_read
from ferret.signatures.types import Finding

NO_TABLE = "no table row or statement line item that the question names (name the row and its years)"


class Computed(BaseModel):
    """A code capability's result: the answer computed in code, the expression it computed over printed values,
    and those values, each a finding on its page; or why there is no answer."""

    question: str
    answer: str = ""
    calculation: str = ""
    values: list[Finding] = Field(default_factory=list)
    derived: list[float] = Field(default_factory=list)
    problem: str = ""

    def read(self) -> PassageAnswer:
        """The result as a read's answer, for the program's checks (`IterativeRetriever._settle`)."""
        return PassageAnswer(self.answer, list(self.values), list(self.derived), self.calculation, self.problem)


def table_calculation(corpus, question: str, doc_id: str | None = None) -> Computed:
    """The table rung's reading of `question` inside `doc_id` (or the whole corpus), as a typed result."""
    table = table_read(corpus, question, doc_id=doc_id)
    if table is None:
        return Computed(question=question, problem=NO_TABLE)
    read = table.read
    return Computed(question=question, answer=read.answer, calculation=read.computation, values=read.findings,
                    derived=read.derived, problem=read.problem)


def capability_tools(corpus) -> list[dspy.Tool]:
    """The code capabilities as the extraction agent's tools."""

    def table_calculation_tool(question: str, doc_id: str = "") -> Computed:
        return table_calculation(corpus, question, doc_id or None)

    return [dspy.Tool(table_calculation_tool, name="table_calculation",
                      desc="Compute in code a change, percentage change or average of a table row, or a filing's "
                           "metric, from the printed cells; question names the row and its years.")]


def computed_results(trajectory: dict) -> list[Computed]:
    """The capabilities' results an agent's trajectory holds (its observations, as the tools returned them)."""
    return [value for key, value in trajectory.items() if key.startswith("observation_") and isinstance(value, Computed)]
