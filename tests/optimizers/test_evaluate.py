"""`ferret eval` end to end with the scripted LM: the JSON line, the MLflow run behind it, and
`ferret runs list|compare`."""
from __future__ import annotations

import json

import mlflow
import pytest

import ferret.optimizers.evaluate
from ferret.optimizers.evaluate import summarize
from ferret.optimizers.tracking import metric_name, risk_coverage, run_summaries, tracking_uri
from ferret.cli import main
from tests.fakes import scripted_lm, sigterm_left_to_ferret, stop_with_sigterm

QUESTIONS = [
    {"id": "q1", "question": "What was total revenue in 2023?", "answer": "3,650", "doc_id": "report",
     "evidence": [{"doc_id": "report", "page": 1}]},
    {"id": "q2", "question": "What was Consumer segment revenue in 2022?", "answer": "1,100", "doc_id": "report",
     "evidence": [{"doc_id": "report", "page": 1}]},
    {"id": "q3", "question": "How much did the valve caps cost?", "answer": "12.00", "doc_id": "inv1",
     "evidence": [{"doc_id": "inv1", "page": 1}]},
]


def always_total_revenue(inputs):
    """Answers every question with the 2023 total, citing the passage that shows it (if retrieved)."""
    passages = json.loads(inputs["passages"])
    found = [i for i, p in enumerate(passages) if "Total revenue  3,650" in p]
    return {"answer": "Total revenue in 2023 was 3,650.", "sources": found[:1]}


@pytest.fixture
def runs(tmp_path, monkeypatch, small_corpus):
    monkeypatch.setenv("FERRET_HOME", str(tmp_path))
    lm, engine = scripted_lm({"answer": always_total_revenue})
    monkeypatch.setattr(ferret.optimizers.evaluate, "make_lm", lambda spec=None, threads=None: lm)
    qa = tmp_path / "qa.jsonl"
    qa.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    return qa, small_corpus.store.dir, engine


def ferret_eval(qa, index, capsys, *extra) -> dict:
    code = main(["eval", "--dataset", "jsonl", "--data", str(qa), "--index", str(index), "--program", "oneshot",
                 "--split", "all", "--json", *extra])
    assert code == 0
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_eval_prints_the_json_line_and_logs_the_same_metrics_to_mlflow(runs, capsys):
    qa, index, engine = runs
    summary = ferret_eval(qa, index, capsys)
    assert engine.steps() == ["answer"] * 3
    assert summary["dataset"] == "jsonl" and summary["program"] == "oneshot" and summary["n"] == 3
    assert summary["accuracy"] == pytest.approx(1 / 3, abs=1e-3)  # only q1's gold is 3,650
    # q2's 3,650 is printed on its page in the Total row, not the Consumer row; q3's passages lack it:
    # neither is stated, each is a "fail" with its unconfirmed candidate
    assert summary["answered_rate"] == pytest.approx(1 / 3, abs=1e-3) and summary["citations_verified_rate"] == 1.0
    assert summary["evidence_recall@5"] == 1.0 and summary["n_correct"] == 1 and summary["n_wrong"] == 0
    assert summary["n_fail"] == 2 and summary["candidate_accuracy"] == pytest.approx(1 / 3, abs=1e-3)
    assert (summary["grounded_rate"], summary["grounded_accuracy"], summary["wrong_grounded_rate"]) == (0.3333, 1.0, 0.0)
    assert summary["avg_lm_calls"] == 1.0 and summary["avg_input_tokens"] > 0 and summary["error_count"] == 0
    assert summary["rung_read_answered"] == 1 and summary["rung_read_correct"] == 1
    for key in ("lm", "mrr@10", "evidence_recall_all@5", "avg_output_tokens", "avg_seconds", "mlflow_run_id"):
        assert key in summary

    assert tracking_uri().endswith("/runs/mlflow.db")
    run = mlflow.MlflowClient(tracking_uri()).get_run(summary["mlflow_run_id"])
    for key, value in summary.items():
        if isinstance(value, (int, float)):
            assert run.data.metrics[metric_name(key)] == pytest.approx(value), key
    assert run.data.params["program"] == "oneshot" and run.data.params["split"] == "all"
    artifacts = {a.path for a in mlflow.MlflowClient(tracking_uri()).list_artifacts(summary["mlflow_run_id"])}
    assert {"results.csv", "results.jsonl", "split.json", "program.json", "accuracy_vs_tokens.png",
            "risk_coverage.png"} <= artifacts
    # --accept on_page states what is printed on its page (q2), not what is printed on no cited page (q3)
    summary = ferret_eval(qa, index, capsys, "--accept", "on_page")
    assert summary["answered_rate"] == pytest.approx(2 / 3, abs=1e-3) and summary["n_wrong"] == 1
    assert summary["grounded_rate"] == pytest.approx(1 / 3, abs=1e-3) and summary["accuracy"] == pytest.approx(1 / 3, abs=1e-3)


