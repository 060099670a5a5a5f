"""`ferret eval`: run a program over a dataset's questions, score every answer, and track the run.

Each question's result is scored by the metrics of `optimizers.metrics`; the run's summary averages
them and adds reliability (answered share, errors) and cost (LM calls, tokens, seconds, the share of
time spent outside the LM). With tracking on, the run goes to MLflow (experiment = dataset) with its
parameters, metrics, the per-question table, the program state, the question ids of the split and a
plot; DSPy traces are recorded through `mlflow.dspy.autolog()` (attached to the run when the
questions run on one thread). An interrupted run (Ctrl-C, or SIGTERM through `ferret eval`) keeps what
it did: the metrics and table of the questions finished, tagged with how far it got, marked KILLED.
"""
from __future__ import annotations

import csv
import hashlib
import itertools
import json
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import dspy
from tqdm import tqdm

from ferret.corpus.tools import Corpus
from ferret.optimizers.datasets import load_dataset, prepare_index, split
from ferret.optimizers.metrics import CHAT_METRICS, METRICS, make_judge_metric
from ferret.optimizers.grounding_check import evaluate_grounding
from ferret.optimizers.retrieval import evaluate_recall
from ferret.optimizers.scripted_readers import ReaderEngine, reader_lm, reader_summary, reading
from ferret.optimizers.tracking import (STATUS_COUNTS, git_commit, metric_name, plot_risk_coverage, plot_runs, recent_runs, run_summaries,
                                        runs_dir, use_experiment)
from ferret.programs import load_compiled, make_program
from ferret.programs.conversation import ChatState, Conversation
from ferret.programs.first_read import ReadSettings
from ferret.programs.lm import answering, anywhere, make_lm
from ferret.programs.repairs import repairs_on
from ferret.programs.result import as_json, error_text
from ferret.programs.settings import SavedSettings

RUN_KEYS = ("dataset", "program", "lm", "split")
CONVERSATIONS = ("sample-chat",)  # datasets of conversations: asked turn by turn through `Conversation`
TABLE_COLUMNS = ("id", "status", "answered_by", "accuracy", "rewrite_accuracy", "evidence_recall@5",
                 "evidence_recall_all@5", "citations_verified", "lm_calls",
                 "input_tokens", "output_tokens", "seconds", "question", "rewritten", "gold", "answer", "reason")


def default_index(dataset: str) -> Path:
    return runs_dir() / "indexes" / dataset


@dataclass(frozen=True)
class Setup:
    """What answers a dataset's questions: a program over its index (with a compiled state), its LM and
    the metrics (a judge LM's, if given). A Ray worker builds its own from it (optimizers/distributed.py)."""

    program: str
    index: str
    lm: str | None = None
    compiled: str | None = None
    max_iterations: int | None = None
    judge_lm: str | None = None
    conversational: bool = False
    accept: str = "grounded"
    repairs: bool | None = None
    long_text: bool | None = None
    reader: str | None = None

    def build(self, threads: int | None = None) -> tuple[dspy.Module, dspy.LM, dict[str, Callable]]:
        """The program, its LM (an in-process model decoding on `threads` threads) and the metrics."""
        module = make_program(self.program, Corpus(self.index), self.max_iterations, self.accept, self.repairs,
                              self.long_text)
        if self.compiled:
            load_compiled(module, self.compiled, max_iterations=self.max_iterations, repairs=self.repairs,
                          long_text=self.long_text)
        if self.conversational:
            module = Conversation(module.corpus, module, repairs=self.repairs)
        judged = self.judge_lm and not self.conversational
        metrics = dict(CHAT_METRICS if self.conversational else METRICS,
                       **({"accuracy": make_judge_metric(make_lm(self.judge_lm))} if judged else {}))
        return module, reader_lm(self.reader) if self.reader else make_lm(self.lm, threads=threads), metrics


def program_settings(module: dspy.Module, lm: dspy.LM) -> dict:
    """The settings a run logs: the program's saved settings (`programs.settings`; a conversation's
    program's), its small-model repairs as they run on `lm`."""
    program = getattr(module, "program", module)
    settings = program.settings() if isinstance(program, SavedSettings) else {}
    owner = next((part for part in (program, module) if hasattr(part, "repairs")), None)  # oneshot alone has none
    if owner is not None:
        settings["repairs"] = repairs_on(owner.repairs, lm)
    return settings


