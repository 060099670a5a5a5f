"""The small-model repairs as one profile (on for the embedded models, off for other LMs, switchable),
and the programs' settings saved with their compiled state."""
from __future__ import annotations

import json

import dspy
import pytest

from ferret.cli import main
from ferret.programs import load_compiled, make_program
from ferret.programs.baselines import OneShotRAG
from ferret.programs.conversation import Conversation
from ferret.programs.iterative import IterativeRetriever
from ferret.programs.repairs import repairs_on, step_lm
from tests.fakes import scripted_lm

LIST_READ_AS_LOOKUP = {"decision": {"intent": "lookup", "route": "structured", "topic_terms": ["tires"]}}
CLAIM = "Revenue is recognised when control of the goods passes to the customer."
READ_CLAIM = {"calculation": {"expression": ""}, "answer": CLAIM, "sources": [1], "missing": ""}
YES_NO = "Is revenue recognised when control of the goods passes to the customer?"


def run(program, script, question, model="scripted/fake", doc_id=None):
    lm, engine = scripted_lm(script, model=model)
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        return program(question=question, doc_id=doc_id), engine


def test_auto_is_on_for_the_embedded_models_and_off_for_any_other_lm():
    embedded, _ = scripted_lm(model="local/qwen2.5-coder-0.5b-instruct")
    assert repairs_on(None, embedded) and not repairs_on(None, dspy.LM("openai/gpt-4o-mini"))
    assert not repairs_on(None, None)
    assert repairs_on(True, dspy.LM("openai/gpt-4o-mini")) and not repairs_on(False, embedded)
    step = dspy.Predict("question -> answer")
    step.set_lm(dspy.LM("openai/gpt-4o-mini"))
    with dspy.context(lm=embedded):
        assert step_lm(step).model == "openai/gpt-4o-mini" and step_lm(dspy.Predict("q -> a")) is embedded  # its own first


@pytest.mark.parametrize("model, repairs, listed", [
    ("local/fake", None, True), ("scripted/fake", None, False), ("scripted/fake", True, True), ("local/fake", False, False)])
def test_the_list_cue_overrides_the_router_only_with_the_repairs(small_corpus, model, repairs, listed):
    program = IterativeRetriever(small_corpus, max_iterations=1, repairs=repairs)
    result, engine = run(program, {"route": LIST_READ_AS_LOOKUP}, "Which receipts contain tires?", model)
    assert bool(result.trajectory[0].get("list_from_wording")) is listed
    assert (result.answered_by == "structured") is listed and (engine.steps() == ["route"]) is listed


@pytest.mark.parametrize("repairs, aggregate", [(True, "none"), (False, "sum")])
def test_the_sum_cue_drops_an_aggregate_the_question_does_not_ask_for_only_with_the_repairs(small_corpus, repairs,
                                                                                            aggregate):
    route = {"decision": {"intent": "lookup", "route": "structured", "aggregate": "sum", "topic_terms": ["tires"]}}
    result, _ = run(IterativeRetriever(small_corpus, max_iterations=1, repairs=repairs), {"route": route},
                    "What did the tires cost?")
    route = result.trajectory[0]
    assert route.get("dropped_aggregate") == ("sum" if repairs else None)
    assert ("structured" in [step["step"] for step in result.trajectory]) is (aggregate == "sum")


@pytest.mark.parametrize("repairs, answer", [(True, f"Yes. {CLAIM}"), (False, CLAIM)])
def test_the_yes_no_prefix_is_a_repair(small_corpus, repairs, answer):
    program = IterativeRetriever(small_corpus, max_iterations=1, repairs=repairs, accept="on_page")
    result, _ = run(program, {"read": READ_CLAIM}, YES_NO, doc_id="report")
    read = next(step for step in result.trajectory if step["step"] == "read")
    assert read["answer"] == answer


