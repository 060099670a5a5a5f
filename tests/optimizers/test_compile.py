"""`ferret compile` with the scripted LM: each optimizer compiles the whole iterative module on a few
questions, the saved JSON reloads to the same state and answers through `ferret ask --compiled`, the
MLflow run holds the scores and the candidates, and Ctrl-C leaves the best program so far and a
KILLED run.

The scripted Synthesis answers every question once it is taught (a demo in its prompt, or LESSON in its
instructions); untaught, only questions about total revenue. So the uncompiled program gets one dev
question of three right, and a program an optimizer taught gets all three."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import dspy
import mlflow
import pytest

import ferret.optimizers.compile
import ferret.optimizers.evaluate
import ferret.programs.lm
from ferret.optimizers.compile import BUDGETS, compile_program
from ferret.optimizers.demos import demo_metric, useful_step
from ferret.optimizers.gold_demos import read_demo
from ferret.optimizers.tracking import tracking_uri
from ferret.cli import main
from ferret.programs import load_compiled
from ferret.programs.iterative import IterativeRetriever
from tests.fakes import scripted_lm, sigterm_left_to_ferret, stop_with_sigterm

LESSON = "Answer with the value of the finding, as printed."
# id (its split, by a hash of the id), question, gold answer, document, the document's line that holds it
QUESTIONS = [
    ("q1", "What was total revenue last year?", "3,650", "report", "Total revenue  3,650  3,150"),  # dev
    ("q2", "What was Consumer segment revenue the year before?", "1,100", "report", "Consumer  1,250  1,100"),  # dev
    ("q6", "How much did the valve caps cost?", "12.00", "inv1", "Valve caps  4  12.00"),  # dev
    ("q3", "What was total revenue the year before?", "3,150", "report", "Total revenue  3,650  3,150"),  # train
    ("q4", "What was Enterprise segment revenue last year?", "2,400", "report", "Enterprise  2,400  2,050"),  # train
    ("q5", "How much did the all-season tires cost?", "480.00", "inv1", "All-season tires  4  480.00"),  # train
    ("q8", "How much did the winter tires cost?", "260.00", "inv2", "Winter tires  2  260.00"),  # test
]
BY_QUESTION = {question: (gold, doc_id, line) for _, question, gold, doc_id, line in QUESTIONS}
ACCEPT = {"answered": True, "valid_findings": [1], "resolved_subqueries": [], "reason": "it is the value asked"}
FAIL = {"status": "fail", "answer": "", "sources": [], "confidence": 0.1, "need": "", "need_reason": "unsure",
        "clarification": ""}
# Tiny settings: a handful of program runs each, so the five optimizers compile in seconds.
TINY = {
    "bootstrap": {"max_bootstrapped_demos": 1, "max_labeled_demos": 1},
    "random-search": {"num_candidate_programs": 1, "max_bootstrapped_demos": 1, "max_labeled_demos": 1},
    "mipro": {"auto": None, "num_candidates": 2, "num_trials": 3, "minibatch": False, "max_bootstrapped_demos": 1,
              "max_labeled_demos": 1},
    "gepa": {"max_metric_calls": 16, "reflection_minibatch_size": 2, "component_selector": "all", "use_merge": False},
    "simba": {"max_steps": 1, "bsize": 3, "num_candidates": 2, "max_demos": 1},
    "labeled": {"k": 2},
    "knn": {"k": 1, "pool": 3},
}


def taught(prompt: str) -> bool:
    """LESSON in the instructions, or a demo: the question header shows up beyond the system message's
    format description and the question itself."""
    return LESSON in prompt or prompt.count("[[ ## question ## ]]") > 2


def extract(inputs):
    gold, doc_id, line = BY_QUESTION[inputs["question"]]
    finding = {"label": line.split("  ")[0], "value": gold, "doc_id": doc_id, "page": 1, "context": line}
    return {"findings": [finding], "sections_searched": [], "failure_reason": ""}


def synthesize(inputs, prompt):
    gold = BY_QUESTION[inputs["question"]][0]
    if not (taught(prompt) or "total revenue" in inputs["question"]):
        return FAIL
    return {**FAIL, "status": "answer", "answer": f"It was {gold}.", "sources": [1], "confidence": 0.9,
            "need_reason": ""}


def read(inputs, prompt):
    """The read answers once taught, or a question about total revenue, citing the passage that prints the gold."""
    gold = BY_QUESTION[inputs["question"]][0]
    if not (taught(prompt) or "total revenue" in inputs["question"]):
        return {"calculation": {"expression": ""}, "answer": "", "sources": [], "missing": "the value"}
    cited = next(n for n, passage in enumerate(json.loads(inputs["passages"]), 1) if gold in passage)
    return {"calculation": {"expression": ""}, "answer": gold, "sources": [cited], "missing": ""}


def route(inputs):
    """A reading in the question's words: the label of the line that holds its answer."""
    return {"decision": {"topic_terms": [BY_QUESTION[inputs["question"]][2].split("  ")[0]]}}


