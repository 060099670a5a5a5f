"""Comparisons answered in code from each part's own page (programs/comparison.py)."""
from __future__ import annotations

from ferret.programs.comparison import compare
from ferret.programs.verify import value_on_page


class _Pages:
    """One-page documents titled by their names, searched by any shared word: {title: text}."""

    def __init__(self, pages: dict[str, str]):
        self.pages = pages

    def search_text(self, query: str, bucket=None, doc_id=None, top_k=5, hybrid=True) -> list[dict]:
        asked = set(query.lower().split())
        return [{"doc_id": title, "title": title, "page": 1, "section": title, "node_id": title, "text": text}
                for title, text in self.pages.items() if asked & set(title.lower().split())][:top_k]

    def page_text(self, doc_id: str, page: int) -> str:
        return self.pages[doc_id]


BANDS = _Pages({"The Exies": "The Exies are an American rock band from Los Angeles, formed in 1997. They toured in 2004.",
                "Circus Diablo": "Circus Diablo is an American rock band, formed in early 2006 by Billy Morrison.",
                "Sid Haig": "Sid Haig (born July 14, 1939) is an American actor.",
                "Vic Darchinyan": "Vic Darchinyan (born 7 January 1976) is an Armenian professional boxer.",
                "Medici (board game)": "Medici is a German-style board game by Reiner Knizia.",
                "Senet": "Senet (or Senat) is a board game from ancient Egypt. Its oldest board dates to 3100 BC.",
                "Frozen (2013 film)": "Frozen is a 2013 American computer-animated musical fantasy film.",
                "Escape": "Escape is a 1976 British-American family drama film produced by Walt Disney Productions.",
                "E. B. White": 'Elwyn Brooks "E. B." White (July 11, 1899 – October 1, 1985) was an American writer.',
                "Dan Masterson": "Dan Masterson (born February 22, 1934) is an American poet born in Buffalo.",
                "The Guitar World According to Frank Zappa": "It is a 1987 compilation album.",
                "Science News": "Science News is an American magazine. It has been published since 1922."})


def test_which_came_first_is_the_part_whose_page_prints_the_earliest_year_first():
    found = compare("Which band was formed first, The Exies or Circus Diablo?", BANDS)
    assert found.kind == "order" and found.answer == "The Exies"
    assert [(side.name, side.value) for side in found.sides] == [("The Exies", "1997"), ("Circus Diablo", "2006")]
    assert compare("Which band was formed later, The Exies or Circus Diablo?", BANDS).answer == "Circus Diablo"
    assert compare("Who is the oldest, Sid Haig or Vic Darchinyan?", BANDS).answer == "Sid Haig"
    assert compare("Who is younger, Sid Haig or Vic Darchinyan?", BANDS).answer == "Vic Darchinyan"


def test_who_died_first_is_read_from_the_end_of_each_life_span_and_a_living_one_decides_nothing():
    lives = _Pages({"Ed Wood": "Edward Davis Wood Jr. (October 10, 1924 – December 10, 1978) was an American filmmaker.",
                    "E. B. White": 'Elwyn Brooks "E. B." White (July 11, 1899 – October 1, 1985) was an American writer.',
                    "Sid Haig": "Sid Haig (born July 14, 1939) is an American actor. He married in 1967."})
    found = compare("Who died first, Ed Wood or E. B. White?", lives)
    assert found.answer == "Ed Wood" and [side.value for side in found.sides] == ["1978", "1985"]
    assert compare("Which one died later, Ed Wood or E. B. White?", lives).answer == "E. B. White"
    assert compare("Who died first, Ed Wood or Sid Haig?", lives) is None  # Sid Haig's opening gives no end


def test_an_order_is_a_choice_between_the_names_not_an_ordinal_said_of_them():
    assert compare("The Exies and Circus Diablo were formed in Los Angeles. Which was formed first?", BANDS).answer == "The Exies"
    assert compare("Who was the first singer of The Exies and Circus Diablo?", BANDS) is None


def test_an_order_question_the_years_cannot_decide_gets_no_answer():
    tied = _Pages({"Alpha": "Alpha is a band formed in 1997.", "Beta": "Beta is a band, formed in 1997 too."})
    assert compare("Which band was formed first, Alpha or Beta?", tied) is None
    undated = _Pages({"Alpha": "Alpha is a band formed in 1997.", "Beta": "Beta is a band from Ohio."})
    assert compare("Which band was formed first, Alpha or Beta?", undated) is None


