"""Chunk summaries written by an LM (`ingest --summaries LM`): pages from the passages each sentence
names, kept across an interrupted ingest, and the extractive summary kept when the LM gives nothing."""
from __future__ import annotations

import json
import shutil

import pytest

from ferret.corpus import chunks as chunking
from ferret.corpus.chunks import build_chunks
from ferret.corpus.ingest import IngestInterrupted, ingest
from ferret.corpus.records import Section, Segment
from ferret.corpus.store import Store
from ferret.corpus.tools import Corpus
from ferret.programs import chunk_summarizer
from ferret.programs.lm import lm_name
from ferret.programs.summaries import ChunkSummarizer
from tests.fakes import scripted_lm


def _doc() -> tuple[list[Section], list[Segment]]:
    """Two sections of four pages each, every page a segment of ~1,000 tokens of sentences with a word of its own."""
    sections, segments = [], []
    for number, name in enumerate(["Liquidity", "Revenue"]):
        sections.append(Section(f"s{number}", name, 1, 4 * number + 1, 4 * number + 4))
        for page in range(4 * number + 1, 4 * number + 5):
            text = " ".join(f"The {name.lower()} topic{page} figure {j} was {page}.{j} million dollars."
                            for j in range(70))
            segments.append(Segment("text", text, page, 0, len(text), f"s{number}"))
    return sections, segments


def _passages(inputs: dict) -> list[str]:
    return json.loads(inputs["passages"])


def test_each_sentence_is_put_on_the_page_of_the_first_passage_it_names(tmp_path):
    sections, segments = _doc()
    found = build_chunks(sections, segments, budget=4500)
    assert [(chunk.page_start, chunk.page_end) for chunk in found] == [(1, 4), (5, 8)]
    shown = []

    def summary(inputs):
        passages = _passages(inputs)
        shown.append(passages)
        return {"sentences": [{"text": "The part reports its figures.", "sources": [len(passages), 1]},
                              {"text": "A sentence naming no passage shown.", "sources": [len(passages) + 1]},
                              {"text": "A sentence naming none.", "sources": []}]}

    lm, engine = scripted_lm({"summarize_chunk": summary})
    store = Store(tmp_path / "index", create=True)
    ChunkSummarizer("local", lm)(store, found, segments)
    for chunk, passages in zip(found, shown):
        first, last = (next(s.page for s in segments if passage.split("] ", 1)[1] in s.text)
                       for passage in (passages[0], passages[-1]))
        assert first != last
        assert chunk.summary == [(last, "The part reports its figures.")]
        assert chunk.page_start <= last <= chunk.page_end
        assert chunk.summarizer == "scripted/fake"
        assert sum(map(len, passages)) <= 3_000 + 10 * len(passages)  # numbered most telling sentences
    assert engine.steps() == ["summarize_chunk", "summarize_chunk"]


def test_a_chunk_the_lm_gives_nothing_for_keeps_its_extractive_summary(tmp_path):
    sections, segments = _doc()
    found = build_chunks(sections, segments, budget=4500)
    extractive = [list(chunk.summary) for chunk in found]
    lm, _ = scripted_lm({"summarize_chunk": ["not JSON at all", {"sentences": [{"text": "x", "sources": [99]}]}]})
    summarizer = ChunkSummarizer("local", lm)
    summarizer(Store(tmp_path / "index", create=True), found, segments)
    assert [chunk.summary for chunk in found] == extractive
    assert [chunk.summarizer for chunk in found] == ["extractive", "extractive"]
    assert (summarizer.written, summarizer.failed) == (1, 1)  # the unparsed one is asked again next time


@pytest.fixture
def long_source(long_report, tmp_path, monkeypatch):
    """The long report's source in a folder of its own, chunked under a budget of 4,000 tokens (four chunks)."""
    monkeypatch.setattr(chunking, "CHUNK_TOKENS", 4000)
    shutil.copy(long_report.parent / "report.md", tmp_path / "report.md")
    return tmp_path / "report.md"


def _summarizing(monkeypatch, reply):
    """The embedded model, as `--summaries local` loads it, replaced by a scripted one."""
    lm, engine = scripted_lm({"summarize_chunk": reply})
    monkeypatch.setattr("ferret.programs.summaries.make_lm", lambda spec: lm)
    return engine


def _first_words(inputs):
    return {"sentences": [{"text": "LM summary: " + _passages(inputs)[0].split("] ", 1)[1][:80], "sources": [1]}]}


