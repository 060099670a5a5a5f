"""`ferret eval | compile | runs | ui`: score a program on labeled questions, optimize it, compare the
MLflow runs, browse them."""
from __future__ import annotations

import json
import os
import sys

from ferret.cli.arguments import (MAX_QUESTIONS, MAX_SEEDS, MAX_THREADS, accept_option, count, dataset_options,
                                  iterations_option, long_text_option, ray_options, run_id, sigterm_as_interrupt)


def add_commands(commands) -> None:
    evaluate = commands.add_parser("eval", help="run a program over a dataset's questions, score it, track it in MLflow")
    dataset_options(evaluate, "financebench, hotpotqa, tatqa, scifact (retrieval only), sample, or jsonl (your own)")
    evaluate.add_argument("--judge-lm", help="score answers with this LM as judge instead of the rule-based match")
    evaluate.add_argument("--compiled", help="a compiled program's JSON state to load")
    iterations_option(evaluate)
    long_text_option(evaluate)
    evaluate.add_argument("--split", choices=["train", "dev", "test", "all"],
                          help="the questions scored (datasets.split): default dev, and all with --retrieval")
    accept_option(evaluate)
    evaluate.add_argument("--limit", type=count(1, MAX_QUESTIONS), help="first N questions of the split")
    evaluate.add_argument("--threads", type=count(1, MAX_THREADS), default=1)
    ray_options(evaluate, "answer the questions on Ray workers")
    evaluate.add_argument("--reader", choices=["oracle", "wrong"],
                          help="no LM: every LM step answered by code that knows the gold answer, stating it (oracle) "
                               "or a wrong value printed beside it (wrong): what the program gives a right or a wrong "
                               "reader (bounds, not accuracy)")
    evaluate.add_argument("--seeds", type=count(1, MAX_SEEDS), default=1,
                          help="with --reader wrong: ask each question under seeds 0 to N-1 of the reader's random choice "
                               "among the wrong values printed, and report the means")
    evaluate.add_argument("--retrieval", action="store_true",
                          help="retrieval only, no LM: recall@5, nDCG@10, recall@100 of text, semantic, hybrid search, "
                               "hops, long_text (summaries, then the segments of the chunks they pick) and read (the "
                               "program's first read: --compiled's retrieval settings, else the defaults')")
    evaluate.add_argument("--grounding", action="store_true",
                          help="grounding only, no LM: how often the gold answer grounds on its gold pages, and a wrong "
                               "value printed there does")
    evaluate.add_argument("--query-from", choices=["question", "evidence"], default="question",
                          help="retrieval only: query with the question, or with the gold evidence text")
    evaluate.add_argument("--gold", choices=["text", "number"],
                          help="retrieval only: just the questions whose gold answer is text (or a number)")
    evaluate.add_argument("--no-track", action="store_true", help="do not log an MLflow run")
    evaluate.add_argument("--json", action="store_true", help="end with the summary as one JSON line")
    evaluate.set_defaults(run=_eval)

    compile_ = commands.add_parser("compile", help="optimize a program's instructions and demos with a DSPy optimizer, "
                                   "track it in MLflow, save it as JSON")
    dataset_options(compile_, "financebench, hotpotqa, tatqa, sample, or jsonl (your own)")
    compile_.add_argument("--optimizer", required=True, type=optimizer_steps_type,
                          help="bootstrap, random-search, mipro, gepa, simba, labeled, knn; settings (the retrieval "
                          "settings from the train questions' evidence, no LM); or settings,OPTIMIZER (both, in order)")
    compile_.add_argument("--prompt-lm", help="LM proposing instructions (mipro) and advice (simba); default --lm")
    compile_.add_argument("--reflection-lm", help="LM reflecting on failures (gepa); default --lm")
    compile_.add_argument("--teacher-lm", help="LM running the train questions whose traces become demos "
                          "(bootstrap, random-search, mipro), e.g. local:PATH to a larger GGUF; default --lm")
    compile_.add_argument("--train", type=count(1, MAX_QUESTIONS), help="first N questions of the train split (default all)")
    compile_.add_argument("--val", type=count(1, MAX_QUESTIONS), help="first N questions of the dev split, to validate on (default all)")
    compile_.add_argument("--holdout", type=count(1, MAX_QUESTIONS), default=0,
                          help="hold the first N train questions out of the optimizer; save the compiled program only "
                          "when it scores higher on them than the uncompiled one (default: no holdout)")
    compile_.add_argument("--budget", choices=["light", "medium", "heavy"], default="light")
    compile_.add_argument("--out", help="compiled JSON (default runs/compiled/DATASET-PROGRAM-OPTIMIZER-TIME.json); "
                          "gepa resumes from FILE.gepa/ when rerun with the same --out")
    compile_.add_argument("--threads", type=count(1, MAX_THREADS), default=1)
    ray_options(compile_, "decode the LM's calls, and answer the before/after evaluations, on Ray workers")
    compile_.add_argument("--no-track", action="store_true", help="do not log MLflow runs")
    compile_.add_argument("--json", action="store_true", help="end with the result as one JSON line")
    compile_.set_defaults(run=_compile)

    runs = commands.add_parser("runs", help="list and compare tracked runs (MLflow, runs/mlflow.db)")
    runs_commands = runs.add_subparsers(dest="action", required=True)
    runs_list = runs_commands.add_parser("list", help="the latest runs")
    runs_list.add_argument("--experiment", help="one experiment (dataset) only")
    runs_list.add_argument("--limit", type=count(1, MAX_QUESTIONS), default=20)
    runs_compare = runs_commands.add_parser("compare", help="params and metrics of runs side by side")
    runs_compare.add_argument("run_ids", nargs="+", type=run_id)
    runs_compare.add_argument("--plot", help="also write the accuracy/tokens and outcome plot to this PNG")
    runs_compare.add_argument("--json", action="store_true")
    runs.set_defaults(run=_runs)

    ui = commands.add_parser("ui", help="the MLflow UI of the tracked runs (runs/mlflow.db), served on 127.0.0.1")
    ui.add_argument("--port", type=count(1024, 65535), default=5000)
    ui.set_defaults(run=_ui)


