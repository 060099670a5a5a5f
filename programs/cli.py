"""The `ferret` command: ingest, remove, compact, search, ask, chat, export, demo, eval, compile, runs, bench."""
from __future__ import annotations

import argparse
import json
import re
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from corpus.inputs import MAX_CONTEXT_CHARS, MAX_TOP_K
from programs.display import citation_mark, grounding_lines

DEFAULT_INDEX = "runs/index"
DEMO_KINDS = ("lookup", "list", "aggregate", "clause")  # the sample questions `ferret demo` asks first
DEMO_EVAL_QUESTIONS = 6
DEMO_MAX_ITERATIONS = 2  # keeps the demo to minutes on the embedded model
MAX_ITERATIONS = 20  # of the iterative loop; each costs up to a few LM calls
MAX_THREADS = 64
MAX_QUESTIONS = 1_000_000  # --limit, --train, --val: more than any split holds


def last_result() -> Path:
    """Where `ferret ask` keeps its last result, for `ferret export LAST`."""
    from programs.paths import runs_dir

    return runs_dir() / "results" / "last.json"


class _Parser(argparse.ArgumentParser):
    """Bad input gets one line naming the value and what is allowed, and exit code 2 (no usage dump)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _count(low: int, high: int):
    """An argparse type: a whole number from `low` to `high`."""

    def count(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is out of range: allowed {low} to {high}")
        return value

    return count


def _words(text: str) -> str:
    """An argparse type: text with something in it (a question, a query)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is empty")
    return text


