"""`ferret ingest | remove | compact | search`: build an index, change it, search it as the agents do."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from ferret.cli.arguments import (DEFAULT_INDEX, MAX_THREADS, SUMMARIES_HELP, count, ray_options,
                                  sigterm_as_interrupt, words)
from ferret.corpus.inputs import MAX_CONTEXT_CHARS, MAX_TOP_K


def add_commands(commands) -> None:
    ingest = commands.add_parser("ingest", help="ingest PDFs, text/markdown files and JSON/JSONL passage collections")
    ingest.add_argument("paths", nargs="+", help="files or folders")
    ingest.add_argument("--index", default=DEFAULT_INDEX, help=f"index directory (default {DEFAULT_INDEX})")
    ingest.add_argument("--bucket", default="default", help="bucket of these files (e.g. invoices)")
    ingest.add_argument("--metadata", help="JSONL of per-file metadata: one object per line with a 'file' field")
    ingest.add_argument("--id-prefix", default="", help="prefix for document ids (ingest a corpus again as a copy)")
    ingest.add_argument("--embedder", help="embedding model: 'minilm-int8' (default, offline), 'minilm-openvino' (the same "
                        "model unquantized), 'minilm' (through torch) or a LiteLLM model string")
    ingest.add_argument("--workers", type=count(1, MAX_THREADS),
                        help="processes for PDF parsing, or Ray workers with --ray (default: all cores, or the cluster's CPUs)")
    ingest.add_argument("--summaries", metavar="WRITER", help=SUMMARIES_HELP)
    ray_options(ingest, "parse PDFs and embed on Ray workers", workers=False)
    ingest.add_argument("--json", action="store_true", help="print the report as one JSON object")
    ingest.set_defaults(run=_ingest)

    remove = commands.add_parser("remove", help="delete documents from an index, in one commit")
    remove.add_argument("doc_ids", nargs="+", metavar="DOC_ID")
    remove.add_argument("--index", default=DEFAULT_INDEX)
    remove.set_defaults(run=_remove)

    compact = commands.add_parser("compact", help="merge an index's shards (one per ingest batch) into one")
    compact.add_argument("--index", default=DEFAULT_INDEX)
    compact.add_argument("--json", action="store_true")
    compact.set_defaults(run=_compact)

    search = commands.add_parser("search", help="search an index as the agents' tools do")
    search.add_argument("query", type=words)
    search.add_argument("--index", default=DEFAULT_INDEX)
    search.add_argument("--mode", choices=["text", "semantic", "hybrid"], default="hybrid")
    search.add_argument("--scope", choices=["segments", "summary"], default="segments",
                        help="search the segments, or the summaries of long documents' chunks")
    search.add_argument("--bucket")
    search.add_argument("--doc", help="restrict to one document id")
    search.add_argument("--filters", help='typed metadata filters as JSON, e.g. \'{"total": {">=": 1000}}\'')
    search.add_argument("--top-k", type=count(1, MAX_TOP_K), default=10)
    search.add_argument("--context-chars", type=count(0, MAX_CONTEXT_CHARS), default=400)
    search.add_argument("--json", action="store_true", help="print the hits as a JSON list")
    search.set_defaults(run=_search)


def _ingest(args) -> int:
    from ferret.corpus.ingest import IngestInterrupted, ingest
    from ferret.corpus.pdf import IngestError
    from ferret.programs import chunk_summarizer

    try:
        with sigterm_as_interrupt():
            report = ingest(args.paths, args.index, bucket=args.bucket, metadata_file=args.metadata,
                            id_prefix=args.id_prefix, embedder=args.embedder, workers=args.workers,
                            progress=not args.json and sys.stderr.isatty(), ray=args.ray, summaries=args.summaries,
                            summarizer=chunk_summarizer)
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
                          "commits": report.commits, "summaries": report.summaries,
                          "seconds": {k: round(v, 2) for k, v in report.seconds.items()}, "index": str(args.index)}))
    else:
        print(f"{report.summary()} → {Path(args.index)}")
    return 0 if report.ingested or not report.errors else 1


def _remove(args) -> int:
    from ferret.corpus.ingest import remove

    removed = remove(args.doc_ids, args.index)
    print(f"{len(removed)} removed → {Path(args.index)}")
    return 0


def _compact(args) -> int:
    from ferret.corpus.shards import compact

    result = compact(args.index)
    print(json.dumps(result) if args.json else
          f"{result['shards_before']} shards → {result['shards_after']} ({result['segments']} segments) in "
          f"{result['seconds']}s → {Path(args.index)}")
    return 0


def _search(args) -> int:
    from ferret.corpus.tools import Corpus

    corpus = Corpus(args.index)
    search = corpus.search_semantic if args.mode == "semantic" else corpus.search_text
    hits = search(args.query, bucket=args.bucket, filters=args.filters, top_k=args.top_k,
                  context_chars=args.context_chars, doc_id=args.doc, hybrid=args.mode == "hybrid", scope=args.scope)
    if args.json:
        print(json.dumps(hits, ensure_ascii=False))
        return 0
    for rank, hit in enumerate(hits, start=1):
        text = " ".join(hit["text"].split())
        pages = f"pp.{hit['pages'][0]}-{hit['pages'][1]}" if "pages" in hit else f"p.{hit['page']}"
        print(f"{rank:>2}. {hit['file']} {pages} · {hit['section'] or '-'} · score {hit['score']}\n    {text}")
    if not hits:
        print("no hits")
    return 0
