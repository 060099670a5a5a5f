"""The looping module with the scripted fake LM: answer, failure then another route, escalation,
backtracking, search queries, skipped calls, prompt sizes, the agent's tools, clarify and fail, values
checked against their pages, citation verification, malformed output."""
from __future__ import annotations

import json

import dspy
import pytest

from ferret.programs.iterative import IterativeRetriever
from ferret.programs.run import Run
from ferret.programs.strategy import ladder
from ferret.signatures.types import Finding
from tests.fakes import ScriptedEngine, scripted_lm

TOTAL = {"label": "Total revenue 2023", "value": "3,650", "doc_id": "report", "page": 1,
         "section": "Segment Results", "context": "Total revenue  3,650  3,150"}
FOUND = {"findings": [TOTAL], "sections_searched": ["Segment Results"], "failure_reason": ""}
MISSED = {"findings": [], "sections_searched": ["Notes"], "failure_reason": "no revenue table in these results"}
ACCEPT = {"answered": True, "valid_findings": [1], "resolved_subqueries": [], "reason": "the total for 2023"}
ANSWER = {"status": "answer", "answer": "Total revenue in 2023 was 3,650.", "sources": [1], "confidence": 0.9,
          "need": "", "need_reason": "", "clarification": ""}
NEEDS = {"status": "needs", "answer": "", "sources": [], "confidence": 0.2, "need": "total revenue 2023",
         "need_reason": "no finding yet", "clarification": ""}


def run(small_corpus, script, question="What was total revenue last year?", doc_id="report", **options):
    """The program with the ladder after the reads (four iterations) unless `options` say otherwise."""
    lm, engine = scripted_lm(script)
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        result = IterativeRetriever(small_corpus, **{"max_iterations": 4, **options})(question=question, doc_id=doc_id)
    return result, engine


def steps_of(result, name):
    return [step for step in result.trajectory if step["step"] == name]


def strategies(result):
    return [step["strategy"] for step in steps_of(result, "extract")]


def inputs_of(engine, step):
    """The input fields of each call of `step`, in order."""
    return [inputs for name, inputs in engine.calls if name == step]


def test_answers_on_the_first_loop_step_after_the_first_rung_with_a_verified_citation(small_corpus):
    result, engine = run(small_corpus, {"extract": FOUND, "evaluate": ACCEPT, "synthesize": ANSWER})
    assert result.status == "answer" and result.answer == ANSWER["answer"]
    assert result.iterations == 2 and [f["reason"] for f in result.failed_searches] == ["not in these passages"]
    assert result.citations_verified and result.citations == [
        {"doc_id": "report", "file": "report.md", "page": 1, "section": "Segment Results",
         "quote": TOTAL["context"], "verified": True, "grounding": "grounded"}]
    # a passage search already has results to read: the agent makes no tool call before extracting
    assert engine.steps() == ["route", "read", "extract", "evaluate", "synthesize"]
    assert result.lm_calls == 5 and result.tokens["input"] > 0 and result.tokens["output"] > 0
    assert inputs_of(engine, "synthesize")[0]["findings"].startswith('["[1] Total revenue 2023: 3,650 (report p. 1)')


def test_prompts_stay_small(small_corpus):
    """Prompt characters the fake sees (system prompts through its token estimate) for four failed
    iterations of a long question: 62,483 in 16 calls before prompts were cut and useless calls
    skipped, 25,201 in 7 after (before the first rung); 6 calls once a passage search whose every
    passage the read had read is not read again."""
    result, engine = run(small_corpus, {"extract": MISSED}, question="What was total revenue last year? " * 8)
    inputs = sum(len(value) for _, fields in engine.calls for value in fields.values())
    assert result.lm_calls == 6 and 4 * result.tokens["input"] + inputs < 28000
    extractions = inputs_of(engine, "extract")
    assert [("Segment Results (pp." in fields["section_index"]) for fields in extractions] == [
        False, True]  # the section index is shown only to the "select" rung, which needs it
    assert "What was total revenue" not in extractions[-1]["failed_searches"]  # failures do not repeat the question


def test_the_router_terms_query_the_labels_and_passages_are_searched_with_the_item_words(small_corpus):
    terms = {"entities": ["Acme"], "topic_terms": ["tires"]}
    _, engine = run(small_corpus, {"route": {"decision": {"route": "structured", **terms}}, "extract": MISSED},
                    question="What did we spend?", doc_id=None, max_iterations=3)  # read, hops, then the ladder
    assert "All-season tires" in inputs_of(engine, "extract")[0]["results"]  # the question's words miss this label
    _, engine = run(small_corpus, {"route": {"decision": {"route": "hybrid", **terms}}, "extract": MISSED},
                    question="What did we spend?", doc_id=None, max_iterations=3)  # read, hops, then the ladder
    assert "Vendor: Acme" not in inputs_of(engine, "extract")[0]["results"]  # the terms would find this passage
    compute = {"intent": "compute", "route": "hybrid", "subqueries": ["Consumer revenue 2023"], **terms}
    _, engine = run(small_corpus, {"route": {"decision": compute}, "extract": MISSED}, question="What did we spend?",
                    doc_id=None, max_iterations=3)
    results = inputs_of(engine, "extract")[0]["results"]
    assert "Consumer  1,250" in results and "Vendor: Acme" not in results


