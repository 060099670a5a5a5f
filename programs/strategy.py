"""The loop's policy as plain Python over typed state: which strategy to try next.

A strategy is a retrieval method, the granularity it reads at, and a scope.
- Methods escalate by cost: "annotations" (the label index, no model) < "hybrid" (BM25 fused with an
  embedding; it finds evidence pages far more often than BM25 alone) and "semantic" (an embedding)
  < "select" (the LM reads the section index and picks sections to read in full).
- Granularity goes fine → coarse along the same ladder: "annotations" return facts (one labelled
  value or table row), "hybrid" and "semantic" return passages, "select" and "neighbors" (the
  section around an earlier good hit) return whole sections. At equal cost the finer method comes
  first: a fact or a passage is cheap to read; a section costs the LM a long read.
- Scopes widen: "anchor" (the graph neighbours of an earlier good hit) < "document" < "filtered" (the
  bucket and metadata filters the Router chose) < "global" (the caller's bucket, if any, and no filter).
  For a question about one document every method is tried inside it before any over the whole
  corpus. For any other question each method is tried inside the Router's bucket and filters (when it
  chose any), then at once without them: a wrong guess of the Router costs one rung, not the ladder.
  A "select" rung reads one document's tree: it is only ever on the "document" scope.
The route chosen by the Router decides where the ladder starts ("long_text" starts coarse, with "select").

Rules, in order:
1. A (item, strategy) that failed is never tried again. The loop's first rung (one read of the
   question's hybrid passages) counts as that rung tried for the question, but does not raise the
   floor of rule 3: after it, a "long_text" route still reads sections first.
2. After a failure, backtrack first: if an earlier step succeeded, read the section around its best
   hit (the "neighbors" rung) before paying for a costlier method.
3. Otherwise climb to the cheapest untried rung above every rung that failed since the last
   success (a new or reworded item does not restart the ladder; a success does).
4. After every `replan_after` failures in a row, ask the Planner for new items.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Method = Literal["annotations", "hybrid", "semantic", "select", "neighbors"]
Scope = Literal["anchor", "document", "filtered", "global"]
Granularity = Literal["fact", "passage", "section"]

METHOD_COST = {"annotations": 0, "hybrid": 1, "semantic": 1, "select": 2}
GRANULARITY: dict[Method, Granularity] = {"annotations": "fact", "hybrid": "passage", "semantic": "passage",
                                          "select": "section", "neighbors": "section"}
FINENESS = {"fact": 0, "passage": 1, "section": 2}
ROUTE_METHODS: dict[str, tuple[Method, ...]] = {
    "structured": ("annotations", "hybrid", "semantic", "select"),
    "hybrid": ("hybrid", "annotations", "semantic", "select"),
    "long_text": ("select", "hybrid", "semantic"),
}


@dataclass(frozen=True)
class Strategy:
    method: Method
    scope: Scope
    anchor: str | None = None

    @property
    def granularity(self) -> Granularity:
        return GRANULARITY[self.method]

    def describe(self) -> str:
        where = f"near {self.anchor}" if self.anchor else self.scope
        return f"{self.method} search for {self.granularity}s, {where}"


@dataclass
class Attempt:
    """One extraction step: the item, the strategy, whether it answered, and its best hits."""

    item: str
    strategy: Strategy
    succeeded: bool
    anchors: list[tuple[str, float]] = field(default_factory=list)
    first_rung: bool = False  # the loop's one-call read: never repeated, but the ladder still starts below it


def ladder(route: str, fallbacks: list[str], document_scoped: bool, filtered: bool = False) -> list[Strategy]:
    """The route's first method, then every other method of the route and its fallbacks, cheapest
    (then finest) first: all of them inside the document, then globally, for a document-scoped question;
    otherwise each inside the Router's bucket and filters (when `filtered`), then globally."""
    methods: list[Method] = []
    for name in [route, *fallbacks]:
        methods += [m for m in ROUTE_METHODS.get(name, ROUTE_METHODS["hybrid"]) if m not in methods]
    first, rest = methods[0], sorted(methods[1:], key=lambda m: (METHOD_COST[m], FINENESS[GRANULARITY[m]],
                                                                 methods.index(m)))
    methods = [first, *rest]
    if document_scoped:
        rungs = [Strategy(method, scope) for scope in ("document", "global") for method in methods]
    else:  # the Router's narrowing is a guess: each method widens at once when it fails
        rungs = [Strategy(method, scope) for method in methods for scope in (("filtered",) if filtered else ()) + ("global",)]
    return [rung for rung in rungs if not (rung.method == "select" and rung.scope != "document")]


@dataclass
class Policy:
    """Chooses the next strategy for an item from the history of attempts."""

    rungs: list[Strategy]
    replan_after: int = 2
    history: list[Attempt] = field(default_factory=list)

    def record(self, attempt: Attempt) -> None:
        self.history.append(attempt)

    def tried(self, item: str, strategy: Strategy) -> bool:
        return any(a.item == item and a.strategy == strategy for a in self.history)

    def failures_in_a_row(self) -> int:
        count = 0
        for attempt in reversed(self.history):
            if attempt.succeeded:
                break
            count += 1
        return count

    def should_replan(self) -> bool:
        """True after every `replan_after`-th failure in a row (not after each failure past it)."""
        failures = self.failures_in_a_row()
        return failures > 0 and failures % self.replan_after == 0

    def best_anchor(self, item: str) -> str | None:
        """The highest-scoring hit of an earlier successful step not yet re-anchored on for this item."""
        anchors = sorted(((score, node) for a in self.history if a.succeeded for node, score in a.anchors),
                         reverse=True)
        for _, node in anchors:
            if not any(a.item == item and a.strategy.anchor == node for a in self.history):
                return node
        return None

    def failed_floor(self) -> int:
        """Index of the costliest rung that failed since the last success (-1 if none): after a
        failure the search escalates above it, whatever the next item is."""
        floor = -1
        for attempt in reversed(self.history):
            if attempt.succeeded:
                break
            if attempt.strategy in self.rungs and not attempt.first_rung:
                floor = max(floor, self.rungs.index(attempt.strategy))
        return floor

    def next(self, item: str) -> Strategy | None:
        """The strategy for `item`, or None when every rung above the failures has been tried for it."""
        last = self.history[-1] if self.history else None
        if last is not None and not last.succeeded:
            anchor = self.best_anchor(item)
            if anchor is not None:
                return Strategy("neighbors", "anchor", anchor)
        return next((rung for rung in self.rungs[self.failed_floor() + 1:] if not self.tried(item, rung)), None)
