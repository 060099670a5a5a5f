"""The answer a page names in its opening: the thing the page is about, when its first sentence says it
is what the question asks for.

"Barrier Device starred which Canadian actress, known for a role on "Grey's Anatomy", as a sex
researcher?" asks for a thing of a type ("which Canadian actress"). Sandra Oh's page opens with what the
answer is and that it is of the type: "Sandra Miju Oh (born July 20, 1971) is a Canadian actress known
for her role as Cristina Yang on ABC's medical drama "Grey's Anatomy", ...". So does Waylon Smithers's
for "What recurring character makes his first appearance in this episode?": "Waylon J. Smithers Jr.,
usually referred to as Mr. Smithers or simply Smithers, is a recurring fictional character in ...". The
0.5B reader answers such questions with the film's two stars, or with the episode's own opening.

`opening_answer` is the name a page opens with (before its parenthesis, its aside or its "is a"), when
the page opens saying it is of the asked type (the question's type words up to its noun, "Canadian
actress", "recurring character", in the head of its "is a" clause), the page or a sentence of another
page read that prints its title names one of the question's names other than its type words ("Grey's
Anatomy", not "Canadian"), and the name adds to the question (not the question's own subject). Of
several such pages, the one whose words and the sentences of the other pages that print its title name
the most of the question's words; none when two tie. Its grounding is the opening sentence. The
iterative program tries it after the gap rung (`programs.gap`) finds no name, before the hops read.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

from ferret.corpus.hops import names, title_name
from ferret.corpus.passages import without_title
from ferret.corpus.words import STOPWORDS
from ferret.programs.gap import GapAnswer
from ferret.programs.grounding import GROUNDED, SENTENCE, Grounding, asks_number, stems
from ferret.programs.passage_answer import asks_yes_no

TYPE_WORDS = 3  # words after "which" or "what" that may say the type asked for ("recurring character makes")
NAME_WORDS = 6  # a longer opening before its "is a" is a sentence, not a name
_ASKED = re.compile(r"\b(?:which|what)\s+([\w'’-]+(?:\s+[\w'’-]+){0,%d})" % (TYPE_WORDS - 1), re.IGNORECASE)
_HEAD_ENDS = re.compile(r"[,;:(]|\s(?:who|which|that|whose|where|known|based|in|of|from|for|with|by|and|on|at)\s")
_CHOICE = re.compile(r"\bor\b", re.IGNORECASE)  # "Which singer is American, Mark King or Nick Hexum?" is a comparison
# "<Name> (born ...), usually referred to as ..., is a <what it is>." on the page's first line
_OPENING = re.compile(r"""\s*["“]?(?P<name>[A-Z][^(),"”\n]*?)["”]?\s*(?:\([^)\n]*\)\s*)?(?:,[^,\n]{0,80},\s*)?"""
                      r"""(?:is|was)\s+(?:an?|the|one of the)\s+(?P<what>[^.\n]{3,200})""")


def asked_type(question: str) -> list[str]:
    """The words after the question's "which" or "what" up to a stopword or a comma: the type it asks for
    ("which Canadian actress," → Canadian, actress); [] for "what is", "which of"."""
    found = _ASKED.search(question)
    words = []
    for word in (found.group(1).split() if found else []):
        bare = word.strip(",;:?'’")
        if not bare or bare.lower() in STOPWORDS:
            break
        words.append(bare)
        if bare != word.rstrip("'’"):  # a comma or a question mark ends the type
            break
    return words


def opening_type(opening_what: str, wanted: list[str]) -> bool:
    """The longest leading run of the asked type words that the head of the opening's "is a ..." clause
    names (up to a comma, a relative word or a preposition: "a Canadian actress known for ...", "a Japanese
    multimedia artist, singer") ends on a lowercase word (a common noun: "actress", not "Canadian" alone;
    "low budget British" of "what low budget British comedy franchise" names no noun)."""
    said = stems(_HEAD_ENDS.split(opening_what, maxsplit=1)[0])
    held = []
    for word in wanted:
        if not stems(word) <= said:
            break
        held.append(word)
    return bool(held) and held[-1][0].islower()


def opening_answer(question: str, places: Sequence[tuple[str, int]], corpus) -> GapAnswer | None:
    """The one name, of the pages `places` (doc_id, page) of `corpus`, whose page opens (after its title's
    line) saying it is of the question's asked type and names what the question names (module doc); None
    for a yes/no or amount question, a choice between named things ("A or B"), a question that asks no
    type, or when no page or several do."""
    wanted = asked_type(question)
    if not wanted or asks_yes_no(question) or asks_number(question) or _CHOICE.search(question):
        return None
    places = list(dict.fromkeys(places))
    texts = {place: corpus.page_text(*place) or "" for place in places}
    asked, kind, named = stems(question), stems(" ".join(wanted)), [stems(name) for name in names(question)]
    subjects = [name for name in named if name - kind]  # "Canadian" is the type, not a subject
    found = {}
    for place, text in texts.items():
        opening = _OPENING.match(without_title(text, place[0]))
        if opening is None or len(opening["name"].split()) > NAME_WORDS or not opening_type(opening["what"], wanted):
            continue
        name = opening["name"].strip()
        if not stems(name) - asked or any(stems(name) <= subject for subject in named):
            continue  # the question's own subject
        said = _named_with(place, texts)
        if any(subject <= said for subject in subjects):
            found.setdefault(name.lower(), (said & asked, name, place, " ".join(opening.group(0).split())))
    scored = sorted(found.values(), key=lambda candidate: -len(candidate[0]))
    if not scored or (len(scored) > 1 and len(scored[0][0]) == len(scored[1][0])):
        return None
    _, name, place, sentence = scored[0]
    grounding = Grounding(GROUNDED, shown=[f"{name} · {place[0]} · p.{place[1]}"], pages={place: GROUNDED}, sentence=sentence)
    return GapAnswer(name, place, sentence, grounding, [name])


def _named_with(place: tuple[str, int], texts: dict[tuple[str, int], str]) -> set[str]:
    """What a candidate's page says and what is said of it: its page's words, and the words (with the
    title) of each other page's sentences that print its title ("It stars Sandra Oh as a sex researcher").
    Two Canadian actresses both known for "Grey's Anatomy": the one the film's page names as its star."""
    title = title_name(place[0]).lower()
    said = stems(texts[place]) | stems(place[0])
    for other, text in texts.items():
        if other != place:
            for sentence in SENTENCE.split(text):
                if title in sentence.lower():
                    said |= stems(sentence) | stems(other[0])
    return said
