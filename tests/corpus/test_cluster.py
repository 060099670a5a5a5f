"""`ferret ingest --ray`: PDFs parsed and texts embedded on Ray workers give the index an ingest without
Ray gives, and a bad file still fails alone."""
from __future__ import annotations

from contextlib import nullcontext

import numpy as np

from ferret.corpus.dense import get_embedder
from ferret.corpus.ingest import ingest
from ferret.corpus.pdf import read_pages
from ferret.corpus.tools import Corpus

FILINGS = ("FOOTLOCKER_2022_8K_dated-2022-05-20", "AMCOR_2022_8K_dated-2022-07-01")


def contents(index) -> tuple[list, np.ndarray]:
    corpus = Corpus(index)
    rows = corpus.store.conn.execute("SELECT * FROM segments ORDER BY id").fetchall()
    return [tuple(row) for row in rows], np.concatenate([shard.vectors if shard.rows is None else shard.vectors[shard.rows]
                                                   for shard in corpus.segments.vectors])


def test_an_ingest_on_two_ray_workers_builds_the_index_an_ingest_without_ray_builds(tmp_path, pdf):
    (tmp_path / "docs").mkdir()
    for name in FILINGS:
        (tmp_path / "docs" / f"{name}.pdf").write_bytes(pdf(name).read_bytes())
    (tmp_path / "docs" / "truncated.pdf").write_bytes(pdf(FILINGS[0]).read_bytes()[:3000])
    (tmp_path / "docs" / "notes.md").write_text("# Notes\n\nInventories were 5,409 at the end of 2019.")

    alone = ingest([tmp_path / "docs"], tmp_path / "alone", commit_pages=5)
    on_ray = ingest([tmp_path / "docs"], tmp_path / "ray", commit_pages=5, ray="local", workers=2)

    assert on_ray.added == alone.added and sorted(on_ray.added) == sorted(["notes", *FILINGS])
    assert on_ray.commits == alone.commits > 1
    assert [(e.file, e.reason) for e in on_ray.errors] == [(e.file, e.reason) for e in alone.errors]
    assert [e.file.split("/")[-1] for e in on_ray.errors] == ["truncated.pdf"]
    (rows, vectors), (ray_rows, ray_vectors) = contents(tmp_path / "alone"), contents(tmp_path / "ray")
    assert ray_rows == rows and len(rows) > 50
    # OpenVINO computes in bf16 on a CPU that has it, so a text's vector moves by ~1e-3 with the padding of
    # the batch it was embedded in, and the workers batch the texts otherwise
    assert ray_vectors.shape == vectors.shape and (ray_vectors * vectors).sum(axis=1).min() > 0.9999


def test_the_workers_read_pdfs_by_absolute_path(tmp_path, pdf, monkeypatch):
    """A worker on another node does not start in this directory: a PDF named relative to it reaches the
    workers absolute. (The workers here read in this process and record the paths they were given.)"""
    class RecordingWorkers:
        def __init__(self, embedder: str, count: int):
            self.workers, self.paths, self.embedder = count, [], get_embedder(embedder)

        def read(self, tasks):
            self.paths += [path for path, _, _ in tasks]
            return (read_pages(path, start, stop) for path, start, stop in tasks)

        def embed(self, batches):
            return (self.embedder(texts) for texts in batches)

    made = []
    monkeypatch.setattr("ferret.corpus.ingest.ray_workers", lambda address, workers: nullcontext(1))
    monkeypatch.setattr("ferret.corpus.ingest.RayIngest", lambda *args: made.append(RecordingWorkers(*args)) or made[-1])
    (tmp_path / f"{FILINGS[0]}.pdf").write_bytes(pdf(FILINGS[0]).read_bytes())
    monkeypatch.chdir(tmp_path)
    report = ingest([f"{FILINGS[0]}.pdf"], "index", ray="local")
    assert report.added == [FILINGS[0]]
    assert made[0].paths and set(made[0].paths) == {str(tmp_path / f"{FILINGS[0]}.pdf")}
