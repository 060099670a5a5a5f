"""`ferret compile`: optimize every predictor of a program (instructions and demos) with a DSPy
optimizer on a dataset's train split, score it before and after on the dev split, and save it as JSON
state that `ferret ask|eval --compiled FILE` and `IterativeRetriever(corpus).load(FILE)` read.

Budgets (`BUDGETS`) set each optimizer's own knobs (demos are per predictor, bootstrapped + labeled):

| optimizer     | light                          | medium                 | heavy                       |
|---------------|--------------------------------|------------------------|-----------------------------|
| bootstrap     | 2 + 2 demos                    | 4 + 4                  | 8 + 8, 2 tries per example  |
| random-search | 4 demo sets + 3 baselines, 2+2 | 8 sets, 4 + 4          | 16 sets, 8 + 8              |
| mipro         | MIPROv2 auto=light, 2 + 2      | auto=medium, 4 + 4     | auto=heavy, 4 + 4           |
| gepa          | GEPA auto=light                | auto=medium            | auto=heavy                  |
| simba         | 4 steps x 8 questions, 4 cand. | 8 x 16, 6 candidates   | 16 x 32, 8 candidates       |
| labeled       | 2 read demos                   | 4                      | 8                           |
| knn           | the 2 nearest of 64 read demos | 4 of 128               | 8 of 256                    |

`labeled` and `knn` run no LM: the read's demos are train questions whose gold answers stand on the passages
it is shown (`optimizers.gold_demos`, the iterative program only); `knn` keeps a pool of them in the compiled
state and shows each read the ones whose questions are nearest to its own (`programs.nearest_demos`). SIMBA's batch is capped at the train size. MIPROv2's and GEPA's auto budgets grow with the number of
predictors: on the iterative program (seven) with 20 dev questions, "light" is 72 MIPROv2 trials (about
1,500 program runs) and about 2,900 GEPA metric calls.

A compile can keep DSPy's usual baseline (`holdout`): the first N train questions are held out of the
optimizer, the compiled and the uncompiled program answer them, and the compiled one is saved only when it
scores strictly higher there; otherwise the output is the uncompiled program (`kept` says which). As in
ReAnchor's fold check and random search's zero-shot candidate, a change the train data does not show to
help is not shipped; the dev questions (`val`) only check what was chosen.

Scores are answer accuracy (`answer_correct`). Demos are bootstrapped only from runs whose answer is right,
stated grounded, and whose every step did its job (an Extraction that found values printed in what it read,
a read whose numbers are printed or computed, a Router reading in the question's words: `demo_metric`,
optimizers/demos.py); the compiled demos are the ones the program runs with. SIMBA appends its own demos
and GEPA writes instructions only. GEPA's metric also says in words what was wrong, and what the step of
the predictor it improves did (`feedback_metric`). The optimizers' LM calls go through DSPy's response cache (the embedded model's
too) and every optimizer is seeded, so rerunning an interrupted compile with the same arguments replays
the calls already made; GEPA also checkpoints its search beside the output (`FILE.gepa/`) and resumes
from it when run again with the same `--out`. Ctrl-C saves the best program evaluated so far on the
whole validation set (else the uncompiled one) to the output and marks the MLflow run KILLED; during a
holdout's evaluations, it saves the uncompiled program, since the compiled one has not yet won there.

Tracked, a compile is one MLflow run (tag kind=compile) with the optimizer settings, data sizes,
score_before/score_after and the compiled JSON; its children are the before and after evaluations (full
`ferret eval` runs, for `ferret runs compare`) and the candidate evaluations DSPy's autolog records.
"""
from __future__ import annotations

import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

import dspy
from dspy.utils.callback import BaseCallback

