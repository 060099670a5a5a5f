"""The looping module with the scripted fake LM: answer, failure then another route, escalation,
backtracking, clarify and fail, citation verification, malformed output."""
from __future__ import annotations

import json

import dspy
import pytest

from programs.iterative import IterativeRetriever
from programs.strategy import ladder
from tests.fakes import scripted_lm

TOTAL = {"label": "Total revenue 2023", "value": "3,650", "doc_id": "report", "page": 1,
         "section": "Segment Results", "context": "Total revenue  3,650  3,150"}
FOUND = {"findings": [TOTAL], "sections_searched": ["Segment Results"], "failure_reason": ""}
MISSED = {"findings": [], "sections_searched": ["Notes"], "failure_reason": "no revenue table in these results"}
ACCEPT = {"answered": True, "valid_findings": [0], "resolved_subqueries": [], "reason": "the total for 2023"}
ANSWER = {"status": "answer", "answer": "Total revenue in 2023 was 3,650.", "sources": [0], "confidence": 0.9,
          "need": "", "need_reason": "", "clarification": ""}
NEEDS = {"status": "needs", "answer": "", "sources": [], "confidence": 0.2, "need": "total revenue 2023",
         "need_reason": "no finding yet", "clarification": ""}


def run(small_corpus, script, question="What was total revenue in 2023?", doc_id="report", **options):
    lm, engine = scripted_lm(script)
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        result = IterativeRetriever(small_corpus, **options)(question=question, doc_id=doc_id)
    return result, engine


def strategies(result):
    return [step["strategy"] for step in result.trajectory if step["step"] == "extract"]


def test_answers_on_the_first_iteration_with_a_verified_citation(small_corpus):
    result, engine = run(small_corpus, {"extract": FOUND, "evaluate": ACCEPT, "synthesize": ANSWER})
    assert result.status == "answer" and result.answer == ANSWER["answer"]
    assert result.iterations == 1 and result.failed_searches == []
    assert result.citations_verified and result.citations == [
        {"doc_id": "report", "file": "report.md", "page": 1, "section": "Segment Results",
         "quote": TOTAL["context"], "verified": True}]
    assert engine.steps() == ["route", "act", "extract", "evaluate", "synthesize"]
    assert result.lm_calls == 5 and result.tokens["input"] > 0 and result.tokens["output"] > 0


def test_a_failure_is_recorded_shown_to_the_next_step_and_another_route_is_taken(small_corpus):
    result, engine = run(small_corpus, {"extract": [MISSED, FOUND], "evaluate": ACCEPT,
                                        "synthesize": [NEEDS, ANSWER]})
    assert result.status == "answer" and result.iterations == 2
    failed = result.failed_searches[0]
    assert failed["reason"] == MISSED["failure_reason"] and failed["sections_tried"] == ["Notes"]
    first, second = strategies(result)
    assert first == failed["strategy"] and second != first
    second_extraction = [inputs for step, inputs in engine.calls if step == "act"][1]
    assert MISSED["failure_reason"] in second_extraction["failed_searches"]


def test_escalation_follows_the_cost_ladder_and_never_repeats_a_failure(small_corpus):
    result, engine = run(small_corpus, {"route": {"decision": {"route": "hybrid", "fallbacks": ["structured"]}},
                                        "extract": MISSED, "synthesize": NEEDS}, max_iterations=4)
    expected = [rung.describe() for rung in ladder("hybrid", ["structured"], document_scoped=True)][:4]
    assert strategies(result) == expected
    assert "plan" in engine.steps()  # repeated failure asked the Planner for new items
    assert len(set(strategies(result))) == 4
    assert result.status == "needs" and result.answer == "" and len(result.failed_searches) == 4


def test_backtracks_to_the_best_earlier_anchor_after_a_failure(small_corpus):
    route = {"decision": {"intent": "compute", "route": "hybrid",
                          "subqueries": ["Consumer revenue 2023", "Enterprise revenue 2023"]}}
    consumer = {**FOUND, "findings": [{**TOTAL, "label": "Consumer 2023", "value": "1,250"}]}
    result, _ = run(small_corpus, {"route": route, "extract": [consumer, MISSED, MISSED],
                                   "evaluate": ACCEPT, "synthesize": NEEDS},
                    question="What share of 2023 revenue came from Consumer?", max_iterations=3)
    first, second, third = strategies(result)
    assert first == second == "lexical search, document"
    assert third.startswith("lexical search, near seg:")
    anchors = [step for step in result.trajectory if step["step"] == "extract"]
    assert anchors[0]["succeeded"] and not anchors[1]["succeeded"]


