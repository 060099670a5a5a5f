"""Extraction: find the facts for one shopping item, in a fresh context, with the tools the strategy allows."""
import dspy

from signatures.types import FailedSearch, Finding


class Extraction(dspy.Signature):
    """Find the facts that answer the shopping item in the search results.

    Report each fact as a finding with its exact value as printed, its unit, and the doc_id, page
    and section of the result it was read from; quote the words around it as context. Only report
    what the results show; never guess a page. If the results do not contain the answer, return no
    findings and say in failure_reason what is missing. sections_searched lists the sections read."""

    question: str = dspy.InputField()
    shopping_item: str = dspy.InputField(desc="the one fact to find now")
    section_index: str = dspy.InputField(desc="titles and page ranges of the document's sections (no text)")
    failed_searches: list[FailedSearch] = dspy.InputField(desc="earlier searches that did not work: do not repeat them")
    results: str = dspy.InputField(desc="search results, each with doc_id, page and section")
    findings: list[Finding] = dspy.OutputField()
    sections_searched: list[str] = dspy.OutputField()
    failure_reason: str = dspy.OutputField(desc="empty when findings answer the item")
