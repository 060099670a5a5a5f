"""Macro-chunks of long documents and their extractive summaries, written without an LM.

A long document (at least `LONG_DOCUMENT_TOKENS`) is cut into runs of consecutive segments along its
section tree: a run that fits `CHUNK_TOKENS` stays whole; one that does not is cut where its
highest-level sections start (deeper ones only inside a piece still too long, and evenly by tokens inside
one section longer than the budget), and neighbouring pieces are merged again while they fit. Each chunk's
summary is the sentences and table rows that carry its key terms (frequent in the chunk, rarer in the
document's other chunks) and numbers, the most telling first, each term weighing less once a chosen
sentence holds it (SumBasic), within `SUMMARY_CHARS`, each with its page.
The long-text route searches these summaries, then the segments inside the chunks it picked
(`Corpus.search_long_text`).
"""
from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

from ferret.corpus.lexical import tokenize
from ferret.corpus.records import Chunk, Section, Segment

EXTRACTIVE = "extractive"  # the summarizer written in code (an LM's summaries: programs/summaries.py)
CHARS_PER_TOKEN = 4
CHUNK_TOKENS = 12_000
LONG_DOCUMENT_TOKENS = 4_000
SUMMARY_CHARS = 1_200
TITLE_CHARS = 300  # the titles of the sections a chunk holds, in order, cut here
NUMBER_BONUS = 1.25  # a sentence that prints a number is worth this much more: summaries keep figures
COVERED = 0.25  # a term's weight once a chosen sentence holds it
# a summary's candidates are clauses too ("; "), as the stored indexes' summaries were made: not `corpus.words.sentences`
_SENTENCE = re.compile(r"(?<=[.!?;])\s+(?=[A-Z(\"“$])")
_SPACES = re.compile(r"\s+")
_DIGIT = re.compile(r"\d")
_LETTERS = re.compile(r"[A-Za-z]{3,}")
MIN_WORDS, MAX_CHARS = 6, 400
MIN_SENTENCE_CHARS = 40  # the summary is full once less room than this is left


def tokens_of(text: str) -> int:
    return len(text) // CHARS_PER_TOKEN + 1


def build_chunks(sections: Sequence[Section], segments: Sequence[Segment], budget: int | None = None) -> list[Chunk]:
    """The chunks of a document given its sections and segments (in order), summarized; [] for a
    document shorter than `LONG_DOCUMENT_TOKENS`. `budget`: tokens a chunk holds at most (`CHUNK_TOKENS`)."""
    budget = budget or CHUNK_TOKENS
    sizes = [tokens_of(segment.text) for segment in segments]
    if sum(sizes) < LONG_DOCUMENT_TOKENS:
        return []
    level = {section.id: section.level for section in sections}
    title = {section.id: section.title.strip() for section in sections}
    # strength of the cut before segment i: the level of the section starting there (1 cuts first)
    cuts = {i: level.get(segments[i].section_id, 99) for i in range(1, len(segments))
            if segments[i].section_id != segments[i - 1].section_id}
    ranges = _split(0, len(segments), sizes, cuts, budget)
    chunks = []
    for first, stop in ranges:
        inside = segments[first:stop]
        starting = [segments[first].section_id, *(segments[i].section_id for i in range(first + 1, stop) if i in cuts)]
        names = list(dict.fromkeys(title[s] for s in starting if title.get(s)))
        chunks.append(Chunk(first, stop - 1, "; ".join(names)[:TITLE_CHARS], min(s.page for s in inside),
                            max(s.page for s in inside), sum(sizes[first:stop])))
    summarize(chunks, segments)
    return chunks