from ferret.corpus.cluster import ray_workers
from ferret.corpus.tools import Corpus
from ferret.optimizers.datasets import load_dataset, prepare_index, split
from ferret.optimizers.demos import demo_metric
from ferret.optimizers.gold_demos import GoldEvidenceFewShot
from ferret.optimizers.distributed import on_ray
from ferret.optimizers.evaluate import CONVERSATIONS, check_ray_options, default_index, evaluate
from ferret.optimizers.metrics import answer_correct, feedback_metric
from ferret.optimizers.settings_search import OBJECTIVE, search_settings
from ferret.optimizers.settings_search import score as settings_score
from ferret.optimizers.tracking import git_commit, metric_name, runs_dir, use_experiment
from ferret.programs import make_program
from ferret.programs.first_read import ReadSettings
from ferret.programs.lm import answering, make_lm
from ferret.programs.repairs import repairs_on

# Demos are bootstrapped steps only (max_labeled_demos 0): a labeled question lacks what each step reads
# (passages, findings) and carries the dataset's answer format ("['Greece and Turkey']"), so DSPy would
# show the read step question-answer pairs without passages. The TAT-QA compile at 23da317, whose steps
# held two of them each, scored 0.0625 on 16 dev questions against 0.3125 uncompiled. The teacher that
# runs the train questions still has them (`labeled_teacher`).
TEACHER_LABELED_DEMOS = 2
BUDGETS: dict[str, dict[str, dict]] = {
    "bootstrap": {"light": {"max_bootstrapped_demos": 2, "max_labeled_demos": 0},
                  "medium": {"max_bootstrapped_demos": 4, "max_labeled_demos": 0},
                  "heavy": {"max_bootstrapped_demos": 8, "max_labeled_demos": 0, "max_rounds": 2}},
    "random-search": {"light": {"num_candidate_programs": 4, "max_bootstrapped_demos": 2, "max_labeled_demos": 0},
                      "medium": {"num_candidate_programs": 8, "max_bootstrapped_demos": 4, "max_labeled_demos": 0},
                      "heavy": {"num_candidate_programs": 16, "max_bootstrapped_demos": 8, "max_labeled_demos": 0}},
    "mipro": {"light": {"auto": "light", "max_bootstrapped_demos": 2, "max_labeled_demos": 0},
              "medium": {"auto": "medium", "max_bootstrapped_demos": 4, "max_labeled_demos": 0},
              "heavy": {"auto": "heavy", "max_bootstrapped_demos": 4, "max_labeled_demos": 0}},
    "gepa": {"light": {"auto": "light"}, "medium": {"auto": "medium"}, "heavy": {"auto": "heavy"}},
    "simba": {"light": {"max_steps": 4, "bsize": 8, "num_candidates": 4, "max_demos": 2},
              "medium": {"max_steps": 8, "bsize": 16, "num_candidates": 6, "max_demos": 4},
              "heavy": {"max_steps": 16, "bsize": 32, "num_candidates": 8, "max_demos": 4}},
    "labeled": {"light": {"k": 2}, "medium": {"k": 4}, "heavy": {"k": 8}},
    "knn": {"light": {"k": 2, "pool": 64}, "medium": {"k": 4, "pool": 128}, "heavy": {"k": 8, "pool": 256}},
}
MIPRO_COMPILE_SETTINGS = ("num_trials", "minibatch")  # MIPROv2 takes these in compile(), not its constructor


@dataclass
class Job:
    """What an optimizer works on: the uncompiled program, the data, its settings and LMs."""

    student: dspy.Module
    trainset: list[dspy.Example]
    valset: list[dspy.Example]
    settings: dict
    task_lm: dspy.LM
    prompt_lm: dspy.LM
    reflection_lm: dspy.LM
    teacher_lm: dspy.LM | None
    threads: int
    checkpoint: Path

    @property
    def teacher_settings(self) -> dict:
        """DSPy's settings for the teacher's runs: its own LM, when one is given."""
        return {"lm": self.teacher_lm} if self.teacher_lm else {}


def labeled_teacher(student: dspy.Module, trainset: list[dspy.Example]) -> dspy.Module:
    """The program that runs the train questions while demos are bootstrapped: DSPy's own teacher when
    labeled demos are on (LabeledFewShot: two train questions with their gold answers in each step's
    prompt), though the compiled program gets none of them. With the uncompiled program as teacher, the
    TAT-QA compile at 969aec7 bootstrapped 0 traces from 8 train questions; with this one, at 9a45e6c,
    2 from 5. A gold value a demo leaks into a run is not printed in its passages, so that step is not
    kept (`optimizers.demos.useful_step`)."""
    return dspy.LabeledFewShot(k=TEACHER_LABELED_DEMOS).compile(student.reset_copy(), trainset=trainset)