def optimizer_steps_type(value: str) -> str:
    """argparse's check of --optimizer (`optimizers.compile.optimizer_steps`)."""
    import argparse

    from ferret.optimizers.compile import optimizer_steps

    try:
        optimizer_steps(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return value


def _eval(args) -> int:
    from ferret.optimizers.evaluate import evaluate, evaluate_grounding_check, evaluate_search

    split = args.split or ("all" if args.retrieval else "dev")
    try:
        with sigterm_as_interrupt():
            if args.retrieval:
                summary = evaluate_search(args.dataset, args.data, args.index, args.limit, args.query_from,
                                          track=not args.no_track, gold=args.gold, split_name=split,
                                          compiled=args.compiled)
            elif args.grounding:
                summary = evaluate_grounding_check(args.dataset, args.data, args.index, split, args.limit,
                                                   track=not args.no_track)
            else:
                summary = evaluate(args.dataset, args.data, args.index, args.program, args.lm, args.compiled,
                                   split, args.limit, args.threads, args.max_iterations, args.judge_lm,
                                   progress=sys.stderr.isatty(), track=not args.no_track, ray=args.ray,
                                   workers=args.workers, accept=args.accept, repairs=args.repairs,
                                   long_text=args.long_text, reader=args.reader, seeds=args.seeds)
    except KeyboardInterrupt as interrupt:  # the questions done are kept in the run, marked KILLED
        print(f"ferret: {interrupt or 'eval interrupted'}", file=sys.stderr)
        return 130
    print_summary(summary)
    if args.json:
        print(json.dumps(summary))
    return 0


def print_row(row: dict) -> None:
    """One evaluated question: the answer (or the unconfirmed candidate) with its grounding, beside the gold."""
    result = row.get("result") or {}
    said = row["answer"] or (f"unconfirmed: {result['candidate']}" if result.get("candidate") else f"{row['status']}: {row['reason'] or result.get('clarification') or ''}")
    mark = "right" if row["accuracy"] else "wrong" if row["status"] == "answer" else "not answered"
    level = f" [{result['grounding']}]" if result.get("grounding") else ""
    print(f"\n  {row['question']}\n    {mark}{level}: {' '.join(str(said).split())[:160]}\n    gold: {row['gold']}", flush=True)


def print_summary(summary: dict) -> None:
    print("\n".join(f"{key:<24} {value}" for key, value in summary.items()))
    if "mlflow_run_id" in summary:
        from ferret.optimizers.tracking import tracking_uri

        print(f"MLflow run {summary['mlflow_run_id']} in {tracking_uri()}: ferret ui to browse it")


def _compile(args) -> int:
    from ferret.optimizers.compile import compile_program

    try:
        with sigterm_as_interrupt():
            result = compile_program(args.dataset, args.data, args.optimizer, args.index, args.program, args.lm,
                                     args.prompt_lm, args.reflection_lm, args.train, args.val, args.budget,
                                     args.out, args.threads, track=not args.no_track, progress=sys.stderr.isatty(),
                                     teacher_lm=args.teacher_lm, ray=args.ray, workers=args.workers, repairs=args.repairs,
                                     holdout=args.holdout)
    except KeyboardInterrupt as interrupt:  # the run is marked KILLED
        print(f"ferret: {interrupt or 'compile interrupted'}", file=sys.stderr)
        return 130
    print("\n".join(f"{key:<24} {value}" for key, value in result.items() if key != "trials"))
    for trial in result.get("trials", []):  # a settings compile's, one line each
        print(f"  trial  {trial['lexical_weight']:<5g} hops_first={trial['hops_first']!s:<5} "
              f"long_text={trial['long_text']!s:<5} recall@5 {trial['recall@5']:.3f}  "
              f"recall_all@5 {trial['recall_all@5']:.3f}  {trial['seconds']:.1f} s")
    if result.get("before_run_id"):
        print(f"uncompiled vs compiled: ferret runs compare {result['before_run_id']} {result['after_run_id']}")
    if args.json:
        print(json.dumps(result))
    return 0


def _runs(args) -> int:
    from ferret.optimizers.tracking import plot_runs, recent_runs, run_summaries, side_by_side

    if args.action == "list":
        for run in recent_runs(args.experiment, args.limit):
            params, metrics = run["params"], run["metrics"]
            shown = " ".join(f"{k}={metrics[k]:.3g}" for k in ("accuracy", "n", "avg_seconds") if k in metrics)
            print(f"{run['run_id']}  {run['experiment']:<12} {run['name'] or '':<20} {run['status']:<8} "
                  f"{params.get('lm', '')}  {shown}")
        return 0
    summaries = run_summaries(args.run_ids)
    if args.plot:
        print(f"plot: {plot_runs(summaries, args.plot)}", file=sys.stderr)
    print(json.dumps(summaries) if args.json else side_by_side(summaries))
    return 0


def _ui(args) -> int:
    """This process becomes MLflow's server of the project's store, on this machine only."""
    from ferret.optimizers.tracking import tracking_uri
    from ferret.paths import runs_dir

    runs_dir().mkdir(parents=True, exist_ok=True)
    print(f"MLflow UI of {tracking_uri()}: http://127.0.0.1:{args.port} (Ctrl-C stops it)", flush=True)
    os.execv(sys.executable, [sys.executable, "-m", "mlflow", "server", "--backend-store-uri", tracking_uri(),
                              "--default-artifact-root", (runs_dir() / "artifacts").as_uri(),
                              "--host", "127.0.0.1", "--port", str(args.port), "--workers", "1"])
