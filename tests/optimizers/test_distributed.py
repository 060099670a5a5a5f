"""`ferret eval --ray`: the questions answered on Ray workers, each with its own embedded model, give the
rows a run without Ray gives. `ferret compile --ray`: an in-process LM decodes on Ray workers as it
does in the calling process."""
from __future__ import annotations

import csv
import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import dspy
import mlflow
import pytest

from dspy.clients.cache import Cache

from ferret.corpus.cluster import ray_workers
from ferret.corpus.tools import Corpus
from ferret.optimizers.compile import compile_program
from ferret.optimizers.distributed import RayEngine, on_ray
from ferret.optimizers.evaluate import evaluate
from ferret.optimizers.tracking import runs_dir
from ferret.cli import main
from ferret.programs import make_program
from ferret.programs.lm import answering, make_lm
from tests.conftest import SAMPLE

SAME = ("id", "question", "answer", "status", "accuracy", "evidence_recall@5", "citations_verified", "lm_calls",
        "input_tokens", "output_tokens")


def rows(run_id: str) -> list[dict]:
    table = next(runs_dir().glob(f"artifacts/*/{run_id}/artifacts/results.csv"))
    return [{key: row[key] for key in SAME} for row in csv.DictReader(table.open())]


def test_questions_answered_on_two_ray_workers_match_a_run_without_ray(sample_index):
    """The real embedded model, on 3 sample questions over 2 workers: the rows come back in order, as without Ray."""
    alone = evaluate("sample", SAMPLE, sample_index, "oneshot", split_name="all", limit=3)
    on_ray = evaluate("sample", SAMPLE, sample_index, "oneshot", split_name="all", limit=3, ray="local", workers=2)
    assert rows(on_ray["mlflow_run_id"]) == rows(alone["mlflow_run_id"])
    assert on_ray["accuracy"] == alone["accuracy"] and on_ray["wall_seconds"] > 0
    params = mlflow.get_run(on_ray["mlflow_run_id"]).data.params
    assert params["ray"] == "local" and params["workers"] == "2"


def test_the_embedded_model_decodes_on_two_ray_workers_as_in_this_process():
    """The real embedded model: four questions asked from two threads, each call a Ray task, get the
    answers the model gives in this process (greedy decoding), each in its own thread's order."""
    questions = ["What is 2 + 3?", "Name a primary colour.", "What is the capital of France?", "Spell 'cat' backwards."]
    ask = dspy.Predict("question -> answer")
    local = make_lm("local", max_tokens=40)

    def answers(lm: dspy.LM) -> list[str]:
        def one(question: str) -> str:
            with answering(lm):
                return ask(question=question).answer
        with ThreadPoolExecutor(2) as pool:
            return list(pool.map(one, questions))

    with ray_workers("local", 2):
        remote = on_ray(local)
        assert isinstance(remote.engine, RayEngine)
        on_workers = answers(remote)
    assert on_workers == answers(local)
    assert len(set(on_workers)) == len(questions)


def test_a_compile_on_two_ray_workers_compiles_what_a_compile_without_ray_does(sample_index, tmp_path, monkeypatch):
    """The real embedded model, the one-call program, bootstrap on 1 train and 1 dev sample question, each
    compile with a new response cache (nothing replayed): the same program and scores on Ray as without,
    the optimizer's LM calls decoded on the workers."""
    sent = []
    complete = RayEngine.complete
    monkeypatch.setattr(RayEngine, "complete", lambda engine, request: sent.append(request) or complete(engine, request))

    def compiled(name: str, **ray) -> tuple[dict, dict]:
        monkeypatch.setattr(dspy, "cache", Cache(enable_disk_cache=False, enable_memory_cache=True, disk_cache_dir=None))
        result = compile_program("sample", SAMPLE, "bootstrap", sample_index, "oneshot", train=1, val=1,
                                 out=tmp_path / f"{name}.json", track=False, **ray)
        state = json.loads(Path(result["compiled_path"]).read_text())
        state.pop("metadata")
        return result, state

    alone, program = compiled("alone")
    assert not sent
    on_ray, program_on_ray = compiled("on_ray", ray="local", workers=2)
    assert sent  # the teacher's run of the train question
    assert program_on_ray == program
    assert (on_ray["score_before"], on_ray["score_after"]) == (alone["score_before"], alone["score_after"])


def test_the_workers_are_given_absolute_paths(sample_index, tmp_path, monkeypatch):
    """A worker on another node does not start in this directory: a relative --index, --compiled or
    --lm local:PATH reaches it absolute, for eval's questions and for a compile's LM calls."""
    given = []

    def answer_on_ray(setup, examples, address, workers, progress):
        given.append(setup)
        return iter([])

    monkeypatch.setattr("ferret.optimizers.distributed.answer_on_ray", answer_on_ray)
    make_program("oneshot", Corpus(sample_index)).save(str(tmp_path / "compiled.json"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "model.gguf").write_bytes(b"GGUF")  # never loaded: the program does not run here
    evaluate("sample", SAMPLE, os.path.relpath(sample_index, tmp_path), "oneshot", compiled="compiled.json",
             lm="local:model.gguf", split_name="all", limit=1, track=False, ray="local")
    assert given[0].index == str(sample_index.resolve())
    assert given[0].compiled == str(tmp_path / "compiled.json")
    assert given[0].lm == f"local:{tmp_path / 'model.gguf'}"
    assert on_ray(make_lm("local:model.gguf")).engine.model_path == str(tmp_path / "model.gguf")


def test_an_api_model_is_not_sent_to_ray():
    api = make_lm("openai/gpt-4o-mini")
    assert on_ray(api) is api


@pytest.mark.parametrize("command", [["eval", "--limit", "1"], ["compile", "--optimizer", "bootstrap", "--val", "1"]])
@pytest.mark.parametrize("options, message", [
    (["--workers", "2"], "--workers counts Ray workers and goes with --ray"),
    (["--ray", "--threads", "2"], "--threads is for a run without Ray"),
])
def test_ray_options_that_do_not_go_together_are_refused(sample_index, capsys, command, options, message):
    code = main([command[0], "--dataset", "sample", "--data", str(SAMPLE), "--index", str(sample_index),
                 *command[1:], "--no-track", *options])
    assert code == 2 and message in capsys.readouterr().err


def test_a_conversation_is_not_sent_to_ray(sample_index, capsys):
    code = main(["eval", "--dataset", "sample-chat", "--data", str(SAMPLE), "--index", str(sample_index),
                 "--ray", "--no-track"])
    assert code == 2 and "cannot run on Ray" in capsys.readouterr().err
