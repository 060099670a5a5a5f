"""LM-written summaries of long documents' chunks (`ferret ingest --summaries LM`).

The LM reads a chunk's title and its most telling sentences and table rows (chosen as the extractive
summary's are, within `SOURCE_CHARS`), numbered, and writes a few sentences, each naming the passages
it comes from (`SummarizeChunk`). Code keeps a sentence only when it names at least one of them, and puts
it on its first source's page: every sentence of a summary points at a page of its chunk. A chunk whose
summary keeps no sentence keeps its extractive summary; one whose LM call fails does too, and is asked
again by the next ingest.
Each summary is kept in the index as soon as it is written, under what the LM read and the LM's name, so
an interrupted ingest resumes without summarizing a chunk twice, and an unchanged chunk is never
summarized again.

The corpus builds no LM: `corpus.ingest.ingest` is handed `ferret.programs.chunk_summarizer`, which
makes the `ChunkSummarizer` of a writer's name ("local", a GGUF file, a LiteLLM model) when one is needed.
"""
from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from functools import cached_property

import dspy
from dspy.utils.exceptions import DSPyError

from ferret.corpus.chunks import telling_sentences
from ferret.corpus.passages import content_hash
from ferret.corpus.records import Chunk, Segment
from ferret.corpus.store import Store
from ferret.programs.lm import answering, check_model, gguf_file, lm_name, make_lm
from ferret.signatures.summary import SummarizeChunk

SOURCE_CHARS = 3_000  # of the chunk's most telling sentences the LM reads (the extractive summary: 1,200)
SENTENCE_CHARS = 400
logger = logging.getLogger(__name__)


class ChunkSummarizer:
    """Writes the summaries of chunks with one LM: "local" (the embedded model), a GGUF file or any LiteLLM
    model string, as for `--lm`."""

    def __init__(self, spec: str, lm: dspy.LM | None = None):
        if lm is None and spec != "local" and not gguf_file(spec):
            check_model(spec)  # a bad model string is refused before anything is parsed
        self.spec, self._lm = spec, lm
        self.name = lm.model if lm else lm_name(spec)  # what the summaries are cached and marked under
        self.summarize_chunk = dspy.Predict(SummarizeChunk)
        self.written = self.reused = self.failed = 0

    @cached_property
    def lm(self) -> dspy.LM:
        """Loaded at the first summary to write: an ingest that finds every one cached never loads it."""
        return self._lm or make_lm(self.spec)

    def __call__(self, store: Store, chunks: Sequence[Chunk], segments: Sequence[Segment]) -> None:
        """Replace each chunk's extractive summary by the LM's, written now or found in `store`'s cache."""
        for chunk, sources in zip(chunks, telling_sentences(chunks, segments, SOURCE_CHARS)):
            if not sources:  # a chunk of titles and figures alone: nothing to summarize
                continue
            key = content_hash(json.dumps([self.name, chunk.title, sources]))
            summary = store.cached_summary(key)
            if summary is None:
                try:
                    summary = self._write(chunk.title, sources)
                except DSPyError as error:  # a parse failure or an LM's error: the extractive summary stays
                    logger.warning("summary of the chunk %r (pages %d-%d) not written: %s", chunk.title[:60],
                                   chunk.page_start, chunk.page_end, error)
                    self.failed += 1
                    continue
                store.cache_summary(key, summary)
                self.written += 1
            else:
                self.reused += 1
            if summary:
                chunk.summary, chunk.summarizer = summary, self.name

    def _write(self, title: str, sources: list[tuple[int, str]]) -> list[tuple[int, str]]:
        """The LM's sentences that name a passage shown, each on its first source's page."""
        with answering(self.lm):
            sentences = self.summarize_chunk(title=title, passages=[f"[{i}] {text}" for i, (_, text) in
                                                                    enumerate(sources, 1)]).sentences
        summary = []
        for sentence in sentences:
            named = [number for number in sentence.sources if 1 <= number <= len(sources)]
            text = " ".join(sentence.text.split())[:SENTENCE_CHARS]
            if named and text:
                summary.append((sources[named[0] - 1][0], text))
        return summary