def test_clarify_and_fail_end_the_loop_with_their_reason(small_corpus):
    clarify = {**NEEDS, "status": "clarify", "clarification": "Which year: 2022 or 2023? I searched segment tables."}
    result, _ = run(small_corpus, {"extract": MISSED, "synthesize": clarify}, question="What was revenue?")
    assert (result.status, result.iterations) == ("clarify", 1) and "Which year" in result.clarification
    fail = {**NEEDS, "status": "fail", "need": "", "need_reason": "The report has no headcount figures."}
    result, _ = run(small_corpus, {"extract": MISSED, "synthesize": fail}, question="How many employees?")
    assert result.status == "fail" and result.reason == fail["need_reason"] and result.answer == ""


def test_a_number_absent_from_its_page_fails_verification(small_corpus):
    invented = {**FOUND, "findings": [{**TOTAL, "value": "9,999"}]}
    answer = {**ANSWER, "answer": "Total revenue in 2023 was 9,999."}
    result, _ = run(small_corpus, {"extract": invented, "evaluate": ACCEPT, "synthesize": answer})
    assert result.status == "answer" and not result.citations_verified
    assert result.citations[0]["verified"] is False


def test_a_finding_without_provenance_is_dropped(small_corpus):
    nowhere = {**FOUND, "findings": [{**TOTAL, "page": 40}]}
    result, _ = run(small_corpus, {"extract": nowhere, "evaluate": ACCEPT, "synthesize": NEEDS}, max_iterations=1)
    assert result.findings == [] and len(result.failed_searches) == 1


@pytest.mark.parametrize("broken_step", ["route", "act", "extract", "evaluate", "synthesize"])
def test_malformed_output_becomes_a_recorded_failure_not_a_crash(small_corpus, broken_step):
    script = {"extract": FOUND, "evaluate": ACCEPT, "synthesize": ANSWER, broken_step: "this is not JSON {"}
    result, _ = run(small_corpus, script, max_iterations=2)
    assert result.status in ("answer", "needs", "fail")
    if broken_step in ("extract", "evaluate"):
        assert any("failed" in f["reason"] for f in result.failed_searches)
    if broken_step == "synthesize":
        assert result.status == "needs" and "synthesis failed" in result.reason


def test_router_constraints_on_unknown_fields_are_dropped_not_fatal(small_corpus):
    route = {"decision": {"route": "structured", "buckets": ["invoices"],
                          "constraints": [{"field": "votes", "op": ">", "value": 1000},
                                          {"field": "year", "op": "=", "value": 2023}]}}
    result, engine = run(small_corpus, {"route": route, "extract": MISSED, "synthesize": NEEDS},
                         question="Which receipts contain tires?", doc_id=None, max_iterations=1)
    assert result.trajectory[0]["dropped_constraints"] == ["votes"]
    first_extraction = next(inputs for step, inputs in engine.calls if step == "act")
    assert "inv1" in first_extraction["results"] and "inv2" not in first_extraction["results"]  # year = 2023 applied


def test_rerank_orders_the_evidence(small_corpus):
    consumer = {**TOTAL, "label": "Consumer 2023", "value": "1,250"}
    both = {**FOUND, "findings": [TOTAL, consumer]}
    accept_both = {**ACCEPT, "valid_findings": [0, 1]}
    result, _ = run(small_corpus, {"extract": both, "evaluate": accept_both, "synthesize": ANSWER,
                                   "rerank": {"ranking": [1, 0]}})
    assert [e["label"] for e in result.evidence] == ["Consumer 2023", "Total revenue 2023"]


def test_saves_and_loads_as_json_without_pickling_the_lm(small_corpus, tmp_path):
    from programs.lm import make_lm

    program = IterativeRetriever(small_corpus, lms={"synthesize": make_lm("local")})
    program.synthesize.predict.demos = [dspy.Example(question="q", status="fail")]
    path = tmp_path / "program.json"
    program.save(path)
    text = path.read_text()
    json.loads(text)  # plain JSON state: no pickled LM
    assert "programs.lm:LlamaCppEngine" in text
    loaded = IterativeRetriever(small_corpus)
    loaded.load(path, allow_unsafe_lm_state=True)
    assert loaded.dump_state() == program.dump_state()
    assert type(loaded.synthesize.predict.lm.engine).__name__ == "LlamaCppEngine"
