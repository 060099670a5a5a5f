"""An LM engine answered by code: DSPy 3.4's engine interface (`dspy.LM(model, engine=...)`), its request's
step known by the output fields the adapter asks for, the inputs read back from the prompt, and a reply of
output fields sent back as an LM's text, so DSPy's adapters parse and type it as any LM's.

The scripted readers (`optimizers.scripted_readers`) and the unit tests' fake LM are such engines.
"""
from __future__ import annotations

import json
import re

from dspy.lm15 import Message, Response, TextPart, Usage

_OUTPUTS = re.compile(r"Your output fields are:\n(.*?)\nAll interactions", re.S)
_FIELD = re.compile(r"^\d+\. `(\w+)`", re.M)
_INPUT = re.compile(r"\[\[ ## (\w+) ## \]\]\n(.*?)(?=\n\n\[\[ ## |\n\nRespond with|\Z)", re.S)

# A step is known by its output fields (ChainOfThought adds "reasoning", ReAct's loop "next_*").
STEP_FIELDS = {
    "route": {"decision"},
    "read": {"calculation", "missing"},
    "confirm": {"answers_question"},
    "act": {"next_tool_name"},
    "extract": {"findings", "failure_reason"},
    "evaluate": {"answered"},
    "synthesize": {"status"},
    "plan": {"subqueries"},
    "rerank": {"ranking"},
    "answer": {"answer"},
    "judge": {"correct"},
    "rewrite": {"new_topic", "scope"},
    "summarize": {"new_summary"},
    "summarize_chunk": {"sentences"},
    # the optimizers' own signatures: MIPROv2's proposer, GEPA's reflection, SIMBA's advice
    "propose": {"proposed_instruction"},
    "describe_program": {"program_description"},
    "describe_module": {"module_description"},
    "observe": {"observations"},
    "summarize_data": {"summary"},
    "reflect": {"new_instruction"},
    "advise": {"module_advice"},
}


def system_text(request) -> str:
    return request.system if isinstance(request.system, str) else "".join(p.text for p in request.system or [])


def output_fields(request) -> set[str]:
    """The output fields a request's adapter asks for (empty when its system message lists none)."""
    match = _OUTPUTS.search(system_text(request))
    return set(_FIELD.findall(match.group(1))) if match else set()


class CodeEngine:
    """An engine whose `reply(step, inputs, prompt)` (a subclass's) gives each call's output fields as a dict,
    or a raw string (malformed output); `inputs` maps each input field to its text as the prompt shows it
    (a list as JSON), `prompt` is the whole prompt (system message, demos and inputs)."""

    supports_response_schema = True
    supported_params = frozenset({"temperature", "max_tokens", "response_format"})

    def reply(self, step: str, inputs: dict[str, str], prompt: str) -> dict | str:
        raise NotImplementedError

    def complete(self, request) -> Response:
        system, outputs = system_text(request), output_fields(request)
        step = next((name for name, fields in STEP_FIELDS.items() if fields <= outputs), "unknown")
        inputs = dict(_INPUT.findall(request.messages[-1].text))
        prompt = "\n\n".join([system, *(message.text or "" for message in request.messages)])
        reply = self.reply(step, inputs, prompt)
        if isinstance(reply, dict):
            reply = json.dumps({"reasoning": "scripted", **reply} if "reasoning" in outputs else reply)
        return Response(id="scripted", model=request.model, message=Message.assistant([TextPart(reply)]),
                        finish_reason="stop", usage=Usage(input_tokens=len(system) // 4, output_tokens=len(reply) // 4))