def check_ray_options(ray: str | None, workers: int | None, threads: int) -> None:
    """--workers goes with --ray, and --threads without it."""
    if (workers and not ray) or (ray and threads > 1):
        raise ValueError("--workers counts Ray workers and goes with --ray; --threads is for a run without Ray")


def evaluate(dataset: str, data: str | Path, index: str | Path | None = None, program: str = "iterative",
             lm: str | None = None, compiled: str | Path | None = None, split_name: str = "dev",
             limit: int | None = None, threads: int = 1, max_iterations: int | None = None,
             judge_lm: str | None = None, progress: bool = False, track: bool = True,
             ray: str | None = None, workers: int | None = None, accept: str = "grounded",
             repairs: bool | None = None, on_row: Callable[[dict], None] | None = None,
             long_text: bool | None = None, reader: str | None = None, seeds: int = 1) -> dict:
    """Evaluate `program` on the dataset's `split_name` questions; returns the summary (with the MLflow
    run id when tracked). `accept`: the lowest grounding the program states an answer with; `repairs`:
    the small-model repairs (`programs.repairs`; None: on for the embedded models); `long_text`: the
    iterative program's long-text first read (None: its default); `on_row` is
    called with each question's row as it is done (the demo prints it). The dataset's documents are ingested into `index` first (a no-op when
    already there). `ray`: answer the questions on `workers` Ray workers, of a local Ray started on
    this machine ("local") or of the cluster at that address (optimizers/distributed.py). `reader`: every LM
    step answered by a scripted reader instead of `lm` ("oracle" or "wrong", `optimizers.scripted_readers`),
    and the summary adds its bounds (`reader_summary`); `seeds`: the wrong reader asked each question under
    seeds 0 to `seeds`-1 of its random choice, a row each, the figures their means."""
    examples, files = load_dataset(dataset, data)
    if not any(str(example.answer).strip() for example in examples):
        raise ValueError(f"{dataset} has no gold answers: it is retrieval-only (use `ferret eval --retrieval`)")
    chosen = split(examples, split_name)[:limit] if limit else split(examples, split_name)
    if not chosen:
        raise ValueError(f"no questions in split {split_name!r} of {dataset}")
    check_ray_options(ray, workers, threads)
    if reader and (lm or ray or dataset in CONVERSATIONS):
        raise ValueError("--reader answers every LM step itself: it goes without --lm and --ray, on questions asked one by one")
    if seeds > 1 and reader != "wrong":
        raise ValueError("--seeds draws the wrong reader's random choice again: it goes with --reader wrong")
    conversational = dataset in CONVERSATIONS
    if ray and conversational:
        raise ValueError(f"{dataset} is asked turn by turn, each turn after the one before: it cannot run on Ray")
    index = Path(index) if index else default_index(dataset)
    prepare_index(files, index)
    # absolute paths: a Ray worker on another node does not start in this directory
    setup = Setup(program, str(index.resolve()), anywhere(lm), str(Path(compiled).resolve()) if compiled else None,
                  max_iterations, anywhere(judge_lm), conversational, accept, repairs, long_text, reader)
    module, model, metrics = setup.build()
    params = {"dataset": dataset, "data": str(data), "index": str(index), "program": program, "lm": model.model,
              "compiled": str(compiled or ""), "compiled_sha256": _sha256(compiled) if compiled else "",
              "split": split_name, "limit": limit or "", "threads": threads, "judge_lm": judge_lm or "",
              "ray": ray or "", "workers": workers or "", "git_commit": git_commit(),
              "accept": accept, "reader": reader or "", **({"seeds": seeds} if reader else {}),
              **program_settings(module, model)}
    if judge_lm:
        from ferret.signatures.judge import JUDGE_PROMPT_VERSION

        params["judge_prompt_version"] = JUDGE_PROMPT_VERSION

    def answered() -> Iterator[dict]:
        if conversational:  # each turn depends on the ones before: in order, one thread
            return run_turns(module, model, chosen, metrics, progress)
        if ray:
            from ferret.optimizers.distributed import answer_on_ray

            return answer_on_ray(setup, chosen, ray, workers, progress)
        if reader:
            return itertools.chain.from_iterable(run_questions(module, reader_lm(reader, seed), chosen, metrics, threads,
                                                               progress) for seed in range(seeds))
        return run_questions(module, model, chosen, metrics, threads, progress)

    def questions() -> Iterator[dict]:
        for row in answered():
            if on_row is not None:
                on_row(row)
            yield row

    if not track:
        clock = time.perf_counter()
        rows = list(questions())
        return {**{key: params[key] for key in RUN_KEYS}, **summarize(rows),
                "wall_seconds": round(time.perf_counter() - clock, 2)}
    return _tracked(params, len(chosen) * seeds, module, questions)


