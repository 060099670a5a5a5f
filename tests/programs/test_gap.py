"""The question's gap, and the name a page prints there (programs/gap.py)."""
from __future__ import annotations

import dspy

from ferret.programs.confirm import confirmed
from ferret.programs.gap import fills_the_gap, gap_answer, gap_phrases, other_gap_answer, typed
from ferret.programs.grounding import GROUNDED, ON_PAGE, ground
from ferret.programs.lm import answering
from ferret.signatures import ConfirmAnswer
from tests.fakes import scripted_lm

SCHOOL = "He attended the district school and graduated from Hebron Academy."
ANDREWS = "Charles Andrews graduated from what college preparatory boys' school?"


class _Pages:
    """A corpus of one-page documents, as `ground` reads a text answer: {doc_id: text}."""

    def __init__(self, pages: dict[str, str]):
        self.pages = pages

    def page_text(self, doc_id: str, page: int) -> str:
        return self.pages[doc_id]

    def page_cells(self, doc_id: str, page: int) -> list[dict]:
        return []


def _places(*doc_ids: str) -> list[tuple[str, int]]:
    return [(doc_id, 1) for doc_id in doc_ids]


def test_the_gap_is_the_questions_wh_word_and_the_words_beside_it_name_something():
    assert fills_the_gap(ANDREWS, SCHOOL, "Charles Andrews graduated from Hebron Academy.")  # the words the answer adds
    assert not fills_the_gap("Charles Andrews graduated from what school?", SCHOOL, "Academy")
    # "which" after a noun is a relative pronoun: the gap is the last wh-word, "who"
    show = "The series revolves around Scaredy Squirrel and Dave's adventures."
    assert not fills_the_gap('The show "Scaredy Squirrel" which was written by who?', show, "Dave's")
    assert fills_the_gap("Thumb Wrestling Federation is on a network founded by who?",
                         "It was founded by Betty Cohen and launched on October 1, 1992.", "Betty Cohen")
    # two stopwords beside the gap name nothing: "in the" is everywhere
    assert not fills_the_gap("She was born in the what?", "She was born in the Paris suburbs.", "Paris")
    assert fills_the_gap("She was born in what?", "She was born in Paris.", "Paris")


def test_the_phrase_in_the_gap_is_a_name_or_a_title_cut_at_a_stopword():
    assert gap_phrases(ANDREWS, SCHOOL) == ["Hebron Academy"]
    sitcom = 'She starred in the sitcom "Mad About You" for seven years, and played Carol Connelly in a film.'
    assert gap_phrases("The film features an actress who starred in what for seven years?", sitcom) == ["Mad About You"]
    earl = "Tostig Godwinson was an Anglo-Saxon Earl of Northumbria and brother of King Harold."
    assert gap_phrases("He was an Anglo-Saxon Earl of which location?", earl) == ["Northumbria"]
    assert gap_phrases("Both films were released by what label?",
                       "It was released under the new Walt Disney Pictures label.") == []  # "released under", not "released by"


def test_no_phrase_fills_a_relative_pronoun_or_a_lowercase_gap():
    # after a comma, "who" opens a relative clause: the question asks nothing there
    sentence = "The mother of Edward Stafford Henry Pole was a duchess."
    assert gap_phrases("Name the mother of Edward Stafford, who was the daughter of the English duke?", sentence) == []
    assert gap_phrases("Name the mother of Edward Stafford who was the daughter of the English duke?",
                       sentence) == ["Henry Pole"]  # without the comma, "who" is read as the gap
    assert gap_phrases("If Gallu is a demon Lilu is what?", "Lilu is mentioned in the Gilgamesh poem.") == []


def test_a_phrase_holds_a_number_only_when_it_numbers_a_name_or_the_question_asks_for_a_year_a_date_or_a_count():
    assert not typed("Between Iain Banks and Irwin Shaw, which writer has had a more diverse career?", "February 27")
    assert not typed("A racing video game developed by what company?", "1999 World Drivers")
    assert typed("A racing video game developed by what company?", "Studio 33")
    assert typed("The Adelaide team was formed in what year?", "1993")
    assert typed("Who directed the film?", "Stephen King")


def test_a_name_ends_where_its_capitalised_words_end_and_may_be_followed_by_the_type_the_question_asks():
    # "and la" of "and launched" is no part of the name (a connector such as "la" is a whole word)
    assert gap_phrases("Thumb Wrestling Federation is on a network founded by who?",
                       "It was founded by Betty Cohen and launched on October 1, 1992.") == ["Betty Cohen"]
    # the question's words after its wh-word may follow the name: "City" of "what city", "Native American tribes"
    assert gap_phrases("Scott Howell has worked with the mayor of what city?",
                       "Giuliani is a lawyer and former mayor of New York City, and an adviser.") == ["New York City"]
    tribes = "It is named after the Lakota and Dakota Sioux Native American tribes, who compose its population."
    assert fills_the_gap("The tornado hit a state named after which Native American tribes?", tribes, "Lakota and Dakota Sioux")
    # a type the question capitalises is no part of the answer; a lowercase one ("what city") may be
    assert gap_phrases("The tornado hit a state named after which Native American tribes?", tribes) == ["Lakota and Dakota Sioux"]
    assert not fills_the_gap("The tornado hit a state named after which tribes?", tribes, "Lakota and Dakota Sioux")


