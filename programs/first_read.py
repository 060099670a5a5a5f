"""What the first read of the iterative program reads, by its retrieval settings, with no LM: the one
function that the program reads from and that a settings compile scores (`optimizers.settings_search`),
so that what is compiled is what runs.

- `long_text`, for a question about one document or on the Router's "long_text" route: the passages
  inside the long document's chunks that match best (`Corpus.search_long_text`), where it has chunks;
- else `hops_first`: the multi-hop search's passages (`programs.hops.hop_search`: the question's own top
  passages first, then those of the bridges and parts they lead to);
- else the question's top passages (`Corpus.search`).

Every search weighs BM25 against dense search by `lexical_weight` (1 BM25 alone, 0 dense alone, 0.5
hybrid search, the default).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ferret.corpus.tools import HYBRID, Corpus
from ferret.programs.hops import hop_search


@dataclass(frozen=True)
class ReadSettings:
    """The retrieval settings of the first read, as saved with a program (`IterativeRetriever.SETTINGS`)."""

    lexical_weight: float = HYBRID
    hops_first: bool = False
    long_text: bool = False

    def describe(self) -> str:
        weight = {1.0: "BM25", 0.0: "dense", HYBRID: "hybrid"}.get(self.lexical_weight,
                                                                   f"lexical weight {self.lexical_weight:g}")
        return " + ".join([weight, *(["hops first"] if self.hops_first else []),
                           *(["long text"] if self.long_text else [])])


@dataclass
class FirstRead:
    """The first read's passages, the rung they make ("read", "hops" or "long_text") and, on the long-text
    route, the chunks chosen (summary hits, best first)."""

    hits: list[dict]
    rung: str
    chunks: list[dict] = field(default_factory=list)


def first_read(corpus: Corpus, question: str, top_k: int, settings: ReadSettings, route: str = "",
               bucket: str | None = None, doc_id: str | None = None, context_chars: int = 600) -> FirstRead:
    """The `top_k` passages the first read is shown for `question` (module rules)."""
    if settings.long_text and (route == "long_text" or doc_id is not None):
        found = corpus.search_long_text(question, bucket=bucket, top_k=top_k, context_chars=context_chars,
                                        doc_id=doc_id, lexical_weight=settings.lexical_weight)
        if found["chunks"]:
            return FirstRead(found["hits"], "long_text", found["chunks"])
    if settings.hops_first:
        hops = hop_search(corpus, question, top_k, bucket=bucket, doc_id=doc_id, context_chars=context_chars,
                          lexical_weight=settings.lexical_weight)
        return FirstRead(hops.hits, "hops")
    return FirstRead(corpus.search(question, settings.lexical_weight, bucket=bucket, top_k=top_k,
                                   context_chars=context_chars, doc_id=doc_id), "read")