def test_a_failure_is_recorded_shown_to_the_next_step_and_another_route_is_taken(small_corpus):
    result, engine = run(small_corpus, {"extract": [MISSED, FOUND], "evaluate": ACCEPT, "synthesize": ANSWER})
    assert result.status == "answer" and result.iterations == 4
    failed, skipped = result.failed_searches[1:]
    assert failed["reason"] == MISSED["failure_reason"] and failed["sections_tried"] == ["Notes"]
    first, second, third = strategies(result)
    assert first == failed["strategy"] and len({first, second, third}) == 3
    # the semantic search found only passages the read had read: a failure in code, with no extraction
    assert second == skipped["strategy"] == "semantic search for passages, document"
    assert skipped["reason"] == "an earlier step read every passage it found"
    assert f"{first} failed: {MISSED['failure_reason']}" in inputs_of(engine, "extract")[1]["failed_searches"]
    # no Synthesis after the empty first step: with no finding it could not have answered; two
    # failures in a row (the first rung's and this one) ask the Planner for new items
    assert engine.steps() == ["route", "read", "extract", "plan", "act", "extract", "evaluate", "synthesize"]


def test_escalation_follows_the_cost_ladder_and_fails_in_code_when_nothing_is_found(small_corpus):
    result, engine = run(small_corpus, {"route": {"decision": {"route": "hybrid", "fallbacks": ["structured"]}},
                                        "extract": MISSED}, max_iterations=5)
    expected = [rung.describe() for rung in ladder("hybrid", ["structured"], document_scoped=True)][:5]
    assert expected[0] == "hybrid search for passages, document"  # the first rung's search: not repeated
    assert strategies(result) == expected[1:] and len(set(expected)) == 5
    assert engine.steps().count("plan") == 2  # replanned after every two failures, not at the last iteration
    assert "synthesize" not in engine.steps()
    assert result.status == "fail" and result.answer == "" and len(result.failed_searches) == 5
    assert result.reason.count(MISSED["failure_reason"]) == 2 and result.reason.count("not in these passages") == 1
    assert result.reason.count("an earlier step read every passage it found") == 2  # the semantic and global searches


def test_new_items_are_searched_but_not_copied_failures_or_rambles(small_corpus):
    copied = f"annotations search for facts, document failed: {MISSED['failure_reason']}"
    plan = {"subqueries": [copied, "Segment revenue table"]}
    result, _ = run(small_corpus, {"extract": MISSED, "plan": plan}, max_iterations=4)
    assert [step["item"] for step in result.trajectory if step["step"] == "extract"][1] == "Segment revenue table"
    route = {"decision": {"intent": "compute", "subqueries": ["total revenue " * 20, "Consumer revenue 2023"]}}
    result, _ = run(small_corpus, {"route": route, "extract": MISSED}, max_iterations=2)
    assert steps_of(result, "extract")[0]["item"] == "Consumer revenue 2023"


def test_backtracks_to_the_best_earlier_anchor_after_a_failure(small_corpus):
    route = {"decision": {"intent": "compute", "route": "hybrid",
                          "subqueries": ["Consumer revenue 2023", "Enterprise revenue 2023"]}}
    consumer = {**FOUND, "findings": [{**TOTAL, "label": "Consumer 2023", "value": "1,250"}]}
    result, _ = run(small_corpus, {"route": route, "extract": [consumer, MISSED, MISSED],
                                   "evaluate": ACCEPT, "synthesize": NEEDS},
                    question="What share of 2023 revenue came from Consumer?", max_iterations=4, read_k=2)
    first, second, third = strategies(result)
    assert first == second == "hybrid search for passages, document"  # with each item's own words
    assert third.startswith("neighbors search for sections, near seg:")
    anchors = [step for step in result.trajectory if step["step"] == "extract"]
    assert anchors[0]["succeeded"] and not anchors[1]["succeeded"]  # the first item's extraction read its passages
    assert [step.get("lm_call", True) for step in anchors] == [True, False, True]


def test_findings_the_evaluator_calls_valid_are_kept_when_they_do_not_answer_the_item(small_corpus):
    """A part of the answer (a multi-hop question's bridge) is kept though its item failed: Synthesis
    sees it and asks for the rest, and the answer cites both parts. A finding the Evaluator does not
    call valid is not kept."""
    consumer = {**FOUND, "findings": [{**TOTAL, "label": "Consumer 2023", "value": "1,250",
                                       "context": "Consumer  1,250  1,100"}]}
    part = {"answered": False, "valid_findings": [1], "resolved_subqueries": [], "reason": "only the Consumer part"}
    share = {**ANSWER, "answer": "Consumer revenue was 1,250 of 3,650 in 2023.", "sources": [1, 2]}
    result, engine = run(small_corpus, {"extract": [consumer, FOUND], "evaluate": [part, ACCEPT],
                                        "synthesize": [NEEDS, share]},
                         question="What share of 2023 revenue came from Consumer?", read_k=2)
    first, second = [step for step in result.trajectory if step["step"] == "extract"]
    assert not first["succeeded"] and [f["value"] for f in first["findings"]] == ["1,250"]
    assert result.failed_searches[1]["reason"] == "only the Consumer part"
    assert second["item"] == NEEDS["need"] and second["succeeded"]
    # no Rerank: both findings are on the page the read read, so their order cannot change the evidence's pages
    assert engine.steps() == ["route", "read", "extract", "evaluate", "plan", "synthesize", "extract", "evaluate",
                              "synthesize"]
    assert inputs_of(engine, "synthesize")[0]["findings"].startswith('["[1] Consumer 2023: 1,250 (report p. 1)')
    assert result.status == "answer" and result.citations_verified and len(result.citations) == 2
    result, engine = run(small_corpus, {"extract": consumer, "evaluate": {**part, "valid_findings": []}},
                         max_iterations=3)
    assert result.findings == [] and "synthesize" not in engine.steps() and result.status == "fail"


def test_the_last_synthesis_is_told_it_is_the_last_chance(small_corpus):
    consumer = {**FOUND, "findings": [{**TOTAL, "label": "Consumer 2023", "value": "1,250"}]}
    result, engine = run(small_corpus, {"extract": [consumer, MISSED], "evaluate": ACCEPT, "synthesize": NEEDS},
                         max_iterations=3)
    chances = [inputs["last_chance"] for inputs in inputs_of(engine, "synthesize")]
    assert chances == ["False", "True"]  # after the new finding, then at the end though the last step failed
    assert result.status == "needs" and result.iterations == 3