def _run_id(text: str) -> str:
    """An argparse type: an MLflow run id (32 hex digits), checked before the store is opened."""
    if not re.fullmatch(r"[0-9a-f]{32}", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not an MLflow run id (32 hex digits, as `ferret runs list` shows)")
    return text


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ferret", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    ingest = commands.add_parser("ingest", help="ingest PDFs, text/markdown files and JSON/JSONL passage collections")
    ingest.add_argument("paths", nargs="+", help="files or folders")
    ingest.add_argument("--index", default=DEFAULT_INDEX, help=f"index directory (default {DEFAULT_INDEX})")
    ingest.add_argument("--bucket", default="default", help="bucket of these files (e.g. invoices)")
    ingest.add_argument("--metadata", help="JSONL of per-file metadata: one object per line with a 'file' field")
    ingest.add_argument("--id-prefix", default="", help="prefix for document ids (ingest a corpus again as a copy)")
    ingest.add_argument("--embedder", help="embedding model: 'minilm' (default, offline) or a LiteLLM model string")
    ingest.add_argument("--workers", type=_count(1, MAX_THREADS),
                        help="processes for PDF parsing, or Ray workers with --ray (default: all cores, or the cluster's CPUs)")
    _ray_options(ingest, "parse PDFs and embed on Ray workers", workers=False)
    ingest.add_argument("--json", action="store_true", help="print the report as one JSON object")

    remove = commands.add_parser("remove", help="delete documents from an index, in one commit")
    remove.add_argument("doc_ids", nargs="+", metavar="DOC_ID")
    remove.add_argument("--index", default=DEFAULT_INDEX)

    compact = commands.add_parser("compact", help="merge an index's shards (one per ingest batch) into one")
    compact.add_argument("--index", default=DEFAULT_INDEX)
    compact.add_argument("--json", action="store_true")

    search = commands.add_parser("search", help="search an index as the agents' tools do")
    search.add_argument("query", type=_words)
    search.add_argument("--index", default=DEFAULT_INDEX)
    search.add_argument("--mode", choices=["text", "semantic", "hybrid"], default="hybrid")
    search.add_argument("--bucket")
    search.add_argument("--doc", help="restrict to one document id")
    search.add_argument("--filters", help='typed metadata filters as JSON, e.g. \'{"total": {">=": 1000}}\'')
    search.add_argument("--top-k", type=_count(1, MAX_TOP_K), default=10)
    search.add_argument("--context-chars", type=_count(0, MAX_CONTEXT_CHARS), default=400)
    search.add_argument("--json", action="store_true", help="print the hits as a JSON list")

    ask = commands.add_parser("ask", help="answer a question with page citations")
    ask.add_argument("question", type=_words)
    ask.add_argument("--index", default=DEFAULT_INDEX)
    ask.add_argument("--program", choices=["iterative", "oneshot", "react"], default="iterative")
    ask.add_argument("--lm", help="LiteLLM model string, or 'local' (default; also env FERRET_LM)")
    ask.add_argument("--compiled", help="a compiled program's JSON state to load")
    ask.add_argument("--max-iterations", type=_count(1, MAX_ITERATIONS), help="iterative program only (default 4)")
    ask.add_argument("--doc", help="the document the question is about")
    ask.add_argument("--bucket")
    ask.add_argument("--json", action="store_true", help="print the result as one JSON object")
    ask.add_argument("--accept", choices=["grounded", "on_page"], default="grounded",
                     help="lowest grounding stated as an answer: 'grounded' (default: the value's row, column or sentence is the "
                              "question's) or 'on_page' (printed on the cited page); below it the answer is a fail with an unconfirmed candidate")

    chat = commands.add_parser("chat", help="a conversation: follow-ups, clarifications answered, sessions that persist")
    chat.add_argument("--index", default=DEFAULT_INDEX)
    chat.add_argument("--program", choices=["iterative", "oneshot", "react"], default="iterative")
    chat.add_argument("--lm", help="LiteLLM model string, or 'local' (default; also env FERRET_LM)")
    chat.add_argument("--max-iterations", type=_count(1, MAX_ITERATIONS), help="iterative program only (default 4)")
    chat.add_argument("--session", help="resume this session (ids: ferret chat --list)")
    chat.add_argument("--list", action="store_true", help="list the index's sessions")
    chat.add_argument("--no-track", action="store_true", help="do not log the session in MLflow")

    export = commands.add_parser("export", help="write every row a structured answer read to a CSV file")
    export.add_argument("result", help="LAST (the last `ferret ask`) or a result JSON file written by `ask --json`")
    export.add_argument("--csv", required=True, help="the CSV file to write")

    demo = commands.add_parser("demo", help="the whole job on the sample corpus: ingest, ask, eval (offline)")
    demo.add_argument("--index", help="index directory (default runs/indexes/sample)")
    demo.add_argument("--program", choices=["iterative", "oneshot", "react"], default="iterative")
    demo.add_argument("--lm", help="LiteLLM model string, or 'local' (default; also env FERRET_LM)")
    demo.add_argument("--limit", type=_count(1, MAX_QUESTIONS), default=DEMO_EVAL_QUESTIONS, help="sample questions to evaluate")
    demo.add_argument("--max-iterations", type=_count(1, MAX_ITERATIONS), default=DEMO_MAX_ITERATIONS, help="iterative program only")
    demo.add_argument("--accept", choices=["grounded", "on_page"], default="grounded", help="as for ask")

    evaluate = commands.add_parser("eval", help="run a program over a dataset's questions, score it, track it in MLflow")
    _dataset_options(evaluate, "financebench, hotpotqa, tatqa, scifact (retrieval only), sample, or jsonl (your own)")
    evaluate.add_argument("--judge-lm", help="score answers with this LM as judge instead of the rule-based match")
    evaluate.add_argument("--compiled", help="a compiled program's JSON state to load")
    evaluate.add_argument("--max-iterations", type=_count(1, MAX_ITERATIONS), help="iterative program only (default 4)")
    evaluate.add_argument("--split", choices=["train", "dev", "test", "all"], default="dev")
    evaluate.add_argument("--accept", choices=["grounded", "on_page"], default="grounded",
                          help="lowest grounding stated as an answer: 'grounded' (default: the value's row, column or sentence is the "
                                   "question's) or 'on_page' (printed on the cited page); below it the answer is a fail with an unconfirmed candidate")
    evaluate.add_argument("--limit", type=_count(1, MAX_QUESTIONS), help="first N questions of the split")
    evaluate.add_argument("--threads", type=_count(1, MAX_THREADS), default=1)
    _ray_options(evaluate, "answer the questions on Ray workers")
    evaluate.add_argument("--retrieval", action="store_true",
                          help="retrieval only, no LM: recall@5, nDCG@10, recall@100 of text, semantic, hybrid search and hops")
    evaluate.add_argument("--grounding", action="store_true",
                          help="grounding only, no LM: how often the gold answer grounds on its gold pages, and a wrong "
                               "value printed there does")
    evaluate.add_argument("--query-from", choices=["question", "evidence"], default="question",
                          help="retrieval only: query with the question, or with the gold evidence text")
    evaluate.add_argument("--no-track", action="store_true", help="do not log an MLflow run")
    evaluate.add_argument("--json", action="store_true", help="end with the summary as one JSON line")

    compile_ = commands.add_parser("compile", help="optimize a program's instructions and demos with a DSPy optimizer, "
                                   "track it in MLflow, save it as JSON")
    _dataset_options(compile_, "financebench, hotpotqa, tatqa, sample, or jsonl (your own)")
    compile_.add_argument("--optimizer", required=True,
                          choices=["bootstrap", "random-search", "mipro", "gepa", "simba"])
    compile_.add_argument("--prompt-lm", help="LM proposing instructions (mipro) and advice (simba); default --lm")
    compile_.add_argument("--reflection-lm", help="LM reflecting on failures (gepa); default --lm")
    compile_.add_argument("--teacher-lm", help="LM running the train questions whose traces become demos "
                          "(bootstrap, random-search, mipro), e.g. local:PATH to a larger GGUF; default --lm")
    compile_.add_argument("--train", type=_count(1, MAX_QUESTIONS), help="first N questions of the train split (default all)")
    compile_.add_argument("--val", type=_count(1, MAX_QUESTIONS), help="first N questions of the dev split, to validate on (default all)")
    compile_.add_argument("--budget", choices=["light", "medium", "heavy"], default="light")
    compile_.add_argument("--out", help="compiled JSON (default runs/compiled/DATASET-PROGRAM-OPTIMIZER-TIME.json); "
                          "gepa resumes from FILE.gepa/ when rerun with the same --out")
    compile_.add_argument("--threads", type=_count(1, MAX_THREADS), default=1)
    _ray_options(compile_, "decode the LM's calls, and answer the before/after evaluations, on Ray workers")
    compile_.add_argument("--no-track", action="store_true", help="do not log MLflow runs")
    compile_.add_argument("--json", action="store_true", help="end with the result as one JSON line")

    runs = commands.add_parser("runs", help="list and compare tracked runs (MLflow, runs/mlflow.db)")
    runs_commands = runs.add_subparsers(dest="action", required=True)
    runs_list = runs_commands.add_parser("list", help="the latest runs")
    runs_list.add_argument("--experiment", help="one experiment (dataset) only")
    runs_list.add_argument("--limit", type=_count(1, MAX_QUESTIONS), default=20)
    runs_compare = runs_commands.add_parser("compare", help="params and metrics of runs side by side")
    runs_compare.add_argument("run_ids", nargs="+", type=_run_id)
    runs_compare.add_argument("--plot", help="also write the accuracy/tokens and outcome plot to this PNG")
    runs_compare.add_argument("--json", action="store_true")

    bench = commands.add_parser("bench", help="measure ingestion speed and memory, tool latency, or the embedded "
                                             "model's decoding")
    targets = bench.add_subparsers(dest="target", required=True)
    bench_ingest = targets.add_parser("ingest", help="ingest PATHs into a fresh index and time it")
    bench_ingest.add_argument("paths", nargs="+")
    bench_ingest.add_argument("--index", help="fresh index directory to keep (default: a temporary one)")
    bench_ingest.add_argument("--workers", type=_count(1, MAX_THREADS))
    _ray_options(bench_ingest, "parse PDFs and embed on Ray workers", workers=False)
    bench_ingest.add_argument("--json", action="store_true")
    bench_add = targets.add_parser("add", help="time adding one file to an empty index and to INDEX (then removed)")
    bench_add.add_argument("path")
    bench_add.add_argument("--index", default=DEFAULT_INDEX)
    bench_add.add_argument("--json", action="store_true")
    bench_grow = targets.add_parser("grow", help="copy every document of INDEX N times (in SQLite, one shard a copy): "
                                                 "a large index for bench search")
    bench_grow.add_argument("--index", required=True)
    bench_grow.add_argument("--copies", type=_count(1, 1000), required=True)
    bench_grow.add_argument("--json", action="store_true")
    bench_pages = targets.add_parser("pages", help="write a corpus of N distinct short pages (word windows over the "
                                                   "segments of INDEXes) for an index of N distinct vectors")
    bench_pages.add_argument("--from", dest="sources", action="append", required=True, metavar="INDEX")
    bench_pages.add_argument("--pages", type=_count(1, 100_000_000), required=True)
    bench_pages.add_argument("--out", required=True, help="a new or empty directory for the text files")
    bench_pages.add_argument("--words", type=_count(1, 200), default=12)
    bench_pages.add_argument("--stride", type=_count(1, 200), default=3)
    bench_pages.add_argument("--json", action="store_true")
    bench_search = targets.add_parser("search", help="p50/p95 latency of each tool on an index")
    bench_search.add_argument("--index", default=DEFAULT_INDEX)
    bench_search.add_argument("--n", type=_count(1, MAX_QUESTIONS), default=200, help="calls per tool")
    bench_search.add_argument("--json", action="store_true")
    bench_lm = targets.add_parser("lm", help="the embedded model's decoding speed on the program's requests")
    bench_lm.add_argument("--index", help="the sample corpus index (default runs/indexes/sample; ingested if new)")
    bench_lm.add_argument("--questions", type=_count(1, MAX_QUESTIONS), default=1, help="sample questions whose requests are replayed")
    bench_lm.add_argument("--json", action="store_true")
    return parser


def _dataset_options(parser: argparse.ArgumentParser, datasets: str) -> None:
    """The options `eval` and `compile` share: the dataset, its index, the program and its LM."""
    parser.add_argument("--dataset", required=True, help=datasets)
    parser.add_argument("--data", required=True, help="the dataset's folder (or the JSONL file for jsonl)")
    parser.add_argument("--index", help="index directory (default runs/indexes/DATASET; documents are ingested)")
    parser.add_argument("--program", choices=["iterative", "oneshot", "react"], default="iterative")
    parser.add_argument("--lm", help="the program's LM: LiteLLM model string, or 'local' (default; env FERRET_LM)")


def _ray_options(parser: argparse.ArgumentParser, what: str, workers: bool = True) -> None:
    parser.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS",
                        help=f"{what}: a local Ray on this machine, or the cluster at ADDRESS (auto, HOST:6379, "
                             "ray://HOST:10001) started with `ray start --head`")
    if workers:
        parser.add_argument("--workers", type=_count(1, MAX_THREADS),
                            help="with --ray: workers, one CPU each (default: this machine's cores, or the cluster's CPUs)")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return {"ingest": _ingest, "remove": _remove, "compact": _compact, "search": _search, "ask": _ask, "chat": _chat, "export": _export, "demo": _demo, "eval": _eval,
                "compile": _compile, "runs": _runs, "bench": _bench}[args.command](args)
    except (ValueError, FileNotFoundError, ConnectionError) as error:  # ConnectionError: a --ray ADDRESS
        print(f"ferret: error: {error}", file=sys.stderr)
        return 2


