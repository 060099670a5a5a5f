"""The loop's policy as plain Python over typed state: which strategy to try next.

A strategy is a retrieval method and a scope. Methods escalate by cost: "annotations" and
"lexical" (BM25, no model) < "semantic" (an embedding) < "select" (the LM reads the section index
and picks sections to read in full). A "select" rung is never global: it reads one document's tree. Scopes widen: "anchor" (the graph neighbours of an earlier
good hit) < "document" < "global". The route chosen by the Router decides where the ladder starts.

Rules, in order:
1. A (item, strategy) that failed is never tried again.
2. After a failure, backtrack first: if an earlier step succeeded, re-anchor on its best hit
   (neighbours of that node) before paying for a costlier method.
3. Otherwise climb to the cheapest untried rung above every rung that failed since the last
   success (a new or reworded item does not restart the ladder; a success does).
4. After `replan_after` failures in a row, ask the Planner for new items.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Method = Literal["annotations", "lexical", "semantic", "select"]
Scope = Literal["anchor", "document", "global"]

METHOD_COST = {"annotations": 0, "lexical": 0, "semantic": 1, "select": 2}
SCOPE_COST = {"anchor": 0, "document": 1, "global": 2}
ROUTE_METHODS: dict[str, tuple[Method, ...]] = {
    "structured": ("annotations", "lexical", "semantic", "select"),
    "hybrid": ("lexical", "annotations", "semantic", "select"),
    "long_text": ("select", "lexical", "semantic"),
}


@dataclass(frozen=True)
class Strategy:
    method: Method
    scope: Scope
    anchor: str | None = None

    def describe(self) -> str:
        where = f"near {self.anchor}" if self.anchor else self.scope
        return f"{self.method} search, {where}"


@dataclass
class Attempt:
    """One extraction step: the item, the strategy, whether it answered, and its best hits."""

    item: str
    strategy: Strategy
    succeeded: bool
    anchors: list[tuple[str, float]] = field(default_factory=list)


def ladder(route: str, fallbacks: list[str], document_scoped: bool) -> list[Strategy]:
    """The route's first method (local → global), then every other method of the route and its
    fallbacks, cheapest first, each local → global."""
    methods: list[Method] = []
    for name in [route, *fallbacks]:
        methods += [m for m in ROUTE_METHODS.get(name, ROUTE_METHODS["hybrid"]) if m not in methods]
    first, rest = methods[0], sorted(methods[1:], key=lambda m: (METHOD_COST[m], methods.index(m)))
    scopes: list[Scope] = ["document", "global"] if document_scoped else ["global"]
    return [Strategy(method, scope) for method in [first, *rest] for scope in scopes
            if not (method == "select" and scope == "global")]


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
        return self.failures_in_a_row() >= self.replan_after

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
            if attempt.strategy in self.rungs:
                floor = max(floor, self.rungs.index(attempt.strategy))
        return floor

    def next(self, item: str) -> Strategy | None:
        """The strategy for `item`, or None when every rung above the failures has been tried for it."""
        last = self.history[-1] if self.history else None
        if last is not None and not last.succeeded:
            anchor = self.best_anchor(item)
            if anchor is not None:
                return Strategy("lexical", "anchor", anchor)
        return next((rung for rung in self.rungs[self.failed_floor() + 1:] if not self.tried(item, rung)), None)
