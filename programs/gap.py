"""The question's gap: where its wh-word stands, between its own words, and the phrase a page prints there.

`fills_the_gap` tells whether a sentence prints a given answer there: "starred in what for seven years?"
and 'She starred in the sitcom "Mad About You" for seven years'. On HotpotQA's 100 questions the gap is
filled by 13 of the 70 gold answers that ground in code on their gold pages, and by none of the 41 wrong
names that ground on the gold or the retrieved pages (`ferret eval --grounding`'s distractors). A text
answer grounded in a sentence that fills the gap needs no model to confirm it (`programs.confirm`).

`gap_answer` reads the answer itself, in code. "Charles Andrews graduated from what college preparatory
boys' school?" has a gap after "graduated from"; a page that prints "He attended the district school and
graduated from Hebron Academy." fills it with "Hebron Academy". `gap_phrases` finds such phrases in a
sentence: after the two words before the question's wh-word (the first may be joined by "and" or "or"
to up to JOINED_WORDS lowercase words: "singer-songwriter and guitarist from Portland, Oregon"), with up
to TYPE_WORDS lowercase words between ("the sitcom"), or the words that follow the wh-word in the
question ("chief of staff to which Queensland Senator" and "chief of staff to Queensland Senator Barnaby
Joyce"), a quoted title or a run of capitalised words (a name, a number), cut at a stopword, and kept
only when `fills_the_gap` holds for it (the question's type words may follow it: "mayor of New York
City" for "mayor of what city?").
Lowercase phrases are read only where the question ends on its gap, a "what" after a preposition that
follows a content word ("known for his precisionist depictions of what?": "urban landscapes", up to
LOWERCASE_WORDS words, no stopword, no list going on after it); "Lilu is mentioned" does not answer
"Lilu is what?". A question that asks for a state, a country or another of the REGIONS is filled by the
place after a comma ("based in Philadelphia, Pennsylvania"), one that asks for a city (a town, a village)
by the place before it, with the region after it ("Philadelphia, Pennsylvania"). `gap_answer` is the
one phrase, among all those the pages fill the gap with, that grounds (`programs.grounding.ground`: on a
page about what the question names, in its sentence that names most of the question); None when
several do. When none does, a second hop's page may answer: tied to what the question names in one
sentence and filling the gap in another, it grounds the phrase when it names more of the question and
its bridges than the page of any other such phrase (`_on_the_hop`). The embedded 0.5B model reads such
sentences and answers with a paraphrase ("Jeffrey Smart's depictions of urban landscapes that are full
...") or with another name of the passage. On HotpotQA's 100 questions, over the passages of the first
read and of the hops search, it answers 17, all right; none of TAT-QA's 1,663 questions nor of
FinanceBench's 62 (docs/benchmarks.md).
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ferret.corpus.words import MONTHS, STOPWORDS
from ferret.corpus.numbers import YEAR, numbers_in
from ferret.programs.grounding import GROUNDED, ON_PAGE, SENTENCE, Grounding, asks_number, asks_year, ground, stems, tied_pages
from ferret.programs.passage_answer import asks_yes_no

WH_WORDS = {"what", "which", "who", "whom", "whose", "where", "when"}
TYPE_WORDS = 2  # words the sentence may put between the question's words and the answer ("the sitcom")
LOWERCASE_WORDS = 3  # words of a lowercase phrase that fills an open gap ("depictions of what?")
PREPOSITIONS = frozenset({"of", "for", "as", "in", "with", "from", "by", "on", "about", "into"})
JOINED_WORDS = 2  # words joined by "and" to the first word before the gap ("singer-songwriter and guitarist from")
_CONNECTORS = r"of|the|de|van|von|la|le|du|and|&"  # inside a name: "Walt Disney Pictures", "House of Commons"
_PHRASE = re.compile(rf"""["“](?P<quoted>[^"”]{{1,60}})["”]"""
                     rf"""|(?P<name>[A-Z0-9][\w'’.&-]*(?:\s+(?:[A-Z0-9][\w'’.&-]*|(?:{_CONNECTORS})(?!\w)))*)""")
# what a place is part of: "based in Philadelphia, Pennsylvania" answers "based in what state?" after its comma
REGIONS = frozenset({"state", "country", "province", "county", "region", "nation", "territory"})
_LARGER_PLACE = re.compile(r"\s*,\s*[A-Z]")
_ASKS_DATE = re.compile(r"\b(?:when|date|day|how many|how old|age)\b", re.IGNORECASE)
_WORD = re.compile(r"\w+(?:['’]\w+)?")
SETTLEMENTS = frozenset({"city", "town", "village"})  # a question asking for one is answered with its region
_REGION = re.compile(r",\s*[A-Z][\w'’.-]*(?:\s+[A-Z][\w'’.-]*)?(?=\s*(?:$|[.,;:)]|[a-z]))")
_LIST_GOES_ON = re.compile(r"\s*(?:,|(?:and|or)\s)")
_AFTER = re.compile(r"""\s*["”’')\]]?\s*(?:$|[.,;:!?)]|([A-Za-z]+))""")  # what follows a phrase: an end, or a word
_BEFORE = re.compile(r"""(?:^|[.,;:!?(]|([A-Za-z]+))\s*["“‘'(\[]?\s*$""")  # what precedes one: a start, or a word