def test_clarify_and_fail_end_the_loop_with_their_reason(small_corpus):
    clarify = {**NEEDS, "status": "clarify", "clarification": "Which year: 2022 or 2023? I searched segment tables."}
    result, _ = run(small_corpus, {"extract": FOUND, "evaluate": ACCEPT, "synthesize": clarify},
                    question="What was revenue?")
    assert (result.status, result.iterations) == ("clarify", 2) and "Which year" in result.clarification
    fail = {**NEEDS, "status": "fail", "need": "", "need_reason": "The report has no headcount figures."}
    result, _ = run(small_corpus, {"extract": FOUND, "evaluate": ACCEPT, "synthesize": fail},
                    question="How many employees?")
    assert result.status == "fail" and result.reason == fail["need_reason"] and result.answer == ""


def test_a_value_not_printed_on_its_page_is_dropped_before_the_evaluator(small_corpus):
    invented = {**FOUND, "findings": [{**TOTAL, "value": "9,999"}, {**TOTAL, "value": ""}]}
    result, engine = run(small_corpus, {"extract": invented, "evaluate": ACCEPT, "synthesize": ANSWER},
                         max_iterations=2)
    assert "evaluate" not in engine.steps() and result.findings == [] and result.status == "fail"
    assert result.failed_searches[1]["reason"] == "the values reported are not printed on the pages cited"


def test_a_value_cited_on_the_wrong_page_moves_to_the_result_page_that_prints_it(small_corpus):
    misplaced = {**FOUND, "findings": [{**TOTAL, "page": 40}, {**TOTAL, "doc_id": "inv1"}, {**TOTAL, "value": "9,999"}]}
    result, engine = run(small_corpus, {"extract": misplaced, "evaluate": {**ACCEPT, "valid_findings": [1, 2]},
                                        "synthesize": ANSWER}, max_iterations=2)
    extract = next(step for step in result.trajectory if step["step"] == "extract")
    assert extract["moved_to_their_page"] == 2 and extract["not_printed"] == 1
    assert [(f["doc_id"], f["page"]) for f in result.findings] == [("report", 1)]  # the two moved ones are one finding
    assert result.status == "answer" and result.citations_verified


def test_a_number_absent_from_the_findings_fails_verification_and_is_not_stated(small_corpus):
    answer = {**ANSWER, "answer": "Total revenue in 2023 was 9,999."}
    result, _ = run(small_corpus, {"extract": FOUND, "evaluate": ACCEPT, "synthesize": answer})
    assert not result.citations_verified and result.unverified_numbers == ["9,999"]
    assert result.status == "fail" and result.candidate == answer["answer"] and result.grounding == "unsupported"
    result, _ = run(small_corpus, {"extract": FOUND, "evaluate": ACCEPT, "synthesize": answer}, accept="unsupported")
    assert result.status == "answer" and not result.citations_verified  # every candidate stated, marked as it is


@pytest.mark.parametrize("broken_step", ["route", "extract", "evaluate", "synthesize"])
def test_malformed_output_becomes_a_recorded_failure_not_a_crash(small_corpus, broken_step):
    script = {"extract": FOUND, "evaluate": ACCEPT, "synthesize": ANSWER, broken_step: "this is not JSON {"}
    result, _ = run(small_corpus, script, max_iterations=3)
    assert result.status in ("answer", "needs", "fail")
    if broken_step in ("extract", "evaluate"):
        step = {"extract": "extraction", "evaluate": "evaluation"}[broken_step]
        assert result.failed_searches[1]["reason"] == f"the {step} output was malformed"
        assert "AdapterParseError" in steps_of(result, "extract")[0]["error"]  # the log keeps the error
    if broken_step == "synthesize":
        assert result.status == "needs" and "synthesis failed" in result.reason
        assert len(result.findings) == 1  # found twice, kept once


def test_the_select_rung_lets_the_agent_read_a_section_with_a_tool(small_corpus):
    read = {"next_thought": "The table is in Segment Results.", "next_tool_name": "fetch_section",
            "next_tool_args": {"doc_id": "report", "section": "Segment Results"}}
    result, engine = run(small_corpus, {"route": {"decision": {"route": "long_text"}}, "act": read, "extract": FOUND,
                                        "evaluate": ACCEPT, "synthesize": ANSWER})
    assert engine.steps() == ["route", "read", "act", "extract", "evaluate", "synthesize"]
    extraction = inputs_of(engine, "extract")[0]
    assert "s1: Segment Results (pp. 1-1)" in extraction["section_index"]
    assert "Total revenue  3,650" in extraction["observation_0"]  # what the tool read (in the trajectory)
    assert steps_of(result, "extract")[0]["tools"] == ["fetch_section"] and result.status == "answer"


