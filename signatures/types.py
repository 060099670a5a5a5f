"""Typed values exchanged between the loop's steps. Pydantic models, so every structured field of a
signature is validated, and JSON-schema constrained decoding has a schema to follow."""
from __future__ import annotations

from typing import Literal, Union

from pydantic import BaseModel, Field

Intent = Literal["lookup", "list", "compute", "compare", "explain"]
Route = Literal["structured", "hybrid", "long_text"]
Status = Literal["answer", "needs", "clarify", "fail"]
Scalar = Union[float, str]


class Constraint(BaseModel):
    """One typed filter on document metadata or annotation values, e.g. total >= 1000."""

    field: str
    op: Literal["=", "!=", ">", ">=", "<", "<=", "like", "contains", "in", "between"] = "="
    value: Union[Scalar, list[Scalar]]


class RouteDecision(BaseModel):
    """The Router's reading of a question and the route to try first, then the fallbacks in order."""

    intent: Intent = "lookup"
    buckets: list[str] = Field(default_factory=list)
    entities: list[str] = Field(default_factory=list)
    constraints: list[Constraint] = Field(default_factory=list)
    topic_terms: list[str] = Field(default_factory=list)
    subqueries: list[str] = Field(default_factory=list)
    route: Route = "hybrid"
    fallbacks: list[Route] = Field(default_factory=list)


class Finding(BaseModel):
    """A fact read from the corpus, with the page it was read on."""

    label: str
    value: Scalar
    unit: str | None = None
    doc_id: str
    page: int
    section: str = ""
    context: str = Field("", description="the words on the page around the value, quoted")


class FailedSearch(BaseModel):
    """A search that did not answer its item: what was tried, where, and why it failed."""

    item: str
    strategy: str
    reason: str
    sections_tried: list[str] = Field(default_factory=list)


class Citation(BaseModel):
    """A source of an answer, checked against the stored page text."""

    doc_id: str
    file: str
    page: int
    section: str = ""
    quote: str = ""
    verified: bool = False


class PageRef(BaseModel):
    """A page a baseline agent cites."""

    doc_id: str
    page: int