SCRIPT = {"route": route, "extract": extract, "evaluate": ACCEPT, "synthesize": synthesize,
          "propose": {"proposed_instruction": LESSON},  # MIPROv2
          "reflect": lambda inputs: {"new_instruction": f"{inputs['current_instruction']}\n\n{LESSON}"}}  # GEPA


@pytest.fixture
def scripted(tmp_path, monkeypatch, small_corpus):
    monkeypatch.setenv("FERRET_HOME", str(tmp_path))
    lm, engine = scripted_lm(SCRIPT)
    monkeypatch.setattr(ferret.optimizers.compile, "make_lm", lambda spec=None, **options: lm)
    monkeypatch.setattr(ferret.optimizers.evaluate, "make_lm", lambda spec=None, threads=None: lm)
    monkeypatch.setattr(ferret.optimizers.compile, "BUDGETS", {name: {"light": settings} for name, settings in TINY.items()})
    qa = tmp_path / "qa.jsonl"
    qa.write_text("".join(json.dumps({"id": id_, "question": question, "answer": gold, "doc_id": doc_id,
                                      "evidence": [{"doc_id": doc_id, "page": 1}]}) + "\n"
                          for id_, question, gold, doc_id, _ in QUESTIONS))
    return qa, small_corpus, lm, engine


def saved_state(path) -> dict:
    """The predictors' states of a compiled program's JSON (its metadata and settings aside)."""
    state = json.loads(path.read_text())
    state.pop("metadata")
    state.pop("settings")
    return state


# How each optimizer can teach Synthesis: with demos, or with an instruction its prompt or reflection LM
# wrote (a step of its own: PROPOSES). SIMBA could also append advice to the instructions, but only where
# samples of one question disagree, which the deterministic scripted LM never does.
TEACHES = {"bootstrap": {"demos"}, "random-search": {"demos"}, "mipro": {"demos", "instructions"},
           "gepa": {"instructions"}, "simba": {"demos"}}
PROPOSES = {"mipro": "propose", "gepa": "reflect"}


@pytest.mark.parametrize("optimizer", list(TEACHES))
def test_each_optimizer_compiles_the_whole_module_and_the_json_reloads(scripted, tmp_path, optimizer):
    qa, corpus, _, engine = scripted
    out = tmp_path / f"{optimizer}.json"
    result = compile_program("jsonl", qa, optimizer, index=corpus.store.dir, out=out, track=False)
    assert (result["train_n"], result["val_n"]) == (3, 3) and result["compiled_path"] == str(out)
    assert result["score_before"] == pytest.approx(1 / 3, abs=1e-3) and result["score_after"] == 1.0
    state = saved_state(out)
    assert set(state) == {"route", "read.predict", "confirm", "extract.react", "extract.extract.predict", "evaluate",
                          "synthesize.predict", "plan", "rerank"}
    assert all(predictor["lm"] is None for predictor in state.values())  # no LM in the file
    synthesis = state["synthesize.predict"]
    taught_by = {"demos"} if synthesis["demos"] else set()
    taught_by |= {"instructions"} if LESSON in synthesis["signature"]["instructions"] else set()
    assert taught_by and taught_by <= TEACHES[optimizer]
    if optimizer in PROPOSES:
        assert PROPOSES[optimizer] in engine.steps()
    settings = json.loads(out.read_text())["settings"]
    assert settings["repairs"] is False and settings["read_k"] == 5  # auto, fixed by the scripted LM before compiling
    loaded = IterativeRetriever(corpus, read_k=3, repairs=True)
    assert loaded.dump_state() != {**state, "settings": settings}
    loaded.load(out)
    assert loaded.dump_state() == {**state, "settings": settings}