def answer_row(module: dspy.Module, lm: dspy.LM, example: dspy.Example, metrics: dict[str, Callable]) -> dict:
    """The question's row: its scores, cost and outcome, plus the full result as `result`; with a scripted
    reader as `lm`, what it saw and stated (`scripted_readers.Reading`)."""
    if isinstance(getattr(lm, "engine", None), ReaderEngine):
        with reading(example, lm.engine.seed) as seen:
            row = _answered(module, lm, example, metrics)
        return {**row, "reader": lm.engine.kind, "reader_seed": lm.engine.seed, "evidence_shown": seen.evidence_shown,
                "reader_stated": seen.stated}
    return _answered(module, lm, example, metrics)


def _answered(module: dspy.Module, lm: dspy.LM, example: dspy.Example, metrics: dict[str, Callable]) -> dict:
    with answering(lm):
        try:
            prediction = module(question=example.question, doc_id=example.get("doc_id"))
        except Exception as error:  # a crash is a scored, counted outcome, not the end of the run
            return _row(example, None, metrics, error_text(error))
    return _row(example, prediction, metrics)


def run_questions(module: dspy.Module, lm: dspy.LM, examples: list[dspy.Example],
                  metrics: dict[str, Callable], threads: int = 1, progress: bool = False) -> Iterator[dict]:
    """Each question's row (`answer_row`), in the examples' order, as it is done."""
    def one(example: dspy.Example) -> dict:
        return answer_row(module, lm, example, metrics)

    bar = tqdm(total=len(examples), desc="questions", unit="q", disable=not progress)
    pool = ThreadPoolExecutor(threads) if threads > 1 else None
    try:
        for row in pool.map(one, examples) if pool else map(one, examples):
            bar.update()
            yield row
    finally:  # when interrupted, the questions not started yet are not run
        if pool:
            pool.shutdown(wait=False, cancel_futures=True)
        bar.close()


def run_turns(conversation: Conversation, lm: dspy.LM, examples: list[dspy.Example], metrics: dict[str, Callable],
              progress: bool = False) -> Iterator[dict]:
    """Each conversation turn's row, in order; a conversation starts from an empty state at its first
    turn. A row is scored on the turn's result with its kind and standalone question ("rewritten"),
    and counts the whole turn's LM calls (rewrite and summary included)."""
    state = None
    for example in tqdm(examples, desc="turns", unit="turn", disable=not progress):
        if example.turn == 1 or state is None:
            state = ChatState()
        with answering(lm):
            try:
                turn = conversation(turn=example.question, state=state)
            except Exception as error:  # a crash is a scored, counted outcome; the conversation goes on
                yield _row(example, None, metrics, error_text(error))
                continue
        state = turn.state
        scored = dspy.Prediction(**{**turn.result.toDict(), "kind": turn.kind, "rewritten": turn.question,
                                    "lm_calls": turn.lm_calls, "tokens": turn.tokens, "seconds": turn.seconds,
                                    "lm_seconds": turn.lm_seconds})
        yield _row(example, scored, metrics)


def _row(example: dspy.Example, prediction: dspy.Prediction | None, metrics: dict[str, Callable],
         error: str = "") -> dict:
    if prediction is None:
        prediction = dspy.Prediction(status="error", answer="", evidence=[], citations=[], citations_verified=False,
                                     lm_calls=0, tokens={"input": 0, "output": 0, "cached": 0}, seconds=0.0, lm_seconds=0.0,
                                     reason=error)
    scores = {name: float(metric(example, prediction)) for name, metric in metrics.items()}
    return {"id": example.id, "question": example.question, "gold": example.answer, "answer": prediction.answer,
            "status": prediction.status, "answered_by": prediction.get("answered_by") or "",
            "reason": prediction.get("reason") or "", "error": error, **scores,
            "lm_calls": prediction.lm_calls, "input_tokens": prediction.tokens["input"],
            "output_tokens": prediction.tokens["output"], "cached_tokens": prediction.tokens["cached"],
            "seconds": prediction.seconds,
            "lm_seconds": prediction.get("lm_seconds") or 0.0,
            **({"rewritten": prediction.rewritten} if prediction.get("rewritten") is not None else {}),
            "result": as_json(prediction) if not error else {"error": error}}


