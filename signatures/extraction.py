"""Extraction: find the facts for one shopping item, in a fresh context, with the tools the strategy allows."""
import dspy

from ferret.signatures.types import Finding


class Extraction(dspy.Signature):
    """Find in the results the printed values the shopping item needs: the value itself, or the
    values it is computed from (never compute or guess one).

    Each finding is a value exactly as printed, with its unit and the doc_id, page and section of
    the result it is in; context quotes a few words around it. If the results do not hold the
    values, return no findings and say in failure_reason what is missing."""

    question: str = dspy.InputField()
    shopping_item: str = dspy.InputField(desc="the one fact to find now")
    section_index: str = dspy.InputField(desc="the document's sections, for fetch_section")
    failed_searches: list[str] = dspy.InputField(desc="searches that already failed: do not repeat them")
    results: str = dspy.InputField(desc="search results, each with doc_id, page and section")
    findings: list[Finding] = dspy.OutputField()
    sections_searched: list[str] = dspy.OutputField()
    failure_reason: str = dspy.OutputField(desc="empty when findings answer the item")
