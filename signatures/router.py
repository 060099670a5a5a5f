"""Router: read the question and choose where the answer lives."""
import dspy

from ferret.signatures.types import RouteDecision


class Router(dspy.Signature):
    """Read the question and plan the search.

    intent: lookup (one value), list (which documents or rows match: "which orders...", "list every..."),
    compute (a number from several values), compare or explain.
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


_OVERVIEW = ("bucket orders: 40 documents; fields: supplier (text), date (date), total (number)\n"
             "bucket filings: 3 documents; fields: company (text), fiscal_year (number)")

# Worked readings on a made-up corpus (not the sample's): the Router's demos until a compile replaces them.
# Without them the embedded 0.5B Router left 6 of 12 sample questions without a term of the question
# (empty, or field names); with them its topic terms were the question's own words. No subqueries: it
# copied a demo's made-up ones into its own. The same readings written into the instruction instead (so that
# an optimizer's reset of the demos would keep them) did not do: at f419f89 its terms were the question's
# own for 4 of the first 11 sample questions, against 12 of 12 as demos.
EXAMPLES = [
    dspy.Example(question="What was Contoso's research and development expense in fiscal 2021?",
                 corpus_overview=_OVERVIEW,
                 decision=RouteDecision(intent="lookup", buckets=["filings"], entities=["Contoso"],
                                        constraints=[{"field": "fiscal_year", "op": "=", "value": 2021}],
                                        topic_terms=["research and development expense"], route="long_text",
                                        fallbacks=["hybrid"])).with_inputs("question", "corpus_overview"),
    dspy.Example(question="How much did we spend on printer toner from Officeline in 2022 in total?",
                 corpus_overview=_OVERVIEW,
                 decision=RouteDecision(intent="compute", buckets=["orders"], entities=["Officeline"], constraints=[
                     {"field": "supplier", "op": "=", "value": "Officeline"},
                     {"field": "date", "op": "between", "value": ["2022-01-01", "2022-12-31"]}],
                     topic_terms=["printer toner"], aggregate="sum", route="structured",
                     fallbacks=["hybrid"])).with_inputs("question", "corpus_overview"),
    dspy.Example(question="Which purchase orders include laptops?", corpus_overview=_OVERVIEW,
                 decision=RouteDecision(intent="list", buckets=["orders"], topic_terms=["laptops"],
                                        route="structured", fallbacks=["hybrid"])).with_inputs("question", "corpus_overview"),
]
