"""A text answer that code grounded, confirmed by the model: the sentence that grounds it is the one of
its page that names most of the question, but it can name several things ("... the Lakota and Dakota
Sioux ... in New York"), and code cannot tell which of them the question asks for. One short call of
`ConfirmAnswer` on that sentence can: a value it does not confirm is `on_page`, so a program stating
only grounded answers shows it as an unconfirmed candidate.

Code can tell when the sentence prints the answer where the question has its wh-word, between the
question's own words (`fills_the_gap`: "starred in what for seven years?" and "She starred in the sitcom
"Mad About You" for seven years"); then the model is not asked. The embedded model did not confirm that
sentence, nor "graduated from Hebron Academy" for "graduated from what college preparatory boys' school?"
(docs/benchmarks.md). On HotpotQA's 100 questions the gap is filled by 9 of the 59 gold answers that
ground in code on their gold pages, and by none of the 42 wrong names that ground on the gold or the
retrieved pages (`ferret eval --grounding`'s distractors).

Numbers, yes/no claims and computed answers are grounded by their row, column or sentence in code and
are not asked about; nor is anything when the program states `on_page` answers anyway.
"""
from __future__ import annotations

import re
from dataclasses import replace

import dspy

from ferret.corpus.hops import STOPWORDS
from ferret.programs.grounding import GROUNDED, ON_PAGE, Grounding
from ferret.programs.result import error_text

WH_WORDS = {"what", "which", "who", "whom", "whose", "where", "when"}
TYPE_WORDS = 2  # lowercase words the sentence may put between the question's words and the answer ("the sitcom")
_WORD = re.compile(r"\w+(?:['’]\w+)?")
_AFTER = re.compile(r"""\s*["”’')\]]?\s*(?:$|[.,;:!?)]|([A-Za-z]+))""")  # what follows a phrase: an end, or a word
_BEFORE = re.compile(r"""(?:^|[.,;:!?(]|([A-Za-z]+))\s*["“‘'(\[]?\s*$""")  # what precedes one: a start, or a word


def fills_the_gap(question: str, sentence: str, answer: str) -> bool:
    """Whether `sentence` prints the answer's words (from the first to the last the question does not
    have) as a whole phrase where the question has its wh-word (its first word, else its last wh-word:
    an earlier one is a relative pronoun): right after the two words before the wh-word, with up to
    TYPE_WORDS lowercase words between, or right before two of the words after it. Those two words name
    something (not both stopwords)."""
    asked = [word.lower() for word in _WORD.findall(question)]
    gaps = [i for i, word in enumerate(asked) if word in WH_WORDS]
    answered = [word.lower() for word in _WORD.findall(answer)]
    added = [i for i, word in enumerate(answered) if word not in asked]
    if not gaps or not added:
        return False
    gap = 0 if gaps[0] == 0 else gaps[-1]
    before, value = asked[max(gap - 2, 0):gap], answered[added[0]:added[-1] + 1]
    spans = [(match.group().lower(), match.start(), match.end()) for match in _WORD.finditer(sentence)]
    words = [word for word, _, _ in spans]
    for start in (i for i in range(len(words) - len(value) + 1) if words[i:i + len(value)] == value):
        end = start + len(value)
        if not _phrase_edge(_AFTER.match(sentence, spans[end - 1][2])):
            continue
        for between in range(TYPE_WORDS + 1):
            at = start - between
            if (at >= 2 and _names(before) and words[at - 2:at] == before
                    and all(sentence[first].islower() for _, first, _ in spans[at:start])):
                return True
        if _phrase_edge(_BEFORE.search(sentence, 0, spans[start][1])) and any(
                _names(asked[after:after + 2]) and words[end:end + 2] == asked[after:after + 2]
                for after in range(gap + 1, gap + 2 + TYPE_WORDS)):
            return True
    return False


def _phrase_edge(match: re.Match | None) -> bool:
    """A phrase's edge: punctuation or the sentence's edge, or a lowercase stopword ("for", "and")."""
    return match is not None and (match.group(1) is None or match.group(1) in STOPWORDS)


def _names(pair: list[str]) -> bool:
    return len(pair) == 2 and any(word not in STOPWORDS for word in pair)


def confirmed(confirm: dspy.Predict, question: str, answer: str, grounding: Grounding, accept: str) -> Grounding:
    """`grounding`, or `on_page` with the reason when `confirm` (a `ConfirmAnswer` predictor) does not
    confirm that the grounding sentence answers `question` with `answer`; not asked when the answer
    fills the question's gap in that sentence (`fills_the_gap`)."""
    if (grounding.level != GROUNDED or not grounding.sentence or accept != GROUNDED
            or fills_the_gap(question, grounding.sentence, answer)):
        return grounding
    try:
        if confirm(question=question, passage=grounding.sentence, proposed_answer=answer).answers_question:
            return grounding
        why = "the model did not confirm that its sentence answers the question"
    except Exception as error:  # an LM failure confirms nothing
        why = f"the model's confirmation failed ({error_text(error)})"
    return replace(grounding, level=ON_PAGE, reason=f"{answer[:60]!r} is in the sentence of its page that names "
                   f"most of the question, but {why}: {grounding.sentence[:160]!r}",
                   pages={place: ON_PAGE if level == GROUNDED else level for place, level in grounding.pages.items()})
