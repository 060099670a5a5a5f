"""`ferret ingest`: files → parsed documents → one new shard of the index per batch, committed atomically.

Idempotent by content hash (an unchanged file is skipped, a changed one replaced, a metadata-only
change updates the row), crash-safe (see `corpus.store`), PDF pages parsed in parallel across
cores (the next batch's while this one is embedded), embeddings cached by text hash so re-ingesting
or copying text never re-embeds it.
It commits as it goes, a batch of documents at a time (`commit_pages`): a killed ingest loses only
the batch in flight (whose embedded vectors are kept), and the same command again reports the
committed documents unchanged and goes on from there.
Bad files get one clear error line each and the rest is ingested.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import time
from concurrent.futures import ProcessPoolExecutor
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import partial
from multiprocessing import get_context
from pathlib import Path
from typing import Protocol

from tqdm import tqdm

from ferret.corpus.chunks import EXTRACTIVE, build_chunks
from ferret.corpus.cluster import RayIngest, ray_workers
from ferret.corpus.dense import DEFAULT_EMBEDDER, Embedder, embedder_name, get_embedder
from ferret.corpus.graph import find_cross_references
from ferret.corpus.passages import JSON_SUFFIXES, TEXT_SUFFIXES, content_hash, load_passages, load_text_file
from ferret.corpus.pdf import IngestError, open_pdf, outline_entries, read_pages
from ferret.corpus.records import Chunk, ParsedDocument, Section, Segment
from ferret.corpus.sections import build_sections
from ferret.corpus.segments import segment_document
from ferret.corpus.shards import committing, one_commit
from ferret.corpus.store import Store, one_writer_at_a_time

SUPPORTED_SUFFIXES = {".pdf"} | TEXT_SUFFIXES | JSON_SUFFIXES
BUCKET_METADATA = "metadata.jsonl"  # a folder holding this file is a bucket (see ingest_bucket_folder)
MIN_PAGES_PER_TASK = 16
# A batch of this many pages is committed as one shard: about 12 s of an ingest on two cores (8.2 pages/s a core).
COMMIT_PAGES = 200
_BUCKET_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_METADATA_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
_FILE_KEYS = ("file", "file_name", "filename")


class Summarizer(Protocol):
    """What writes long documents' chunk summaries in place of the extractive ones (an LM's: the caller's,
    `ferret.chunk_summarizer`, from programs/): called on each document's chunks and segments, it sets the chunks'
    `summary` and `summarizer`, and counts the summaries it wrote, found cached and failed to write."""

    written: int
    reused: int
    failed: int

    def __call__(self, store: Store, chunks: list[Chunk], segments: list[Segment]) -> None: ...


@dataclass
class IngestReport:
    added: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    metadata_updated: list[str] = field(default_factory=list)
    errors: list[IngestError] = field(default_factory=list)
    pages: int = 0
    segments: int = 0
    annotations: int = 0
    seconds: dict[str, float] = field(default_factory=dict)
    commits: int = 0
    summaries: dict[str, int] = field(default_factory=dict)  # an LM's chunk summaries: written, reused, failed

    @property
    def ingested(self) -> int:
        return len(self.added) + len(self.replaced) + len(self.unchanged) + len(self.metadata_updated)

    def summary(self) -> str:
        return (f"{len(self.added)} added, {len(self.replaced)} replaced, {len(self.unchanged)} unchanged, "
                f"{len(self.metadata_updated)} metadata updated, {len(self.errors)} failed; "
                f"{self.pages} pages, {self.segments} segments, {self.annotations} annotations parsed "
                f"in {sum(self.seconds.values()):.1f}s" + (f", committed in {self.commits} batches" if self.commits > 1 else "")
                + ("; chunk summaries " + ", ".join(f"{count} {what}" for what, count in self.summaries.items())
                   if self.summaries else ""))


class IngestInterrupted(KeyboardInterrupt):
    """An ingest stopped (Ctrl-C, SIGTERM) between or during its batches: `report` holds what the
    batches committed before it."""

    def __init__(self, reason: str, report: IngestReport):
        super().__init__(reason)
        self.report = report


@dataclass
class _PendingPdf:
    path: Path
    doc_id: str
    digest: str
    page_count: int
    outline: list[tuple[int, str, int]]


def load_metadata(path: str | Path) -> dict[str, dict]:
    """Per-file metadata from JSONL: one object per line naming its file ("file") plus scalar fields."""
    path = Path(path)
    records: dict[str, dict] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise IngestError(path, f"cannot read metadata ({exc})") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise IngestError(path, f"line {number}: invalid JSON ({exc.msg})") from None
        file_key = next((key for key in _FILE_KEYS if isinstance(record, dict) and key in record), None)
        if file_key is None:
            raise IngestError(path, f"line {number}: no file name field (one of {', '.join(_FILE_KEYS)})")
        name = Path(str(record.pop(file_key))).name
        for key, value in record.items():
            if not _METADATA_KEY.match(key):
                raise IngestError(path, f"line {number}: bad field name {key!r} (letters, digits, _)")
            if isinstance(value, (dict, list)):
                raise IngestError(path, f"line {number}: field {key!r} must be a scalar, not {type(value).__name__}")
        records[name] = record
    return records


def ingest(paths: list[str | Path], index_dir: str | Path, bucket: str = "default",
           metadata_file: str | Path | None = None, id_prefix: str = "", embedder: str | None = None,
           workers: int | None = None, progress: bool = False, commit_pages: int = COMMIT_PAGES,
           ray: str | None = None, summaries: str | None = None,
           summarizer: Callable[[str], Summarizer] | None = None) -> IngestReport:
    """Ingest files and folders into `index_dir`, committing a batch of at least `commit_pages` pages
    at a time; returns what happened, file by file. Stopped, it raises `IngestInterrupted`. `ray`:
    parse and embed on `workers` Ray workers, of a local Ray ("local") or of the cluster at that
    address (corpus/cluster.py); the commits stay in this process. `summaries`: what writes the
    summaries of long documents' chunks, "extractive" (code) or an LM as for `--lm`; by default what the
    index's were written with. Another than that rewrites the index's summaries too. `summarizer` makes the
    `Summarizer` of an LM writer's name (`ferret.chunk_summarizer`, programs/summaries.py); it is
    needed only when an LM writes them."""
    if not _BUCKET_NAME.match(bucket):
        raise ValueError(f"bad bucket name {bucket!r}: letters, digits, '_', '-', '.' (max 64)")
    metadata = load_metadata(metadata_file) if metadata_file else {}
    report = IngestReport()
    clock = time.perf_counter()
    files = [path for path in _expand(paths, report)  # the metadata file is not a document
             if metadata_file is None or path.resolve() != Path(metadata_file).resolve()]
    store = Store(index_dir, create=True)
    try:
        with one_writer_at_a_time(store.dir):
            _ingest_files(store, files, bucket, metadata, id_prefix, embedder, workers, progress, report, clock,
                          commit_pages, ray, summaries, summarizer)
    except KeyboardInterrupt as stop:
        raise IngestInterrupted(str(stop) or "ingest interrupted", report) from stop
    finally:
        store.close()
    return report


def _ingest_files(store: Store, files: list[Path], bucket: str, metadata: dict, id_prefix: str, embedder: str | None,
                  workers: int | None, progress: bool, report: IngestReport, clock: float, commit_pages: int,
                  ray: str | None, summaries: str | None, make_summarizer: Callable[[str], Summarizer] | None) -> None:
    """The ingest proper, under the lock: classify every file, then parse, segment, embed and commit
    one shard per batch."""
    spec = _embedder_spec(store, embedder)
    summaries = summaries or store.meta("summarizer") or EXTRACTIVE
    summarizer = None if summaries == EXTRACTIVE else _summarizer(summaries, make_summarizer)
    existing = store.documents()
    work: list = []  # parsed text documents (doc, path, meta) and PDFs still to parse, in file order
    info_updates: list = []
    for path in files:
        meta = metadata.get(path.name, {})
        try:
            if path.suffix.lower() == ".pdf":
                digest = _file_hash(path)
                doc_id = id_prefix + path.stem
                if not _classify(existing.get(doc_id), digest, bucket, meta, report, info_updates, doc_id):
                    reader = open_pdf(path)
                    work.append(_PendingPdf(path, doc_id, digest, len(reader.pages), outline_entries(reader)))
                continue
            parsed = ([load_text_file(path, id_prefix + path.stem)] if path.suffix.lower() in TEXT_SUFFIXES
                      else load_passages(path, id_prefix))
        except IngestError as error:
            report.errors.append(error)
            continue
        work += [(doc, path, meta) for doc in parsed if not _classify(
            existing.get(doc.doc_id), doc.content_hash, bucket, meta, report, info_updates, doc.doc_id)]
    _add_time(report, "parse", clock)
    if existing and (store.meta("chunked") != "1" or store.meta("summarizer", EXTRACTIVE) != summaries):
        # an index of before chunks, or summarized otherwise: its long documents get theirs, but those this
        # ingest replaces (their new text is chunked and summarized with the rest of the work)
        replaced = {item.doc_id if isinstance(item, _PendingPdf) else item[0].doc_id for item in work} & set(existing)
        _chunk_stored_documents(store, spec, None if ray else get_embedder(spec), summaries, summarizer, report, replaced)
    if work or info_updates:  # else nothing new: the embedder (seconds to load) is not loaded
        with ray_workers(ray, workers) if ray else nullcontext() as count:  # on Ray, only the workers load it
            on_ray = RayIngest(spec, count) if ray else None
            _ingest_batches(store, spec, None if ray else get_embedder(spec), work, info_updates, bucket, metadata,
                            existing, workers, progress, report, commit_pages, on_ray, summaries, summarizer)
    if summarizer:
        report.summaries = {"written": summarizer.written, "reused": summarizer.reused, "failed": summarizer.failed}


def _ingest_batches(store: Store, spec: str, model: Embedder | None, work: list, info_updates: list, bucket: str,
                    metadata: dict, existing: dict, workers: int | None, progress: bool, report: IngestReport,
                    commit_pages: int, on_ray: RayIngest | None, summaries: str,
                    summarizer: Summarizer | None) -> None:
    """Parse, segment, chunk (and summarize), embed and commit `work`, one shard per batch. The worker
    processes parse the next batch's PDF pages while this one is segmented, embedded and committed
    (the report's "parse" seconds are those spent waiting for them)."""
    batches = _batches(work, commit_pages) or [[]]  # metadata updates alone: one commit
    pdfs = [[item for item in batch if isinstance(item, _PendingPdf)] for batch in batches]
    workers = max(1, workers or os.cpu_count() or 1)
    parallel = not on_ray and workers > 1 and any(pdfs)
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) if parallel else nullcontext() as pool:
        reading = _read_pdfs(pdfs[0], workers, pool, on_ray)
        for number, batch in enumerate(batches):
            clock = time.perf_counter()
            documents = [item for item in batch if isinstance(item, tuple)]
            documents += _parsed_pdfs(pdfs[number], reading, metadata, progress, report)
            if number + 1 < len(batches):
                reading = _read_pdfs(pdfs[number + 1], workers, pool, on_ray)
            _add_time(report, "parse", clock)
            _index_batch(store, spec, model, documents, info_updates, bucket, existing, progress, report, on_ray,
                         summaries, summarizer)
            info_updates = []  # the first commit made them