def _ingest(args) -> int:
    from corpus.ingest import IngestInterrupted, ingest
    from corpus.pdf import IngestError

    try:
        with _sigterm_as_interrupt():
            report = ingest(args.paths, args.index, bucket=args.bucket, metadata_file=args.metadata,
                            id_prefix=args.id_prefix, embedder=args.embedder, workers=args.workers,
                            progress=not args.json and sys.stderr.isatty(), ray=args.ray)
    except IngestError as error:  # bad --metadata: nothing was touched
        print(f"ferret: error: {error}", file=sys.stderr)
        return 2
    except IngestInterrupted as stop:  # what the batches committed stays; the batch in flight is not added
        committed = len(stop.report.added) + len(stop.report.replaced)
        kept = (f"the {committed} documents committed so far are kept" if committed
                else "no document was committed, the index is as it was")
        print(f"ferret: {stop}: {kept}; the same command again skips them and the segment vectors embedded so "
              "far", file=sys.stderr)
        return 130
    for error in report.errors:
        print(f"error: {error}", file=sys.stderr)
    if args.json:
        print(json.dumps({"added": report.added, "replaced": report.replaced, "unchanged": report.unchanged,
                          "metadata_updated": report.metadata_updated, "errors": [str(e) for e in report.errors],
                          "pages": report.pages, "segments": report.segments, "annotations": report.annotations,
                          "commits": report.commits,
                          "seconds": {k: round(v, 2) for k, v in report.seconds.items()}, "index": str(args.index)}))
    else:
        print(f"{report.summary()} → {Path(args.index)}")
    return 0 if report.ingested or not report.errors else 1