def test_labeled_demos_teach_the_read_train_questions_whose_gold_is_printed_in_what_it_is_shown(scripted, tmp_path):
    """No LM runs while compiling: the read's demos are two train questions, each with the passages the first
    rung shows for it and the gold copied from the one that prints it; the Router keeps its readings."""
    qa, corpus, _, engine = scripted
    engine.script["read"] = [read]
    out = tmp_path / "labeled.json"
    result = compile_program("jsonl", qa, "labeled", index=corpus.store.dir, out=out, track=False)
    assert result["score_before"] == pytest.approx(1 / 3, abs=1e-3) and result["score_after"] == 1.0
    state = saved_state(out)
    demos = state["read.predict"]["demos"]
    train = {question for id_, question, *_ in QUESTIONS if id_ in ("q3", "q4", "q5")}
    assert len(demos) == 2 and {demo["question"] for demo in demos} <= train
    for demo in demos:
        gold, doc_id, line = BY_QUESTION[demo["question"]]
        assert demo["answer"] == gold and demo["missing"] == "" and demo["sources"]
        assert all(gold in demo["passages"][n - 1] for n in demo["sources"])
    assert state["route"]["demos"] == IterativeRetriever(corpus).dump_state()["route"]["demos"]
    assert not any(predictor["demos"] for name, predictor in state.items() if name not in ("route", "read.predict"))
    with pytest.raises(ValueError, match="--program iterative"):
        compile_program("jsonl", qa, "labeled", index=corpus.store.dir, program="oneshot", track=False)


def test_a_knn_compile_saves_a_pool_of_labeled_demos_and_shows_each_read_the_nearest(scripted, tmp_path):
    """No LM runs while compiling: the pool is every train question whose gold stands (three), `demo_k` is saved
    beside it, and one demo in each read's prompt teaches the scripted read."""
    qa, corpus, _, engine = scripted
    engine.script["read"] = [read]
    out = tmp_path / "knn.json"
    result = compile_program("jsonl", qa, "knn", index=corpus.store.dir, out=out, track=False)
    assert result["score_before"] == pytest.approx(1 / 3, abs=1e-3) and result["score_after"] == 1.0
    assert json.loads(out.read_text())["settings"]["demo_k"] == 1
    pool = {demo["question"] for demo in saved_state(out)["read.predict"]["demos"]}
    assert pool == {question for id_, question, *_ in QUESTIONS if id_ in ("q3", "q4", "q5")}
    loaded = IterativeRetriever(corpus)
    load_compiled(loaded, out)
    assert loaded.demo_k == 1 and {demo["question"] for demo in loaded.read.predict.demos} == pool


def test_settings_then_a_prompt_optimizer_compiles_the_demos_on_the_settings_that_ship(scripted, tmp_path,
                                                                                       monkeypatch):
    """`--optimizer settings,knn`: the settings search runs first (no LM) and the program it saves, before
    the demos, is what the prompt compile is scored against; the output holds both."""
    qa, corpus, _, engine = scripted
    engine.script["read"] = [read]
    scored = []
    evaluate = ferret.optimizers.compile.evaluate

    def recorded(*args, **kwargs):
        scored.append(args[5])  # (dataset, data, index, program, lm, compiled, ...)
        return evaluate(*args, **kwargs)

    monkeypatch.setattr(ferret.optimizers.compile, "evaluate", recorded)
    out = tmp_path / "both.json"
    result = compile_program("jsonl", qa, "settings,knn", index=corpus.store.dir, out=out, track=False)
    base = tmp_path / "both.settings.json"
    assert result["optimizer"] == "settings,knn" and scored == [base, out]
    saved = json.loads(out.read_text())["settings"]
    assert {key: saved[key] for key in result["settings"]} == result["settings"] == \
        {key: json.loads(base.read_text())["settings"][key] for key in result["settings"]}
    assert saved["demo_k"] == 1 and saved_state(base)["read.predict"]["demos"] == []
    assert result["score_after"] == 1.0


