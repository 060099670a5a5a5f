"""Ingestion, indexes (SQLite, bm25s, dense vectors, graph) and the search tools agents call.

`Corpus` and `ingest` are imported lazily so that worker processes that only parse PDFs
do not pay for torch and sentence-transformers.
"""


def __getattr__(name):
    if name == "Corpus":
        from corpus.tools import Corpus

        return Corpus
    if name == "ingest":
        from corpus.ingest import ingest

        return ingest
    raise AttributeError(name)