def test_a_state_or_a_country_is_the_place_after_the_comma_and_a_city_the_one_before_with_it():
    eagles = "The Philadelphia Eagles are a football franchise based in Philadelphia, Pennsylvania."
    state, city = "The NFL team was based in what state?", "The NFL team was based in what city?"
    assert gap_phrases(state, eagles) == ["Pennsylvania"] and gap_phrases(city, eagles) == ["Philadelphia, Pennsylvania"]
    assert fills_the_gap(state, eagles, "Pennsylvania") and not fills_the_gap(state, eagles, "Philadelphia")
    assert fills_the_gap(city, eagles, "Philadelphia") and not fills_the_gap(city, eagles, "Pennsylvania")
    assert gap_phrases("The team was based in what country?", "The team was based in Rome, Italy.") == ["Italy"]


def test_the_gaps_first_word_may_be_joined_to_another_by_and():
    ward = "M. Ward is a singer-songwriter and guitarist from Portland, Oregon."
    question = "The album is by a singer-songwriter from what state?"
    assert gap_phrases(question, ward) == ["Oregon"] and fills_the_gap(question, ward, "Oregon")
    assert gap_phrases(question, "He is a singer-songwriter and Paris guitarist from Portland, Oregon.") == []
    assert gap_phrases(question, "He is a singer-songwriter and a famous old guitarist from Portland, Oregon.") == []


def test_a_question_that_ends_on_a_preposition_and_what_is_filled_by_a_lowercase_phrase_that_ends_there():
    smart = "He was an Australian painter known for his precisionist depictions of urban landscapes that are witty."
    question = "The institute's speakers include a painter known for his precisionist depictions of what?"
    assert gap_phrases(question, smart) == ["urban landscapes"] and fills_the_gap(question, smart, "urban landscapes")
    assert gap_phrases("The dish is made from what?", "The dish is made from fermented rice.") == ["fermented rice"]
    # a list goes on after it; a word between the gap's words and the phrase; a gap that does not end the question
    assert gap_phrases("The dish is made from what?", "The dish is made from rice, beans and pork.") == []
    assert gap_phrases("The dish is made from what?", "The dish is made from the rice of Gilan.") == []
    assert gap_phrases("The dish is made from what grain?", "The dish is made from fermented rice.") == []
    assert gap_phrases("The city is famous for what?", "The city is famous for being old.") == []


def test_the_answer_is_the_one_phrase_that_fills_the_gap_and_grounds():
    pages = _Pages({"Charles Andrews": "Charles Andrews\nCharles Andrews was an American politician. " + SCHOOL,
                    "Hebron Academy": "Hebron Academy\nHebron Academy is a college preparatory school in Maine."})
    found = gap_answer(ANDREWS, _places("Charles Andrews", "Hebron Academy"), pages)
    assert found is not None and found.answer == "Hebron Academy" and found.place == ("Charles Andrews", 1)
    assert found.grounding.level == "grounded" and found.filled == ["Hebron Academy"]


def test_of_two_phrases_that_fill_the_gap_the_one_that_grounds_is_the_answer_and_two_that_ground_are_none():
    # the sentence that names more of the question grounds its phrase; the other is only on the page
    one = _Pages({"Charles Andrews": "Charles Andrews\n" + SCHOOL + " He also graduated from Fryeburg Academy."})
    found = gap_answer(ANDREWS, _places("Charles Andrews"), one)
    assert found.answer == "Hebron Academy" and found.filled == ["Hebron Academy", "Fryeburg Academy"]
    both = _Pages({"Charles Andrews": "Charles Andrews\nHe attended the district school, graduated from Hebron "
                                      "Academy and graduated from Fryeburg Academy."})
    assert gap_answer(ANDREWS, _places("Charles Andrews"), both) is None
    # the page that fills the gap is not about what the question names: the name is only on that page
    elsewhere = _Pages({"Ann Smith": "Ann Smith\nAnn Smith graduated from Hebron Academy."})
    assert gap_answer(ANDREWS, _places("Ann Smith"), elsewhere) is None


RUNNER_UP = ("The runner-up in the 1999 World Drivers' Championship appears on the front cover of a racing video game "
             "developed by what company?")
IRVINE = "Eddie Irvine\nEddie Irvine was the runner-up in the 1999 World Drivers' Championship."


