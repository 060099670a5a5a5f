"""Citation verification in code, down to the number on the page.

- every cited source must be one of the findings;
- every finding's value must appear on its cited page;
- every number in the answer must appear among the findings' values.
Numbers compare after normalising thousands separators, sign (parentheses) and scale (a page's
"2,018" in a "$ million" table matches a finding of 2.018e9 or of 2018), within half a percent so
that an answer rounded to its printed precision still matches. What does not verify is flagged.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ferret.corpus.numbers import YEAR, is_change, number_spans, numbers_in, parse_number, stated_figures
from ferret.signatures.types import Citation, Finding

SCALES = (1.0, 1e3, 1e6, 1e9)
TOLERANCE = 0.005


@dataclass
class Verification:
    citations: list[Citation] = field(default_factory=list)
    unknown_sources: list[int] = field(default_factory=list)
    unverified_findings: list[int] = field(default_factory=list)
    unverified_numbers: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return (bool(self.citations) and all(c.verified for c in self.citations)
                and not (self.unknown_sources or self.unverified_findings or self.unverified_numbers))


def same_number(a: float, b: float) -> bool:
    """True when a and b are the same quantity up to scale (×1e3, ×1e6, ×1e9) and rounding."""
    if a == b:
        return True
    for x, y in ((a, b), (b, a)):
        for scale in SCALES:
            target = y * scale
            if target and abs(x - target) <= TOLERANCE * abs(target):
                return True
    return False


def finding_number(finding: Finding) -> float | None:
    if isinstance(finding.value, (int, float)):
        return float(finding.value)
    return parse_number(str(finding.value))


def value_on_page(finding: Finding, page_text: str) -> bool:
    """The finding's value is printed on the page: as a number (any sign or scale) or as text."""
    number = finding_number(finding)
    if number is None:
        value = _normal(str(finding.value))
        return bool(value) and value in _normal(page_text)
    return any(same_number(abs(number), abs(printed)) for printed in numbers_in(page_text))


def answer_numbers(answer: str) -> list[tuple[str, float]]:
    """Numbers stated in an answer, except bare years ("in 2023") and a change it computes between the two
    figures it states ("down 1.32% from 982 in Q2 FY2023 to 969 in Q2 FY2024"): code checks that against them
    (`is_change`), and them as any number."""
    figures, _ = stated_figures(answer)
    without_years = YEAR.sub(" ", answer)
    return [(_format(n), n) for start, end, n in number_spans(without_years) if not is_change(without_years[start:end], figures)]


def verify(answer: str, sources: list[int], findings: list[Finding],
           page_text: Callable[[str, int], str | None], file_of: Callable[[str], str],
           derived: Sequence[float] = ()) -> Verification:
    """Check an answer's sources and numbers against the findings and the stored page texts.
    `derived` are numbers computed in code from the findings (a sum, a count), which may be stated too."""
    result = Verification()
    for index in dict.fromkeys(sources):
        if not 0 <= index < len(findings):
            result.unknown_sources.append(index)
            continue
        finding = findings[index]
        text = page_text(finding.doc_id, finding.page)
        verified = text is not None and value_on_page(finding, text)
        if not verified:
            result.unverified_findings.append(index)
        result.citations.append(Citation(doc_id=finding.doc_id, file=file_of(finding.doc_id) if text else "",
                                         page=finding.page, section=finding.section,
                                         quote=finding.context or str(finding.value), verified=verified))
    known = [n for f in findings if (n := finding_number(f)) is not None]
    known += [n for f in findings for n in numbers_in(f.context)] + list(derived)
    result.unverified_numbers = _missing(answer, known)
    return result


def verify_pages(answer: str, pages: list[tuple[str, int]], page_text: Callable[[str, int], str | None],
                 file_of: Callable[[str], str]) -> Verification:
    """Check an answer that cites whole pages: every cited page exists and every number in the answer is
    printed on one of them. A citation verifies when its page exists and shows an answer number (or the
    answer has none)."""
    result = Verification()
    numbers = [number for _, number in answer_numbers(answer)]
    printed: list[float] = []
    for doc_id, page in dict.fromkeys(pages):
        text = page_text(doc_id, page)
        on_page = numbers_in(text) if text else []
        printed += on_page
        shows = not numbers or any(same_number(abs(a), abs(b)) for a in numbers for b in on_page)
        result.citations.append(Citation(doc_id=doc_id, file=file_of(doc_id) if text else "", page=page,
                                         verified=text is not None and shows))
        if text is None:
            result.unknown_sources.append(len(result.citations) - 1)
    result.unverified_numbers = _missing(answer, printed)
    return result


def _missing(answer: str, known: list[float]) -> list[str]:
    """The answer's numbers that match none of the known ones."""
    return [text for text, number in answer_numbers(answer) if not any(same_number(abs(number), abs(k)) for k in known)]


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def _format(number: float) -> str:
    return f"{number:,.0f}" if number == int(number) and abs(number) >= 1000 else f"{number:g}"