def test_a_code_capability_the_agent_calls_returns_its_typed_result_and_its_answer_grounds(small_corpus):
    """The table rung does not read "grow"; the agent asks the table_calculation tool in the row's own
    words, gets a `Computed` result, and that result is the answer, verified and grounded as the rung's would be."""
    def act(row):
        return {"next_thought": "Compute it from the row.", "next_tool_name": "table_calculation",
                "next_tool_args": {"question": f"What was the change in {row} from 2022 to 2023?", "doc_id": "report"}}

    route = {"route": {"decision": {"route": "long_text"}}}
    result, engine = run(small_corpus, {**route, "act": act("Total revenue")}, question="By how much did revenue grow from 2022 to 2023?")
    assert engine.steps() == ["route", "read", "act", "extract"]  # no Evaluator or Synthesis after the tool's answer
    extraction = inputs_of(engine, "extract")[0]
    assert '"answer": "500"' in extraction["observation_0"] and '"calculation": "3650 - 3150"' in extraction["observation_0"]
    assert (result.status, result.answer, result.answered_by) == ("answer", "500", "table_calculation")
    assert result.grounding == "grounded" and result.computation == "3650 - 3150" and result.citations_verified
    assert {(c["doc_id"], c["page"]) for c in result.citations} == {("report", 1)}
    # a row the question does not name: the tool computes it, the check does not ground it, the loop goes on
    result, _ = run(small_corpus, {**route, "act": act("Consumer")}, question="By how much did revenue grow from 2022 to 2023?")
    assert result.status != "answer" and result.answer != "150"
    assert "not grounded" in next(s["reason"] for s in result.trajectory if s["step"] == "tool")
    # Synthesis answers next from the rung's findings: the answer is the ladder rung's, not the failed tool's
    result, _ = run(small_corpus, {**route, "act": act("Consumer"), "extract": FOUND, "evaluate": ACCEPT,
                                   "synthesize": ANSWER})
    assert [s["step"] for s in result.trajectory if s["step"] in ("tool", "synthesize")] == ["tool", "synthesize"]
    assert (result.status, result.answer, result.answered_by, result.computation) == ("answer", ANSWER["answer"], "select", "")


def test_a_malformed_tool_step_is_the_select_rungs_recorded_failure_and_the_loop_goes_on(small_corpus):
    result, engine = run(small_corpus, {"route": {"decision": {"route": "long_text"}}, "act": "this is not JSON {",
                                        "extract": FOUND, "evaluate": ACCEPT, "synthesize": ANSWER})
    assert engine.steps()[:4] == ["route", "read", "act", "plan"]  # no extraction of a select rung that read nothing
    select = steps_of(result, "extract")[0]
    assert select["strategy"].startswith("select") and "AdapterParseError" in select["error"]
    assert "the extraction output was malformed" in [f["reason"] for f in result.failed_searches]


def test_router_constraints_on_unknown_fields_are_dropped_not_fatal(small_corpus):
    route = {"decision": {"route": "structured", "buckets": ["invoices"],
                          "constraints": [{"field": "votes", "op": ">", "value": 1000},
                                          {"field": "year", "op": "=", "value": 2023}]}}
    result, engine = run(small_corpus, {"route": route, "extract": MISSED, "synthesize": NEEDS},
                         question="Which receipts contain tires?", doc_id=None, max_iterations=3)
    assert result.trajectory[0]["dropped_constraints"] == ["votes"]
    first_extraction = inputs_of(engine, "extract")[0]
    assert "inv1" in first_extraction["results"] and "inv2" not in first_extraction["results"]  # year = 2023 applied


def test_the_routers_bucket_and_filters_narrow_a_method_once_then_it_searches_everywhere(small_corpus):
    route = {"decision": {"route": "structured", "buckets": ["invoices"], "topic_terms": ["tires"],
                          "constraints": [{"field": "year", "op": "=", "value": 2019}]}}  # a wrong guess
    result, engine = run(small_corpus, {"route": route, "extract": MISSED, "synthesize": NEEDS},
                         question="What did the tires cost?", doc_id=None, max_iterations=4)
    filtered, everywhere = steps_of(result, "extract")[:2]
    assert [filtered["strategy"], everywhere["strategy"]] == [
        "annotations search for facts, filtered", "annotations search for facts, global"]
    # the filtered search found no row: recorded as a failure in code, with no extraction to make values up
    assert filtered["results"] == 0 and filtered["lm_call"] is False and filtered["reason"] == "the search found nothing"
    assert "Winter tires" in inputs_of(engine, "extract")[0]["results"]
    assert "annotations search for facts, filtered failed: the search found nothing" in \
        inputs_of(engine, "extract")[0]["failed_searches"]


def test_a_question_about_one_document_is_routed_without_the_corpus_overview_or_filters(small_corpus):
    route = {"decision": {"route": "hybrid", "constraints": [{"field": "page", "op": ">", "value": 5}]}}
    result, engine = run(small_corpus, {"route": route, "extract": MISSED}, max_iterations=2)
    assert inputs_of(engine, "route")[0]["corpus_overview"] == "one given document"
    assert result.trajectory[0]["dropped_constraints"] == ["page"]
    assert "Total revenue: 3,650" in inputs_of(engine, "extract")[0]["results"]  # page 1 was not filtered out
    _, engine = run(small_corpus, {"extract": MISSED}, doc_id=None, max_iterations=2)
    overview = inputs_of(engine, "route")[0]["corpus_overview"]
    assert "bucket invoices" in overview and "inv1" not in overview  # fields, not document ids


def test_the_router_sees_its_worked_readings_until_a_compiled_state_replaces_them(small_corpus, tmp_path):
    prompts = []

    def route(inputs, prompt):
        prompts.append(prompt)
        return {"decision": {"route": "hybrid"}}

    run(small_corpus, {"route": route, "extract": MISSED}, doc_id=None, max_iterations=1)
    assert "Which purchase orders include laptops?" in prompts[0]
    program = IterativeRetriever(small_corpus)
    program.route.demos = [dspy.Example(question="Q?", corpus_overview="none",
                                        decision={"route": "structured"}).with_inputs("question", "corpus_overview")]
    program.save(tmp_path / "compiled.json")
    loaded = IterativeRetriever(small_corpus)
    loaded.load(tmp_path / "compiled.json")
    assert [demo["question"] for demo in loaded.route.demos] == ["Q?"]


def read_demo_example(question: str, expression: str = "", answer: str = "680") -> dspy.Example:
    return dspy.Example(question=question, passages=["[1] page 1 (Sales): Sales 680 774"], reasoning="r",
                        calculation={"expression": expression}, answer=answer, sources=[1], missing="", augmented=True)