def summarize(rows: list[dict]) -> dict:
    """Averages over questions; citations_verified_rate is over answered questions only."""
    n = len(rows)

    def mean(key: str, among: list[dict] = rows) -> float:
        return round(sum(row[key] for row in among) / len(among), 4) if among else 0.0

    answered = [row for row in rows if row["answered"]]
    seconds, lm_seconds = sum(row["seconds"] for row in rows), sum(row["lm_seconds"] for row in rows)
    per_question = {key: mean(key) for key in CHAT_METRICS
                    if key not in ("answered", "citations_verified", "grounded") and rows and key in rows[0]}
    summary = {"n": n, **per_question, "answered_rate": mean("answered"),
               "citations_verified_rate": mean("citations_verified", answered), "error_count": sum(1 for row in rows if row["error"]),
               "avg_lm_calls": mean("lm_calls"), "avg_input_tokens": mean("input_tokens"),
               "avg_output_tokens": mean("output_tokens"), "avg_cached_tokens": mean("cached_tokens"),
               "avg_seconds": mean("seconds"),
               "outside_lm_share": round(1 - lm_seconds / seconds, 4) if seconds else 0.0}
    outcome = dict.fromkeys(STATUS_COUNTS, 0)
    for row in rows:
        key = ("n_correct" if row["accuracy"] else "n_wrong") if row["status"] == "answer" else f"n_{row['status']}"
        outcome[key] += 1
    bounds = reader_summary(rows, rows[0]["reader"]) if rows and "reader" in rows[0] else {}
    return {**summary, **selective(rows), **outcome, **rungs(rows), **bounds}


def selective(rows: list[dict]) -> dict[str, float]:
    """Selective answering: the share of questions answered grounded, the accuracy among those, and the
    share of all questions answered grounded and wrong (what a user trusts and should not)."""
    if not rows or "grounded" not in rows[0]:
        return {}
    chosen = [row for row in rows if row["grounded"]]
    return {"grounded_rate": round(len(chosen) / len(rows), 4),
            "grounded_accuracy": round(sum(row["accuracy"] for row in chosen) / len(chosen), 4) if chosen else 0.0,
            "wrong_grounded_rate": round(sum(1 for row in chosen if not row["accuracy"]) / len(rows), 4)}


def rungs(rows: list[dict]) -> dict[str, int]:
    """Per rung that answered (`answered_by`: "read", "hops", a ladder method, ...): how many questions it
    answered ("rung_<name>_answered") and how many of those rightly ("rung_<name>_correct")."""
    table: dict[str, int] = {}
    for row in rows:
        if row["status"] == "answer" and row.get("answered_by"):
            name = f"rung_{row['answered_by']}"
            table[f"{name}_answered"] = table.get(f"{name}_answered", 0) + 1
            table[f"{name}_correct"] = table.get(f"{name}_correct", 0) + int(bool(row["accuracy"]))
    return dict(sorted(table.items()))


def _tracked(params: dict, total: int, module: dspy.Module, questions: Callable[[], Iterator[dict]]) -> dict:
    import mlflow

    use_experiment(params["dataset"])
    mlflow.dspy.autolog(silent=True)
    # nested: a compile's before and after evaluations are children of its run
    with mlflow.start_run(run_name=f"{params['program']}-{params['split']}", nested=True) as run:
        mlflow.log_params(params)
        mlflow.set_tag("kind", "eval")
        rows: list[dict] = []
        clock = time.perf_counter()
        try:
            for row in questions():
                rows.append(row)
        except KeyboardInterrupt:  # keep the questions done; the run (only this one) ends KILLED
            mlflow.set_tag("interrupted", f"after {len(rows)} of {total} questions")
            if rows:
                _log_results(run.info.run_id, params, rows, module)
            mlflow.end_run("KILLED")
            raise
        summary = _log_results(run.info.run_id, params, rows, module)
        summary["wall_seconds"] = round(time.perf_counter() - clock, 2)
        mlflow.log_metric("wall_seconds", summary["wall_seconds"])
        artifacts = mlflow.get_artifact_uri()
    return {**{key: params[key] for key in RUN_KEYS}, **summary, "artifacts": artifacts,
            "mlflow_run_id": run.info.run_id}


