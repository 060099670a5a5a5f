"""ferret.programs.grammar_adapter: fields a decision leaves unused, held empty for an LM decoding under a
grammar; DSPy's own schema for any other LM; and the embedded model writing them so."""
from __future__ import annotations

import json
from typing import Annotated, Literal

import dspy
import pytest
from dspy.lm15 import Message, Response, TextPart, Usage

from ferret.programs.grammar_adapter import EMPTY, GrammarAdapter, conditional_schema
from ferret.programs.lm import answering, make_lm
from ferret.signatures import ReadPassages, Synthesis
from ferret.signatures.types import WrittenWhen
from dspy.adapters.json_adapter import _get_structured_outputs_response_format

UNUSED = {"answer": {"need", "need_reason", "clarification"}, "needs": {"clarification"},
          "clarify": {"need", "need_reason"}, "fail": {"need", "clarification"}}


def schema_of(signature):
    return _get_structured_outputs_response_format(signature).model_json_schema()


def test_one_branch_per_status_with_its_unused_fields_empty():
    signature = dspy.ChainOfThought(Synthesis).predict.signature
    plain = schema_of(signature)
    branches = conditional_schema(plain, signature)["anyOf"]
    assert [branch["properties"]["status"]["enum"] for branch in branches] == [[s] for s in UNUSED]
    for status, branch in zip(UNUSED, branches):
        empty = {name for name, node in branch["properties"].items() if node == EMPTY}
        assert empty == UNUSED[status]
        assert list(branch["properties"]) == list(plain["properties"])  # the order the model writes them
        assert all(branch["properties"][name] == plain["properties"][name]
                   for name in plain["properties"] if name not in empty | {"status"})
        assert branch["required"] == plain["required"] and branch["additionalProperties"] is False


def test_a_signature_without_marks_keeps_its_schema_and_marks_depend_on_one_literal_before_them():
    signature = dspy.ChainOfThought(ReadPassages).predict.signature
    assert conditional_schema(schema_of(signature), signature) is None

    class TwoDeciders(dspy.Signature):
        question: str = dspy.InputField()
        kind: Literal["a", "b"] = dspy.OutputField()
        mood: Literal["c", "d"] = dspy.OutputField()
        note: Annotated[str, WrittenWhen("kind", ("a",))] = dspy.OutputField()
        other: Annotated[str, WrittenWhen("mood", ("c",))] = dspy.OutputField()

    with pytest.raises(ValueError, match="one field"):
        conditional_schema(schema_of(TwoDeciders), TwoDeciders)

    class DecidedAfter(dspy.Signature):
        question: str = dspy.InputField()
        note: Annotated[str, WrittenWhen("kind", ("a",))] = dspy.OutputField()
        kind: Literal["a", "b"] = dspy.OutputField()

    class NotALiteral(dspy.Signature):
        question: str = dspy.InputField()
        kind: str = dspy.OutputField()
        note: Annotated[str, WrittenWhen("kind", ("a",))] = dspy.OutputField()

    for signature in (DecidedAfter, NotALiteral):  # the branches would not leave the text before them alone
        with pytest.raises(ValueError, match="a Literal output field written before them"):
            conditional_schema(schema_of(signature), signature)


class Recording:
    """An engine that records each request and answers Synthesis with status "answer"."""

    supports_response_schema = True
    supported_params = frozenset({"temperature", "max_tokens", "response_format"})

    def __init__(self, decodes_under_grammar: bool):
        self.decodes_under_grammar = decodes_under_grammar
        self.requests = []

    def complete(self, request):
        self.requests.append(request)
        text = json.dumps({"reasoning": "r", "status": "answer", "answer": "42", "sources": [1], "confidence": 0.9,
                           "need": "", "need_reason": "", "clarification": ""})
        return Response(id="r", model=request.model, message=Message.assistant([TextPart(text)]),
                        finish_reason="stop", usage=Usage(input_tokens=1, output_tokens=1))


@pytest.mark.parametrize("grammar", [True, False])
def test_the_adapter_sends_the_branches_only_to_an_lm_that_decodes_under_a_grammar(grammar):
    engine = Recording(grammar)
    lm = dspy.LM("openai/recorded", engine=engine, cache=False)
    with dspy.context(lm=lm, adapter=GrammarAdapter()):
        out = dspy.ChainOfThought(Synthesis)(question="q", findings=["[1] 42"], failed_searches=[], last_chance=True)
    assert out.status == "answer" and out.answer == "42"
    schema = engine.requests[0].config.response_format["schema"]
    assert ("anyOf" in schema) is grammar
    assert ("properties" in schema) is not grammar


def test_the_embedded_model_leaves_the_fields_its_status_does_not_use_empty():
    """End to end: Synthesis on the real model; whatever status it picks, the fields that status leaves
    unused are empty. The marks leave the prompt as it was (cached prefixes, compiled demos)."""
    with answering(make_lm("local")):
        out = dspy.ChainOfThought(Synthesis)(
            question="What was the company's revenue in 2019?",
            findings=["[1] Revenue 2019: 1,200 (p. 4)", "[2] Revenue 2018: 1,100 (p. 4)"],
            failed_searches=[], last_chance=True)
    assert out.status in UNUSED
    assert all(out[name] == "" for name in UNUSED[out.status])
    unmarked = Synthesis
    for name in ("need", "need_reason", "clarification"):  # the last three: appended in their order
        unmarked = unmarked.delete(name).append(name, dspy.OutputField(), type_=str)
    assert list(unmarked.output_fields) == list(Synthesis.output_fields)
    assert not unmarked.output_fields["need"].metadata and Synthesis.output_fields["need"].metadata
    inputs = {"question": "q", "findings": ["[1] x"], "failed_searches": [], "last_chance": True}
    assert GrammarAdapter().format(Synthesis, [], inputs) == GrammarAdapter().format(unmarked, [], inputs)
