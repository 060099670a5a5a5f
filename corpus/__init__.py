"""Ingestion, indexes (SQLite, bm25s, dense vectors, graph) and the search tools agents call.

`Corpus` is imported lazily so that worker processes that only parse PDFs do not pay for torch
and sentence-transformers. (`ingest` is the function in the module `corpus.ingest`:
`from corpus.ingest import ingest`.)
"""


def __getattr__(name):
    if name == "Corpus":
        from ferret.corpus.tools import Corpus

        return Corpus
    raise AttributeError(name)
