"""Typed values exchanged between the loop's steps. Pydantic models, so every structured field of a
signature is validated, and JSON-schema constrained decoding has a schema to follow.

Lists and free strings that an LM fills carry length bounds in their JSON schema only (`bound`): the
embedded model's grammar enforces them, so a 0.5B model cannot ramble into the output-token cap
(a truncated output is a lost step), while a larger LM that writes more is not rejected for it.
(A signature's own output fields cannot be bounded so: DSPy 3.4 builds their schema from the type alone.)"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Union

from pydantic import BaseModel, Field

Intent = Literal["lookup", "list", "compute", "compare", "explain"]
Route = Literal["structured", "hybrid", "long_text"]
Status = Literal["answer", "needs", "clarify", "fail"]
Aggregate = Literal["none", "sum", "avg", "min", "max", "count"]
Scalar = Union[float, str]


def bound(items: int | None = None, chars: int | None = None) -> dict:
    """JSON-schema bounds (not validated): a list of at most `items` (strings of at most `chars`), or a string."""
    string = {"type": "string", "maxLength": chars}
    if items is None:
        return string
    return {"maxItems": items, **({"items": string} if chars else {})}


@dataclass(frozen=True)
class WrittenWhen:
    """An output field's mark (`Annotated[str, WrittenWhen("status", ("needs",))]`): the field is written
    only when the output field `field`, a Literal written before it, takes one of `values`, and is empty
    otherwise. The embedded model's grammar holds it to that (`programs.grammar_adapter`), so it spends
    no tokens on a field its decision left unused; any other LM reads which field is for what in the
    instruction."""

    field: str
    values: tuple[str, ...]


class Constraint(BaseModel):
    """One typed filter on document metadata or annotation values, e.g. total >= 1000."""

    field: str = Field(json_schema_extra=bound(chars=40))
    op: Literal["=", "!=", ">", ">=", "<", "<=", "like", "contains", "in", "between"] = "="
    value: Union[Scalar, list[Scalar]] = Field(json_schema_extra={"anyOf": [
        {"type": "number"}, bound(chars=60), {"type": "array", "maxItems": 5, "items": {"anyOf": [
            {"type": "number"}, bound(chars=60)]}}]})


class RouteDecision(BaseModel):
    """The Router's reading of a question and the route to try first, then the fallbacks in order."""

    intent: Intent = "lookup"
    buckets: list[str] = Field(default_factory=list, json_schema_extra=bound(3, 60))
    entities: list[str] = Field(default_factory=list, json_schema_extra=bound(4, 60))
    constraints: list[Constraint] = Field(default_factory=list, json_schema_extra=bound(3))
    topic_terms: list[str] = Field(default_factory=list, json_schema_extra=bound(6, 40))
    subqueries: list[str] = Field(default_factory=list, json_schema_extra=bound(3, 120))
    aggregate: Aggregate = "none"
    route: Route = "hybrid"
    fallbacks: list[Route] = Field(default_factory=list, json_schema_extra=bound(2))


class Finding(BaseModel):
    """A fact read from the corpus, with the page it was read on."""

    label: str = Field(json_schema_extra=bound(chars=80))
    value: Scalar = Field(json_schema_extra={"anyOf": [{"type": "number"}, bound(chars=40)]})
    unit: str | None = Field(None, json_schema_extra={"anyOf": [bound(chars=20), {"type": "null"}]})
    doc_id: str = Field(json_schema_extra=bound(chars=100))
    page: int
    section: str = Field("", json_schema_extra=bound(chars=80))
    context: str = Field("", description="a few words around the value on the page, quoted",
                         json_schema_extra=bound(chars=120))


class SummarySentence(BaseModel):
    """One sentence of an LM's summary of a long document's chunk, with the passages it comes from."""

    text: str = Field(json_schema_extra=bound(chars=300))
    sources: list[int] = Field(default_factory=list, description="[numbers] of the passages it comes from",
                               json_schema_extra={"maxItems": 3})


class Calculation(BaseModel):
    """Arithmetic over printed numbers that code computes (`programs.arithmetic`). Its JSON schema lets
    an expression hold only digits, operators and parentheses, so the embedded model's grammar cannot
    write prose or a copied table into it (it did, 4 of 6 times, when it was a free string)."""

    expression: str = Field("", json_schema_extra={"pattern": r"^[-+*/()0-9.,%$ ]{0,100}$"})


class TurnScope(BaseModel):
    """What a conversation turn's question is limited to: carried to the next turns until a new topic."""

    doc_id: str = Field("", json_schema_extra=bound(chars=100))
    bucket: str = Field("", json_schema_extra=bound(chars=60))
    years: list[int] = Field(default_factory=list, json_schema_extra={"maxItems": 4})
    names: list[str] = Field(default_factory=list, json_schema_extra=bound(4, 60))


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
    grounding: str = ""  # "grounded", "on_page" or "unsupported" (programs.grounding)


class PageRef(BaseModel):
    """A page a baseline agent cites."""

    doc_id: str
    page: int
