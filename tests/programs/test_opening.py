"""The answer a page names in its opening, when the opening says it is what the question asks for (programs/opening.py)."""
from __future__ import annotations

import json

import dspy
import pytest

from ferret.programs.iterative import IterativeRetriever
from ferret.programs.opening import asked_type, opening_answer, opening_type
from tests.fakes import scripted_lm

FILM = "Barrier Device starred which Canadian actress, known for a role on \"Grey's Anatomy\", as a sex researcher?"
PAGES = {
    "Barrier Device": "Barrier Device\n\"Barrier Device\" is a 2002 short film written and directed by Grace Lee. "
                      "It stars Sandra Oh as a sex researcher and Suzy Nakamura as a subject.",
    "Sandra Oh": "Sandra Oh\nSandra Miju Oh (born July 20, 1971) is a Canadian actress known for her role as "
                 "Cristina Yang on ABC's medical drama \"Grey's Anatomy\".",
    "Neve Campbell": "Neve Campbell\nNeve Adrianne Campbell (born October 3, 1973) is a Canadian actress known for her role "
                     "as Sidney Prescott and a guest role on \"Grey's Anatomy\".",
    "Jessica Capshaw": "Jessica Capshaw\nJessica Brooke Capshaw (born August 9, 1976) is an American actress known for "
                       "her role as Arizona Robbins on \"Grey's Anatomy\".",
    "Yoko Ono": "Yoko Ono\nYoko Ono (born February 18, 1933) is a Japanese multimedia artist, singer and songwriter "
                "known for her work with \"Grey's Anatomy\".",
}


class _Pages:
    def __init__(self, pages: dict[str, str]):
        self.pages = pages

    def page_text(self, doc_id: str, page: int) -> str:
        return self.pages[doc_id]


def _places(*doc_ids: str) -> list[tuple[str, int]]:
    return [(doc_id, 1) for doc_id in doc_ids]


def test_the_asked_type_is_the_words_after_which_or_what_up_to_a_stopword_or_a_comma():
    assert asked_type(FILM) == ["Canadian", "actress"]
    assert asked_type("What recurring character makes his first appearance in this episode?") == ["recurring", "character", "makes"]
    assert asked_type("What is the capital of France?") == [] and asked_type("Who directed Jaws?") == []


def test_the_type_is_held_by_the_head_of_the_openings_is_a_clause_up_to_its_noun():
    assert opening_type("recurring fictional character in the American animated sitcom", ["recurring", "character", "makes"])
    assert opening_type("Canadian actress known for her role", ["Canadian", "actress"])
    assert not opening_type("American actress known for her role", ["Canadian", "actress"])
    assert not opening_type("Japanese multimedia artist, singer and songwriter", ["singer"])  # after the head
    assert not opening_type("low budget British comedy film", ["low", "budget", "British"])  # no noun held


def test_the_page_that_opens_as_the_asked_type_and_that_the_film_names_is_the_answer_grounded_in_its_opening():
    found = opening_answer(FILM, _places(*PAGES), _Pages(PAGES))
    assert found is not None and found.answer == "Sandra Miju Oh" and found.place == ("Sandra Oh", 1)
    assert found.grounding.level == "grounded" and found.sentence.startswith("Sandra Miju Oh (born July 20, 1971) is a Canadian actress")


def test_two_pages_of_the_type_that_nothing_else_tells_apart_give_no_answer():
    """Without the film's page, two Canadian actresses known for "Grey's Anatomy" tie; an American one never counts."""
    assert opening_answer(FILM, _places("Sandra Oh", "Neve Campbell", "Jessica Capshaw"), _Pages(PAGES)) is None
    assert opening_answer(FILM, _places("Sandra Oh", "Jessica Capshaw"), _Pages(PAGES)).answer == "Sandra Miju Oh"


def test_no_answer_for_a_choice_a_yes_no_question_or_a_page_not_tied_to_what_the_question_names():
    pages = _Pages(PAGES)
    assert opening_answer("Which actress is Canadian, Sandra Oh or Jessica Capshaw?", _places(*PAGES), pages) is None
    assert opening_answer("Is Sandra Oh a Canadian actress?", _places(*PAGES), pages) is None
    assert opening_answer("Which Canadian actress starred in Scream?", _places("Sandra Oh"), pages) is None


@pytest.fixture(scope="module")
def actress_corpus(tmp_path_factory):
    from ferret.corpus.ingest import ingest
    from ferret.corpus.tools import Corpus

    root = tmp_path_factory.mktemp("opening")
    (root / "passages.json").write_text(json.dumps({title: [text.split("\n", 1)[1]] for title, text in PAGES.items()}))
    ingest([root / "passages.json"], root / "index")
    return Corpus(root / "index")


def test_the_iterative_program_answers_from_the_opening_after_a_first_read_that_did_not(actress_corpus):
    """The read names both of the film's stars, which no page prints together: it fails; the opening rung
    answers in code, grounded and cited, with no second read."""
    both = {"calculation": {"expression": ""}, "answer": "Sandra Oh and Suzy Nakamura", "sources": [1], "missing": ""}
    lm, engine = scripted_lm({"read": both})
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        result = IterativeRetriever(actress_corpus, read_k=3)(question=FILM)
    assert engine.steps() == ["route", "read"]
    assert [step.get("rung") for step in result.trajectory if step["step"] in ("read", "opening")] == ["read", "opening"]
    assert result.status == "answer" and result.answer == "Sandra Miju Oh" and result.answered_by == "opening"
    assert result.grounding == "grounded" and result.citations_verified and result.citations[0]["doc_id"] == "Sandra Oh"
    assert "not grounded" in result.failed_searches[0]["reason"]