def read_prompts_after_a_reload(corpus, tmp_path, demos: list, **settings) -> tuple[IterativeRetriever, list[str]]:
    """The read's prompts for two questions that reach it, asked of a program loaded from a state holding `demos`."""
    prompts = []

    def read(inputs, prompt):
        prompts.append(prompt)
        return read_reply("3,650")

    compiled = IterativeRetriever(corpus, repairs=True, **settings)
    compiled.read.predict.demos = demos
    compiled.save(tmp_path / "compiled.json")
    program = IterativeRetriever(corpus, repairs=True)
    program.load(tmp_path / "compiled.json")
    lm, _ = scripted_lm({"read": read})
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        for question in ("What was the percentage change in total revenue in 2023?", "What was total revenue last year?"):
            program(question=question, doc_id="report")
    assert len(prompts) == 2  # each question was read
    return program, prompts


def test_a_compiled_programs_demos_are_the_ones_its_steps_are_shown(small_corpus, tmp_path):
    """Whatever the question asks, the read is shown every demo the compiled state holds, in its order."""
    demos = [read_demo_example("What was the change in Sales from 2018?", "680 - 774", "-94"),
             read_demo_example("What were Sales in 2019?")]
    _, prompts = read_prompts_after_a_reload(small_corpus, tmp_path, demos)
    for prompt in prompts:
        at = [prompt.index(demo["question"]) for demo in demos]
        assert at == sorted(at)


def test_a_compiled_pool_of_demos_shows_each_read_the_k_whose_questions_are_nearest(small_corpus, tmp_path):
    """`demo_k` of the saved state: each read is shown the one demo of three whose question is nearest its own."""
    demos = [read_demo_example(question) for question in ("What was the percentage change in Sales from 2018 to 2019?",
                                                          "Who audited the financial statements?",
                                                          "What were Sales last year?")]
    program, prompts = read_prompts_after_a_reload(small_corpus, tmp_path, demos, demo_k=1)
    assert program.demo_k == 1 and len(program.read.predict.demos) == 3
    shown = [[demo["question"] for demo in demos if demo["question"] in prompt] for prompt in prompts]
    assert shown == [[demos[0]["question"]], [demos[2]["question"]]]


def test_what_a_small_model_writes_in_routes_and_findings_is_bounded_by_the_response_schema(small_corpus):
    class Recording(ScriptedEngine):
        def complete(self, request):
            schemas.append(request.config.response_format["schema"])
            return super().complete(request)

    schemas = []
    with dspy.context(lm=dspy.LM("scripted/fake", engine=Recording({"extract": MISSED}), cache=False),
                      adapter=dspy.JSONAdapter()):
        IterativeRetriever(small_corpus, max_iterations=2)(question="What was total revenue last year?", doc_id="report")
    route, read, extract = (schema.get("$defs") for schema in schemas)
    assert read["Calculation"]["properties"]["expression"]["pattern"].startswith("^[-+*/()0-9")
    assert route["RouteDecision"]["properties"]["entities"]["maxItems"] == 4
    assert route["Constraint"]["properties"]["value"]["anyOf"][2]["maxItems"] == 5
    assert extract["Finding"]["properties"]["context"]["maxLength"] == 120


def test_rerank_orders_the_findings_only_when_their_order_can_change_the_top_pages(small_corpus):
    """The evidence is the read's passages, then the findings: the Rerank is called when the read's pages
    leave places in the top `read_k` and the findings bring at least two pages the read did not."""
    found = [Finding(label=doc, value=value, doc_id=doc, page=1)
             for doc, value in [("report", "3,650"), ("inv1", "480.00"), ("inv2", "260.00")]]

    def rerank(read_pages, read_k):
        state = Run("What did the tires cost?")
        state.read_hits, state.findings = [{"doc_id": doc, "page": 1} for doc in read_pages], list(found)
        lm, engine = scripted_lm({"rerank": {"ranking": [3, 2]}})
        with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
            ranked = IterativeRetriever(small_corpus, read_k=read_k)._rerank(state)
        return [f.doc_id for f in ranked], engine.steps()

    assert rerank(["report"], 2) == (["inv2", "inv1", "report"], ["rerank"])  # which new page takes the free place
    assert rerank(["report", "inv1"], 2) == (["report", "inv1", "inv2"], [])  # the read's pages fill the top 2
    assert rerank(["report", "inv1"], 5) == (["report", "inv1", "inv2"], [])  # one new page is in the top 5 anyway


def test_saves_and_loads_as_json_without_pickling_the_lm(small_corpus, tmp_path):
    from ferret.programs.lm import make_lm

    program = IterativeRetriever(small_corpus, lms={"synthesize": make_lm("local")})
    program.synthesize.predict.demos = [dspy.Example(question="q", status="fail")]
    path = tmp_path / "program.json"
    program.save(path)
    text = path.read_text()
    json.loads(text)  # plain JSON state: no pickled LM
    assert "ferret.programs.lm:LlamaCppEngine" in text
    loaded = IterativeRetriever(small_corpus)
    loaded.load(path, allow_unsafe_lm_state=True)
    assert loaded.dump_state() == program.dump_state()
    assert type(loaded.synthesize.predict.lm.engine).__name__ == "LlamaCppEngine"


# --- the first rung ------------------------------------------------------------------------------
def read_reply(answer="", calculation="", sources=(1,), missing=""):
    return {"calculation": {"expression": calculation}, "answer": answer, "sources": list(sources), "missing": missing}