def _split(lo: int, hi: int, sizes: list[int], cuts: dict[int, int], budget: int) -> list[tuple[int, int]]:
    """Segments [lo, hi) as (start, stop) runs of at most `budget` tokens each (a segment longer than
    that stays whole), cut at the strongest section starts first; neighbouring pieces that fit whole are
    merged again while they fit, the pieces of a cut-up subtree are not merged with their neighbours."""
    def fits(start: int, stop: int) -> bool:
        return sum(sizes[start:stop]) <= budget or stop - start == 1

    if fits(lo, hi):
        return [(lo, hi)]
    inner = [i for i in range(lo + 1, hi) if i in cuts]
    if inner:
        strongest = min(cuts[i] for i in inner)
        points = [i for i in inner if cuts[i] == strongest]
    else:  # one section longer than the budget: even runs of whole segments
        total, parts, points, running = sum(sizes[lo:hi]), math.ceil(sum(sizes[lo:hi]) / budget), [], 0
        for i in range(lo, hi - 1):
            running += sizes[i]
            if running >= total * (len(points) + 1) / parts:
                points.append(i + 1)
    pieces = []  # (start, stop, whole)
    for start, stop in zip([lo, *points], [*points, hi]):
        pieces += [(start, stop, True)] if fits(start, stop) else \
            [(a, b, False) for a, b in _split(start, stop, sizes, cuts, budget)]
    merged = [pieces[0]]
    for start, stop, whole in pieces[1:]:
        first, _, whole_before = merged[-1]
        if whole and whole_before and fits(first, stop):
            merged[-1] = (first, stop, True)
        else:
            merged.append((start, stop, whole))
    return [(start, stop) for start, stop, _ in merged]


def summarize(chunks: list[Chunk], segments: Sequence[Segment]) -> None:
    """Fill each chunk's extractive summary (see the module's docstring)."""
    for chunk, chosen in zip(chunks, telling_sentences(chunks, segments, SUMMARY_CHARS)):
        chunk.summary, chunk.summarizer = chosen, EXTRACTIVE


def telling_sentences(chunks: Sequence[Chunk], segments: Sequence[Segment], limit: int) -> list[list[tuple[int, str]]]:
    """Each chunk's most telling sentences and table rows, (page, text) the most telling first, within
    `limit` characters with the chunk's title (the extractive summary; an LM's summary reads more of them)."""
    selections = []
    candidates = [_sentences(segments[chunk.first:chunk.last + 1]) for chunk in chunks]
    terms = [[set(words) for words in tokenize([text for _, text in found])] if found else [] for found in candidates]
    spread = Counter(term for chunk_terms in terms for term in set().union(*chunk_terms))  # chunks holding a term
    for chunk, found, sentence_terms in zip(chunks, candidates, terms):
        counts = Counter(term for words in sentence_terms for term in words)
        weight = {term: count * math.log(1 + len(chunks) / spread[term]) for term, count in counts.items()}
        chosen, size, left = [], len(chunk.title), set(range(len(found)))
        while left and limit - size >= MIN_SENTENCE_CHARS:
            best = max(left, key=lambda i: (_score(found[i][1], sentence_terms[i], weight), -i))
            left.discard(best)
            if size + len(found[best][1]) > limit or not sentence_terms[best]:
                continue
            chosen.append(found[best])
            size += len(found[best][1]) + 1
            for term in sentence_terms[best]:  # what is said once weighs less the next time (SumBasic)
                weight[term] *= COVERED
        selections.append(chosen)
    return selections


def _score(text: str, words: set[str], weight: dict[str, float]) -> float:
    if not words:
        return 0.0
    # fsum: the same total in whatever order a process's string hashing gives the set its terms
    return math.fsum(weight[word] for word in words) / math.sqrt(len(words)) * (NUMBER_BONUS if _DIGIT.search(text) else 1.0)


def _sentences(segments: Sequence[Segment]) -> list[tuple[int, str]]:
    """The (page, text) candidates of a run of segments: prose sentences of at least `MIN_WORDS`
    words, and table rows that hold a number and a word; each at most `MAX_CHARS`."""
    found = []
    for segment in segments:
        if segment.kind == "table":
            parts = [_SPACES.sub(" ", line).strip() for line in segment.text.split("\n")]
            parts = [line for line in parts if _DIGIT.search(line) and _LETTERS.search(line)]
        else:
            parts = [part.strip() for part in _SENTENCE.split(_SPACES.sub(" ", segment.text))]
            parts = [part for part in parts if len(_LETTERS.findall(part)) >= MIN_WORDS]
        found += [(segment.page, part[:MAX_CHARS]) for part in parts]
    return list(dict.fromkeys(found))