def _remove(args) -> int:
    from corpus.ingest import remove

    removed = remove(args.doc_ids, args.index)
    print(f"{len(removed)} removed → {Path(args.index)}")
    return 0


def _compact(args) -> int:
    from corpus.shards import compact

    result = compact(args.index)
    print(json.dumps(result) if args.json else
          f"{result['shards_before']} shards → {result['shards_after']} ({result['segments']} segments) in "
          f"{result['seconds']}s → {Path(args.index)}")
    return 0


def _search(args) -> int:
    from corpus.tools import Corpus

    corpus = Corpus(args.index)
    search = corpus.search_semantic if args.mode == "semantic" else corpus.search_text
    hits = search(args.query, bucket=args.bucket, filters=args.filters, top_k=args.top_k,
                  context_chars=args.context_chars, doc_id=args.doc, hybrid=args.mode == "hybrid")
    if args.json:
        print(json.dumps(hits, ensure_ascii=False))
        return 0
    for rank, hit in enumerate(hits, start=1):
        text = " ".join(hit["text"].split())
        print(f"{rank:>2}. {hit['file']} p.{hit['page']} · {hit['section'] or '-'} · score {hit['score']}\n    {text}")
    if not hits:
        print("no hits")
    return 0


def _ask(args) -> int:
    from corpus.tools import Corpus
    from programs import load_compiled, make_program
    from programs.lm import answering, make_lm
    from programs.result import as_json, check_input

    corpus = Corpus(args.index)
    check_input(corpus, args.question, args.doc, args.bucket)  # before the LM and the compiled state load
    program = make_program(args.program, corpus, args.max_iterations, args.accept)
    if args.compiled:
        load_compiled(program, args.compiled)
    if not args.json and args.program == "iterative":
        program.on_step = _print_step
    with answering(make_lm(args.lm)):
        result = program(question=args.question, doc_id=args.doc, bucket=args.bucket)
    record = json.dumps(as_json(result), ensure_ascii=False, default=str)
    last_result().parent.mkdir(parents=True, exist_ok=True)
    last_result().write_text(record, encoding="utf-8")
    if args.json:
        print(record)
        return 0
    _print_result(result)
    return 0