def _index_batch(store: Store, spec: str, model: Embedder | None, documents: list, info_updates: list, bucket: str,
                 existing: dict, progress: bool, report: IngestReport, on_ray: RayIngest | None, summaries: str,
                 summarizer: Summarizer | None) -> None:
    """Segment, chunk (and summarize), embed and commit one batch's parsed `documents` as one shard."""
    clock = time.perf_counter()
    xrefs = {}
    for doc, _, _ in documents:
        if not doc.sections:
            doc.sections = ([Section("s0", doc.title, 1, 1, 1)] if doc.kind == "passage"
                            else build_sections(doc.pages))
        segment_document(doc)
        xrefs[doc.doc_id] = find_cross_references(doc)
        report.pages += len(doc.pages)
        report.segments += len(doc.segments)
        report.annotations += len(doc.annotations)
    _add_time(report, "segment", clock)

    clock = time.perf_counter()
    for doc, _, _ in documents:
        if doc.kind != "passage":
            doc.chunks = build_chunks(doc.sections, doc.segments)
    _add_time(report, "chunk", clock)

    if summarizer:
        clock = time.perf_counter()
        for doc, _, _ in documents:
            summarizer(store, doc.chunks, doc.segments)
        _add_time(report, "summarize", clock)

    clock = time.perf_counter()
    texts = {content_hash(s.text): s.text for doc, _, _ in documents for s in doc.segments}
    texts.update({content_hash(a.label): a.label for doc, _, _ in documents for a in doc.annotations})
    texts.update({content_hash(c.text): c.text for doc, _, _ in documents for c in doc.chunks})
    _embed_missing(store, spec, model, texts, progress, on_ray)
    _add_time(report, "embed", clock)

    clock = time.perf_counter()
    _commit(store, spec, summaries, bucket, documents, info_updates, xrefs, existing, report)
    report.commits += 1
    _add_time(report, "index", clock)