def test_runs_compare_puts_runs_side_by_side_and_plots_them(runs, capsys, tmp_path):
    qa, index, _ = runs
    first = ferret_eval(qa, index, capsys)["mlflow_run_id"]
    second = ferret_eval(qa, index, capsys, "--limit", "1")["mlflow_run_id"]
    assert main(["runs", "list", "--experiment", "jsonl"]) == 0
    listed = capsys.readouterr().out
    assert first in listed and second in listed
    plot = tmp_path / "compare.png"
    assert main(["runs", "compare", first, second, "--plot", str(plot)]) == 0
    table = capsys.readouterr().out.splitlines()
    accuracy = next(line.split() for line in table if line.startswith("accuracy "))
    assert accuracy[1:] == ["0.3333", "1"]  # three questions, one right; then only the first
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(SystemExit) as refused:  # not an id: refused before the store opens
        main(["runs", "compare", "no-such-run"])
    assert refused.value.code == 2 and "'no-such-run' is not an MLflow run id" in capsys.readouterr().err
    assert main(["runs", "compare", "0" * 32]) == 2  # an id no run has
    assert f"no run '{'0' * 32}'" in capsys.readouterr().err


def test_a_crashing_question_is_counted_not_fatal(runs):
    class Crashes:
        def __call__(self, **kwargs):
            raise RuntimeError("boom")

    from dspy import Example

    example = Example(id="x", question="q?", answer="1", evidence=[]).with_inputs("question")
    rows = list(ferret.optimizers.evaluate.run_questions(Crashes(), None, [example], ferret.optimizers.evaluate.METRICS))
    summary = summarize(rows)
    assert rows[0]["status"] == "error" and "boom" in rows[0]["error"]
    assert summary["error_count"] == 1 and summary["n_error"] == 1 and summary["answered_rate"] == 0.0


def test_the_rung_table_counts_answers_and_right_answers_per_rung():
    def row(rung, status="answer", accuracy=1.0):
        return {"answered_by": rung, "status": status, "accuracy": accuracy}

    rows = [row("read"), row("read", accuracy=0.0), row("hops"), row("", "fail", 0.0), row("synthesis", accuracy=0.0)]
    assert ferret.optimizers.evaluate.rungs(rows) == {
        "rung_hops_answered": 1, "rung_hops_correct": 1, "rung_read_answered": 2, "rung_read_correct": 1,
        "rung_synthesis_answered": 1, "rung_synthesis_correct": 0}