def _chat(args) -> int:
    from corpus.tools import Corpus
    from programs.chat import chat, list_sessions
    from programs.conversation import Conversation
    from programs.lm import answering, make_lm
    from programs.sessions import SessionStore

    corpus = Corpus(args.index)
    store = SessionStore(corpus.store.dir)
    if args.list:
        list_sessions(store)
        return 0
    if args.session:
        store.check(args.session)  # before the model loads
    conversation = Conversation(corpus, args.program, session=args.session or True, max_iterations=args.max_iterations)
    with answering(make_lm(args.lm)):
        chat(conversation, track=not args.no_track)
    return 0


def _print_result(result) -> None:
    said = {"answer": result.answer, "clarify": result.clarification}.get(result.status)
    print(f"{result.status.upper()}: {said or result.reason}")
    if result.status == "needs" and result.get("need"):
        print(f"  still needs: {result.need}")
    for line in grounding_lines(result):
        print(f"  {line}")
    if result.get("computation"):
        print(f"  computed in code: {result.computation}")
    for citation in result.citations:
        print(f"  [{citation['file']} p.{citation['page']}] {citation['section']} ({citation_mark(citation)})")
    if result.unverified_numbers:
        print(f"  numbers not found in the evidence: {', '.join(result.unverified_numbers)}")
    print(f"  {result.iterations} iterations{f' (answered by {result.answered_by})' if result.get('answered_by') else ''}, "
          f"{result.lm_calls} LM calls, "
          f"{result.tokens['input']}+{result.tokens['output']} tokens, {result.seconds}s")


