"""`ferret demo`: the whole job on the packaged sample corpus, offline: ingest, ask, eval."""
from __future__ import annotations

import sys
from pathlib import Path

from ferret.cli.answer import print_result
from ferret.cli.arguments import MAX_QUESTIONS, accept_option, count, iterations_option, program_options
from ferret.cli.experiments import print_row, print_summary

DEMO_KINDS = ("lookup", "list", "aggregate", "clause")  # the sample questions `ferret demo` asks first
DEMO_EVAL_QUESTIONS = 6


def add_commands(commands) -> None:
    demo = commands.add_parser("demo", help="the whole job on the sample corpus: ingest, ask, eval (offline)")
    demo.add_argument("--index", help="index directory (default runs/indexes/sample)")
    program_options(demo)
    demo.add_argument("--limit", type=count(1, MAX_QUESTIONS), default=DEMO_EVAL_QUESTIONS, help="sample questions to evaluate")
    iterations_option(demo)
    accept_option(demo)
    demo.set_defaults(run=_demo)


def _demo(args) -> int:
    """Ingest the sample corpus, answer one sample question of each kind shown, evaluate the sample set."""
    from ferret.corpus.tools import Corpus
    from ferret.optimizers.datasets import load_dataset, prepare_index
    from ferret.optimizers.evaluate import default_index, evaluate
    from ferret.programs import make_program
    from ferret.programs.lm import answering, make_lm
    from ferret.paths import SAMPLE

    index = Path(args.index) if args.index else default_index("sample")
    examples, folders = load_dataset("sample", SAMPLE)
    print(f"1/3 ingest {SAMPLE} ({', '.join(folder.name for folder in folders)}) into {index}", flush=True)
    prepare_index(folders, index, progress=sys.stderr.isatty())
    print(f"\n2/3 ask ({args.program}, LM {args.lm or 'local'})", flush=True)
    program, lm = make_program(args.program, Corpus(index), args.max_iterations, args.accept, args.repairs), make_lm(args.lm)
    for kind in DEMO_KINDS:
        example = next(example for example in examples if example.get("kind") == kind)
        print(f"\nQ ({kind}): {example.question}\n  gold: {example.answer}", flush=True)
        with answering(lm):
            print_result(program(question=example.question, doc_id=example.get("doc_id")))
    print(f"\n3/3 eval: the first {args.limit} sample questions", flush=True)
    print_summary(evaluate("sample", SAMPLE, index, args.program, args.lm, split_name="all", limit=args.limit,
                           max_iterations=args.max_iterations, progress=sys.stderr.isatty(), accept=args.accept,
                           repairs=args.repairs, on_row=print_row))
    return 0