def test_both_is_yes_when_each_opening_names_what_the_question_says_and_no_when_one_names_a_word_the_other_does_not():
    found = compare("Are Medici and Senet both board games?", BANDS)
    assert found.answer == "Yes" and [side.value for side in found.sides] == ["board game", "board game"]
    found = compare("Are Frozen and Escape both animated films?", BANDS)
    assert found.answer == "No" and found.sides[0].value == "animated"
    assert found.sides[1].value.startswith("Escape is a 1976")  # what the other one is instead
    # neither opening says "features": the openings may word it otherwise, so nothing is decided on it
    assert compare("Are Medici and Senet both board features?", BANDS) is None


PLACES = _Pages({"Nantong": "Nantong is a prefecture-level city in Jiangsu province, China.",
                 "Jingdezhen": "Jingdezhen is a prefecture-level city in northeastern Jiangxi province, China.",
                 "Suzhou": "Suzhou is a major city in the south of Jiangsu Province.",
                 "Scott Derrickson": "Scott Derrickson (born July 16, 1966) is an American director and producer.",
                 "Ed Wood": "Edward Davis Wood Jr. (October 10, 1924 – December 10, 1978) was an American filmmaker.",
                 "Géza von Cziffra": "Géza von Cziffra (19 December 1900 – 28 April 1989) was a Hungarian-Austrian film director."})


def test_the_same_thing_is_the_value_each_opening_names_beside_the_questions_word_or_the_nationality_it_says():
    found = compare("Are Nantong and Jingdezhen situated in the same province?", PLACES)
    assert found.kind == "same" and found.answer == "No" and [s.value for s in found.sides] == ["Jiangsu", "Jiangxi"]
    assert compare("Are Nantong and Suzhou in the same province?", PLACES).answer == "Yes"
    # "Jr." ends no sentence before its parenthesis: the opening goes on to what he was
    assert compare("Were Scott Derrickson and Ed Wood of the same nationality?", PLACES).answer == "Yes"
    found = compare("Were Scott Derrickson and Géza von Cziffra of the same nationality?", PLACES)
    assert found.answer == "No" and found.sides[1].value == "Hungarian-Austrian"
    assert compare("Are Nantong and Suzhou in the same country?", PLACES) is None  # no opening names one beside "country"


def test_what_two_things_have_in_common_is_the_words_their_openings_share():
    found = compare("What do E. B. White and Dan Masterson have in common?", BANDS)
    assert found.kind == "common" and found.answer == "American"
    assert found.sides[0].sentence.startswith('Elwyn Brooks "E. B." White') and found.sides[0].sentence.endswith("writer.")


def test_a_part_without_a_page_titled_by_its_name_gets_no_answer():
    assert compare("Which magazine was published first, Guitar World or Science News?", BANDS) is None
    assert compare("Which band was formed first, The Exies or Circus Diablo?", _Pages({})) is None
    assert compare("Which band is louder, The Exies or Circus Diablo?", BANDS) is None  # no kind read here


def test_each_sides_value_is_printed_on_its_page():
    for question, pages in [("Which band was formed first, The Exies or Circus Diablo?", BANDS),
                             ("Are Frozen and Escape both animated films?", BANDS),
                             ("What do E. B. White and Dan Masterson have in common?", BANDS),
                             ("Are Nantong and Jingdezhen situated in the same province?", PLACES)]:
        for finding in compare(question, pages).findings:
            assert value_on_page(finding, pages.page_text(finding.doc_id, 1)), (question, finding)


def test_what_an_answer_states_is_checked_against_the_comparison():
    """A user's LM's answer agrees with a comparison when it gives its verdict first, picks its side first, or
    says what the sides share; the other verdict or side, or a choice naming the other side first, does not."""
    order = compare("Which band was formed first, The Exies or Circus Diablo?", BANDS)
    assert order.states("The Exies") and order.states("Exies, formed in 1997, nine years before Circus Diablo")
    assert not order.states("Circus Diablo, formed after The Exies") and not order.states("Neither")
    both = compare("Are Medici and Senet both board games?", BANDS)
    assert both.states("Yes, both are board games.") and not both.states("No") and not both.states("Both are games")
    common = compare("What do E. B. White and Dan Masterson have in common?", BANDS)
    assert common.states("Both are American writers") and not common.states("They are poets")