def test_an_interrupted_ingest_resumes_without_summarizing_a_chunk_twice(long_source, tmp_path, monkeypatch):
    calls = []

    def stop_at_the_third(inputs):
        calls.append(inputs["title"])
        if len(calls) == 3:
            raise KeyboardInterrupt("stopped")
        return _first_words(inputs)

    engine = _summarizing(monkeypatch, stop_at_the_third)
    index = tmp_path / "index"
    with pytest.raises(IngestInterrupted):
        ingest([long_source], index, summaries="local", summarizer=chunk_summarizer)
    assert not Store(index).documents()  # nothing committed
    engine.script["summarize_chunk"] = [_first_words]
    report = ingest([long_source], index, summaries="local", summarizer=chunk_summarizer)
    assert report.added == ["report"]
    assert report.summaries == {"written": 2, "reused": 2, "failed": 0}
    assert len(engine.calls) == 3 + 2  # the two summaries written before the stop were not asked again
    rows = Store(index).conn.execute("SELECT summarizer, summary FROM chunks ORDER BY ord").fetchall()
    assert [row["summarizer"] for row in rows] == [lm_name("local")] * 4
    assert all(json.loads(row["summary"])[0][1].startswith("LM summary: ") for row in rows)
    corpus = Corpus(index)
    hit = corpus.search_text("LM summary cybersecurity", scope="summary", top_k=1)[0]
    assert "cybersecurity" in hit["text"]
    # every summary cached: another index of the same file gets them without loading the LM
    monkeypatch.setattr("ferret.programs.summaries.make_lm", lambda spec: pytest.fail("the LM was loaded"))
    again = ingest([long_source], tmp_path / "index", summaries="extractive")  # drops the LM's summaries
    assert again.unchanged == ["report"]
    assert ingest([long_source], tmp_path / "index", summaries="local",
                  summarizer=chunk_summarizer).summaries == {"written": 0, "reused": 4, "failed": 0}
    # the long-text route's passage of an LM's sentence: on its page's first segment inside the chunk
    (sentence,) = corpus.summary_hits(hit["node_id"], 2)
    chunk = corpus.store.conn.execute("SELECT * FROM chunks WHERE id = ?", (int(hit["node_id"][6:]),)).fetchone()
    page, text = json.loads(chunk["summary"])[0]
    ord_, on = corpus.store.conn.execute("SELECT ord, page FROM segments WHERE id = ?", (int(sentence["node_id"][4:]),)).fetchone()
    assert sentence["text"] == text and chunk["first_segment"] <= ord_ <= chunk["last_segment"]
    assert sentence["page"] == on == page


def test_asking_for_another_writer_rewrites_the_summaries_of_an_index(long_source, tmp_path, monkeypatch):
    index = tmp_path / "index"
    assert ingest([long_source], index).added == ["report"]
    before = [tuple(row) for row in Store(index).conn.execute("SELECT summary FROM chunks ORDER BY ord")]
    engine = _summarizing(monkeypatch, _first_words)
    report = ingest([long_source], index, summaries="local", summarizer=chunk_summarizer)
    assert report.unchanged == ["report"] and report.summaries["written"] == 4
    store = Store(index)
    assert store.meta("summarizer") == "local"
    assert {row[0] for row in store.conn.execute("SELECT summarizer FROM chunks")} == {lm_name("local")}
    assert ingest([long_source], index, summarizer=chunk_summarizer).unchanged == ["report"]  # the index's writer by default: nothing asked
    assert len(engine.calls) == 4
    assert ingest([long_source], index, summaries="extractive").unchanged == ["report"]
    assert [tuple(row) for row in Store(index).conn.execute("SELECT summary FROM chunks ORDER BY ord")] == before


def test_another_writer_does_not_summarize_what_the_same_ingest_replaces(long_source, tmp_path, monkeypatch):
    index = tmp_path / "index"
    ingest([long_source], index)
    long_source.write_text(long_source.read_text().replace("cybersecurity", "cyber-security"))
    engine = _summarizing(monkeypatch, _first_words)
    report = ingest([long_source], index, summaries="local", summarizer=chunk_summarizer)
    assert report.replaced == ["report"] and report.summaries == {"written": 4, "reused": 0, "failed": 0}
    shown = " ".join(inputs["passages"] for _, inputs in engine.calls)
    assert len(engine.calls) == 4 and "cyber-security" in shown and "cybersecurity" not in shown  # not the old text's first
    assert {row[0] for row in Store(index).conn.execute("SELECT summarizer FROM chunks")} == {lm_name("local")}


def test_a_model_string_no_provider_serves_is_refused_before_anything_is_read(long_source, tmp_path, monkeypatch):
    monkeypatch.setattr("ferret.corpus.ingest.load_text_file", lambda *a: pytest.fail("a file was read"))
    with pytest.raises(ValueError, match="not one LiteLLM can call"):
        ingest([long_source], tmp_path / "index", summaries="no-such-provider-model", summarizer=chunk_summarizer)
    assert not Store(tmp_path / "index").documents()