def _export(args) -> int:
    from programs.structured import export_rows

    source = last_result() if args.result == "LAST" else Path(args.result)
    if not source.exists():
        raise FileNotFoundError(f"{source} not found" + (" (no `ferret ask` yet)" if args.result == "LAST" else ""))
    try:
        result = json.loads(source.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(f"{source} is not a result JSON ({error})") from None
    written = export_rows(result, args.csv)
    print(f"{written['rows']} rows written to {written['path']}")
    return 0


def _print_step(step: dict) -> None:
    detail = {"route": lambda s: s.get("route", s.get("error", "")),
              "read": lambda s: f"{s['strategy']} → {'answered' if s['succeeded'] else 'failed: ' + str(s['reason'])}",
              "hops": lambda s: f"{s['why']}; bridges {', '.join(s['bridges']) or 'none'}" + (f"; parts {', '.join(s['parts'])}" if s["parts"] else "")
              + (f" ({s['skipped']})" if s.get("skipped") else ""),
              "extract": lambda s: f"{s['strategy']} → {'found' if s['succeeded'] else 'failed: ' + str(s['reason'])}",
              "synthesize": lambda s: s["status"]}.get(step["step"], lambda s: "")
    print(f"· {step['step']}: {detail(step)}", file=sys.stderr, flush=True)


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """`kill` and job schedulers (SIGTERM) stop an ingest, an eval or a compile as Ctrl-C does, keeping its work."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"stopped by signal {signal.Signals(signum).name}")

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _eval(args) -> int:
    from optimizers.evaluate import evaluate, evaluate_grounding_check, evaluate_search

    try:
        with _sigterm_as_interrupt():
            if args.retrieval:
                summary = evaluate_search(args.dataset, args.data, args.index, args.limit, args.query_from,
                                          track=not args.no_track)
            elif args.grounding:
                summary = evaluate_grounding_check(args.dataset, args.data, args.index, args.split, args.limit,
                                                   track=not args.no_track)
            else:
                summary = evaluate(args.dataset, args.data, args.index, args.program, args.lm, args.compiled,
                                   args.split, args.limit, args.threads, args.max_iterations, args.judge_lm,
                                   progress=sys.stderr.isatty(), track=not args.no_track, ray=args.ray,
                                   workers=args.workers, accept=args.accept)
    except KeyboardInterrupt as interrupt:  # the questions done are kept in the run, marked KILLED
        print(f"ferret: {interrupt or 'eval interrupted'}", file=sys.stderr)
        return 130
    _print_summary(summary)
    if args.json:
        print(json.dumps(summary))
    return 0


def _print_row(row: dict) -> None:
    """One evaluated question: the answer (or the unconfirmed candidate) with its grounding, beside the gold."""
    result = row.get("result") or {}
    said = row["answer"] or (f"unconfirmed: {result['candidate']}" if result.get("candidate") else f"{row['status']}: {row['reason'] or result.get('clarification') or ''}")
    mark = "right" if row["accuracy"] else "wrong" if row["status"] == "answer" else "not answered"
    level = f" [{result['grounding']}]" if result.get("grounding") else ""
    print(f"\n  {row['question']}\n    {mark}{level}: {' '.join(str(said).split())[:160]}\n    gold: {row['gold']}", flush=True)


def _print_summary(summary: dict) -> None:
    print("\n".join(f"{key:<24} {value}" for key, value in summary.items()))
    if "mlflow_run_id" in summary:
        from optimizers.tracking import tracking_uri

        print(f"MLflow run {summary['mlflow_run_id']}: mlflow ui --backend-store-uri {tracking_uri()}")


def _demo(args) -> int:
    """Ingest the sample corpus, answer one sample question of each kind shown, evaluate the sample set."""
    from corpus.tools import Corpus
    from optimizers.datasets import load_dataset, prepare_index
    from optimizers.evaluate import default_index, evaluate
    from programs import make_program
    from programs.lm import answering, make_lm
    from programs.paths import SAMPLE

    index = Path(args.index) if args.index else default_index("sample")
    examples, folders = load_dataset("sample", SAMPLE)
    print(f"1/3 ingest {SAMPLE} ({', '.join(folder.name for folder in folders)}) into {index}", flush=True)
    prepare_index(folders, index, progress=sys.stderr.isatty())
    print(f"\n2/3 ask ({args.program}, LM {args.lm or 'local'})", flush=True)
    program, lm = make_program(args.program, Corpus(index), args.max_iterations, args.accept), make_lm(args.lm)
    for kind in DEMO_KINDS:
        example = next(example for example in examples if example.get("kind") == kind)
        print(f"\nQ ({kind}): {example.question}\n  gold: {example.answer}", flush=True)
        with answering(lm):
            _print_result(program(question=example.question, doc_id=example.get("doc_id")))
    print(f"\n3/3 eval: the first {args.limit} sample questions", flush=True)
    _print_summary(evaluate("sample", SAMPLE, index, args.program, args.lm, split_name="all", limit=args.limit,
                            max_iterations=args.max_iterations, progress=sys.stderr.isatty(), accept=args.accept,
                            on_row=_print_row))
    return 0


def _compile(args) -> int:
    from optimizers.compile import compile_program

    try:
        with _sigterm_as_interrupt():
            result = compile_program(args.dataset, args.data, args.optimizer, args.index, args.program, args.lm,
                                     args.prompt_lm, args.reflection_lm, args.train, args.val, args.budget,
                                     args.out, args.threads, track=not args.no_track, progress=sys.stderr.isatty(),
                                     teacher_lm=args.teacher_lm, ray=args.ray, workers=args.workers)
    except KeyboardInterrupt as interrupt:  # the run is marked KILLED
        print(f"ferret: {interrupt or 'compile interrupted'}", file=sys.stderr)
        return 130
    print("\n".join(f"{key:<24} {value}" for key, value in result.items()))
    if result["before_run_id"]:
        print(f"uncompiled vs compiled: ferret runs compare {result['before_run_id']} {result['after_run_id']}")
    if args.json:
        print(json.dumps(result))
    return 0


def _runs(args) -> int:
    from optimizers.tracking import plot_runs, recent_runs, run_summaries, side_by_side

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


def _bench(args) -> int:
    from corpus.bench import bench_add, bench_ingest, bench_search, grow_index, window_pages

    if args.target == "add":
        result = bench_add(args.path, args.index)
    elif args.target == "grow":
        result = grow_index(args.index, args.copies)
    elif args.target == "ingest":
        result = bench_ingest(args.paths, args.index, args.workers, progress=not args.json and sys.stderr.isatty(),
                              ray=args.ray)
    elif args.target == "pages":
        result = window_pages(args.sources, args.out, args.pages, args.words, args.stride)
    elif args.target == "lm":
        from optimizers.evaluate import default_index
        from programs.bench import bench_lm

        result = bench_lm(args.index or default_index("sample"), args.questions)
    else:
        result = bench_search(args.index, args.n)
    print(json.dumps(result) if args.json else json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
