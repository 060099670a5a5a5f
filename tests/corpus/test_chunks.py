"""Macro-chunks along the section tree, their extractive summaries, and the long-text search over them."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ferret.corpus import chunks as chunking
from ferret.corpus.chunks import CHARS_PER_TOKEN, build_chunks
from ferret.corpus.ingest import ingest
from ferret.corpus.records import Section, Segment
from ferret.corpus.store import Store
from ferret.corpus.tools import Corpus, rank_chunks


def _doc(layout: list[tuple[str, int, int]]) -> tuple[list[Section], list[Segment]]:
    """Sections (id, level, segments of ~1,000 tokens each) in order, each segment on its own page, its
    text distinct sentences naming its section."""
    sections, segments = [], []
    for section_id, level, count in layout:
        sections.append(Section(section_id, f"Title {section_id}", level, len(segments) + 1, len(segments) + count))
        for i in range(count):
            words = " ".join(f"{section_id}term{i}w{j} revenue grew 12.5 percent." for j in range(150))
            text = (f"The {section_id} part {i} says: " + words)[:1000 * CHARS_PER_TOKEN - 20]
            segments.append(Segment("text", text, len(segments) + 1, 0, len(text), section_id))
    return sections, segments


def _runs(found) -> list[tuple[int, int]]:
    return [(chunk.first, chunk.last) for chunk in found]


def test_chunks_follow_the_section_tree_within_the_budget():
    # A (level 1) holds a1, a2 (level 2); A's subtree is 9 segments, over a budget of 6; B and C fit together
    sections, segments = _doc([("A", 1, 1), ("a1", 2, 4), ("a2", 2, 4), ("B", 1, 2), ("C", 1, 3)])
    found = build_chunks(sections, segments, budget=6 * 1001)
    assert _runs(found) == [(0, 4), (5, 8), (9, 13)]  # A's own text with a1; a2; B and C merged
    assert all(chunk.tokens <= 6 * 1001 for chunk in found)
    starts = {0} | {i for i in range(1, len(segments)) if segments[i].section_id != segments[i - 1].section_id}
    assert {chunk.first for chunk in found} <= starts  # every cut is where a section starts
    assert found[2].title == "Title B; Title C" and (found[2].page_start, found[2].page_end) == (10, 14)


def test_a_section_longer_than_the_budget_is_cut_evenly():
    sections, segments = _doc([("A", 1, 10)])
    found = build_chunks(sections, segments, budget=4 * 1001)
    assert [chunk.last - chunk.first + 1 for chunk in found] == [4, 3, 3]
    assert _runs(found)[0][0] == 0 and _runs(found)[-1][1] == 9
    assert all(b[0] == a[1] + 1 for a, b in zip(_runs(found), _runs(found)[1:]))  # contiguous, no segment lost


def test_a_short_document_has_no_chunks():
    sections, segments = _doc([("A", 1, 3)])
    assert build_chunks(sections, segments) == []


def test_a_summary_cites_pages_of_its_chunk_and_its_sentences_are_printed_there():
    sections, segments = _doc([("A", 1, 1), ("a1", 2, 4), ("a2", 2, 4), ("B", 1, 2), ("C", 1, 3)])
    for chunk in build_chunks(sections, segments, budget=6 * 1001):
        assert chunk.summary and chunk.summarizer == "extractive"
        assert sum(len(sentence) for _, sentence in chunk.summary) <= chunking.SUMMARY_CHARS
        for page, sentence in chunk.summary:
            assert chunk.page_start <= page <= chunk.page_end
            assert sentence in " ".join(s.text for s in segments if s.page == page)


def test_summaries_are_searched_and_a_chunk_fetched(long_report):
    corpus = Corpus(long_report)
    stored = corpus.store.conn.execute("SELECT id, title, first_segment, last_segment FROM chunks ORDER BY ord").fetchall()
    assert [row["title"] for row in stored] == ["Liquidity", "Revenue", "Risk", "Employees"]
    hit = corpus.search_semantic("how is the company funded: operating cash flows and borrowing", scope="summary", top_k=2)[0]
    assert hit["node_id"] == f"chunk:{stored[0]['id']}" and hit["kind"] == "summary" and hit["section"] == "Liquidity"
    fetched = corpus.fetch_section("report", hit["node_id"], max_tokens=50)
    assert fetched["truncated"] and fetched["title"] == "Liquidity" and fetched["summary"]
    with pytest.raises(ValueError, match="no chunk 'chunk:999' in report; its chunks: chunk:"):
        corpus.fetch_section("report", "chunk:999")
    with pytest.raises(ValueError, match="unknown scope"):
        corpus.search_text("cash", scope="chunks")


def test_the_long_text_search_drills_down_inside_the_chunks_it_picked(long_report):
    corpus = Corpus(long_report)
    found = corpus.search_long_text("cybersecurity incidents and currency risk", top_k=20, chunks=1)
    (chunk,) = found["chunks"]
    assert chunk["section"] == "Risk"
    first, last = corpus.store.conn.execute("SELECT first_segment, last_segment FROM chunks WHERE id = ?",
                                            (int(chunk["node_id"].split(":")[1]),)).fetchone()
    ords = [corpus.store.conn.execute("SELECT ord FROM segments WHERE id = ?", (int(hit["node_id"][4:]),)).fetchone()[0]
            for hit in found["hits"]]
    assert sorted(ords) == list(range(first, last + 1))  # every segment of the chunk, and none outside it
    # the plain search of the same words reaches outside that chunk
    plain = corpus.search_text("cybersecurity incidents and currency risk", top_k=60, hybrid=True)
    assert {hit["section"] for hit in plain} - {"Risk"}


def test_a_chunk_is_chosen_by_its_summary_its_title_and_the_passages_on_its_pages_fused():
    """A filing's best summary is often a generic section's; the title that names the question's words
    and the pages its best passages are on outvote it (FinanceBench: docs/benchmarks.md)."""
    def chunk(number: int, title: str, pages: list[int]) -> dict:
        return {"node_id": f"chunk:{number}", "doc_id": "10k", "section": title, "pages": pages}

    business, liquidity, risk = chunk(1, "Business", [1, 9]), chunk(2, "Liquidity and Capital Resources", [30, 34]), \
        chunk(3, "Risk Factors", [10, 20])
    summaries = [business, risk, liquidity]  # in their summaries' order
    assert rank_chunks("What is the outlook?", summaries, []) == summaries  # nothing else to go by
    query, passages = "How healthy is the liquidity profile?", [{"doc_id": "10k", "page": 31}, {"doc_id": "10k", "page": 5}]
    assert rank_chunks(query, summaries, passages) == [liquidity, business, risk]  # its title, and the best passage's page
    on_risk = [{"doc_id": "10k", "page": 12}, {"doc_id": "10k", "page": 15}, {"doc_id": "other", "page": 31}]
    assert rank_chunks("How healthy is the profile?", [business, liquidity, risk], on_risk) == [risk, business, liquidity]
    assert rank_chunks(query, [], passages) == []


def test_a_second_ingest_summarizes_nothing_again_and_an_older_index_gets_its_chunks(long_report, monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr("ferret.corpus.ingest.build_chunks", lambda *a, **k: calls.append(a) or build_chunks(*a, **k))
    index, source = tmp_path / "index", long_report.parent / "report.md"
    shutil.copytree(long_report, index)
    before = Store(index).conn.execute("SELECT id, text_hash, shard FROM chunks ORDER BY id").fetchall()
    assert ingest([source], index).unchanged == ["report"]
    assert calls == []
    assert [tuple(r) for r in Store(index).conn.execute("SELECT id, text_hash, shard FROM chunks ORDER BY id")] \
        == [tuple(r) for r in before]
    # an index written before chunks existed: no chunk rows, no "chunked" mark
    store = Store(index)
    with store.transaction():
        store.conn.execute("DELETE FROM chunks")
        store.conn.execute("DELETE FROM meta WHERE key = 'chunked'")
    store.close()
    assert ingest([source], index).unchanged == ["report"]
    assert len(calls) == 1  # chunked once, from the stored rows
    assert Corpus(index).search_semantic("cybersecurity", scope="summary", top_k=1)[0]["kind"] == "summary"
    ingest([source], index)
    assert len(calls) == 1


class _FirstSentences:
    """A summarizer without an LM: each chunk's first extractive sentence, marked as its writer's."""

    def __init__(self, spec: str):
        self.spec, self.written, self.reused, self.failed = spec, 0, 0, 0

    def __call__(self, store, chunks, segments) -> None:
        for chunk in chunks:
            chunk.summary, chunk.summarizer = chunk.summary[:1], f"first:{self.spec}"
            self.written += 1


def test_an_lm_writer_is_the_callers_summarizer_and_the_corpus_builds_none(long_report, tmp_path):
    """The corpus builds no LM: an ingest whose summaries an LM writes is handed what makes its summarizer
    (`ferret.chunk_summarizer` for the command), and refuses without it, before anything is read."""
    index, source = tmp_path / "index", long_report.parent / "report.md"
    with pytest.raises(ValueError, match=r"pass summarizer=chunk_summarizer \(from ferret import chunk_summarizer\)"):
        ingest([source], index, summaries="local")
    assert not Store(index).documents()
    made = []
    report = ingest([source], index, summaries="writer", summarizer=lambda spec: made.append(spec) or _FirstSentences(spec))
    store = Store(index)
    marks = [row[0] for row in store.conn.execute("SELECT summarizer FROM chunks")]
    assert made == ["writer"] and report.summaries == {"written": len(marks), "reused": 0, "failed": 0}
    assert store.meta("summarizer") == "writer" and set(marks) == {"first:writer"}
    with pytest.raises(ValueError, match="need an LM"):  # the index's writer by default
        ingest([source], index)


def test_real_filings_long_documents_have_chunks(real_corpus):
    rows = real_corpus.store.conn.execute(
        "SELECT c.doc_id, c.first_segment, c.last_segment, c.tokens, c.page_start, c.page_end, d.n_pages FROM chunks c "
        "JOIN documents d ON d.doc_id = c.doc_id ORDER BY c.doc_id, c.ord").fetchall()
    assert "COSTCO_2021_10K" in {row["doc_id"] for row in rows}
    for doc_id in {row["doc_id"] for row in rows}:
        mine = [row for row in rows if row["doc_id"] == doc_id]
        segments = real_corpus.store.conn.execute("SELECT COUNT(*) FROM segments WHERE doc_id = ?", (doc_id,)).fetchone()[0]
        assert mine[0]["first_segment"] == 0 and mine[-1]["last_segment"] == segments - 1
        assert all(b["first_segment"] == a["last_segment"] + 1 for a, b in zip(mine, mine[1:]))
        assert all(row["tokens"] <= chunking.CHUNK_TOKENS for row in mine)


def test_the_search_command_shows_summaries_with_their_pages(long_report, capsys):
    from ferret.cli import main

    assert main(["search", "headcount and hiring", "--index", str(long_report), "--scope", "summary", "--top-k", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(" 1. report.md pp.1-1 · Employees · score ") and "headcount" in out


def test_a_summary_is_the_same_in_every_process():
    """Sentences of equal weight are chosen in the same order whatever the process's string hashing (a
    sum over a set of terms once gave each process its own order, and a summary its own sentences)."""
    script = ("from tests.programs.test_lm_summaries import _doc\nfrom ferret.corpus.chunks import build_chunks\n"
              "print([chunk.summary for chunk in build_chunks(*_doc(), budget=4500)])")  # pages of like sentences
    outputs = {subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                              cwd=Path(__file__).resolve().parents[2], env={**os.environ, "PYTHONHASHSEED": seed}).stdout
               for seed in ("1", "2", "3", "4")}
    assert len(outputs) == 1 and "[(" in outputs.pop()
