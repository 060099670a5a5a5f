"""A text answer grounds only when it names what the question's gap asks for (`programs.grounding.gap_type`):
a person for "who", a place for "where", a whole name, not a word modifying the next."""
from __future__ import annotations

import pytest

from ferret.programs.grounding import gap_type

SENTENCE = ("Kimber is an American company that makes Solo pistols; it was founded by Betty Cohen in Yonkers, "
            "sold across Europe, and it moved to Oregon in 1994, as Penn's recording says.")


def at(word: str, question: str, texts: dict | None = None, whole: str = "") -> str:
    start = SENTENCE.index(word)
    return gap_type(question, word, SENTENCE, start, start + len(word), texts or {}, whole)


@pytest.mark.parametrize("word, question, why", [
    ("Solo", "What company makes M1911 firearms?", "part of another name"),  # "Solo pistols"
    ("American", "Kimber is based in what city?", "part of another name"),  # "an American company"
    ("Penn's", "Who made the recording?", "part of another name"),
    ("Europe", "Kimber was founded by who?", "asks who"),                   # after "across": a place
    ("Yonkers", "Who founded Kimber?", "asks who"),                          # after "in"
    ("Betty Cohen", "In what city was Kimber founded?", "asks where"),       # no preposition before it
])
def test_a_name_that_is_not_what_the_gap_asks_for_is_said_why(word, question, why):
    assert why in at(word, question)


@pytest.mark.parametrize("word, question, texts", [
    ("Betty Cohen", "Kimber was founded by who?", None),
    ("Yonkers", "In what city was Kimber founded?", None),
    ("Oregon", "Where did Kimber move to?", None),
    # one word, whose own page says she was born: a person
    ("Cohen", "Who founded Kimber?", {("Cohen", 1): "Cohen (born 1950) is a businesswoman; she founded Kimber."}),
    ("Kimber", "What company makes Solo pistols?", None),  # followed by "is": a function word, not a modified noun
])
def test_a_name_of_the_gaps_type_passes(word, question, texts):
    assert at(word, question, texts) == ""


def test_a_word_the_whole_answer_goes_on_from_is_no_modifier():
    # "19th" of the answer "19th century" (the question says "century"): the whole answer is two words
    sentence = "The breed originated in Texas in the mid-19th century ago."
    start = sentence.index("19th")
    assert gap_type("Developed during which century?", "19th", sentence, start, start + 4, {}, "19th century") == ""
    assert "part of another name" in gap_type("Developed during which century?", "19th", sentence.replace("century", "dogs"),
                                              start, start + 4, {})


def test_who_counts_the_capitals_of_the_whole_answer():
    # the question says "Cohen": the part it does not say is "Betty", one capitalised word, but the answer is a full name
    question = "Who founded Kimber under the Cohen name?"
    assert at("Betty", question, whole="Betty Cohen") == ""
    assert "asks who" in at("Betty", question)