def bootstrap(student: dspy.Module, trainset: list[dspy.Example], teacher_settings: dict | None = None,
              **settings) -> dspy.Module:
    """`ferret compile --optimizer bootstrap` (its light budget by default): DSPy's BootstrapFewShot with
    `demo_metric`, run by the labeled teacher, demos bootstrapped only."""
    settings = {**BUDGETS["bootstrap"]["light"], **settings}
    optimizer = dspy.BootstrapFewShot(metric=demo_metric, teacher_settings=teacher_settings or {}, **settings)
    return optimizer.compile(student, teacher=labeled_teacher(student, trainset), trainset=trainset)


def _bootstrap(job: Job) -> dspy.Module:
    return bootstrap(job.student, job.trainset, job.teacher_settings, **job.settings)


def _random_search(job: Job) -> dspy.Module:
    optimizer = dspy.BootstrapFewShotWithRandomSearch(metric=demo_metric, num_threads=job.threads,
                                                      teacher_settings=job.teacher_settings, **job.settings)
    return optimizer.compile(job.student, teacher=labeled_teacher(job.student, job.trainset),
                             trainset=job.trainset, valset=job.valset)


def _mipro(job: Job) -> dspy.Module:
    settings = dict(job.settings)
    run = {key: settings.pop(key) for key in MIPRO_COMPILE_SETTINGS if key in settings}
    optimizer = dspy.MIPROv2(metric=demo_metric, task_model=job.task_lm, prompt_model=job.prompt_lm,
                             teacher_settings=job.teacher_settings, num_threads=job.threads, **settings)
    return optimizer.compile(job.student, teacher=labeled_teacher(job.student, job.trainset),
                             trainset=job.trainset, valset=job.valset, **run)


def _gepa(job: Job) -> dspy.Module:
    optimizer = dspy.GEPA(metric=feedback_metric, reflection_lm=job.reflection_lm, num_threads=job.threads,
                          log_dir=str(job.checkpoint), **job.settings)
    return optimizer.compile(job.student, trainset=job.trainset, valset=job.valset)


def _simba(job: Job) -> dspy.Module:
    settings = {**job.settings, "bsize": min(job.settings["bsize"], len(job.trainset))}
    optimizer = dspy.SIMBA(metric=answer_correct, prompt_model=job.prompt_lm, num_threads=job.threads, **settings)
    return optimizer.compile(job.student, trainset=job.trainset)


def _labeled(job: Job) -> dspy.Module:
    return GoldEvidenceFewShot(**job.settings).compile(job.student, trainset=job.trainset)


OPTIMIZERS: dict[str, Callable[[Job], dspy.Module]] = {
    "bootstrap": _bootstrap, "random-search": _random_search, "mipro": _mipro, "gepa": _gepa, "simba": _simba,
    "labeled": _labeled, "knn": _labeled}
TEACHES = ("bootstrap", "random-search", "mipro")  # the optimizers whose demos a teacher bootstraps
SETTINGS = "settings"  # the retrieval settings' compile, no LM (`optimizers.settings_search`)


def optimizer_steps(optimizer: str) -> list[str]:
    """The optimizers a `--optimizer` value runs, in order: one of OPTIMIZERS, "settings", or "settings,X"
    (the settings compiled first, then X on them); ValueError naming what is not one."""
    steps = [step.strip() for step in optimizer.split(",")]
    known = [SETTINGS, *OPTIMIZERS]
    if any(step not in known for step in steps) or len(steps) > 2 or (len(steps) == 2 and steps[0] != SETTINGS) \
            or steps.count(SETTINGS) > 1:
        raise ValueError(f"unknown optimizer {optimizer!r}; optimizers: {', '.join(known)}, or settings,OPTIMIZER "
                         "(the retrieval settings first, then a prompt optimizer on them)")
    return steps