@pytest.mark.parametrize("stop", ["ctrl-c", "sigterm"])
def test_an_interrupted_eval_keeps_the_questions_it_finished(runs, capsys, stop):
    """Stopped during its second question (Ctrl-C, or SIGTERM as `kill` sends), the eval exits 130 and
    its run is KILLED, holding the first question's metrics and table."""
    qa, index, engine = runs

    def answer_then_stop(inputs):
        if len(engine.calls) == 2:
            if stop == "ctrl-c":
                raise KeyboardInterrupt
            stop_with_sigterm("eval")
        return always_total_revenue(inputs)

    engine.script["answer"] = [answer_then_stop]
    with sigterm_left_to_ferret():
        assert main(["eval", "--dataset", "jsonl", "--data", str(qa), "--index", str(index), "--program", "oneshot",
                     "--split", "all", "--json"]) == 130
    assert capsys.readouterr().out == ""  # no summary line claims a finished eval
    client = mlflow.MlflowClient(tracking_uri())
    (run,) = client.search_runs([client.get_experiment_by_name("jsonl").experiment_id])
    assert run.info.status == "KILLED" and run.data.tags["interrupted"] == "after 1 of 3 questions"
    assert run.data.metrics["n"] == 1 and run.data.metrics["accuracy"] == 1.0  # q1, answered right
    table = client.download_artifacts(run.info.run_id, "results.csv")
    assert [line.split(",")[0] for line in open(table).read().splitlines()] == ["id", "q1"]


def test_runs_compare_of_unknown_ids_is_a_clear_error(runs):
    with pytest.raises(ValueError, match="no run 'nope'"):
        run_summaries(["nope"])


def test_retrieval_only_eval_is_tracked_too(runs, capsys):
    qa, index, engine = runs
    assert main(["eval", "--retrieval", "--dataset", "jsonl", "--data", str(qa), "--index", str(index), "--json"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert engine.calls == [] and result["n"] == 3
    assert 0 < result["hybrid_ndcg@10"] <= 1 and result["text_recall@100"] == 1.0
    run = mlflow.MlflowClient(tracking_uri()).get_run(result["mlflow_run_id"])
    assert run.data.params["program"] == "retrieval"
    assert run.data.metrics["hybrid_ndcg_at_10"] == pytest.approx(result["hybrid_ndcg@10"])


def test_selective_answering_counts_what_a_user_would_trust():
    def row(grounded, accuracy):
        return {"grounded": grounded, "accuracy": accuracy}

    rows = [row(1.0, 1.0), row(1.0, 0.0), row(0.0, 0.0), row(0.0, 1.0)]
    assert ferret.optimizers.evaluate.selective(rows) == {"grounded_rate": 0.5, "grounded_accuracy": 0.5,
                                                   "wrong_grounded_rate": 0.25}
    assert ferret.optimizers.evaluate.selective([row(0.0, 0.0)])["grounded_accuracy"] == 0.0  # none grounded: no division
    assert ferret.optimizers.evaluate.selective([{"accuracy": 1.0}]) == {}  # a program without grounding levels


def test_the_risk_coverage_curve_takes_the_surest_answers_first():
    def row(level, confidence, right):
        return {"result": {"grounding": level, "confidence": confidence}, "candidate_accuracy": right}

    rows = [row("on_page", 0.9, 0.0), row("", None, 0.0), row("grounded", 0.2, 1.0), row("grounded", 0.8, 1.0)]
    assert risk_coverage(rows) == [(0.25, 1.0), (0.5, 1.0), (0.75, 2 / 3), (1.0, 0.5)]


def test_a_run_logs_the_repairs_as_they_run_on_its_lm(small_corpus):
    from ferret.optimizers.evaluate import program_settings
    from ferret.programs.baselines import OneShotRAG
    from ferret.programs.conversation import Conversation
    from ferret.programs.iterative import IterativeRetriever

    embedded, _ = scripted_lm(model="local/qwen2.5-coder-0.5b-instruct")
    other, _ = scripted_lm()
    assert program_settings(IterativeRetriever(small_corpus), embedded)["repairs"] is True  # auto
    assert program_settings(IterativeRetriever(small_corpus), other)["repairs"] is False
    assert program_settings(IterativeRetriever(small_corpus, repairs=False), embedded)["repairs"] is False
    assert program_settings(IterativeRetriever(small_corpus, max_iterations=3), other)["max_iterations"] == 3
    assert "repairs" not in program_settings(OneShotRAG(small_corpus), embedded)
    assert program_settings(Conversation(small_corpus, OneShotRAG(small_corpus), repairs=True), other)["repairs"] is True