def fills_the_gap(question: str, sentence: str, answer: str) -> bool:
    """Whether `sentence` prints the answer's words (from the first to the last the question does not
    have) as a whole phrase where the question has its wh-word (its first word, else its last wh-word:
    an earlier one is a relative pronoun): right after the two words before the wh-word (`_ends`), with up to
    TYPE_WORDS lowercase words between (or the question's words after its wh-word), or right before two
    of the words after it. Those two words name something (not both stopwords)."""
    asked, gap = _question_gap(question)
    answered = [word.lower() for word in _WORD.findall(answer)]
    added = [i for i, word in enumerate(answered) if word not in asked]
    if gap is None or not added:
        return False
    before, value = _before(asked, gap), answered[added[0]:added[-1] + 1]
    spans = [(match.group().lower(), match.start(), match.end()) for match in _WORD.finditer(sentence)]
    words = [word for word, _, _ in spans]
    starts = [(word, first) for word, first, _ in spans]
    ends = _ends(sentence, starts, before)
    for start in (i for i in range(len(words) - len(value) + 1) if words[i:i + len(value)] == value):
        end = start + len(value)
        if not (_phrase_edge(_AFTER.match(sentence, spans[end - 1][2])) or _type_follows(words[end:], asked[gap + 1:])):
            continue
        if _asks_region(asked[gap + 1:]) and _LARGER_PLACE.match(sentence, spans[end - 1][2]):
            continue  # "Philadelphia, Pennsylvania": the state is the place after the comma
        for between in range(TYPE_WORDS + 1):
            at = start - between
            if (at in ends
                    and _typed(sentence, starts[at:start], asked[gap + 1:])):
                return True
        if _phrase_edge(_BEFORE.search(sentence, 0, spans[start][1])) and any(
                _names(asked[after:after + 2]) and words[end:end + 2] == asked[after:after + 2]
                for after in range(gap + 1, gap + 2 + TYPE_WORDS)):
            return True
    return False


def _question_gap(question: str) -> tuple[list[str], int | None]:
    """The question's words, lowercased, and the index of its gap: its first word when that is a wh-word,
    else its last wh-word that follows no comma (an earlier one, or one after a comma, is a relative
    pronoun: "Name the mother of X, who was ..."); None when it has none."""
    spans = list(_WORD.finditer(question))
    asked = [match.group().lower() for match in spans]
    gaps = [i for i, word in enumerate(asked) if word in WH_WORDS
            and (i == 0 or not question[:spans[i].start()].rstrip().endswith(","))]
    return asked, (0 if gaps[0] == 0 else gaps[-1]) if gaps else None


def _before(asked: list[str], gap: int) -> list[str]:
    """The question's two words before its wh-word, which the gap follows in a sentence that answers;
    [] when they name nothing. ("Who directed the film ...?" is not read as "directed by ___": the
    film's near misses print that too, "Blue Velvet is a 1986 film directed by David Lynch and shot in
    North Carolina", and ground.)"""
    return asked[gap - 2:gap] if gap >= 2 and _names(asked[gap - 2:gap]) else []


def _type_follows(following: list[str], after: list[str]) -> bool:
    """Whether a phrase is followed by the words the question puts after its wh-word, the type it asks
    for ("mayor of New York City" for "mayor of what city?", "the Lakota and Dakota Sioux Native American
    tribes" for "named after which Native American tribes?"): up to TYPE_WORDS of them, not only stopwords."""
    typed = after[:TYPE_WORDS]
    return bool(typed) and any(word not in STOPWORDS for word in typed) and following[:len(typed)] == typed


def _phrase_edge(match: re.Match | None) -> bool:
    """A phrase's edge: punctuation or the sentence's edge, or a lowercase stopword ("for", "and")."""
    return match is not None and (match.group(1) is None or match.group(1) in STOPWORDS)


def _names(pair: list[str]) -> bool:
    return len(pair) == 2 and any(word not in STOPWORDS for word in pair)


@dataclass
class GapAnswer:
    answer: str
    place: tuple[str, int]  # (doc_id, page) of the first page that fills the gap with it
    sentence: str  # the first sentence that does
    grounding: Grounding
    filled: list[str]  # every distinct phrase the pages filled the gap with