def compile_program(dataset: str, data: str | Path, optimizer: str, index: str | Path | None = None,
                    program: str = "iterative", lm: str | None = None, prompt_lm: str | None = None,
                    reflection_lm: str | None = None, train: int | None = None, val: int | None = None,
                    budget: str = "light", out: str | Path | None = None, threads: int = 1, track: bool = True,
                    progress: bool = False, teacher_lm: str | None = None, ray: str | None = None,
                    workers: int | None = None, repairs: bool | None = None, holdout: int = 0) -> dict:
    """Compile `program` with `optimizer` on the first `train` train questions after the first `holdout`,
    validated on the first `val` dev questions; save it to `out` (default
    runs/compiled/DATASET-PROGRAM-OPTIMIZER-TIME.json) and return the scores before and after, the path,
    the MLflow run id and the seconds taken.

    `holdout` > 0: the first `holdout` train questions decide what is saved: the compiled program when it
    scores strictly higher on them than the uncompiled one, else the uncompiled program (`kept`).

    `teacher_lm` (bootstrap, random-search, mipro) runs the train questions whose correct traces become
    demos, such as a larger local model (`local:PATH`); the compiled program runs on `lm`.

    `repairs` (`programs.repairs`; None: on when `lm` is an embedded model) is decided before the compile
    and saved in the compiled state with the program's other settings.

    `ray` (optimizers/distributed.py): the before and after evaluations answer their questions on
    `workers` Ray workers; the optimizer evaluates candidates on that many threads, and the in-process
    LMs decode every call on a Ray worker. BootstrapFewShot runs its train questions one at a time."""
    started = time.perf_counter()
    check_ray_options(ray, workers, threads)
    steps = optimizer_steps(optimizer)
    if steps == [SETTINGS]:
        return compile_settings(dataset, data, index, program, train, val, out, track, holdout)
    settings_first, optimizer = steps[0] == SETTINGS, steps[-1]
    if settings_first and program != "iterative":
        raise ValueError("--optimizer settings compiles the iterative program's retrieval settings: use --program iterative")
    if teacher_lm and optimizer not in TEACHES:
        raise ValueError(f"--teacher-lm needs an optimizer that bootstraps demos: {', '.join(TEACHES)}")
    if optimizer in ("labeled", "knn") and program != "iterative":
        raise ValueError(f"--optimizer {optimizer} builds demos of the iterative program's read: use --program iterative")
    if budget not in BUDGETS[optimizer]:
        raise ValueError(f"unknown budget {budget!r}; budgets: {', '.join(BUDGETS[optimizer])}")
    held, trainset, valset, files = _examples(dataset, data, train, val, holdout)
    index = Path(index) if index else default_index(dataset)
    prepare_index(files, index)
    out = Path(out) if out else default_out(dataset, program, "-".join(steps))
    with ray_workers(ray, workers) if ray else nullcontext() as count:  # count: the Ray workers

        def lm_of(spec: str | None) -> dspy.LM:
            model = make_lm(spec, cache=True)
            return on_ray(model) if ray else model

        task_lm = lm_of(lm)
        repairs = repairs_on(repairs, task_lm)
        student, base, chosen = make_program(program, Corpus(index), repairs=repairs), None, {}
        if settings_first:  # the prompts are compiled, and judged, on the settings that will ship
            choice = search_settings(student.corpus, trainset, held)
            student.read_settings = choice.settings
            base = out.with_name(f"{out.stem}.settings.json")
            save_program(student, base)
            chosen = {"settings": asdict(choice.settings), "settings_kept": choice.kept}
        job = Job(student=student, trainset=trainset, valset=valset,
                  settings=BUDGETS[optimizer][budget], task_lm=task_lm,
                  prompt_lm=lm_of(prompt_lm) if prompt_lm else task_lm,
                  reflection_lm=lm_of(reflection_lm) if reflection_lm else task_lm,
                  teacher_lm=lm_of(teacher_lm) if teacher_lm else None,
                  threads=count or threads, checkpoint=out.with_suffix(".gepa"))
        params = {"dataset": dataset, "data": str(data), "index": str(index), "program": program,
                  "optimizer": optimizer, "budget": budget, "train_n": len(trainset), "val_n": len(valset),
                  "holdout_n": len(held),
                  "lm": task_lm.model, "prompt_lm": job.prompt_lm.model, "reflection_lm": job.reflection_lm.model,
                  "teacher_lm": job.teacher_lm.model if job.teacher_lm else task_lm.model, "threads": threads,
                  "ray": ray or "", "workers": count or "", "out": str(out), "git_commit": git_commit(),
                  **{f"{optimizer}.{key}": value for key, value in job.settings.items()},
                  **{f"settings.{key}": value for key, value in chosen.get("settings", {}).items()}}

        def score(compiled: Path | None, split_name: str = "dev", limit: int | None = val) -> dict:
            compiled = compiled or base  # the uncompiled prompts on the compiled settings
            return evaluate(dataset, data, index, program, lm, compiled, split_name, limit, threads,
                            progress=progress, track=track, ray=ray, workers=count, repairs=repairs)

        import mlflow  # here, not at import: a bad --data is named before MLflow's seconds of loading

        with _parent_run(params, track, out) as parent:
            before = score(None)
            if parent is not None:
                mlflow.log_metric("score_before", before["accuracy"])
            _optimize(optimizer, job, out, track)
            guard = {}
            if held:
                try:
                    guard = {"holdout_before": score(None, "train", len(held))["accuracy"],
                             "holdout_after": score(out, "train", len(held))["accuracy"]}
                except KeyboardInterrupt as interrupt:  # the compiled program has not won yet
                    save_program(job.student, out)
                    raise CompileInterrupted(out, "the uncompiled program") from interrupt
                guard["kept"] = "compiled" if guard["holdout_after"] > guard["holdout_before"] else "uncompiled"
                if guard["kept"] == "uncompiled":
                    save_program(job.student, out)  # the optimizers compile a copy of it
                if parent is not None:
                    mlflow.log_metrics({key: guard[key] for key in ("holdout_before", "holdout_after")})
                    mlflow.set_tag("kept", guard["kept"])
            after = score(out)
            if parent is not None:
                mlflow.log_metric("score_after", after["accuracy"])
                mlflow.log_artifact(str(out))
    return {"optimizer": ",".join(steps), "dataset": dataset, "program": program, "budget": budget, "lm": task_lm.model,
            "teacher_lm": params["teacher_lm"], **chosen,
            "train_n": len(trainset), "val_n": len(valset), "holdout_n": len(held), **guard,
            "score_before": before["accuracy"], "score_after": after["accuracy"], "compiled_path": str(out),
            "mlflow_run_id": parent.info.run_id if parent else None,
            "before_run_id": before.get("mlflow_run_id"), "after_run_id": after.get("mlflow_run_id"),
            "seconds": round(time.perf_counter() - started, 2)}


