"""Router: read the question and choose where the answer lives."""
import dspy

from signatures.types import RouteDecision


class Router(dspy.Signature):
    """Decompose the question and choose a retrieval route.

    intent: lookup (one value), list (enumerate matching items), compute (derive a number from
    several values), compare, or explain. buckets: which of the corpus buckets to search (empty = all).
    entities: companies, products, parties, documents named. constraints: typed filters on the
    buckets' metadata fields (only fields listed in the corpus overview). topic_terms: the few
    keywords a search engine needs. subqueries: the separate facts to find, each self-contained.
    route: "structured" when the answer comes from table rows or "Label: value" facts (lists, sums,
    filters on values), "long_text" when it needs reading sections of a long document, "hybrid"
    otherwise. fallbacks: the other routes, in the order to try them if the first finds nothing."""

    question: str = dspy.InputField()
    corpus_overview: str = dspy.InputField(desc="buckets, their metadata fields, and the documents")
    decision: RouteDecision = dspy.OutputField()