def _log_results(run_id: str, params: dict, rows: list[dict], module: dspy.Module) -> dict:
    """Log the questions' summary metrics and the run's artifacts to the active run; return the summary."""
    import mlflow

    summary = summarize(rows)
    mlflow.log_metrics({metric_name(key): value for key, value in summary.items() if isinstance(value, (int, float))})
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        write_table(rows, folder / "results.csv")
        (folder / "results.jsonl").write_text(
            "".join(json.dumps({**row["result"], "id": row["id"]}, default=str) + "\n" for row in rows))
        (folder / "split.json").write_text(json.dumps({"split": params["split"], "ids": [row["id"] for row in rows]}))
        module.save(str(folder / "program.json"))
        plot_runs(_compared_runs(run_id, params["dataset"]), folder / "accuracy_vs_tokens.png")
        plot_risk_coverage(rows, folder / "risk_coverage.png", f"{params['program']} · {params['dataset']} {params['split']}")
        mlflow.log_artifacts(str(folder))
    return summary


def _compared_runs(run_id: str, experiment: str, most: int = 8) -> list[dict]:
    """This run, then the latest run of each other (program, LM, compiled program) in the experiment."""
    seen, chosen = set(), []
    for summary in run_summaries([run_id]) + recent_runs(experiment, limit=100):
        params = summary["params"]
        key = (params.get("program"), params.get("lm"), params.get("compiled_sha256"))
        if key not in seen and summary["metrics"] and "accuracy" in summary["metrics"]:
            seen.add(key)
            chosen.append(summary)
    return chosen[:most]


def write_table(rows: list[dict], path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=[c for c in TABLE_COLUMNS if any(c in row for row in rows)], extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def _sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def evaluate_search(dataset: str, data: str | Path, index: str | Path | None = None, limit: int | None = None,
                    query_from: str = "question", track: bool = True, gold: str | None = None,
                    split_name: str = "all", compiled: str | Path | None = None) -> dict:
    """Retrieval only, no LM: recall@5, nDCG@10 and recall@100 of text, semantic and hybrid search, hops,
    the long-text route and the program's first read at `compiled`'s retrieval settings (else the
    defaults'; `optimizers.retrieval`) on the split's questions, tracked as a run of program "retrieval"."""
    index = Path(index) if index else default_index(dataset)
    settings = compiled_read_settings(compiled, index) if compiled else ReadSettings()
    result = evaluate_recall(dataset, data, index, limit=limit, query_from=query_from, gold=gold, split_name=split_name,
                             settings=settings)
    result["read_settings"] = settings.describe()
    return _logged("retrieval", result, {"dataset": dataset, "data": str(data), "index": str(index),
                                          "split": split_name, "query_from": query_from, "limit": limit or "",
                                          "gold": gold or "all", "compiled": str(compiled or "")}) if track else result


def compiled_read_settings(compiled: str | Path, index: str | Path) -> ReadSettings:
    """The first read's retrieval settings of the iterative program compiled at `compiled` (`load_compiled`:
    ValueError naming the file when it is no such state)."""
    program = make_program("iterative", index)
    load_compiled(program, compiled)
    return program.read_settings


def evaluate_grounding_check(dataset: str, data: str | Path, index: str | Path | None = None, split_name: str = "dev",
                             limit: int | None = None, track: bool = True) -> dict:
    """Grounding only, no LM: the gold answers' and wrong values' grounding on the gold pages
    (`optimizers.grounding_check`), tracked as a run of program "grounding"."""
    index = Path(index) if index else default_index(dataset)
    result = evaluate_grounding(dataset, data, index, split_name, limit)
    return _logged("grounding", result, {"dataset": dataset, "data": str(data), "index": str(index),
                                          "split": split_name, "limit": limit or ""}) if track else result


def _logged(kind: str, result: dict, params: dict) -> dict:
    """`result` logged as an MLflow run of program `kind` in the dataset's experiment, with its run id."""
    import mlflow

    use_experiment(params["dataset"])
    with mlflow.start_run(run_name=kind) as run:
        mlflow.log_params({**params, "program": kind, "git_commit": git_commit()})
        mlflow.set_tag("kind", kind)
        mlflow.log_metrics({metric_name(key): value for key, value in result.items()
                            if isinstance(value, (int, float))})
    return {**result, "mlflow_run_id": run.info.run_id}