def compile_settings(dataset: str, data: str | Path, index: str | Path | None = None, program: str = "iterative",
                     train: int | None = None, val: int | None = None, out: str | Path | None = None,
                     track: bool = True, holdout: int = 0) -> dict:
    """`ferret compile --optimizer settings`, no LM: the iterative program's retrieval settings searched on
    the first `train` train questions with evidence after the first `holdout` (which decide what is kept:
    `optimizers.settings_search`; the best trial is kept only when a sign test on the train questions shows
    it beats the defaults), scored before and after on the first `val` dev questions by evidence
    recall@5 and recall_all@5, and saved as the program's state at `out`. Tracked, one MLflow compile run
    with a child run for each trial (its settings as params, its train scores as metrics)."""
    started = time.perf_counter()
    if program != "iterative":
        raise ValueError("--optimizer settings compiles the iterative program's retrieval settings: use --program iterative")
    examples, files = load_dataset(dataset, data)
    examples = [example for example in examples if example.get("evidence")]
    trains = split(examples, "train")
    held, trainset, valset = trains[:holdout], trains[holdout:][:train], split(examples, "dev")[:val]
    if not trainset:
        raise ValueError(f"{dataset} has no train question with evidence to compile settings on "
                         f"({len(trains)} in its train split, {len(held)} of them held out)")
    index = Path(index) if index else default_index(dataset)
    prepare_index(files, index)
    out = Path(out) if out else default_out(dataset, program, SETTINGS)
    student = make_program(program, Corpus(index))
    params = {"dataset": dataset, "data": str(data), "index": str(index), "program": program, "optimizer": SETTINGS,
              "train_n": len(trainset), "val_n": len(valset), "holdout_n": len(held), "out": str(out),
              "git_commit": git_commit()}
    import mlflow

    with _parent_run(params, track, out) as parent:
        def logged(trial) -> None:
            if parent is not None:
                with mlflow.start_run(run_name=trial.settings.describe(), nested=True):
                    mlflow.set_tag("kind", "settings-trial")
                    mlflow.log_params(asdict(trial.settings))
                    mlflow.log_metrics({metric_name(key): value for key, value in trial.scores.items()})

        choice = search_settings(student.corpus, trainset, held, on_trial=logged)
        student.read_settings = choice.settings
        save_program(student, out)
        before, after = (settings_score(student.corpus, valset, settings) for settings in (ReadSettings(), choice.settings))
        guard = {f"holdout_{which}": scores[OBJECTIVE[0]] for which, scores in choice.holdout.items()}
        if parent is not None:
            mlflow.log_params({f"settings.{key}": value for key, value in asdict(choice.settings).items()})
            mlflow.set_tag("kept", choice.kept)
            mlflow.log_metrics({"score_before": before.get(OBJECTIVE[0], 0.0), "score_after": after.get(OBJECTIVE[0], 0.0),
                                **{f"dev_{metric_name(key)}": value for key, value in after.items()}, **guard,
                                **{f"sign_test_{key}": value for key, value in choice.sign_test.items()}})
            mlflow.log_artifact(str(out))
    return {"optimizer": SETTINGS, "dataset": dataset, "program": program, "train_n": len(trainset),
            "val_n": len(valset), "holdout_n": len(held), "settings": asdict(choice.settings),
            "best": asdict(choice.best), "kept": choice.kept, "sign_test": choice.sign_test, **guard,
            "score": OBJECTIVE[0],
            "score_before": before.get(OBJECTIVE[0]), "score_after": after.get(OBJECTIVE[0]),
            "dev_before": before, "dev_after": after, "trials": [trial.as_dict() for trial in choice.trials],
            "compiled_path": str(out), "mlflow_run_id": parent.info.run_id if parent else None,
            "seconds": round(time.perf_counter() - started, 2)}