@pytest.mark.parametrize("model, follow_up", [("local/fake", True), ("scripted/fake", False)])
def test_a_turn_that_refers_back_is_a_follow_up_whatever_the_rewrite_said_only_with_the_repairs(small_corpus, model,
                                                                                                  follow_up):
    script = {"read": {"calculation": {"expression": ""}, "answer": "3,650", "sources": [1], "missing": ""},
              "rewrite": {"new_topic": True, "question": "And its total assets?", "scope": {}}}
    lm, engine = scripted_lm(script, model=model)
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        conversation = Conversation(small_corpus)
        conversation.turn("What was Northwind's total revenue in 2023?")
        turn = conversation.turn("And its total assets?")
    assert turn.new_topic is not follow_up
    assert (turn.question != "And its total assets?") is follow_up  # resolved in code: "(2023, Northwind)"
    assert conversation.program.repairs is None  # auto: decided by the LM, step by step


def test_the_programs_settings_are_saved_with_the_compiled_state_and_loaded_with_it(small_corpus, tmp_path):
    compiled = IterativeRetriever(small_corpus, max_iterations=2, read_k=3, top_k=6, repairs=False, accept="on_page")
    compiled.save(tmp_path / "iterative.json")
    saved = json.loads((tmp_path / "iterative.json").read_text())
    assert saved["settings"] == {"max_iterations": 2, "top_k": 6, "context_chars": 400, "agent_steps": 1,
                                 "row_limit": compiled.row_limit, "read_k": 3, "read_chars": 600, "repairs": False,
                                 "long_text": False, "demo_k": 0, "lexical_weight": 0.5, "hops_first": False}
    fresh = make_program("iterative", small_corpus)
    load_compiled(fresh, tmp_path / "iterative.json")
    assert (fresh.max_iterations, fresh.read_k, fresh.top_k, fresh.repairs) == (2, 3, 6, False)
    assert fresh.accept == "grounded"  # how answers are stated is the caller's, not the compile's
    explicit = make_program("iterative", small_corpus)
    load_compiled(explicit, tmp_path / "iterative.json", max_iterations=5, repairs=None, long_text=True)
    assert (explicit.max_iterations, explicit.repairs, explicit.long_text) == (5, False, True)  # None: the saved one stands
    assert make_program("iterative", small_corpus, long_text=True).long_text  # as `--long-text on` makes it
    oneshot = OneShotRAG(small_corpus, top_k=3)
    oneshot.save(tmp_path / "oneshot.json")
    loaded = OneShotRAG(small_corpus)
    load_compiled(loaded, tmp_path / "oneshot.json", max_iterations=5)  # not a setting of oneshot: ignored
    assert loaded.top_k == 3 and not hasattr(loaded, "max_iterations")


@pytest.mark.parametrize("settings, named", [({"read_k": "five"}, "'read_k' is 'five'"),
                                             ({"temperature": 0.5}, "'temperature' is not one of IterativeRetriever's")])
def test_a_bad_saved_setting_is_refused_naming_the_file_and_the_setting_and_nothing_is_loaded(small_corpus, tmp_path,
                                                                                             settings, named):
    program = IterativeRetriever(small_corpus)
    program.route.demos = [dspy.Example(question="Q?", corpus_overview="none", decision={"route": "structured"})]
    program.save(tmp_path / "state.json")
    state = json.loads((tmp_path / "state.json").read_text())
    state["settings"].update(settings)
    (tmp_path / "state.json").write_text(json.dumps(state))
    fresh = IterativeRetriever(small_corpus)
    with pytest.raises(ValueError, match=f"compiled program .*state.json: setting {named}"):
        load_compiled(fresh, tmp_path / "state.json")
    assert fresh.read_k == 5 and [demo.get("question") for demo in fresh.route.demos] != ["Q?"]


def test_ferret_refuses_a_repairs_value_it_does_not_know(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["ask", "What was total revenue?", "--repairs", "sometimes"])
    assert exit_.value.code == 2 and "'sometimes' is not one of auto, on, off" in capsys.readouterr().err