@pytest.mark.parametrize("holdout, kept", [(2, "compiled"), (1, "uncompiled")])
def test_a_compile_with_a_holdout_saves_the_compiled_program_only_when_it_scores_higher_on_the_held_out_questions(
        scripted, tmp_path, holdout, kept):
    """The first `holdout` train questions give no demo and decide what is saved. Holding out q3 and q4 leaves
    q5's demo, which teaches the read q4 (1/2 uncompiled, 2/2 compiled); holding out q3 alone, both programs
    answer it (a tie), so the output is the uncompiled program, without the demos or their `demo_k`."""
    qa, corpus, _, engine = scripted
    engine.script["read"] = [read]
    out = tmp_path / "knn.json"
    result = compile_program("jsonl", qa, "knn", index=corpus.store.dir, out=out, track=False, holdout=holdout)
    assert (result["holdout_n"], result["train_n"], result["kept"]) == (holdout, 3 - holdout, kept)
    pool = [demo["question"] for demo in saved_state(out)["read.predict"]["demos"]]
    demo_k = json.loads(out.read_text())["settings"]["demo_k"]
    if kept == "compiled":
        assert (result["holdout_before"], result["holdout_after"]) == (0.5, 1.0)
        assert pool == ["How much did the all-season tires cost?"] and demo_k == 1 and result["score_after"] == 1.0
    else:
        assert result["holdout_before"] == result["holdout_after"] == 1.0
        assert pool == [] and demo_k == 0 and result["score_after"] == result["score_before"]
    with pytest.raises(ValueError, match="3 of them held out"):
        compile_program("jsonl", qa, "knn", index=corpus.store.dir, out=out, track=False, holdout=3)


def test_ctrl_c_while_the_held_out_questions_are_answered_leaves_the_uncompiled_program(scripted, tmp_path,
                                                                                       monkeypatch):
    """The compiled program is written before the held-out questions score it; interrupted there, it has not
    won, so the output is the uncompiled program (the compile would have saved q5's demo, as above)."""
    qa, corpus, _, engine = scripted
    engine.script["read"] = [read]
    evaluate = ferret.optimizers.compile.evaluate

    def interrupted_on_the_compiled(*args, **kwargs):
        if args[5] is not None and args[6] == "train":  # (dataset, data, index, program, lm, compiled, split, ...)
            raise KeyboardInterrupt
        return evaluate(*args, **kwargs)

    monkeypatch.setattr(ferret.optimizers.compile, "evaluate", interrupted_on_the_compiled)
    out = tmp_path / "knn.json"
    with pytest.raises(KeyboardInterrupt, match=f"the uncompiled program is saved at {out}"):
        compile_program("jsonl", qa, "knn", index=corpus.store.dir, out=out, track=False, holdout=2)
    assert saved_state(out)["read.predict"]["demos"] == [] and json.loads(out.read_text())["settings"]["demo_k"] == 0


def test_a_train_question_the_table_rung_answers_in_code_is_no_demo_of_the_read(small_corpus):
    program = IterativeRetriever(small_corpus)
    in_code = dspy.Example(question="What was total revenue in 2023?", answer="3,650", doc_id="report")
    read = dspy.Example(question="What was total revenue last year?", answer="3,650", doc_id="report")
    assert program.answered_in_code(in_code.question, doc_id="report") and read_demo(program, in_code) is None
    assert not program.answered_in_code(read.question, doc_id="report")
    assert read_demo(program, read).answer == "3,650"