def _examples(dataset: str, data: str | Path, train: int | None, val: int | None,
              holdout: int = 0) -> tuple[list[dspy.Example], list[dspy.Example], list[dspy.Example], list[Path]]:
    """The first `holdout` train examples, the `train` train examples after them and the first `val` dev
    examples, whose inputs are what the programs take: the question, and its document when the dataset
    names one."""
    if dataset in CONVERSATIONS:
        raise ValueError(f"{dataset} is a set of conversations: `ferret eval` runs it; `ferret compile` compiles the "
                         "programs on question sets (a Conversation is a dspy.Module: compile it from Python, with "
                         "examples of (turn, state))")
    examples, files = load_dataset(dataset, data)
    if not any(str(example.answer).strip() for example in examples):
        raise ValueError(f"{dataset} has no gold answers: it is retrieval-only and cannot be compiled against")
    examples = [example.with_inputs("question", "doc_id") if example.get("doc_id") else example
                for example in examples]
    trains = split(examples, "train")
    held, trainset, valset = trains[:holdout], trains[holdout:][:train], split(examples, "dev")[:val]
    if not trainset or not valset:
        raise ValueError(f"{dataset} needs questions in both its train and dev splits "
                         f"(has {len(trains)} train, {holdout} of them held out, and {len(valset)} dev)")
    return held, trainset, valset, files