def test_on_a_second_hops_page_the_gap_is_filled_in_one_sentence_and_the_page_tied_in_another():
    arcade = ("Formula One Arcade\nFormula One Arcade is a racing video game developed by Studio 33. "
              "The drivers on the front cover are Eddie Irvine and Michael Schumacher, world champions.")
    rally = ("Colin McRae Rally\nColin McRae Rally is a racing video game developed by Codemasters. "
             "Eddie Irvine, a World Championship driver, played it.")
    places = _places("Eddie Irvine", "Formula One Arcade", "Colin McRae Rally")
    pages = _Pages({"Eddie Irvine": IRVINE, "Formula One Arcade": arcade, "Colin McRae Rally": rally})
    # neither name is in the sentence of its page that names most of the question: that one ties the page
    assert all(ground(RUNNER_UP, name, None, places, pages, bridges=["Eddie Irvine"]).level == ON_PAGE
               for name in ("Studio 33", "Codemasters"))
    found = gap_answer(RUNNER_UP, places, pages, ["Eddie Irvine"])
    # both pages name the bridge; the game's names more of the question ("front cover")
    assert found.answer == "Studio 33" and found.grounding.level == GROUNDED and found.place == ("Formula One Arcade", 1)
    assert found.filled == ["Studio 33", "Codemasters"]
    rally = rally.replace("Eddie Irvine, a World Championship driver, played it.",
                          "The drivers on the front cover are Eddie Irvine and Jarno Trulli, world champions.")
    tied = _Pages({"Eddie Irvine": IRVINE, "Formula One Arcade": arcade, "Colin McRae Rally": rally})
    assert gap_answer(RUNNER_UP, places, tied, ["Eddie Irvine"]) is None  # two pages name as much: none is chosen
    untied = _Pages({"Eddie Irvine": IRVINE, "Formula One Arcade": arcade.replace("Eddie Irvine", "Jarno Trulli"),
                     "Colin McRae Rally": rally.replace("Eddie Irvine", "Jarno Trulli")})
    assert gap_answer(RUNNER_UP, places, untied, ["Eddie Irvine"]) is None  # no page is tied to the question


def test_a_city_is_answered_with_the_region_printed_after_its_comma():
    question = "Jon Luther was the CEO of a restaurant holding company headquartered in what city?"
    assert gap_phrases(question, "Dunkin' Brands is a restaurant holding company headquartered in Canton, "
                                 "Massachusetts.") == ["Canton, Massachusetts"]
    assert gap_phrases(question, "It is a restaurant holding company headquartered in Canton.") == ["Canton"]
    assert gap_phrases(question.replace("what city", "what state"), "It is a restaurant holding company "
                       "headquartered in Canton, Massachusetts.") == ["Massachusetts"]


def test_a_text_answer_whose_pages_fill_the_gap_with_another_name_is_not_grounded_and_the_model_is_not_asked():
    question = "Tostig Godwinson was an Anglo-Saxon Earl of which location?"
    pages = _Pages({"Tostig Godwinson": "Tostig Godwinson\nTostig Godwinson was an Anglo-Saxon Earl of Northumbria.",
                    "Rhiwallon": "Rhiwallon\nAfter Tostig Godwinson invaded Wales, Rhiwallon was given Powys and Gwynedd."})
    places = _places("Tostig Godwinson", "Rhiwallon")
    grounding = ground(question, "Powys and Gwynedd", None, places, pages)
    assert grounding.level == GROUNDED  # in the sentence of its page that names most of the question
    lm, engine = scripted_lm({"confirm": {"answers_question": True}})
    with answering(lm):
        contradicted = confirmed(dspy.Predict(ConfirmAnswer), question, "Powys and Gwynedd", grounding, GROUNDED,
                                 pages, places)
        asked = confirmed(dspy.Predict(ConfirmAnswer), question, "Powys and Gwynedd", grounding, GROUNDED)
    assert contradicted.level == ON_PAGE and "with 'Northumbria'" in contradicted.reason
    assert asked.level == GROUNDED and engine.steps() == ["confirm"]  # only the call without the pages asked
    assert other_gap_answer(question, "Northumbria", places, pages) is None
    # a sentence that prints the answer beside the gap's name does not contradict it
    both = _Pages({"Tostig Godwinson": "Tostig Godwinson\nTostig Godwinson was an Anglo-Saxon Earl of Northumbria, "
                                       "in Bernicia."})
    assert other_gap_answer(question, "Bernicia", _places("Tostig Godwinson"), both) is None


def test_the_questions_own_type_words_may_stand_between_the_gap_and_the_name():
    question = "He served as chief of staff to which Queensland Senator, a Deputy Prime Minister?"
    sentence = "He previously served as chief of staff to Queensland Senator Barnaby Joyce and was a director."
    assert fills_the_gap(question, sentence, "Barnaby Joyce")
    assert gap_phrases(question, sentence) == ["Barnaby Joyce"]  # the type words are not the name
    assert not fills_the_gap(question, "He served as chief of staff to Victorian Premier John Cain.", "John Cain")
