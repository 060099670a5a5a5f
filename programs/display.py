"""How a result's trust shows in the terminal (`ask`, `chat`, `demo`): each cited value with what grounded
it ("380.1 · Consumer · Revenue 2022 · p.13"), and an answer not grounded enough marked unconfirmed."""
from __future__ import annotations

MARKS = {"grounded": "grounded", "on_page": "on the page only", "unsupported": "unsupported"}


def citation_mark(citation: dict) -> str:
    """"grounded", "on the page only", "unsupported", or for a result without levels verified / NOT VERIFIED."""
    if citation.get("grounding"):
        return MARKS[citation["grounding"]]
    return "verified" if citation.get("verified") else "NOT VERIFIED"


def grounding_lines(result) -> list[str]:
    """The lines under an answer: its grounded values, or the unconfirmed candidate with why it is not stated."""
    if result.get("candidate"):
        return [f"unconfirmed candidate ({MARKS.get(result.get('grounding'), '?')}): {result['candidate']}",
                *(f"  {value}" for value in result.get("grounded_values") or [])]
    if result.get("status") == "answer" and result.get("grounding"):
        return [f"{MARKS[result['grounding']]}: {value}" for value in result.get("grounded_values") or []]
    return []
