"""The state of one question in the iterative program (`programs.iterative`): one typed object its steps read
and write, and the trajectory they log. Nothing here decides or calls an LM; a failed LM call is recorded
(`lm_error`) and the program's loop ends the question on it."""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

from dspy.utils.exceptions import DSPyError, LMError

from ferret.programs.comparison import Comparison
from ferret.programs.grounding import Grounding
from ferret.programs.result import error_text
from ferret.programs.strategy import Policy
from ferret.signatures.types import FailedSearch, Finding, RouteDecision

MAX_REASON_CHARS = 160


@dataclass
class Run:
    """What one question's steps know. The caller's inputs and the small-model profile's multi-hop wording
    (`hop_wait`) are set when it starts; the Router's reading (`decision`, `policy`, `routed_bucket`,
    `filters`, `terms`) by the route step only; `findings`, `failures`, `trajectory`, `read_hits` grow as the
    steps read (`keep`, `fail`, `show`, `log`); `grounding`, `computation`, `derived` and `rows` are the answering
    step's (`answered`, which also replaces the findings by what the answer rests on), `candidate` the best read
    answer not grounded enough, `comparison` the question's comparison decided in code (or not) once a step
    asked; `rung` is the step that stated an answer (the answer's `answered_by`), else the ladder's rung or
    Synthesis running."""

    question: str
    doc_id: str | None = None
    bucket: str | None = None
    on_step: Callable[[dict], None] | None = None  # a callback receiving each trajectory step (CLI progress)
    hop_wait: str = ""  # why the first read waits for the hops search (the small-model profile's wording cue)
    decision: RouteDecision = field(default_factory=lambda: RouteDecision(subqueries=[]))
    policy: Policy = field(default_factory=lambda: Policy([]))
    routed_bucket: str | None = None  # the one bucket the Router chose, with `filters` the "filtered" scope
    filters: dict = field(default_factory=dict)
    terms: str = ""  # the Router's entities and topic terms: the label query for the question itself
    findings: list[Finding] = field(default_factory=list)
    failures: list[FailedSearch] = field(default_factory=list)
    trajectory: list[dict] = field(default_factory=list)
    table_attempts: list[dict] = field(default_factory=list)  # the structured route's queries, filters and row counts
    rows: list[dict] = field(default_factory=list)  # every annotation a structured answer read (for export)
    derived: list[float] = field(default_factory=list)  # numbers computed in code from the findings (counts, sums)
    read_hits: list[dict] = field(default_factory=list)  # the passages read: the ranked evidence starts with them
    read_ids: set[str] = field(default_factory=set)  # node ids of the results LM steps were shown
    computation: str = ""  # the calculation an answer's number was computed by
    grounding: Grounding | None = None
    candidate: tuple[str, Grounding] | None = None
    comparison: tuple[Comparison | None] | None = None  # the question's comparison in code, once computed
    rung: str = ""  # "table", "structured", "read", "hops", "comparison", a ladder method, "synthesis"
    lm_error: str = ""  # a step's LM call failed after DSPy's retries: the question ends once that step is logged

    def show(self, hits: list[dict]) -> None:
        """`hits` were read: they come first in the ranked evidence."""
        shown = {hit["node_id"] for hit in hits}
        self.read_hits = hits + [hit for hit in self.read_hits if hit["node_id"] not in shown]

    def log(self, step: str, data: dict) -> None:
        self.trajectory.append({"step": step, **json.loads(json.dumps(data, default=str))})
        if self.on_step is not None:
            self.on_step(self.trajectory[-1])

    def keep(self, findings: list[Finding]) -> list[Finding]:
        """Keep the values a step read that are not kept yet (for the steps after it); returns those."""
        kept: list[Finding] = []
        for finding in findings:
            if finding not in self.findings and finding not in kept:
                kept.append(finding)
        self.findings.extend(kept)
        return kept

    def fail(self, item: str, strategy: str, reason: str, sections: list[str]) -> None:
        """Record a step's failure on `item`: the LM steps after it see it (`tried`)."""
        self.failures.append(FailedSearch(item=item, strategy=strategy, reason=reason,
                                          sections_tried=list(dict.fromkeys(sections))))

    def answered(self, findings: list[Finding], grounding: Grounding | None = None, derived: list[float] = (),
                 computation: str = "", rows: list[dict] = ()) -> None:
        """The answering step's values: what the answer rests on replaces the partial findings."""
        self.findings, self.derived, self.computation = list(findings), list(derived), computation
        self.grounding, self.rows = grounding, list(rows)

    def error(self, error: DSPyError, malformed: str = "") -> tuple[str, str]:
        """(the reason the loop records, the error as logged) for a step whose LM call raised: its output did
        not parse (`malformed`), or the call failed (DSPy's LMError), which ends the question."""
        text = error_text(error)
        if isinstance(error, LMError):
            self.lm_error = text
            return f"the LM failed: {text}", text
        return malformed, text

    def tried(self) -> list[str]:
        """The recorded failures as the LM steps see them: one short line each, without repeating the question."""
        return [f"{f.strategy}{'' if f.item == self.question else f' for {f.item!r}'} failed: {f.reason[:MAX_REASON_CHARS]}"
                for f in self.failures]