def test_the_first_rung_answers_and_stops_with_verified_citations_in_two_calls(small_corpus):
    result, engine = run(small_corpus, {"read": read_reply("Total revenue in 2023 was 3,650.")})
    assert engine.steps() == ["route", "read"] and result.lm_calls == 2 and result.iterations == 1
    assert result.status == "answer" and result.answer == "Total revenue in 2023 was 3,650."
    assert result.citations_verified and result.failed_searches == []
    assert [c["page"] for c in result.citations] == [1] and "Total revenue 3,650 3,150" in result.citations[0]["quote"]
    passages = inputs_of(engine, "read")[0]["passages"]
    assert "[1] page 1 (Segment Results)" in passages and "report page" not in passages  # no doc id inside one document
    assert "Total revenue: 2023: 3,650; 2022: 3,150" in passages  # the table row the question names, by its columns
    # the ranked evidence is the one-call search's passages, in their order
    hits = small_corpus.search_text("What was total revenue last year?", top_k=5, context_chars=600, doc_id="report",
                                    hybrid=True)
    assert [(e["doc_id"], e["page"]) for e in result.evidence[:len(hits)]] == [(h["doc_id"], h["page"]) for h in hits]


def test_a_calculation_is_computed_in_code_and_every_operand_is_cited(small_corpus):
    # two rows of one year: not the table rung's (one row, two years), so the read calculates
    question = "What was the difference between Enterprise and Consumer revenue in 2023?"
    reply = read_reply("1,000", calculation="2,400 - 1,250", sources=[2])
    result, engine = run(small_corpus, {"read": reply}, question=question)
    assert engine.steps() == ["route", "read"] and result.status == "answer"
    assert result.answer == "1,150" and result.computation == "2,400 - 1,250"
    assert [f["value"] for f in result.findings] == ["2,400", "1,250"]  # each operand, quoted where it is printed
    assert len(result.citations) == 2 and result.citations_verified and all(c["verified"] for c in result.citations)
    # a lookup question does not take the calculation a small model writes anyway
    result, _ = run(small_corpus, {"read": read_reply("1,250", calculation="1,250 + 1,100")},
                    question="What was Consumer revenue last year?")
    assert result.answer == "1,250" and result.computation == "" and result.citations_verified


def test_a_first_rung_answer_that_does_not_verify_escalates_with_its_values_kept(small_corpus):
    unprinted = read_reply("Total revenue was 3,650, up 9.9% on 2022.")  # 9.9 is printed nowhere
    result, engine = run(small_corpus, {"read": unprinted, "extract": MISSED, "synthesize": ANSWER}, max_iterations=2)
    read = result.trajectory[1]
    assert read["step"] == "read" and not read["succeeded"] and read["reason"] == "9.9 not printed in the passages read"
    assert [f["value"] for f in read["findings"]] == ["3,650"]  # the value that is printed is kept
    failed = result.failed_searches[0]
    assert (failed["strategy"], failed["reason"]) == ("read: hybrid search for passages, document",
                                                      "9.9 not printed in the passages read")
    assert engine.steps() == ["route", "read", "extract", "synthesize"]  # the ladder goes on, then Synthesis
    assert strategies(result) == ["annotations search for facts, document"]  # not the first rung's search again
    assert inputs_of(engine, "synthesize")[0]["findings"].startswith('["[1] Segment Results: 3,650 (report p. 1)')
    assert result.status == "answer" and result.citations_verified


@pytest.mark.parametrize("reply, reason", [
    (read_reply("", calculation="2,050 - 2022"), "the calculation uses the question's year 2022 as a value"),
    (read_reply("", calculation="2,050 - 3,000"), "the calculation uses 3,000, which no passage read prints"),
    (read_reply("2,050", missing="the 2024 figure"), "the 2024 figure"),
    ("this is not JSON {", "the read output was malformed"),
])
def test_a_first_rung_that_cannot_answer_records_why_and_the_loop_goes_on(small_corpus, reply, reason):
    question = "What was the difference between Enterprise and Consumer revenue in 2022?"
    result, engine = run(small_corpus, {"read": reply, "extract": MISSED}, question=question, max_iterations=2)
    assert result.failed_searches[0]["reason"] == reason and "extract" in engine.steps()
    assert result.status == "fail" and result.answer == ""


BRIDGE_QUESTION = "Who directed the film that was shot in or around Leland, North Carolina in 1986?"
KING = {"calculation": {"expression": ""}, "answer": "Stephen King", "sources": [3], "missing": ""}


def test_a_question_through_a_bridge_reads_the_bridge_page_found_in_code(hop_corpus):
    """The Leland page names the film; the film's page, which the question's own search does not rank in
    its top 3, is searched in code and read: one read (and the model's confirmation of the name it
    grounds), answered by the hops rung."""
    result, engine = run(hop_corpus, {"read": KING}, question=BRIDGE_QUESTION, doc_id=None, read_k=3, repairs=True)
    assert engine.steps() == ["route", "read", "confirm"]  # the hop comes before the read: no one-hop read first
    hops = steps_of(result, "hops")[0]
    assert "Maximum Overdrive" in hops["bridges"] and hops["why"].startswith("it names a thing through another")
    assert [p["via"] for p in hops["passages"]] == ["", "", "Maximum Overdrive"]
    passages = inputs_of(engine, "read")[0]["passages"]
    assert "[3] Maximum Overdrive page 1" in passages and "written and made by Stephen King" in passages
    assert result.status == "answer" and result.answered_by == "hops" and result.citations_verified
    assert result.citations[0]["doc_id"] == "Maximum Overdrive"
    assert [e["doc_id"] for e in result.evidence][:3] == [p["doc_id"] for p in hops["passages"]]


def test_a_comparison_reads_the_best_passage_of_each_part(hop_corpus):
    question = "Which band plays louder, The Exies or Circus Diablo?"  # no comparison the rung decides in code
    result, engine = run(hop_corpus, {}, question=question, doc_id=None, read_k=2, repairs=True)
    assert steps_of(result, "hops")[0]["parts"] == ["Exies", "Circus Diablo"] and not steps_of(result, "comparison")
    passages = inputs_of(engine, "read")[0]["passages"]
    assert "formed in Los Angeles in 1997" in passages and "supergroup put together in 2004" in passages