def default_out(dataset: str, program: str, optimizer: str) -> Path:
    return runs_dir() / "compiled" / f"{dataset}-{program}-{optimizer}-{datetime.now():%Y%m%d-%H%M%S}.json"


@contextmanager
def _parent_run(params: dict, track: bool, out: Path) -> Iterator:
    """The compile's MLflow run (None when not tracked), in the dataset's experiment; Ctrl-C ends it
    and the runs open inside it as KILLED."""
    if not track:
        yield None
        return
    import mlflow

    use_experiment(params["dataset"])
    with mlflow.start_run(run_name=f"{params['program']}-{params['optimizer']}") as run:
        mlflow.set_tag("kind", "compile")
        mlflow.log_params(params)
        try:
            yield run
        except KeyboardInterrupt:
            _end_interrupted(run.info.run_id, out)
            raise


def _optimize(optimizer: str, job: Job, out: Path, track: bool) -> None:
    """Run the optimizer and save what it returns to `out`. On Ctrl-C save the best candidate so far
    (else the uncompiled program) and raise CompileInterrupted."""
    best = _BestCandidate(job.valset)
    try:
        with _candidate_runs(track), answering(job.task_lm), dspy.context(callbacks=[*dspy.settings.callbacks, best]):
            compiled = OPTIMIZERS[optimizer](job)
    except KeyboardInterrupt as interrupt:
        if best.state is not None:
            job.student.load_state(best.state)
        save_program(job.student, out)
        raise CompileInterrupted(out) from interrupt
    save_program(compiled, out)


class CompileInterrupted(KeyboardInterrupt):
    """Ctrl-C during a compile; `path` holds the best program so far (during a holdout's evaluations, the
    uncompiled one)."""

    def __init__(self, path: Path, saved: str = "the best program so far"):
        super().__init__(f"compile interrupted: {saved} is saved at {path}")
        self.path = path


@contextmanager
def _candidate_runs(track: bool) -> Iterator[None]:
    """While compiling, DSPy's MLflow autolog records the optimizer's settings and each candidate
    evaluation as a child run; afterwards autolog is back to what `ferret eval` uses."""
    if not track:
        yield
        return
    import mlflow

    mlflow.dspy.autolog(log_compiles=True, log_evals=True, silent=True)
    try:
        yield
    finally:
        mlflow.dspy.autolog(silent=True)


class _BestCandidate(BaseCallback):
    """Keeps the state of the best-scoring program among the optimizer's evaluations on the whole
    validation set (random search's candidates, MIPROv2's full evaluations, GEPA's)."""

    def __init__(self, valset: list[dspy.Example]):
        self.ids = sorted(str(example.id) for example in valset)
        self.score: float | None = None
        self.state: dict | None = None
        self._programs: dict[str, dspy.Module] = {}
        self._lock = threading.Lock()

    def on_evaluate_start(self, call_id, instance, inputs):
        devset = inputs.get("devset") or instance.devset or []
        if sorted(str(example.get("id")) for example in devset) == self.ids:
            self._programs[call_id] = inputs["program"]

    def on_evaluate_end(self, call_id, outputs, exception=None):
        program = self._programs.pop(call_id, None)
        if program is None or exception is not None:
            return
        with self._lock:
            if self.score is None or outputs.score > self.score:
                self.score, self.state = outputs.score, program.dump_state()


def save_program(module: dspy.Module, path: Path) -> None:
    """Write the program's JSON state to `path` atomically (a temporary file renamed into place)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".json")
    os.close(handle)
    try:
        module.save(temporary)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _end_interrupted(parent_id: str, out: Path) -> None:
    """End the runs still open inside the compile's run, then that run, as KILLED, with the program
    saved at the interruption attached."""
    import mlflow

    while (active := mlflow.active_run()) is not None and active.info.run_id != parent_id:
        mlflow.end_run("KILLED")
    mlflow.set_tag("interrupted", "KeyboardInterrupt")
    if out.exists():
        mlflow.log_artifact(str(out))
    mlflow.end_run("KILLED")