def _batches(work: list, commit_pages: int) -> list[list]:
    """`work` cut in file order into batches of at least `commit_pages` pages."""
    batches, pages = [], 0
    for item in work:
        if not batches or pages >= commit_pages:
            batches.append([])
            pages = 0
        batches[-1].append(item)
        pages += item.page_count if isinstance(item, _PendingPdf) else len(item[0].pages)
    return batches


def _add_time(report: IngestReport, phase: str, clock: float) -> None:
    report.seconds[phase] = report.seconds.get(phase, 0.0) + time.perf_counter() - clock


def is_bucket_folder(path: str | Path) -> bool:
    return Path(path).is_dir() and (Path(path) / BUCKET_METADATA).is_file()


def ingest_bucket_folder(folder: str | Path, index_dir: str | Path, **options) -> IngestReport:
    """Ingest a folder as the bucket named after it, with the per-file metadata of its metadata.jsonl."""
    folder = Path(folder)
    return ingest([folder], index_dir, bucket=folder.name, metadata_file=folder / BUCKET_METADATA, **options)


def _expand(paths: list[str | Path], report: IngestReport) -> list[Path]:
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUPPORTED_SUFFIXES)
        elif not path.exists():
            report.errors.append(IngestError(path, "no such file"))
        elif path.suffix.lower() not in SUPPORTED_SUFFIXES:
            report.errors.append(IngestError(path, f"unsupported file type {path.suffix or '(none)'} "
                                                   f"(supported: {', '.join(sorted(SUPPORTED_SUFFIXES))})"))
        else:
            files.append(path)
    return files


