"""Router: read the question and choose where the answer lives."""
import dspy

from signatures.types import RouteDecision


class Router(dspy.Signature):
    """Read the question and plan the search.

    intent: lookup (one value), list, compute (a number from several values), compare or explain.
    buckets: the corpus buckets to search (empty = all). entities: the names in the question.
    constraints: filters on the metadata fields in the corpus overview only. topic_terms: the
    question's own words for what it asks, as a keyword query, without names. subqueries: for
    compute or compare, the separate values to find, each a short phrase. aggregate: for a total,
    average, minimum, maximum or count over many rows ("total spent on batteries"), its operation;
    otherwise none. route: "structured"
    (table rows or "Label: value" facts), "long_text" (reading sections of a long document) or
    "hybrid"; fallbacks: the other routes, in the order to try them."""

    question: str = dspy.InputField()
    corpus_overview: str = dspy.InputField(desc="buckets and their metadata fields")
    decision: RouteDecision = dspy.OutputField()