def test_ferret_compile_json_mlflow_runs_and_ask_with_the_compiled_program(scripted, capsys, monkeypatch):
    qa, corpus, lm, _ = scripted
    index = str(corpus.store.dir)
    assert main(["compile", "--dataset", "jsonl", "--data", str(qa), "--index", index,
                 "--optimizer", "random-search", "--json"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    for key in ("optimizer", "dataset", "train_n", "val_n", "score_before", "score_after", "compiled_path",
                "mlflow_run_id", "seconds"):
        assert key in result, key
    assert result["optimizer"] == "random-search"
    assert "/runs/compiled/jsonl-iterative-random-search-" in result["compiled_path"]  # the default out
    assert (result["score_before"], result["score_after"]) == (pytest.approx(1 / 3, abs=1e-3), 1.0)

    client = mlflow.MlflowClient(tracking_uri())
    run = client.get_run(result["mlflow_run_id"])
    assert run.info.status == "FINISHED" and run.data.tags["kind"] == "compile"
    assert run.data.metrics["score_before"] == pytest.approx(result["score_before"])
    assert run.data.metrics["score_after"] == pytest.approx(result["score_after"])
    params = run.data.params
    assert (params["optimizer"], params["budget"], params["train_n"], params["val_n"]) == ("random-search", "light",
                                                                                          "3", "3")
    assert params["random-search.num_candidate_programs"] == "1" and params["git_commit"]
    assert "jsonl-iterative-random-search-" in " ".join(a.path for a in client.list_artifacts(run.info.run_id))
    children = client.search_runs([run.info.experiment_id],
                                  f"tags.mlflow.parentRunId = '{run.info.run_id}'")
    evals = {child.info.run_id: child for child in children if child.data.tags.get("kind") == "eval"}
    assert set(evals) == {result["before_run_id"], result["after_run_id"]}
    assert evals[result["after_run_id"]].data.params["compiled"] == result["compiled_path"]
    candidates = [child for child in children if "eval" in child.data.metrics]  # DSPy autolog: one per candidate
    assert sorted(child.data.metrics["eval"] for child in candidates) == [pytest.approx(100 / 3, abs=0.1), 100.0,
                                                                          100.0, 100.0]

    assert main(["runs", "compare", result["before_run_id"], result["after_run_id"]]) == 0
    accuracy = next(line.split() for line in capsys.readouterr().out.splitlines() if line.startswith("accuracy "))
    assert accuracy[1:] == ["0.3333", "1"]

    monkeypatch.setattr(ferret.programs.lm, "make_lm", lambda spec=None, threads=None: lm)
    question = "What was Consumer segment revenue the year before?"
    for compiled, status in ((["--compiled", result["compiled_path"]], "answer"), ([], "fail")):
        assert main(["ask", question, "--index", index, "--doc", "report", "--json", *compiled]) == 0
        answer = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert answer["status"] == status and ("1,100" in answer["answer"]) == (status == "answer")


@pytest.mark.parametrize("stop", ["ctrl-c", "sigterm"])
def test_ctrl_c_saves_the_best_program_so_far_and_marks_the_run_killed(scripted, tmp_path, monkeypatch, capsys, stop):
    """Random search evaluates the zero-shot program, then the labeled-demos one, then bootstraps: a
    Ctrl-C (or a SIGTERM, as `kill` and job schedulers send) there leaves the labeled one, the best so far."""
    qa, corpus, _, _ = scripted

    def interrupted(self, **kwargs):
        if stop == "sigterm":
            stop_with_sigterm("compile")
        raise KeyboardInterrupt

    monkeypatch.setattr(dspy.BootstrapFewShot, "_bootstrap", interrupted)
    out = tmp_path / "interrupted.json"
    with sigterm_left_to_ferret():
        assert main(["compile", "--dataset", "jsonl", "--data", str(qa), "--index", str(corpus.store.dir),
                     "--optimizer", "random-search", "--out", str(out), "--json"]) == 130
    assert f"the best program so far is saved at {out}" in capsys.readouterr().err
    synthesis = saved_state(out)["synthesize.predict"]
    assert synthesis["demos"] and not any(demo.get("augmented") for demo in synthesis["demos"])  # labeled demos
    assert not list(tmp_path.glob(".interrupted-*"))  # the temporary file was renamed into place

    client = mlflow.MlflowClient(tracking_uri())
    experiment = client.get_experiment_by_name("jsonl")
    (run,) = client.search_runs([experiment.experiment_id], "tags.kind = 'compile'")
    assert run.info.status == "KILLED" and run.data.tags["interrupted"] == "KeyboardInterrupt"
    assert run.data.metrics["score_before"] == pytest.approx(1 / 3, abs=1e-3) and "score_after" not in run.data.metrics
    assert "interrupted.json" in [a.path for a in client.list_artifacts(run.info.run_id)]
    assert not [r for r in client.search_runs([experiment.experiment_id]) if r.info.status == "RUNNING"]


def test_a_right_run_with_a_failed_step_gives_no_demo_and_the_demos_are_the_steps_of_runs_that_did_their_job(
        scripted, tmp_path, monkeypatch):
    """One train question's read says a value is missing and the loop after it finds the value: its run is
    right, but none of its steps becomes a demo (a metric that passed it would teach its read to give up, or,
    as DSPy keeps one step per predictor and run, picked at random, could leave a failed Extraction). The
    other train questions' reads answer, grounded: their Router and read steps are the demos."""
    qa, corpus, lm, engine = scripted
    failing = "What was total revenue the year before?"

    def read_but_one(inputs, prompt):
        if inputs["question"] == failing:
            return {"calculation": {"expression": ""}, "answer": "", "sources": [], "missing": "the 2022 total"}
        return read(inputs, LESSON)

    engine.script["read"] = [read_but_one]
    engine.script["synthesize"] = [lambda inputs: synthesize(inputs, LESSON)]  # every run that finds is correct
    monkeypatch.setitem(ferret.optimizers.compile.BUDGETS, "bootstrap", BUDGETS["bootstrap"])  # two demos
    out = tmp_path / "pruned.json"
    result = compile_program("jsonl", qa, "bootstrap", index=corpus.store.dir, out=out, track=False)
    assert result["score_after"] == 1.0
    state = saved_state(out)
    demos = {name: [demo["question"] for demo in predictor["demos"]] for name, predictor in state.items()}
    taught = ["What was Enterprise segment revenue last year?", "How much did the all-season tires cost?"]
    assert demos["route"] == demos["read.predict"] == taught
    assert not any(demos[name] for name in demos if name not in ("route", "read.predict"))  # no run reached them


def test_a_step_is_useful_when_it_did_its_job(small_corpus):
    program = IterativeRetriever(small_corpus)
    finding = {"label": "Total revenue", "value": 3650, "doc_id": "report", "page": 1}
    read = {"results": "[1] doc_id=report page=1\nTotal revenue  3,650  3,150", "trajectory": ""}
    extraction = program.extract.extract.predict
    assert useful_step(extraction, read, dspy.Prediction(findings=[finding], failure_reason=""))
    assert not useful_step(extraction, read, dspy.Prediction(findings=[], failure_reason="not found"))
    assert not useful_step(extraction, read, dspy.Prediction(findings=[finding], failure_reason="not found"))
    assert not useful_step(extraction, read, dspy.Prediction(findings=[{**finding, "value": 3.0}], failure_reason=""))

    passages = {"question": "What was the percentage change in total revenue from 2022 to 2023?",
                "passages": ["[1] page 1 (Segment Results): Total revenue  3,650  3,150"]}
    change = {"expression": "(3,650 - 3,150) / 3,150 * 100"}
    read = program.read.predict
    assert useful_step(read, passages, dspy.Prediction(calculation=change, answer="16%", missing="",
                                                       reasoning="From 3,150 in 2022 to 3,650 in 2023: about 15.9%."))
    assert not useful_step(read, passages, dspy.Prediction(calculation=change, answer="16%", missing="",
                                                           reasoning="3,650 - 3,150 = 600"))
    assert not useful_step(read, passages, dspy.Prediction(calculation=change, answer="500 = 11%", missing=""))
    assert not useful_step(read, passages, dspy.Prediction(calculation=change, answer="", missing="the 2022 total"))
    assert not useful_step(read, passages, dspy.Prediction(calculation={"expression": "(3,650 - 3,100) / 3,100 * 100"},
                                                           answer="", missing=""))
    assert useful_step(read, passages, dspy.Prediction(calculation={"expression": ""}, answer="3,650", missing=""))
    assert not useful_step(read, passages, dspy.Prediction(calculation={"expression": ""}, answer="", missing=""))

    # a read whose answer is its own arithmetic, not its calculation's result, or that wrote a calculation it
    # did not answer with, is no demo (its program would copy either)
    assert not useful_step(read, passages, dspy.Prediction(calculation=change, answer="600", missing="",
                                                           reasoning="3,650 - 3,150 = 600"))
    both = {**passages, "question": "What was total revenue in 2023 and 2022 respectively?"}
    assert not useful_step(read, both, dspy.Prediction(calculation={"expression": "3,650 + 3,150"},
                                                       answer="3,650 and 3,150", missing="", reasoning="It is both."))
    assert useful_step(read, both, dspy.Prediction(calculation={"expression": ""}, answer="3,650 and 3,150",
                                                   missing="", reasoning="It is both."))

    overview = {"question": "What did the winter tires cost in 2022?", "corpus_overview": small_corpus.overview()}
    reading = {"intent": "lookup", "buckets": ["invoices"], "topic_terms": ["winter tires"]}
    assert useful_step(program.route, overview, dspy.Prediction(decision=reading))
    assert not useful_step(program.route, overview, dspy.Prediction(decision={**reading, "topic_terms": []}))
    assert not useful_step(program.route, overview,
                           dspy.Prediction(decision={**reading, "entities": ["counterparty"]}))
    assert not useful_step(program.route, overview, dspy.Prediction(decision={**reading, "buckets": ["contracts"]}))
    assert useful_step(program.evaluate, overview, dspy.Prediction(answered=False))


def test_the_bootstrapping_metric_only_scores_it_rejects_a_run_with_a_failed_step_and_leaves_the_trace(small_corpus):
    program = IterativeRetriever(small_corpus)
    example = dspy.Example(question="What was total revenue last year?", answer="3,650").with_inputs("question")
    right = dspy.Prediction(status="answer", answer="3,650", grounding="grounded")
    extraction = program.extract.extract.predict
    read = {"results": "[1] doc_id=report page=1\nTotal revenue  3,650  3,150", "trajectory": ""}
    found = (extraction, read, dspy.Prediction(findings=[{"label": "Total revenue", "value": 3650, "doc_id": "report",
                                                          "page": 1}], failure_reason=""))
    failed = (extraction, read, dspy.Prediction(findings=[], failure_reason="not found"))
    trace = [failed, found]
    before = [(predictor, dict(inputs), outputs.toDict()) for predictor, inputs, outputs in trace]
    assert demo_metric(example, right) == 1.0 and demo_metric(example, right, [found])
    assert not demo_metric(example, right, trace)
    assert [(predictor, inputs, outputs.toDict()) for predictor, inputs, outputs in trace] == before
    assert not demo_metric(example, dspy.Prediction(status="answer", answer="3,650", grounding="on_page"), [found])
    assert not demo_metric(example, dspy.Prediction(status="answer", answer="3,100", grounding="grounded"), [found])
    assert not demo_metric(example, right, [])  # answered in code: no step to learn from


def test_the_teacher_reads_labeled_train_questions_and_the_compiled_program_none(scripted, tmp_path, monkeypatch):
    """Untaught, the program answers only the train question about total revenue. The teacher, with two
    labeled train questions in each step's prompt, answers the others too, so the light budget's two
    demos are bootstrapped; the compiled program holds those, not the labeled questions."""
    qa, corpus, lm, engine = scripted
    engine.script["read"] = [read]
    monkeypatch.setitem(ferret.optimizers.compile.BUDGETS, "bootstrap", BUDGETS["bootstrap"])
    compile_program("jsonl", qa, "bootstrap", index=corpus.store.dir, out=tmp_path / "taught.json", track=False)
    reads = saved_state(tmp_path / "taught.json")["read.predict"]["demos"]
    assert len(reads) == 2 and all(demo["augmented"] for demo in reads)
    assert {demo["question"] for demo in reads} == {"What was total revenue the year before?",
                                                    "What was Enterprise segment revenue last year?"}


def test_a_teacher_lm_runs_the_train_questions_and_the_task_lm_the_dev_questions(scripted, tmp_path, monkeypatch):
    """With --teacher-lm, the train questions are asked of the teacher's LM only (it answers them all);
    the task LM sees only the dev questions it is scored on, before and after."""
    qa, corpus, lm, engine = scripted
    teacher, teacher_engine = scripted_lm({**SCRIPT, "synthesize": lambda inputs: synthesize(inputs, LESSON)})
    monkeypatch.setattr(ferret.optimizers.compile, "make_lm",
                        lambda spec=None, **options: teacher if spec == "local:teacher.gguf" else lm)
    out = tmp_path / "taught.json"
    result = compile_program("jsonl", qa, "bootstrap", index=corpus.store.dir, out=out, track=False,
                             teacher_lm="local:teacher.gguf")
    train = {question for id_, question, *_ in QUESTIONS if id_ in {"q3", "q4", "q5"}}
    assert train & {inputs.get("question") for _, inputs in teacher_engine.calls}
    assert not train & {inputs.get("question") for _, inputs in engine.calls}
    assert result["teacher_lm"] == teacher.model and result["score_after"] == 1.0
    assert saved_state(out)["synthesize.predict"]["demos"]


def test_a_teacher_lm_is_refused_for_an_optimizer_without_a_teacher(scripted):
    qa, corpus, _, _ = scripted
    with pytest.raises(ValueError, match="--teacher-lm needs an optimizer that bootstraps demos"):
        compile_program("jsonl", qa, "gepa", index=corpus.store.dir, track=False, teacher_lm="local:teacher.gguf")


def test_ferret_ui_serves_the_runs_of_a_compile_and_its_evaluations(scripted, tmp_path):
    """`ferret ui` serves the project's store on 127.0.0.1: MLflow's REST API holds the compile run and the
    evaluations before and after it, with the metrics ferret logged."""
    qa, corpus, _, _ = scripted
    result = compile_program("jsonl", qa, "bootstrap", index=corpus.store.dir, out=tmp_path / "c.json")
    logged = {run_id: mlflow.MlflowClient(tracking_uri()).get_run(run_id).data.metrics
              for run_id in (result["mlflow_run_id"], result["before_run_id"], result["after_run_id"])}
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "ferret", "ui", "--port", str(port)], start_new_session=True,
                              env={**os.environ, "FERRET_HOME": str(tmp_path)}, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    api = f"http://127.0.0.1:{port}/api/2.0/mlflow"
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                experiments = json.load(urllib.request.urlopen(f"{api}/experiments/search?max_results=100", timeout=5))
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, "ferret ui did not serve"
                time.sleep(1)
        ids = [e["experiment_id"] for e in experiments["experiments"] if e["name"] == "jsonl"]
        request = urllib.request.Request(f"{api}/runs/search", json.dumps({"experiment_ids": ids, "max_results": 100}).encode(),
                                         {"Content-Type": "application/json"})
        served = {run["info"]["run_id"]: {m["key"]: m["value"] for m in run["data"].get("metrics", [])}
                  for run in json.load(urllib.request.urlopen(request, timeout=30))["runs"]}
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)
    for run_id, metrics in logged.items():
        assert served[run_id] == pytest.approx(metrics) and metrics, run_id
    assert served[result["before_run_id"]]["accuracy"] == pytest.approx(result["score_before"])