def _classify(row, digest: str, bucket: str, meta: dict, report: IngestReport,
              info_updates: list, doc_id: str) -> bool:
    """True when the stored document already has this content (recording unchanged/metadata update)."""
    if row is None or row["content_hash"] != digest:
        return False
    if row["bucket"] == bucket and json.loads(row["metadata"]) == meta:
        report.unchanged.append(doc_id)
    else:
        info_updates.append((doc_id, bucket, meta))
        report.metadata_updated.append(doc_id)
    return True


def _read_pdfs(pending: list[_PendingPdf], workers: int, pool: ProcessPoolExecutor | None,
               on_ray: RayIngest | None) -> list[tuple[_PendingPdf, int, int, Callable[[], list[str]]]]:
    """The page ranges of `pending`, spread over the workers, each with what returns its pages' text: a
    future of `pool`'s (being parsed), Ray's result, or a read in this process when there is no pool."""
    tasks = []
    for item in pending:
        step = max(MIN_PAGES_PER_TASK, -(-item.page_count // workers))
        tasks += [(item, start, min(start + step, item.page_count)) for start in range(0, item.page_count, step)]
    if on_ray:
        read = on_ray.read([(str(item.path.resolve()), start, stop) for item, start, stop in tasks])
        return [(item, start, stop, partial(_raised, texts)) for (item, start, stop), texts in zip(tasks, read)]
    if pool is None:
        return [(item, start, stop, partial(read_pages, item.path, start, stop)) for item, start, stop in tasks]
    return [(item, start, stop, pool.submit(read_pages, item.path, start, stop).result) for item, start, stop in tasks]


def _parsed_pdfs(pending: list[_PendingPdf], reading: list, metadata: dict, progress: bool,
                 report: IngestReport) -> list[tuple[ParsedDocument, Path, dict]]:
    """The documents of `pending` from their pages' text (`_read_pdfs`), sectioned; a PDF whose pages
    failed or hold no text is an error of the report."""
    pages: dict[str, dict[int, list[str]]] = {item.doc_id: {} for item in pending}
    failed: dict[str, IngestError] = {}
    total = sum(item.page_count for item in pending)
    with tqdm(total=total, unit="page", desc="parse", disable=not progress or total == 0) as bar:
        for item, start, stop, result in reading:
            try:
                pages[item.doc_id][start] = result()
            except IngestError as error:
                failed.setdefault(item.doc_id, error)
            bar.update(stop - start)
    parsed = []
    for item in pending:
        if item.doc_id in failed:
            report.errors.append(failed[item.doc_id])
            continue
        texts = [text for start in sorted(pages[item.doc_id]) for text in pages[item.doc_id][start]]
        if not any(text.strip() for text in texts):
            report.errors.append(IngestError(item.path, "no extractable text (image-only or scanned PDF; "
                                                        "OCR is not supported)"))
            continue
        doc = ParsedDocument(item.doc_id, item.path.name, "pdf", item.path.stem, texts, item.digest,
                             sections=build_sections(texts, item.outline))
        parsed.append((doc, item.path, metadata.get(item.path.name, {})))
    return parsed


def _raised(result: list[str] | IngestError) -> list[str]:
    if isinstance(result, IngestError):
        raise result
    return result


def _summarizer(spec: str, make: Callable[[str], Summarizer] | None) -> Summarizer:
    """The summarizer of the LM writer `spec`, made by the caller's `make` (the corpus builds no LM)."""
    if make is None:
        raise ValueError(f"chunk summaries written by {spec!r} need an LM: pass "
                         "summarizer=chunk_summarizer (from ferret import chunk_summarizer) to ingest")
    return make(spec)


def _embedder_spec(store: Store, requested: str | None) -> str:
    stored = store.meta("embedder_spec")
    if stored and requested and requested != stored:
        raise ValueError(f"index {store.dir} was built with embedder {stored!r}, not {requested!r}; "
                         "use a new --index directory to change embedders")
    return stored or requested or DEFAULT_EMBEDDER


def _embed_missing(store: Store, spec: str, model: Embedder | None, texts: dict[str, str], progress: bool,
                   on_ray: RayIngest | None = None, batch: int = 256) -> None:
    """Embed the texts whose vectors are not cached yet under the name of `spec`'s embedder, caching them
    batch by batch, with `model` or on Ray's workers (batches in flight on every worker, as many batches for
    each of them: none idles while another ends the commit's last one)."""
    name = embedder_name(spec)
    cached = store.cached_vectors(name, list(texts))
    missing = [key for key in texts if key not in cached]
    parts = -(-len(missing) // batch)
    if on_ray:
        parts = -(-parts // on_ray.workers) * on_ray.workers
    size = max(1, -(-len(missing) // max(parts, 1)))
    batches = [missing[start:start + size] for start in range(0, len(missing), size)]
    embedded = (on_ray.embed([[texts[key] for key in keys] for keys in batches]) if on_ray
                else (model([texts[key] for key in keys]) for keys in batches))
    with tqdm(total=len(missing), unit="text", desc="embed", disable=not progress or not missing) as bar:
        for keys, vectors in zip(batches, embedded):
            store.conn.execute("BEGIN")
            store.cache_vectors(name, dict(zip(keys, vectors)))
            store.conn.execute("COMMIT")
            bar.update(len(keys))


def _commit(store: Store, spec: str, summaries: str, bucket: str, documents, info_updates, xrefs, existing,
            report: IngestReport) -> None:
    """Write all changes and the shard of what they add, then commit atomically."""
    with committing(store):
        store.set_meta("embedder_spec", spec)
        store.set_meta("chunked", "1")
        store.set_meta("summarizer", summaries)
        for doc, path, meta in documents:
            if doc.doc_id in existing:
                store.delete_document(doc.doc_id)
            store.insert_document(doc, bucket, str(path.resolve()), meta, [content_hash(s.text) for s in doc.segments],
                                  xrefs[doc.doc_id])
        for doc_id, new_bucket, meta in info_updates:
            store.update_document_info(doc_id, new_bucket, meta)
    for doc, _, _ in documents:  # reported once committed
        (report.replaced if doc.doc_id in existing else report.added).append(doc.doc_id)


def _chunk_stored_documents(store: Store, spec: str, model: Embedder | None, summaries: str,
                            summarizer: Summarizer | None, report: IngestReport, replaced: set[str]) -> None:
    """Chunk and summarize the long documents the index holds but the `replaced` ones, in one commit: once
    for an index of an older version (it then says it is chunked), and whenever the summaries are asked of
    another writer. (Should the ingest stop before it replaces them, those keep their old chunks and
    summaries, under the new writer's mark, until an ingest of their files replaces them.)"""
    clock = time.perf_counter()
    chunks = {}
    for (doc_id,) in store.conn.execute("SELECT doc_id FROM documents WHERE kind != 'passage' ORDER BY doc_id").fetchall():
        if doc_id in replaced:
            continue
        sections, segments = store.sections_and_segments(doc_id)
        chunks[doc_id] = build_chunks(sections, segments)
        if summarizer:
            summarizer(store, chunks[doc_id], segments)
    texts = {content_hash(chunk.text): chunk.text for found in chunks.values() for chunk in found}
    _embed_missing(store, spec, model or get_embedder(spec), texts, False)
    with committing(store):
        store.set_meta("chunked", "1")
        store.set_meta("summarizer", summaries)
        for doc_id, found in chunks.items():
            store.insert_chunks(doc_id, found)
    _add_time(report, "chunk", clock)


def remove(doc_ids: list[str], index_dir: str | Path) -> list[str]:
    """Delete documents from the index in one commit; returns those it held. An unknown id is an error
    naming it, and then nothing is deleted."""
    with one_commit(index_dir) as store:
        held = store.documents()
        unknown = [doc_id for doc_id in doc_ids if doc_id not in held]
        if unknown:
            raise ValueError(f"not in {store.dir}: {', '.join(unknown)}")
        for doc_id in doc_ids:
            store.delete_document(doc_id)
    return list(dict.fromkeys(doc_ids))


def _file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