def gap_phrases(question: str, sentence: str) -> list[str]:
    """The phrases of `sentence` that fill the question's gap (module doc), in order."""
    asked, gap = _question_gap(question)
    if gap is None or not (before := _before(asked, gap)):
        return []
    spans = [(match.group().lower(), match.start()) for match in _WORD.finditer(sentence)]
    printed, found = _WORD.findall(question), []
    for end in _ends(sentence, spans, before):
        for between in range(TYPE_WORDS + 1):
            at = end + between
            if at >= len(spans):
                break
            if not _typed(sentence, spans[end:at], asked[gap + 1:]):
                continue
            start = spans[at][1] - (spans[at][1] > 0 and sentence[spans[at][1] - 1] in "\"“")
            match = _PHRASE.match(sentence, start)
            phrase = _untyped(_trimmed(match), printed[gap + 1:]) if match else \
                _lowercase(sentence, spans[at:]) if _open(asked, gap) and not between else ""
            if phrase and asked[gap + 1:gap + 2] and asked[gap + 1] in SETTLEMENTS:
                phrase = _with_region(sentence, start, phrase)
            if phrase and fills_the_gap(question, sentence, phrase):
                found.append(phrase)
    return list(dict.fromkeys(found))


def _with_region(sentence: str, start: int, place: str) -> str:
    """A city's name with the region the sentence prints after its comma ("Canton, Massachusetts")."""
    end = sentence.find(place, start) + len(place)
    region = _REGION.match(sentence, end) if end >= len(place) else None
    return place + re.sub(r"(?<=[a-z]{2})\.$", "", sentence[end:region.end()]) if region else place  # the full stop aside


def _open(asked: list[str], gap: int) -> bool:
    """Whether the question ends on its gap, a "what" right after a preposition that follows a content
    word ("known for his precisionist depictions of what?"): what fills it may be a lowercase phrase."""
    return gap == len(asked) - 1 and asked[gap] == "what" and asked[gap - 1] in PREPOSITIONS


def _lowercase(sentence: str, spans: list[tuple[str, int]]) -> str:
    """The lowercase phrase the sentence prints from `spans[0]`: up to LOWERCASE_WORDS words, none a
    stopword, with only spaces between ("urban landscapes" of "depictions of urban landscapes that are");
    "" when a list goes on after it ("made from rice, beans and pork")."""
    end = None
    for word, first in spans[:LOWERCASE_WORDS]:
        if word in STOPWORDS or not sentence[first].islower() or (end is not None and sentence[end:first].strip()):
            break
        end = first + len(word)
    return sentence[spans[0][1]:end] if end is not None and not _LIST_GOES_ON.match(sentence, end) else ""


def _ends(sentence: str, spans: list[tuple[str, int]], before: list[str]) -> list[int]:
    """Where the gap may start in a sentence (its words lowercased, each with its start): right after the
    question's two words before its wh-word (`before`), printed together, or with up to JOINED_WORDS
    lowercase words joined to the first by "and" or "or" ("singer-songwriter and guitarist from" for "a
    singer-songwriter from what state?")."""
    words, ends = [word for word, _ in spans], []
    for i in (i for i, word in enumerate(words) if before and word == before[0]):
        if words[i + 1:i + 2] == before[1:]:
            ends.append(i + 2)
        elif words[i + 1:i + 2] in (["and"], ["or"]):
            ends += [i + 3 + joined for joined in range(1, JOINED_WORDS + 1)
                     if words[i + 2 + joined:i + 3 + joined] == before[1:]
                     and all(sentence[first].islower() for _, first in spans[i + 2:i + 2 + joined])]
    return ends


def _typed(sentence: str, between: list[tuple[str, int]], after: list[str]) -> bool:
    """Whether the words `between` (lowercased, each with its start in `sentence`) may stand between the
    gap's two words and the answer: lowercase words ("the sitcom"), or the words `after` the question's
    wh-word ("which Queensland Senator"), or none; or, when the question asks for one of the REGIONS, a
    smaller place and its comma ("based in Philadelphia, Pennsylvania" for "based in what state?")."""
    if all(sentence[first].islower() for _, first in between) or [word for word, _ in between] == after[:len(between)]:
        return True
    return bool(between) and _asks_region(after) and all(sentence[first].isupper() for _, first in between) \
        and sentence.startswith(",", between[-1][1] + len(between[-1][0]))


def _asks_region(after: list[str]) -> bool:
    """Whether the question's words after its wh-word ask for a state, a country, ... (REGIONS)."""
    return bool(after) and after[0] in REGIONS