def test_the_comparison_rung_answers_which_came_first_in_code_from_each_parts_own_page(hop_corpus):
    """No read: the Router's call only; each band's page is cited with the year it prints, grounded."""
    question = "Which band was formed first, The Exies or Circus Diablo?"
    result, engine = run(hop_corpus, {}, question=question, doc_id=None, read_k=2, repairs=True)
    assert engine.steps() == ["route"]
    step = steps_of(result, "comparison")[0]
    assert step["lm_call"] is False and step["succeeded"] and step["values"] == ["The Exies: 1997 · p.1", "Circus Diablo: 2004 · p.1"]
    assert result.status == "answer" and result.answer == "The Exies" and result.answered_by == "comparison"
    assert result.grounding == "grounded" and result.citations_verified
    assert [(c["doc_id"], c["quote"][:20]) for c in result.citations] == [
        ("The Exies", "The Exies are an Ame"), ("Circus Diablo", "Circus Diablo was an")]


def test_the_hops_rung_follows_a_first_read_that_did_not_answer(hop_corpus):
    question = "Who wrote the film shot around Leland?"  # nothing in its words says it needs a hop
    missing = {"calculation": {"expression": ""}, "answer": "", "sources": [], "missing": "not in these passages"}
    answer = {**KING, "sources": [2]}
    result, engine = run(hop_corpus, {"read": [missing, answer]}, question=question, doc_id=None, read_k=2)
    assert "Stephen King" not in inputs_of(engine, "read")[0]["passages"]
    assert "[2] Maximum Overdrive page 1" in inputs_of(engine, "read")[1]["passages"]
    assert engine.steps() == ["route", "read", "read", "confirm"]
    assert [step.get("rung") for step in steps_of(result, "read")] == ["read", "hops"]
    assert result.answered_by == "hops" and result.iterations == 2
    assert [f["strategy"] for f in result.failed_searches] == ["read: hybrid search for passages, global"]
    result, engine = run(hop_corpus, {"read": {**KING, "sources": [1]}}, question="Who made Maximum Overdrive?",
                         doc_id=None, read_k=2)
    assert engine.steps() == ["route", "read", "confirm"] and result.answered_by == "read"


@pytest.mark.parametrize("question, profile", [("Which band was formed first, The Exies or Circus Diablo?", "comparison"),
                                               (BRIDGE_QUESTION, "hops")])
def test_with_a_users_own_lm_no_phrasing_rule_answers_and_the_read_comes_first(hop_corpus, question, profile):
    """The comparison rung and the wait for the hops are the small-model profile's: with an LM that is not
    an embedded one (the scripted LM here), a comparison is not decided in code, and a question worded
    through a bridge is read first, the hops read after that read fails, each answer the LM's."""
    missing = {"calculation": {"expression": ""}, "answer": "", "sources": [], "missing": "not in these passages"}
    result, engine = run(hop_corpus, {"read": [missing, missing]}, question=question, doc_id=None, read_k=2,
                         max_iterations=2)
    assert not steps_of(result, "comparison") and engine.steps()[:2] == ["route", "read"]
    assert [step["rung"] for step in steps_of(result, "read")] == ["read", "hops"]
    assert result.status == "fail" and result.answered_by == ""
    on, _ = run(hop_corpus, {"read": [missing, missing]}, question=question, doc_id=None, read_k=2, max_iterations=2,
                repairs=True)  # the profile on: the comparison answers in code, or the read waits for the hops
    assert (on.answered_by if profile == "comparison" else steps_of(on, "read")[0]["rung"]) == profile


def test_a_read_whose_name_the_model_does_not_confirm_goes_on_and_ends_unconfirmed(hop_corpus):
    script = {"read": {**KING, "sources": [1]}, "confirm": {"answers_question": False}}
    result, engine = run(hop_corpus, script, question="Who made Maximum Overdrive?", doc_id=None, read_k=2)
    assert engine.steps()[:3] == ["route", "read", "confirm"] and len(engine.steps()) > 3  # the loop went on
    assert "did not confirm" in result.failed_searches[0]["reason"]
    assert result.status == "fail" and result.answer == "" and result.candidate == "Stephen King"
    assert result.grounding == "on_page"


def test_answered_by_names_the_ladder_rung_or_nothing_without_an_answer(small_corpus):
    result, _ = run(small_corpus, {"extract": FOUND, "evaluate": ACCEPT, "synthesize": ANSWER})
    assert strategies(result)[0].startswith("annotations") and result.answered_by == "annotations"
    result, _ = run(small_corpus, {"extract": MISSED})
    assert result.status == "fail" and result.answered_by == ""


# --- grounding: the read's stop test and the stated answer ---------------------------------------
def test_a_read_that_verifies_but_cites_another_row_does_not_end_the_question(small_corpus):
    """3,650 is printed on the cited page, in the Total row: for Consumer revenue it is on the page only.
    The read does not stand, the loop goes on, and with nothing better the answer is not stated: the
    result is a "fail" that shows the read's answer as its unconfirmed candidate."""
    wrong_row = read_reply("Consumer revenue in 2023 was 3,650.")
    result, engine = run(small_corpus, {"read": wrong_row, "extract": MISSED}, question="What was Consumer revenue last year?",
                         max_iterations=2)
    read = steps_of(result, "read")[0]
    assert not read["succeeded"] and read["grounding"] == "on_page" and "not grounded" in read["reason"]
    assert "extract" in engine.steps()
    assert result.status == "fail" and result.answer == "" and result.candidate == "Consumer revenue in 2023 was 3,650."
    assert result.grounding == "on_page" and result.reason.startswith("unconfirmed (on_page)")
    # accept="on_page" keeps the behaviour before grounding: the verified read is stated
    result, engine = run(small_corpus, {"read": wrong_row}, question="What was Consumer revenue last year?", accept="on_page")
    assert engine.steps() == ["route", "read"] and result.status == "answer" and result.grounding == "on_page"
    assert [c["grounding"] for c in result.citations] == ["on_page"]


