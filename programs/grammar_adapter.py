"""DSPy's JSON adapter, whose schema also holds a grammar-decoding LM to the fields its decision uses.

A field marked `WrittenWhen(field, values)` (`signatures.types`) is used only when an earlier Literal
field takes one of `values`: Synthesis's `need` only when its status is "needs", `clarification` only
when it is "clarify". The schema DSPy builds from the signature's types cannot say that, so the embedded
0.5B model wrote every such field in full whatever it decided: copies of its answer, some 40 output
tokens a FinanceBench question, and a truncated output (a lost step) when one rambled to the token cap.

For an LM that decodes under a grammar built from the schema (the engine's `decodes_under_grammar`),
the schema becomes one object per value of the deciding field (`anyOf`), where the fields that value
leaves unused are empty strings. Every branch allows the same text up to the deciding value, so what
the model writes up to it, the value, and the fields the value uses before the first unused one are the
tokens it wrote before. Any other LM gets DSPy's schema (a strict structured-output API wants one
object).
"""
from __future__ import annotations

import dspy

from ferret.signatures.types import WrittenWhen

EMPTY = {"type": "string", "maxLength": 0}


def conditional_schema(schema: dict, signature: type[dspy.Signature]) -> dict | None:
    """`schema` (the signature's output object) as one branch per value of the field the marked fields
    depend on, each marked field empty where the value leaves it unused; None when no field is marked.
    ValueError unless that field is one Literal output field written before every marked one."""
    marks = {name: mark for name, field in signature.output_fields.items()
             for mark in field.metadata if isinstance(mark, WrittenWhen)}
    if not marks:
        return None
    deciding = {mark.field for mark in marks.values()}
    if len(deciding) != 1:
        raise ValueError(f"{signature.__name__}: fields marked WrittenWhen depend on one field, not {sorted(deciding)}")
    (field,) = deciding
    order = list(signature.output_fields)
    if "enum" not in schema["properties"].get(field, {}) or any(order.index(name) < order.index(field) for name in marks):
        raise ValueError(f"{signature.__name__}: fields marked WrittenWhen depend on a Literal output field written "
                         f"before them, not {field!r}")
    branches = []
    for value in schema["properties"][field]["enum"]:
        properties = {**schema["properties"], field: {**schema["properties"][field], "enum": [value]}}
        properties.update({name: EMPTY for name, mark in marks.items() if value not in mark.values})
        branches.append({key: item for key, item in schema.items() if key != "$defs"} | {"properties": properties})
    return {key: item for key, item in schema.items() if key == "$defs"} | {"anyOf": branches}


class GrammarAdapter(dspy.JSONAdapter):
    """dspy.JSONAdapter; for an LM decoding under a grammar, the marked fields' schema (module rules)."""

    def _prepare_response_format(self, lm, lm_kwargs, signature):
        super()._prepare_response_format(lm, lm_kwargs, signature)
        model = lm_kwargs.get("response_format")
        if not getattr(getattr(lm, "engine", None), "decodes_under_grammar", False) or not isinstance(model, type):
            return
        if (schema := conditional_schema(model.model_json_schema(), signature)) is not None:
            model.model_json_schema = lambda *args, **kwargs: schema
