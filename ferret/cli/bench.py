"""`ferret bench ingest | add | grow | pages | search | lm`: speed and memory, measured outside the tests."""
from __future__ import annotations

import json
import sys

from ferret.cli.arguments import DEFAULT_INDEX, MAX_QUESTIONS, MAX_THREADS, SUMMARIES_HELP, count, ray_options


def add_commands(commands) -> None:
    bench = commands.add_parser("bench", help="measure ingestion speed and memory, tool latency, or the embedded "
                                             "model's decoding")
    bench.set_defaults(run=_bench)
    targets = bench.add_subparsers(dest="target", required=True)
    bench_ingest = targets.add_parser("ingest", help="ingest PATHs into a fresh index and time it")
    bench_ingest.add_argument("paths", nargs="+")
    bench_ingest.add_argument("--index", help="fresh index directory to keep (default: a temporary one)")
    bench_ingest.add_argument("--workers", type=count(1, MAX_THREADS))
    bench_ingest.add_argument("--embedder", help="as for ingest: minilm-int8 (default), minilm-openvino, minilm, or a LiteLLM model")
    bench_ingest.add_argument("--summaries", metavar="WRITER", help=SUMMARIES_HELP)
    ray_options(bench_ingest, "parse PDFs and embed on Ray workers", workers=False)
    bench_ingest.add_argument("--json", action="store_true")
    bench_add = targets.add_parser("add", help="time adding one file to an empty index and to INDEX (then removed)")
    bench_add.add_argument("path")
    bench_add.add_argument("--index", default=DEFAULT_INDEX)
    bench_add.add_argument("--json", action="store_true")
    bench_grow = targets.add_parser("grow", help="copy every document of INDEX N times (in SQLite, one shard a copy): "
                                                 "a large index for bench search")
    bench_grow.add_argument("--index", required=True)
    bench_grow.add_argument("--copies", type=count(1, 1000), required=True)
    bench_grow.add_argument("--json", action="store_true")
    bench_pages = targets.add_parser("pages", help="write a corpus of N distinct short pages (word windows over the "
                                                   "segments of INDEXes) for an index of N distinct vectors")
    bench_pages.add_argument("--from", dest="sources", action="append", required=True, metavar="INDEX")
    bench_pages.add_argument("--pages", type=count(1, 100_000_000), required=True)
    bench_pages.add_argument("--out", required=True, help="a new or empty directory for the text files")
    bench_pages.add_argument("--words", type=count(1, 200), default=12)
    bench_pages.add_argument("--stride", type=count(1, 200), default=3)
    bench_pages.add_argument("--json", action="store_true")
    bench_search = targets.add_parser("search", help="p50/p95 latency of each tool on an index")
    bench_search.add_argument("--index", default=DEFAULT_INDEX)
    bench_search.add_argument("--n", type=count(1, MAX_QUESTIONS), default=200, help="calls per tool")
    bench_search.add_argument("--json", action="store_true")
    bench_lm = targets.add_parser("lm", help="the embedded model's speed on the program's requests, without and with the prompt prefix cache")
    bench_lm.add_argument("--index", help="the sample corpus index (default runs/indexes/sample; ingested if new)")
    bench_lm.add_argument("--questions", type=count(1, MAX_QUESTIONS), default=1, help="sample questions whose requests are replayed")
    bench_lm.add_argument("--json", action="store_true")


def _bench(args) -> int:
    from ferret.corpus.bench import bench_add, bench_ingest, bench_search, grow_index, window_pages
    from ferret.programs import chunk_summarizer

    if args.target == "add":
        result = bench_add(args.path, args.index, summarizer=chunk_summarizer)
    elif args.target == "grow":
        result = grow_index(args.index, args.copies)
    elif args.target == "ingest":
        result = bench_ingest(args.paths, args.index, args.workers, progress=not args.json and sys.stderr.isatty(),
                              ray=args.ray, embedder=args.embedder, summaries=args.summaries,
                              summarizer=chunk_summarizer)
    elif args.target == "pages":
        result = window_pages(args.sources, args.out, args.pages, args.words, args.stride)
    elif args.target == "lm":
        from ferret.optimizers.evaluate import default_index
        from ferret.optimizers.bench import bench_lm

        result = bench_lm(args.index or default_index("sample"), args.questions)
    else:
        result = bench_search(args.index, args.n)
    print(json.dumps(result) if args.json else json.dumps(result, indent=2))
    return 0