@pytest.mark.parametrize("profile", [False, True])
def test_the_small_model_profile_ends_refused_reads_without_a_last_synthesis(small_corpus, profile):
    """Findings that are only the values of reads the checks refused: Synthesis over them runs with a user's
    own LM; with the small-model profile the failure is decided in code (a 0.5B Synthesis restated a refused
    value or said "needs"), the read's answer kept as the unconfirmed candidate. After an extraction, it runs."""
    wrong_row = read_reply("Consumer revenue in 2023 was 3,650.")
    result, engine = run(small_corpus, {"read": wrong_row, "synthesize": NEEDS},
                         question="What was Consumer revenue last year?", max_iterations=1, repairs=profile)
    assert steps_of(result, "read")[0]["findings"] and not steps_of(result, "extract")
    assert ("synthesize" in engine.steps()) is not profile
    assert result.candidate == "Consumer revenue in 2023 was 3,650." and result.answer == ""
    if profile:
        assert result.status == "fail" and steps_of(result, "synthesize")[0]["decided_in_code"]
        assert result.reason.endswith("; no answer passed the checks (read)")  # one iteration: no hops read
        assert "not grounded" in result.failed_searches[0]["reason"]  # each read's why
    result, engine = run(small_corpus, {"read": wrong_row, "extract": MISSED, "synthesize": NEEDS},
                         question="What was Consumer revenue last year?", max_iterations=3, repairs=profile)
    assert "extract" in engine.steps() and engine.steps()[-1] == "synthesize"


@pytest.mark.parametrize("profile", [False, True])
def test_the_small_model_profile_spends_the_hops_iteration_on_no_extraction(small_corpus, profile):
    """Two iterations, and the hops find nothing new inside the one document: a user's own LM gets the
    second as the ladder's extraction; with the small-model profile the reads took both, and the question
    ends after the read. A third iteration runs the ladder for both."""
    wrong_row = read_reply("Consumer revenue in 2023 was 3,650.")
    question = "What was Consumer revenue last year?"
    result, engine = run(small_corpus, {"read": wrong_row, "extract": MISSED, "synthesize": NEEDS}, question=question,
                         max_iterations=2, repairs=profile)
    assert len(steps_of(result, "read")) == 1  # the hops found no passage the read had not read
    assert engine.steps() == (["route", "read"] if profile else ["route", "read", "extract", "synthesize"])
    assert result.answer == "" and result.candidate == "Consumer revenue in 2023 was 3,650."
    _, engine = run(small_corpus, {"read": wrong_row, "extract": MISSED, "synthesize": NEEDS}, question=question,
                    max_iterations=3, repairs=profile)
    assert "extract" in engine.steps()


def test_a_read_of_the_questions_row_and_year_is_grounded_and_says_where(small_corpus):
    result, engine = run(small_corpus, {"read": read_reply("1,250")}, question="What was Consumer revenue last year?")
    assert engine.steps() == ["route", "read"] and result.status == "answer" and result.grounding == "grounded"
    assert result.grounded_values == ["1,250 · Consumer · 2023 · p.1"]
    assert [c["grounding"] for c in result.citations] == ["grounded"]


def test_accept_names_a_level(small_corpus):
    with pytest.raises(ValueError, match="accept='verified'"):
        IterativeRetriever(small_corpus, accept="verified")


@pytest.mark.parametrize("answer, stated", [("The Exies, formed in 1997, seven years before Circus Diablo", True),
                                            ("Circus Diablo", False)])
def test_a_users_lm_choice_is_grounded_when_the_comparison_in_code_agrees(hop_corpus, answer, stated):
    """With a user's own LM the comparison rung does not answer, but it checks: a choice the read states is
    grounded when each part's own page says so (which a page's sentence alone cannot ground: it grounds both
    names alike); the other choice stays unconfirmed, with what code compared as its reason."""
    question = "Which band was formed first, The Exies or Circus Diablo?"
    read = {"calculation": {"expression": ""}, "answer": answer, "sources": [1, 2], "missing": ""}
    result, engine = run(hop_corpus, {"read": read}, question=question, doc_id=None, read_k=2, max_iterations=1)
    assert engine.steps()[:2] == ["route", "read"] and not steps_of(result, "comparison")
    if stated:
        assert result.status == "answer" and result.answer == answer and result.grounding == "grounded"
        assert result.answered_by == "read"
    else:
        assert result.status == "fail" and result.answered_by == ""
        assert "compared in code on their own pages: The Exies (The Exies: 1997 · p.1; Circus Diablo: 2004 · p.1)" \
            in steps_of(result, "read")[0]["reason"]


def test_by_default_the_question_ends_after_the_reads_and_more_iterations_run_the_ladder(hop_corpus):
    """The default two iterations are the first read and the hops read; a question they do not answer ends
    with no extraction (the failure decided in code when no finding was kept). Four run the ladder's searches."""
    missing = {"calculation": {"expression": ""}, "answer": "", "sources": [], "missing": "not in these passages"}
    question = "Who wrote the film shot around Leland?"
    lm, engine = scripted_lm({"read": [missing, missing]})
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        result = IterativeRetriever(hop_corpus)(question=question)
    assert engine.steps() == ["route", "read", "read"] and result.status == "fail" and not steps_of(result, "extract")
    laddered, _ = run(hop_corpus, {"read": [missing, missing]}, question=question, doc_id=None)
    assert steps_of(laddered, "extract")
