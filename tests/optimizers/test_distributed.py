"""`ferret eval --ray`: the questions answered on Ray workers, each with its own embedded model, give the
rows a run without Ray gives."""
from __future__ import annotations

import csv

import mlflow
import pytest

from optimizers.evaluate import evaluate
from optimizers.tracking import runs_dir
from programs.cli import main
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


@pytest.mark.parametrize("options, message", [
    (["--workers", "2"], "--workers counts Ray workers and goes with --ray"),
    (["--ray", "--threads", "2"], "--threads is for a run without Ray"),
])
def test_ray_options_that_do_not_go_together_are_refused(sample_index, capsys, options, message):
    code = main(["eval", "--dataset", "sample", "--data", str(SAMPLE), "--index", str(sample_index), "--limit", "1",
                 "--no-track", *options])
    assert code == 2 and message in capsys.readouterr().err


def test_a_conversation_is_not_sent_to_ray(sample_index, capsys):
    code = main(["eval", "--dataset", "sample-chat", "--data", str(SAMPLE), "--index", str(sample_index),
                 "--ray", "--no-track"])
    assert code == 2 and "cannot run on Ray" in capsys.readouterr().err