def _untyped(phrase: str, after: list[str]) -> str:
    """The phrase without the words the question puts right after its wh-word (`after`, as printed; up to
    TYPE_WORDS) at its start ("which Queensland Senator": "Queensland Senator Barnaby Joyce" → "Barnaby
    Joyce"), nor those it capitalises at its end ("which Native American tribes": "Lakota and Dakota Sioux
    Native American" → "Lakota and Dakota Sioux"; "what city" keeps "New York City"); "" when nothing
    else is left."""
    words, typed = phrase.split(), [word.lower() for word in after[:TYPE_WORDS]]
    while words and words[0].lower() in typed:
        words.pop(0)
    while words and words[-1] in after[:TYPE_WORDS] and words[-1][0].isupper():
        words.pop()
    return " ".join(words)


def _trimmed(match: re.Match) -> str:
    """The phrase without the stopwords it ends on; "" when it starts with one or holds no other word."""
    words = (match["quoted"] or match["name"]).strip(" .,'’").split()
    while words and words[-1].lower() in STOPWORDS:
        words.pop()
    return " ".join(words) if words and words[0].lower() not in STOPWORDS else ""


def typed(question: str, phrase: str) -> bool:
    """A phrase holds a number only when it is a name that numbers a thing ("Studio 33", "Apollo 11": a
    capitalised word first, not a month) or the question asks for a year, a date or a count: "February 27"
    and "1999 World Drivers" do not answer "which writer"."""
    first = phrase.split()[0] if phrase.split() else ""
    return not numbers_in(phrase) or (first.isalpha() and first[0].isupper() and first.lower() not in MONTHS) \
        or bool(asks_year(question) or _ASKS_DATE.search(question) or (YEAR.search(phrase) and asks_number(question)))


def gap_answer(question: str, places: Sequence[tuple[str, int]], corpus, bridges: Sequence[str] = ()) -> GapAnswer | None:
    """The one phrase that fills the question's gap on the pages `places` (doc_id, page) of `corpus` and
    grounds there (module doc); None when the question asks yes or no, or for an amount, or when no
    phrase or several ground."""
    if asks_yes_no(question) or (asks_number(question) and not asks_year(question)):
        return None
    places = list(dict.fromkeys(places))
    filled: dict[str, tuple[str, tuple[str, int], str]] = {}
    for place in places:
        for sentence in SENTENCE.split(corpus.page_text(*place) or ""):
            for phrase in gap_phrases(question, sentence):
                if typed(question, phrase):
                    filled.setdefault(phrase.lower(), (phrase, place, " ".join(sentence.split())))
    groundings = {key: ground(question, phrase, None, places, corpus, bridges=bridges)
                  for key, (phrase, _, _) in filled.items()}
    grounded = [GapAnswer(phrase, place, sentence, groundings[key], [])
                for key, (phrase, place, sentence) in filled.items() if groundings[key].level == GROUNDED]
    if not grounded and (hop := _on_the_hop(question, filled, groundings, places, corpus, bridges)):
        grounded = [hop]
    if len(grounded) != 1:
        return None
    return replace(grounded[0], filled=[phrase for phrase, _, _ in filled.values()])


def _on_the_hop(question: str, filled: dict[str, tuple[str, tuple[str, int], str]], groundings: dict[str, Grounding],
                places: Sequence[tuple[str, int]], corpus, bridges: Sequence[str]) -> GapAnswer | None:
    """A second hop's answer: the phrase printed on a page tied to what the question names, in a sentence
    that fills the gap but is not the page's sentence that names most of the question (that one ties it:
    "The drivers featured on the front cover ... are Eddie Irvine ..."; the gap is filled by "a racing
    video game developed by Studio 33"), grounded there when its page names more of the question's words
    and bridges than the page of any other such phrase; None when none, or two pages tie."""
    texts = {place: corpus.page_text(*place) or "" for place in places}
    asked = stems(question) | stems(" ".join(bridges))
    scored = sorted(((len((stems(texts[place]) | stems(place[0])) & asked), phrase, place, sentence)
                     for key, (phrase, place, sentence) in filled.items()
                     if groundings[key].pages.get(place) == ON_PAGE and place in tied_pages(question, phrase, texts, bridges)),
                    key=lambda found: -found[0])
    if not scored or (len(scored) > 1 and scored[0][0] == scored[1][0]):
        return None
    _, phrase, place, sentence = scored[0]
    return GapAnswer(phrase, place, sentence, Grounding(GROUNDED, shown=[f"{phrase} · {place[0]} · p.{place[1]}"],
                                                        pages={place: GROUNDED}, sentence=sentence), [])


def other_gap_answer(question: str, answer: str, places: Sequence[tuple[str, int]], corpus,
                     bridges: Sequence[str] = ()) -> GapAnswer | None:
    """The `gap_answer` of those pages when it is not `answer`: the answer is not in it, and the sentence
    that fills the gap with it does not print the answer's own words either ("based in Philadelphia,
    Pennsylvania" prints both); else None."""
    found = gap_answer(question, places, corpus, bridges)
    if found is None or found.answer.lower() in answer.lower() or stems(answer) - stems(question) <= stems(found.sentence):
        return None
    return found
