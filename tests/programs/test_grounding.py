"""Grounding levels: a value grounds only in the question's row, column or sentence (programs/grounding.py)."""
from __future__ import annotations

import json

import dspy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ferret.corpus.tools import Corpus
from ferret.cli import main
from ferret.programs.arithmetic import names_operation
from ferret.programs.baselines import OneShotRAG
from ferret.programs.confirm import confirmed
from ferret.programs.display import citation_mark, grounding_lines
from ferret.programs.grounding import (GROUNDED, ON_PAGE, UNSUPPORTED, asks_number, computed_type, expected_type, ground,
                                      list_items, numbers_only,
                                      question_stems, settle, unit_type)
from ferret.programs.lm import answering
from ferret.programs.verify import same_number
from ferret.signatures import ConfirmAnswer
from tests.fakes import scripted_lm

REPORT, CONTRACT = "northwind-annual-report-2023", "contract-acme-keystone-2023"
SEGMENTS = [(REPORT, 13)]  # the segment table: Consumer 412.6 (2023) / 380.1 (2022), Total 1,822.9 / 1,549.2
CONSUMER_2022 = "What was Consumer segment revenue in 2022?"
NOTICE = "In ACME's 2023 service contract, how many days' notice does termination for convenience require?"


@pytest.fixture(scope="module")
def corpus(sample_index):
    return Corpus(sample_index)


def test_the_value_of_the_questions_row_and_year_grounds_with_what_grounded_it(corpus):
    grounding = ground(CONSUMER_2022, "380.1 million", None, SEGMENTS, corpus)
    assert grounding.level == GROUNDED and grounding.reason == ""
    assert grounding.shown == ["380.1 · Consumer · Revenue 2022 · p.13"]
    assert grounding.pages == {SEGMENTS[0]: GROUNDED}


def test_a_value_of_another_row_on_the_page_is_on_the_page_only(corpus):
    """The demo's "1,822.9 million" for Consumer 2022: the Total row's 2023 revenue, printed on the cited page."""
    grounding = ground(CONSUMER_2022, "1,822.9 million U.S. dollars", None, SEGMENTS, corpus)
    assert grounding.level == ON_PAGE and "1,822.9" in grounding.reason


def test_a_value_of_the_questions_row_in_another_year_is_on_the_page_only(corpus):
    assert ground(CONSUMER_2022, "412.6 million", None, SEGMENTS, corpus).level == ON_PAGE


def test_each_cited_pages_table_rows_are_read_once_for_all_the_values(corpus, monkeypatch):
    reads = []
    monkeypatch.setattr(corpus, "page_cells", lambda *place: reads.append(place) or Corpus.page_cells(corpus, *place))
    grounding = ground("What was Consumer segment revenue in 2023 and 2022?", "412.6 million and 380.1 million", None,
                       SEGMENTS + [(REPORT, 12)], corpus)
    assert grounding.level == GROUNDED and len(grounding.shown) == 2
    assert sorted(reads) == sorted(SEGMENTS + [(REPORT, 12)])


def test_a_value_printed_on_no_cited_page_is_unsupported(corpus):
    assert ground(CONSUMER_2022, "377.7 million", None, SEGMENTS, corpus).level == UNSUPPORTED


def test_a_section_number_for_a_count_of_days_does_not_ground(corpus):
    """The demo's "The answer is 12.1": the clause's number, printed on the page, but not as days."""
    pages = [(CONTRACT, 2)]
    assert ground(NOTICE, "The answer is 12.1", None, pages, corpus).level != GROUNDED
    grounding = ground(NOTICE, "90 days", None, pages, corpus)
    assert grounding.level == GROUNDED and grounding.shown[0].startswith("90 · ")


def test_a_right_computed_answer_grounds_when_each_operand_does(corpus):
    question = "What was the percentage change in Consumer segment revenue from 2022 to 2023?"
    computation = "(412.6 - 380.1) / 380.1 * 100"
    assert ground(question, "8.5505", [412.6, 380.1], SEGMENTS, corpus, computation).level == GROUNDED
    # an operand from the Total row does not ground, though it is printed on the page
    assert ground(question, "17.6", [1822.9, 1549.2], SEGMENTS, corpus, "(1822.9 - 1549.2) / 1549.2 * 100").level == ON_PAGE


def test_a_calculation_of_another_operation_than_the_question_names_is_unsupported(corpus):
    question = "What was the percentage change in Consumer segment revenue from 2022 to 2023?"
    grounding = ground(question, "32.5", [412.6, 380.1], SEGMENTS, corpus, "412.6 - 380.1")
    assert grounding.level == UNSUPPORTED and "percentage change" in grounding.reason


def test_a_calculation_without_a_sum_or_difference_of_the_formula_the_question_writes_is_unsupported(corpus):
    """The question's own formula ("CCC is defined as: DIO + DSO - DPO") is summed and subtracted: a calculation that
    only adds ratios is not it. A slash between words is an "or", not a division asked for."""
    ccc = ("What is the FY2019 cash conversion cycle (CCC) for Northwind? CCC is defined as: DIO + DSO - DPO. DIO is "
           "defined as: 365 * (average inventory) / (FY2019 COGS).")
    grounding = ground(ccc, "1,468.8", [412.6, 380.1], SEGMENTS, corpus, "365 * (412.6 / 380.1) + 365 * (412.6 / 380.1)")
    assert grounding.level == UNSUPPORTED and "formula has -" in grounding.reason
    assert computed_type(ccc, "365 * (412.6 / 380.1) + 365 * (380.1 / 412.6) - 365 * (412.6 / 380.1)") == ""
    assert computed_type("What was the increase / (decrease) in Consumer revenue from 2022 to 2023?", "412.6 - 380.1") == ""
    assert computed_type("What was Consumer revenue from FY2022 - FY2023 in total?", "412.6 + 380.1") == ""


@pytest.mark.parametrize("question, answer, why", [
    ("Does the Consumer segment have positive operating income in 2023?", "38.2", "yes or no"),
    ("In which year was Consumer revenue the largest?", "412.6", "a year"),
    ("Who is the chief executive of Northwind?", "2023", "who"),
    ("What was Consumer segment revenue in 2022?", "Consumer revenue grew", "no number"),
    ("How much was Consumer segment revenue in 2022?", "Consumer revenue grew", "asks for a number"),
    ("Why did Consumer segment revenue grow in 2023?", "412.6", "asks why or how"),
    ("How is the Consumer segment's revenue growth rate determined?", "12.4%", "asks why or how"),  # a method, no rate
])
def test_an_answer_of_another_type_than_the_question_asks_is_unsupported(corpus, question, answer, why):
    grounding = ground(question, answer, None, SEGMENTS, corpus)
    assert grounding.level == UNSUPPORTED and why in grounding.reason


def test_an_answer_grounded_below_accept_is_a_fail_with_the_answer_as_unconfirmed_candidate(corpus):
    grounding = ground(CONSUMER_2022, "1,822.9 million", None, SEGMENTS, corpus)
    status, answer, reason, candidate = settle("answer", "1,822.9 million", "", grounding, GROUNDED)
    assert (status, answer, candidate) == ("fail", "", "1,822.9 million") and reason.startswith("unconfirmed (on_page)")
    assert settle("answer", "1,822.9 million", "", grounding, ON_PAGE) == ("answer", "1,822.9 million", "", "")


class _Page:
    """A corpus of one page holding one table, as `ground` reads it (page_text, page_cells)."""

    def __init__(self, rows: list[tuple[str, float]]):
        self.rows = rows

    def page_text(self, doc_id: str, page: int) -> str:
        return "\n".join(f"{label} {value:,.1f}" for label, value in self.rows)

    def page_cells(self, doc_id: str, page: int) -> list[dict]:
        return [{"label": label, "cells": [("2023", f"{value:,.1f}", value)]} for label, value in self.rows]


_LABEL = st.lists(st.sampled_from(["cash", "inventory", "goodwill", "payables", "leases", "pension", "tax",
                                   "debt", "equity", "wages", "rent", "freight"]), min_size=1, max_size=2, unique=True)


@settings(max_examples=60, deadline=None)
@given(asked=_LABEL, other=_LABEL, value=st.floats(1, 1e6), elsewhere=st.floats(1, 1e6))
def test_a_value_printed_only_in_another_row_never_grounds(asked, other, value, elsewhere):
    """Whatever the labels and values: the question names row A; a value printed only in row B (whose label
    shares no word with A's) is never grounded (unless both rows print the same quantity up to scale and rounding:
    1.0 million is 995,000)."""
    value, elsewhere = round(value, 1), round(elsewhere, 1)
    if set(asked) & set(other) or same_number(value, elsewhere):
        return
    page = _Page([(" ".join(asked).title(), elsewhere), (" ".join(other).title(), value)])
    question = f"What was the {' '.join(asked)} in 2023?"
    assert ground(question, f"{value:,.1f}", None, [("doc", 1)], page).level != GROUNDED


def test_the_terminal_shows_each_grounded_value_and_marks_an_unconfirmed_candidate():
    grounded = {"status": "answer", "grounding": "grounded", "grounded_values": ["380.1 · Consumer · Revenue 2022 · p.13"]}
    assert grounding_lines(grounded) == ["grounded: 380.1 · Consumer · Revenue 2022 · p.13"]
    unconfirmed = {"status": "fail", "grounding": "on_page", "candidate": "1,822.9 million",
                   "grounded_values": ["1,822.9 · p.13"]}
    assert grounding_lines(unconfirmed) == ["unconfirmed candidate (on the page only): 1,822.9 million", "  1,822.9 · p.13"]
    assert grounding_lines({"status": "fail", "reason": "nothing found"}) == []
    assert citation_mark({"verified": True, "grounding": "on_page"}) == "on the page only"
    assert citation_mark({"verified": True}) == "verified"  # a result from before grounding levels


def test_a_year_answers_which_year_only_where_the_questions_row_is_largest(corpus):
    question = "In which year was Consumer segment revenue the largest?"  # 412.6 in 2023, 380.1 in 2022
    grounding = ground(question, "2023", None, SEGMENTS, corpus)
    assert grounding.level == GROUNDED and grounding.shown == ["2023 · Consumer · p.13"]
    assert ground(question, "2022", None, SEGMENTS, corpus).level != GROUNDED
    assert ground(question.replace("largest", "smallest"), "2022", None, SEGMENTS, corpus).level == GROUNDED
    offered = "Between 2022 and 2023, which year had the larger Consumer segment revenue?"  # the years it names are its choices
    assert ground(offered, "2023", None, SEGMENTS, corpus).level == GROUNDED
    assert ground(offered, "2022", None, SEGMENTS, corpus).level != GROUNDED


def test_ask_prints_an_unconfirmed_answer_as_such_and_a_grounded_one_with_what_grounded_it(small_corpus, monkeypatch,
                                                                                          capsys):
    """A read that cites the Total row for Consumer revenue: `ask` prints FAIL with why, the candidate marked
    unconfirmed with where it is printed; the Consumer row's value prints grounded, with its cell, and its
    citation grounded."""
    index = str(small_corpus.store.dir)
    for said, first_lines in [
        ("3,650", ["FAIL: unconfirmed (on_page): 3,650 is printed on the page, but not where the question's metric "
                   "and period are named; nothing found", "  unconfirmed candidate (on the page only): 3,650",
                   "    3,650 · p.1"]),
        ("1,250", ["ANSWER: 1,250", "  grounded: 1,250 · Consumer · 2023 · p.1", "  [report.md p.1] Segment Results (grounded)"]),
    ]:
        read = {"calculation": {"expression": ""}, "answer": said, "sources": [1], "missing": ""}
        lm, _ = scripted_lm({"read": read, "extract": {"findings": [], "sections_searched": [], "failure_reason": "none"}})
        monkeypatch.setattr("ferret.programs.lm.make_lm", lambda spec=None, lm=lm: lm)
        # two years asked: no one year's cell, which the table rung would read in code before any read
        assert main(["ask", "What was Consumer revenue in 2023, and in 2022?", "--index", index, "--doc", "report",
                     "--max-iterations", "2"]) == 0
        out = capsys.readouterr().out.splitlines()
        assert out[:3] == first_lines


class _Passage:
    """A corpus of one passage page, as `ground` reads a text answer."""

    def __init__(self, text: str):
        self.text = text

    def page_text(self, doc_id: str, page: int) -> str:
        return self.text

    def page_cells(self, doc_id: str, page: int) -> list[dict]:
        return []


def test_a_number_a_sentence_states_for_another_year_than_the_question_asks_does_not_ground_there():
    passage = _Passage("Foreign exchange\nThe Group reported exchange gains of approximately RMB77 million "
                       "(2018: RMB229 million) within finance costs for the year ended 31 December 2019. Free cash flow "
                       "was $610 million in 2019, compared to $533 million and $308 million in 2018 and 2017, respectively.")
    page = [("Foreign exchange", 1)]
    gains = "How much exchange gains did the Group report for the year ended 31 December 2019?"
    assert ground(gains, "RMB77 million", None, page, passage).level == GROUNDED
    assert ground(gains, "RMB229 million", None, page, passage).level == ON_PAGE  # the year before's, as labelled
    assert ground(gains.replace("2019", "2018"), "RMB229 million", None, page, passage).level == GROUNDED
    cash = "What was the free cash flow in 2018?"
    assert ground(cash, "$533 million", None, page, passage).level == GROUNDED
    assert ground(cash, "$308 million", None, page, passage).level == ON_PAGE  # 2017's, respectively
    assert ground("What was the free cash flow?", "$308 million", None, page, passage).level == GROUNDED  # no year asked


def test_a_name_grounds_in_the_sentence_that_names_the_question_not_as_a_fuller_name_of_its_subject():
    passage = _Passage("Audrey Williams\nAudrey Mae Sheppard Williams was an American singer. She was pregnant with "
                       "her son Randall Hank Williams during the recording of Dear Brother. Her first husband was Erskine Guy.")
    question, page = 'Who was Audrey Williams pregnant with during the recording of "Dear Brother"?', [("Audrey Williams", 1)]
    assert ground(question, "Randall Hank Williams", None, page, passage).level == GROUNDED  # a name of the family too
    assert ground(question, "Audrey Mae Sheppard Williams", None, page, passage).level == ON_PAGE  # the subject, restated
    assert ground(question, "Erskine Guy", None, page, passage).level == ON_PAGE  # printed, in another sentence
    assert ground(question, "Dear Brother", None, page, passage).level == UNSUPPORTED  # adds nothing to the question


def test_a_fuller_name_made_of_two_words_of_a_name_the_question_quotes_is_not_its_answer():
    passage = _Passage("Direct Action Committee\nThe Direct Action Committee was a pacifist organisation of the 1950s.")
    question = 'What genre is the author of the story behind "Act of War; Direct Action" associated with?'
    page = [("Direct Action Committee", 1)]
    assert ground(question, "Direct Action Committee", None, page, passage).level == ON_PAGE
    assert ground(question, "Direct Action Committee", None, page, passage).reason.endswith("not what it asks")
    # a value of the page, but the page is not about the story the question names
    assert ground(question, "pacifist organisation", None, page, passage).level == ON_PAGE


class _Pages(_Passage):
    def __init__(self, texts: dict[str, str]):
        self.texts = texts

    def page_text(self, doc_id: str, page: int) -> str:
        return self.texts[doc_id]


def test_a_yes_or_no_the_model_stated_is_on_page_at_most_and_its_opposite_grounds_the_same():
    """A page that states the claim grounds its words, not the verdict: "Yes" and "No" get one level."""
    pages = _Pages({"Watertown International Airport": "Watertown International Airport is a public airport in New York.",
                    "Alexandria International Airport": "Alexandria International Airport is an airport in Louisiana.",
                    "Airports": "Watertown International Airport is in the same state as the Alexandria one."})
    question = "Are Watertown International Airport and Alexandria International Airport both airports in the same state?"
    cited = [(doc_id, 1) for doc_id in pages.texts]
    said = [ground(question, verdict, None, cited, pages) for verdict in ("Yes", "No")]
    assert [g.level for g in said] == [ON_PAGE, ON_PAGE]
    assert said[0].pages == {place: ON_PAGE for place in cited} and "verdict" in said[0].reason


def test_a_choice_between_two_names_is_answered_by_one_of_them_not_by_a_third_name_of_the_pages():
    pages = _Pages({"Lake Vostok": "Lake Vostok was found in 1993 under the ice of Antarctica.",
                    "Peter Lindqvist": "Peter Lindqvist was born in 1961 in Uppsala, Sweden."})
    question = "Which came first, the discovery of Lake Vostok or the birth of Peter Lindqvist?"
    cited = [(doc_id, 1) for doc_id in pages.texts]
    third = ground(question, "Uppsala", None, cited, pages)
    assert third.level == UNSUPPORTED and "offers 'Lake Vostok' or 'Peter Lindqvist'" in third.reason
    assert "neither" not in ground(question, "Peter Lindqvist", None, cited, pages).reason  # one of them: judged as before


def test_the_questions_company_with_its_legal_form_adds_nothing_to_the_question():
    passage = _Passage("BEST BUY CO., INC.\nThe entertainment category grew the most in the Domestic segment.")
    question = "Which Best Buy product category performed the best in the domestic (USA) market during FY2023?"
    page = [("BESTBUY_2023_10K", 1)]
    grounding = ground(question, "Best Buy Co., Inc.", None, page, passage)
    assert (grounding.level, grounding.reason) == (UNSUPPORTED, "the answer adds nothing to the question")
    assert ground(question, "entertainment", None, page, passage).level == GROUNDED


def test_a_name_grounds_only_on_a_page_tied_to_what_the_question_names():
    """A school's own page answered "Charles Andrews graduated from what college preparatory school?"
    though no cited page names Charles Andrews; a film's page grounds its director once the town's page
    that names the film is cited beside it."""
    pages = _Pages({"Worksop College Preparatory School": "Worksop College Preparatory School is a preparatory "
                                                          "school for boys and girls aged 3 to 13.",
                    "Charles Andrews": "Charles Andrews is an American football coach."})
    question = "Charles Andrews graduated from what college preparatory boys' school?"
    school = [("Worksop College Preparatory School", 1)]
    grounding = ground(question, "Worksop College Preparatory School", None, school, pages)
    assert grounding.level == ON_PAGE and grounding.pages == {school[0]: ON_PAGE}
    assert ground(question, "Worksop College Preparatory School", None, school + [("Charles Andrews", 1)],
                  pages).level == ON_PAGE  # his page is cited, but names no school
    pages.texts["Charles Andrews"] = "Charles Andrews was a pupil at Worksop College Preparatory School."
    assert ground(question, "Worksop College Preparatory School", None, school + [("Charles Andrews", 1)],
                  pages).level == GROUNDED
    hops = _Pages({"Leland, North Carolina": "The film Maximum Overdrive was shot in and around Leland in 1986.",
                   "Maximum Overdrive": "Maximum Overdrive is a horror film directed by Stephen King."})
    question, film = "Who directed the film that was shot in or around Leland, North Carolina in 1986?", [("Maximum Overdrive", 1)]
    assert ground(question, "Stephen King", None, film, hops).level == ON_PAGE
    assert ground(question, "Stephen King", None, film + [("Leland, North Carolina", 1)], hops).level == GROUNDED
    assert ground(question, "Stephen King", None, [("Leland, North Carolina", 1)] + film, hops).level == GROUNDED  # cited second
    assert ground(question, "Stephen King", None, film, hops, bridges=["Maximum Overdrive"]).level == GROUNDED
    # the tie the other way: the song's page names the page that names the question's district
    song = _Pages({"The Hukilau Song": '"The Hukilau Song" is a song written by Jack Owens after attending a luau in Laie.',
                   "Laie, Hawaii": "Laie is a place in the Koolauloa District on the island of Oahu."})
    question = "Who wrote a song after attending a luau in the Koolauloa District on the island of Oahu?"
    cited = [("The Hukilau Song", 1), ("Laie, Hawaii", 1)]
    assert ground(question, "Jack Owens", None, cited, song).level == GROUNDED
    assert ground(question, "Jack Owens", None, cited[:1], song).level == ON_PAGE


def test_a_bridge_ties_the_page_it_titles_and_one_word_ties_a_title_it_starts():
    """A first-hop page that shares a word with the question ("Drew") and names its own bridge in part
    ("Television") grounded "ABC" for a question about Drew Fuller's series."""
    pages = _Pages({"Drew Fuller": 'Andrew "Drew" Fuller is an American actor, known for the series "Charmed".',
                    "The Drew Pearson Show": "The Drew Pearson Show was a television program originally broadcast on "
                                             "ABC and later on the DuMont Television Network.",
                    "Charmed": "Charmed is a series originally broadcast on the station UPN."})
    question = "Drew Fuller starred in a series that originally broadcast on what station?"
    cited = [("Drew Fuller", 1), ("The Drew Pearson Show", 1), ("Charmed", 1)]
    assert ground(question, "ABC", None, cited, pages, bridges=["Television", "DuMont Television Network"]).level == ON_PAGE
    assert ground(question, "UPN", None, cited, pages, bridges=["Charmed"]).level == GROUNDED
    assert ground(question, "UPN", None, cited[1:], pages).level == ON_PAGE  # nothing ties Charmed to Drew Fuller


def test_a_bridge_the_answer_names_does_not_lead_to_it():
    """The hops read the passages of a name the first ones print ("Part II"): that name is no bridge to an answer
    that is itself ("Part II" for "What do capital leases reflect?")."""
    passage = _Passage("Contractual obligations\nCapital leases reflect building and office equipment lease "
                       "obligations. Capital lease obligations are set out in Part II, Item 8.")
    question, page = "What do capital leases reflect?", [("Contractual obligations", 1)]
    assert ground(question, "building and office equipment lease obligations", None, page, passage,
                  bridges=["Part II"]).level == GROUNDED
    assert ground(question, "Part II", None, page, passage, bridges=["Part II"]).level == ON_PAGE


def test_a_name_grounds_where_it_is_printed_whole_or_followed_by_the_questions_own_words():
    pages = _Pages({"The Circuit": "The Circuit is a TV film starring Drew Fuller, originally airing on the station ABC Family.",
                    "South Dakota": "South Dakota is named after the Lakota and Dakota Sioux Native American tribes."})
    question = "Drew Fuller starred in a film that originally aired on what station?"
    assert ground(question, "ABC", None, [("The Circuit", 1)], pages).level == UNSUPPORTED  # "ABC Family" is another name
    assert ground(question, "ABC Family", None, [("The Circuit", 1)], pages).level == GROUNDED
    assert ground("South Dakota is named after which Native American tribes?", "Lakota and Dakota Sioux", None,
                  [("South Dakota", 1)], pages).level == GROUNDED


def test_an_operand_stated_as_the_answer_to_an_average_does_not_ground_but_the_calculation_does(corpus):
    question = "What was the average Consumer segment revenue in 2022 and 2023?"
    assert ground(question, "412.6", None, SEGMENTS, corpus).level == ON_PAGE  # a value of the row, not its average
    computation = "(412.6 + 380.1) / 2"
    assert ground(question, "396.35", [412.6, 380.1], SEGMENTS, corpus, computation).level == GROUNDED


def test_a_text_answer_is_grounded_by_its_words_not_by_a_date_or_a_number_it_happens_to_print():
    passage = _Passage("Steven John Wilson (born 3 November 1967) is an English musician. He wrote 23 songs.")
    question = 'What genre is the author of the story behind "Act of War" associated with?'
    assert ground(question, "Steven John Wilson (born 3 November 1967)", None, [("Steven Wilson", 1)], passage).level != GROUNDED
    assert numbers_only("1,098 and 1,055 respectively") and numbers_only("$2.1 million")
    assert not numbers_only("Toad Hall 23") and not numbers_only("The answer is 12.1")


def test_a_date_or_year_of_a_prose_page_grounds_by_its_day_and_month_not_as_a_table_headers_years():
    """On a page without a table, a year printed after its month and beside another year is a life's date,
    and a date's day is the answer's when the answer states that day with its month; another day is not."""
    passage = _Passage("Ezer Weizman\nEzer Weizman (15 June 1924 - 24 April 2005) was the seventh President of Israel, "
                       "born in Tel Aviv.")
    question, page = "In what year was the man who resigned as the President of Israel in 2000 born?", [("Ezer Weizman", 1)]
    assert ground(question, "1924", None, page, passage).level == GROUNDED
    assert ground(question, "1931", None, page, passage).level != GROUNDED
    question = "When was the seventh President of Israel born?"
    assert ground(question, "15 June 1924", None, page, passage).level == GROUNDED
    assert ground(question, "16 June 1924", None, page, passage).level != GROUNDED  # not the day printed
    assert ground(question, "24 June 1924", None, page, passage).level != GROUNDED  # the day of another month


def test_a_place_is_printed_after_a_preposition_before_the_whole_answer_not_inside_it():
    passage = _Passage("Jon L. Luther\nLuther is the Chairman of the Board of the Culinary Institute and of a restaurant "
                       "holding company headquartered in Canton, Massachusetts.")
    question, page = "Jon L. Luther is chairman of a restaurant holding company headquartered in what city?", [("Jon L. Luther", 1)]
    assert ground(question, "Canton, Massachusetts", None, page, passage).level == GROUNDED
    board = ground(question, "Chairman of the Board of the Culinary Institute", None, page, passage)
    assert board.level == ON_PAGE and "asks where" in board.reason  # its "of" is its own word, before no place


def test_a_sentence_that_starts_with_a_pronoun_is_about_the_pages_subject():
    """"It was released ..." of the page "Falling Away from Me (song)" prints the song's name where the pronoun is."""
    passage = _Pages({"Falling Away from Me (song)": "\"Falling Away from Me\" is a song by the band Korn. It was released as "
                      "the first single from Issues, debuting in an episode of the animated series South Park."})
    question = "What song debuted in an episode of the animated series South Park?"
    page = [("Falling Away from Me (song)", 1)]
    said = ground(question, "Falling Away from Me", None, page, passage)
    assert said.level == GROUNDED and said.sentence.startswith("It was released")  # the sentence as printed
    assert ground(question, "Korn", None, page, passage).level == ON_PAGE  # in a sentence that names less of it


def test_a_grounded_name_the_model_does_not_confirm_is_on_the_page_only():
    """The sentence that names most of the question can name several things; the model is asked which."""
    passage = _Passage("Lakota people\nThe Lakota are a Native American people that George Catlin painted with the "
                       "Dakota Sioux in New York.")
    question, page = "Which people did George Catlin paint with the Lakota?", [("Lakota people", 1)]
    grounding = ground(question, "New York", None, page, passage)
    assert grounding.level == GROUNDED and "New York" in grounding.sentence  # code cannot tell the names apart
    lm, engine = scripted_lm({"confirm": [{"answers_question": False}, {"answers_question": True}]})
    confirm = dspy.Predict(ConfirmAnswer)
    with answering(lm):
        refused = confirmed(confirm, question, "New York", grounding, GROUNDED)
        kept = confirmed(confirm, question, "New York", grounding, GROUNDED)
        not_asked = confirmed(confirm, question, "New York", grounding, ON_PAGE)  # on_page answers are stated anyway
    assert refused.level == ON_PAGE and "did not confirm" in refused.reason and refused.pages == {page[0]: ON_PAGE}
    assert kept == grounding and not_asked == grounding
    assert engine.steps() == ["confirm", "confirm"]
    assert engine.calls[0][1]["passage"] == grounding.sentence and engine.calls[0][1]["proposed_answer"] == "New York"


def test_oneshot_states_a_text_answer_only_when_the_model_confirms_it_and_never_asks_about_a_number(small_corpus):
    question = "What section does Note 3 refer to?"

    def answer(inputs):
        passages = json.loads(inputs["passages"])
        return {"answer": "Segment Results", "sources": [next(i for i, p in enumerate(passages) if "entitled" in p)]}

    for confirms, status in ((True, "answer"), (False, "fail")):
        lm, engine = scripted_lm({"answer": answer, "confirm": {"answers_question": confirms}})
        with answering(lm):
            result = OneShotRAG(small_corpus)(question=question, doc_id="report")
        assert engine.steps() == ["answer", "confirm"] and result.lm_calls == 2
        assert result.status == status and (result.answer or result.candidate) == "Segment Results"
        assert result.grounding == (GROUNDED if confirms else ON_PAGE)
    lm, engine = scripted_lm({"answer": {"answer": "Consumer revenue was 1,100.", "sources": [0]}})
    with answering(lm):
        OneShotRAG(small_corpus)(question="What was Consumer segment revenue in 2022?", doc_id="report")
    assert "confirm" not in engine.steps()


class _ShareTable:
    """A page with one row printed as amounts and as shares of the total, per year."""
    cells = [("2019 Net Sales", "$479,987", 479987.0), ("2019 % of Total", "40.0%", 40.0),
             ("2018 Net Sales", "$288,764", 288764.0), ("2018 % of Total", "38.1%", 38.1)]

    def page_text(self, doc_id: str, page: int) -> str:
        return "APAC " + " ".join(printed for _, printed, _ in self.cells)

    def page_cells(self, doc_id: str, page: int) -> list[dict]:
        return [{"label": "APAC", "cells": self.cells}]


def test_the_change_of_a_share_grounds_in_the_share_column_only():
    question = "What was the change in the percent of total sales from APAC between 2018 and 2019?"
    assert ground(question, "1.9", [40.0, 38.1], [("d", 1)], _ShareTable(), "40 - 38.1").level == GROUNDED
    amounts = ground(question, "191,223", [479987.0, 288764.0], [("d", 1)], _ShareTable(), "479987 - 288764")
    assert amounts.level == ON_PAGE  # the sales column, not the share the question asks about


def test_a_share_column_named_in_words_is_a_share_column_too():
    table = _ShareTable()
    table.cells = [(header.replace("% of Total", "Percent of Total"), printed, number) for header, printed, number in table.cells]
    question = "What was the change in the percent of total sales from APAC between 2018 and 2019?"
    assert ground(question, "1.9", [40.0, 38.1], [("d", 1)], table, "40 - 38.1").level == GROUNDED
    amounts = ground(question, "191,223", [479987.0, 288764.0], [("d", 1)], table, "479987 - 288764")
    assert amounts.level == ON_PAGE


class _Table:
    """One page that prints one table: its rows (label → {year: printed value}) under its caption."""

    def __init__(self, caption: str, rows: dict[str, dict[str, str]], group: str = ""):
        self.caption, self.rows, self.group = caption, rows, group  # `group`: the line its rows are printed under

    def page_text(self, doc_id, page):
        return "\n".join([self.caption, *(f"{label}  " + "  ".join(row.values()) for label, row in self.rows.items())])

    def page_cells(self, doc_id, page):
        return [{"label": label, "section": self.caption, "group": self.group,
                 "cells": [(year, text, float(text.replace(",", ""))) for year, text in row.items()]}
                for label, row in self.rows.items()]


def test_a_total_row_is_the_total_its_tables_caption_names():
    question = "What was the change in total personnel expenses from 2018 to 2019?"
    rows = {"Wages and salaries": {"2019": "200,000", "2018": "170,000"}, "Total": {"2019": "227,727", "2018": "188,503"}}
    place = [("d", 1)]
    args = (question, "39224", [227727.0, 188503.0], place)
    assert ground(*args, _Table("Personnel expenses for employees were as follows:", rows), "227727 - 188503").level == GROUNDED
    assert ground(*args, _Table("Other matters:", rows), "227727 - 188503").level == ON_PAGE  # a total of what?


def test_a_total_row_is_the_total_its_caption_names_when_the_question_asks_for_a_total_and_another_row_names_it():
    """A fees table whose rows name fees too ("Audit-Related Fees"): its "Total" row is the total fees the question
    asks for when the question says "total"; a question about audit-related fees alone is not answered by it."""
    rows = {"Audit-Related Fees": {"2019": "209,005", "2018": "173,934"}, "Total": {"2019": "4,314,005", "2018": "4,730,434"}}
    fees = _Table("Fees billed by our auditors were as follows:", rows)
    total = "What is the change in total fees from 2018 to 2019?"
    assert ground(total, "-416429", [4314005.0, 4730434.0], [("d", 1)], fees, "4314005 - 4730434").level == GROUNDED
    related = "What is the change in audit-related fees from 2018 to 2019?"
    assert ground(related, "-416429", [4314005.0, 4730434.0], [("d", 1)], fees, "4314005 - 4730434").level == ON_PAGE


def test_a_schedule_whose_rows_are_years_grounds_the_questions_column_in_its_years_row():
    rows = {"2021": {"Operating Leases": "138", "Finance Leases": "6"}, "2022": {"Operating Leases": "135", "Finance Leases": "7"}}
    leases = _Table("Maturities of lease liabilities:", rows)
    question = "What were the finance leases for 2022?"
    assert ground(question, "7", None, [("d", 1)], leases).level == GROUNDED
    assert ground(question, "6", None, [("d", 1)], leases).level == ON_PAGE  # 2021's
    assert ground(question, "135", None, [("d", 1)], leases).level == ON_PAGE  # the operating leases'
    assert ground("What is the sum of finance leases from 2021 to 2022?", "13", [6.0, 7.0], [("d", 1)], leases,
                  "6 + 7").level == GROUNDED


def test_a_calculations_operands_over_rows_the_question_does_not_name_ground_in_the_column_it_names():
    rows = {"Transportation Solutions": {"Total Expected Charges": "160", "Charges Incurred": "120"},
            "Industrial Solutions": {"Total Expected Charges": "80", "Charges Incurred": "75"}}
    charges = _Table("Restructuring charges by segment:", rows)
    average = "What was the average amount of total expected charges per segment?"
    assert ground(average, "120", [160.0, 80.0], [("d", 1)], charges, "(160 + 80) / 2").level == GROUNDED
    assert ground(average, "97.5", [120.0, 75.0], [("d", 1)], charges, "(120 + 75) / 2").level == ON_PAGE
    # one segment's value does not answer a question that names no segment
    assert ground("What were the total expected charges?", "160", None, [("d", 1)], charges).level == ON_PAGE


def test_a_list_of_one_tables_rows_grounds_when_the_table_names_the_question():
    rows = {"Billed": {"2019": "1,200", "2018": "1,100"}, "Unbilled": {"2019": "300", "2018": "250"}}
    receivables = _Table("Accounts receivable consisted of the following:", rows)
    question = "What types of accounts receivable are there?"
    grounding = ground(question, "Billed, Unbilled", None, [("d", 1)], receivables)
    assert grounding.level == GROUNDED and grounding.shown == ["Billed · d · p.1", "Unbilled · d · p.1"]
    assert ground("What types of inventory are there?", "Billed, Unbilled", None, [("d", 1)], receivables).level != GROUNDED
    assert ground(question, "Billed, Deferred", None, [("d", 1)], receivables).level != GROUNDED  # not its row


def test_a_list_of_rows_grounds_by_their_whole_labels_and_by_a_total_row_that_names_the_question():
    rows = {"Debtors": {"2019": "415.9"}, "Cash and cash equivalents": {"2019": "0.2"}, "Total current assets": {"2019": "416.1"}}
    balance = _Table("Company balance sheet", rows)
    grounding = ground("What were the components making up current assets?", "Debtors, Cash and cash equivalents", None,
                       [("d", 1)], balance)
    assert grounding.level == GROUNDED and grounding.shown == ["Debtors · d · p.1", "Cash and cash equivalents · d · p.1"]
    assert ground("What were the components making up inventories?", "Debtors, Cash and cash equivalents", None,
                  [("d", 1)], balance).level != GROUNDED
    assert ground("What were the components making up current assets?", "Debtors, Total current assets", None,
                  [("d", 1)], balance).level != GROUNDED  # the row that names the question is not one of its items


def test_how_many_years_a_row_exceeds_a_threshold_is_counted_from_its_cells():
    services = _Table("Revenue by type (in millions)", {"Total services": {"2020": "5,200", "2019": "5,100", "2018": "4,900"}})
    question = "How many years did Total services exceed $5,000 million?"
    grounding = ground(question, "2", None, [("d", 1)], services)
    assert grounding.level == GROUNDED and grounding.shown == ["2 of 3 years (2019, 2020) · Total services · p.1"]
    assert ground(question, "3", None, [("d", 1)], services).level != GROUNDED
    assert ground(question.replace("exceed", "fall below"), "1", None, [("d", 1)], services).level == GROUNDED
    assert ground("How many years did Total services exceed $5,000 million between 2018 and 2019?", "1", None,
                  [("d", 1)], services).level == GROUNDED  # of the years it names


def test_how_many_items_of_a_group_or_a_table_is_counted_from_its_rows_above_their_total():
    """The items counted are the rows above the first total, "Total ..." or a row naming the whole group ("Gross
    deferred tax assets"); with a threshold, those beyond it in the year the question names."""
    assets = _Table("Deferred tax assets and liabilities", {
        "Net operating loss carry forward": {"2019": "183,297", "2018": "119,259"},
        "Receivables": {"2019": "6,165", "2018": "7,111"},
        "Accrued expenses": {"2019": "81,731", "2018": "81,912"},
        "Gross deferred tax assets": {"2019": "271,193", "2018": "208,282"},
        "Less valuation allowance": {"2019": "1,319", "2018": "1,331"}}, group="Deferred tax assets")
    place = [("d", 1)]
    listed = "How many components are there under deferred tax assets?"
    assert ground(listed, "3", None, place, assets).shown == ["3 of 3 rows under Deferred tax assets · p.1"]
    assert ground(listed, "5", None, place, assets).level != GROUNDED  # not the total, nor what follows it
    assert ground(listed.replace("deferred tax assets", "inventories"), "3", None, place, assets).level != GROUNDED
    beyond = "How many components of deferred tax assets exceeded $50,000 thousand in 2019?"
    assert ground(beyond, "2", None, place, assets).level == GROUNDED
    assert ground(beyond, "3", None, place, assets).level != GROUNDED
    assert ground(beyond.replace(" in 2019", ""), "2", None, place, assets).level != GROUNDED  # which year's cells?
    expenses = _Table("Other operating expenses (in millions)", {
        "Impairment charges": {"2019": "94.2", "2018": "394.0"}, "Net losses on sales of assets": {"2019": "45.1", "2018": "85.6"},
        "Total other operating expenses": {"2019": "139.3", "2018": "479.6"}})
    segments = "How many expenses segments in 2019 were above $50 million?"
    assert ground(segments, "1", None, place, expenses).shown == ["1 of 2 rows · p.1"]
    assert ground(segments.replace("2019", "2018"), "2", None, place, expenses).level == GROUNDED
    assert ground(segments, "2", None, place, expenses).level != GROUNDED


def test_the_years_a_row_is_beyond_a_threshold_ground_all_and_only_together():
    services = _Table("Revenue by type (in millions)", {"Total services": {"2020": "5,200", "2019": "4,100", "2018": "4,900"}})
    question = "In which year was Total services less than $5,000 million?"
    grounding = ground(question, "2019, 2018", None, [("d", 1)], services)
    assert grounding.level == GROUNDED and grounding.shown == ["2018, 2019 of 3 years · Total services · p.1"]
    assert ground(question, "2019", None, [("d", 1)], services).level != GROUNDED  # not all of them
    assert ground(question, "2019, 2020", None, [("d", 1)], services).level != GROUNDED
    assert ground("Which of the years had Total services greater than $5,000 million?", "2020", None, [("d", 1)],
                  services).level == GROUNDED


def test_which_row_or_column_is_largest_is_read_from_the_table_the_question_names():
    segments = _Table("Revenue by segment:", {"Consumer": {"2019": "412.6", "2018": "380.1"},
                                              "Industrial": {"2019": "390.0", "2018": "401.0"},
                                              "Total": {"2019": "802.6", "2018": "781.1"}})
    question = "Which segment had the largest revenue in 2019?"
    assert ground(question, "Consumer", None, [("d", 1)], segments).shown == ["Consumer · 2019 · p.1"]
    assert ground(question, "Industrial", None, [("d", 1)], segments).level != GROUNDED
    assert ground(question.replace("2019", "2018"), "Industrial", None, [("d", 1)], segments).level == GROUNDED
    threshold = "Which segment had more revenue than 400 in 2019?"  # a threshold, not the largest
    assert ground(threshold, "Consumer", None, [("d", 1)], segments).level != GROUNDED
    assert ground("Which segment had the largest revenue in 2018 and 2019 respectively?", "Industrial, Consumer", None,
                  [("d", 1)], segments).level != GROUNDED  # two names: not one table's extreme
    balances = _Table("Goodwill by segment:", {"Net balances at September 30, 2018": {
        "Transportation": "50,870", "Defense": "270,692", "Total": "321,562"}})
    wide = "In which business segment were the net balances at September 30, 2018 the largest?"
    assert ground(wide, "Defense", None, [("d", 1)], balances).level == GROUNDED
    assert ground(wide, "Transportation", None, [("d", 1)], balances).level != GROUNDED


def test_which_year_is_larger_reads_each_years_amount_not_its_share_beside_it():
    """Canada's revenue rose (70,774 → 96,168) while its share of the total fell (6.6% → 6.1%)."""
    rows = {"Canada": {"2019 $": "96,168", "2019 %": "6.1", "2018 $": "70,774", "2018 %": "6.6"}}
    table = _Table("Revenues by geographic location", rows)
    question = "Between 2018 and 2019, which year had higher revenue in Canada?"
    assert ground(question, "2019", None, [("d", 1)], table).level == GROUNDED
    assert ground(question, "2018", None, [("d", 1)], table).level != GROUNDED
    share = "Between 2018 and 2019, which year had a higher percentage of revenue in Canada?"
    assert ground(share, "2018", None, [("d", 1)], table).level == GROUNDED


def test_a_calculations_operands_ground_in_their_years_columns_beside_the_column_that_prints_its_result():
    """A column named by the question's operation ("Change %") holds the printed result, not the operands."""
    question = "What was the percentage change in underlying EBITDA between 2018 and 2019?"
    rows = {"Underlying EBITDA": {"30 June 2019 $'000": "85,123", "30 June 2018 $'000": "62,575", "Change %": "36"}}
    assert ground(question, "36.0336", [85123.0, 62575.0], [("d", 1)], _Table("Results", rows),
                  "(85123 - 62575) / 62575 * 100").level == GROUNDED
    sales = {"Net sales": {"Domestic 2019": "500", "Domestic 2018": "400", "International 2019": "330",
                           "International 2018": "300", "Change": "130"}}  # the columns the question names still count
    asked = "What was the percentage change in international net sales between 2018 and 2019?"
    assert ground(asked, "10", [330.0, 300.0], [("d", 1)], _Table("Sales", sales), "(330 - 300) / 300 * 100").level == GROUNDED
    assert ground(asked, "25", [500.0, 400.0], [("d", 1)], _Table("Sales", sales), "(500 - 400) / 400 * 100").level == ON_PAGE


def test_a_column_of_another_year_does_not_make_its_words_tell_the_questions_columns_apart():
    """"December" is printed only over the 2018 column: the 2019 column is still the one of "31 December 2019"."""
    question = "How much was the direct energy consumption (MWh) for the year ended 31 December 2019?"
    rows = {"Direct energy consumption (MWh)": {"Indicators 2019": "19,144.17",
                                                "For the year ended 31 December 2018": "12,852.04"}}
    table = _Table("Use of resources", rows)
    assert ground(question, "19,144.17", None, [("d", 1)], table).level == GROUNDED
    assert ground(question, "12,852.04", None, [("d", 1)], table).level == ON_PAGE
    two = {"Working capital adjustment": {"Estimated at June 30, 2019": "38", "Adjustments": "20",
                                          "Final as of December 31, 2019": "18"}}  # columns of one year: the month tells them apart
    asked = "What was the working capital adjustment at June 30, 2019?"
    assert ground(asked, "38", None, [("d", 1)], _Table("Note 3", two)).level == GROUNDED
    assert ground(asked, "18", None, [("d", 1)], _Table("Note 3", two)).level == ON_PAGE


def test_a_row_labelled_by_two_capitals_is_the_row_of_the_country_the_question_names():
    rows = {"UK": {"2019 $M": "83.2", "2018 $M": "73.5"}, "USA": {"2019 $M": "222.2", "2018 $M": "199.0"}}
    table = _Table("Revenue from external customers by country", rows)
    question = "What is the Revenue from UK in 2019?"
    assert ground(question, "83.2", None, [("d", 1)], table).level == GROUNDED
    assert ground(question, "222.2", None, [("d", 1)], table).level == ON_PAGE


def test_expenses_are_no_capital_expenditure_but_capital_expenditures_are_purchases_of_property_and_equipment():
    question = "What was the accrued expenses in 2019?"
    assert not question_stems(question) & {"capex", "prope", "equip"}
    assert {"purch", "prope", "equip"} <= question_stems("What were the capital expenditures in FY2019?")
    assert {"capit", "expen"} <= question_stems("What is the FY2019 capex?")
    rows = {"Property, plant and equipment, due to depreciation": {"2019": "66,268", "2018": "97,420"},
            "Accrued expenses": {"2019": "81,731", "2018": "81,912"}}
    assert ground(question, "81,731", None, [("d", 1)], _Table("Deferred tax assets", rows)).level == GROUNDED


def test_a_weighted_average_is_read_where_it_is_printed_not_asked_to_be_computed():
    question = "What is the weighted-average exchange rate for Taiwan Dollar for 2018 and 2019, respectively?"
    rows = {"Taiwan Dollar": {"Years ended December 31, 2019": "30.90", "Years ended December 31, 2018": "30.15"},
            "Swedish Krona": {"Years ended December 31, 2019": "9.46", "Years ended December 31, 2018": "8.70"}}
    table = _Table("Weighted-average exchange rates", rows)
    assert ground(question, "30.15 and 30.90", None, [("d", 1)], table).level == GROUNDED
    assert ground(question, "8.70 and 9.46", None, [("d", 1)], table).level == ON_PAGE


def test_a_where_that_names_the_place_of_a_number_asks_for_no_name():
    """"Where" asks for a place as the question's first or last word; "the city where she was born" says
    whose population is asked (a HotpotQA train question, "what was he population of the city where ...")."""
    name = "the question asks for a name, the answer is a number"
    assert expected_type("What was the population of the city where Kerry Saxby-Junna was born?", "6,960") == ""
    assert expected_type("Where was Kerry Saxby-Junna born?", "6,960") == name
    assert expected_type("Kerry Saxby-Junna was born where?", "6,960") == name
    assert expected_type("What was the ship named?", "1912") == name


def test_a_name_printed_beside_the_words_the_question_puts_before_its_gap_grounds():
    """The page's first sentence names more of the question ("Australian soap opera"), but the relation the
    question asks through ("created by who?") is printed beside the answer in another sentence; a name of
    that page beside no such word still does not ground."""
    pages = _Pages({"Neighbours": "Neighbours is an Australian television soap opera. It was first broadcast on "
                                  "the Seven Network. It was created by TV executive Reg Watson. It stars Alan Fletcher."})
    question = "Kate Ramsay is a character from an Australian soap opera Neighbours created by who?"
    page = [("Neighbours", 1)]
    grounding = ground(question, "Reg Watson", None, page, pages)
    assert grounding.level == GROUNDED and grounding.sentence == "It was created by TV executive Reg Watson."
    assert ground(question, "Alan Fletcher", None, page, pages).level == ON_PAGE
    assert ground("Which actor of the Australian soap opera Neighbours was born in Melbourne?", "Reg Watson", None,
                  page, pages).level == ON_PAGE  # no word before the gap: the sentence naming most decides


def test_a_list_grounds_as_its_least_grounded_item_where_the_page_prints_it_otherwise():
    """The page prints the items with "and" between the last two; the answer lists them with commas."""
    passage = _Passage("Contracts\nOur contract types are fixed-price, cost-plus and time-and-material. "
                       "Revenue from sales is recognised over time.")
    question, page = "What are the contract types?", [("Contracts", 1)]
    assert list_items("fixed-price, cost-plus, time-and-material") == ["fixed-price", "cost-plus", "time-and-material"]
    assert ground(question, "fixed-price, cost-plus, time-and-material", None, page, passage).level == GROUNDED
    refused = ground(question, "fixed-price, cost-plus, unit-price", None, page, passage)
    assert refused.level == UNSUPPORTED and "unit-price" in refused.reason  # one item printed nowhere
    assert ground(question, "fixed-price, sales", None, page, passage).level == ON_PAGE  # printed in another sentence


def test_a_list_answers_a_question_naming_a_metric_when_it_lists_no_number():
    passage = _Passage("Balance sheet\nCurrent assets are made up of debtors and cash and cash equivalents.")
    question, page = "What were the components making up current assets?", [("Balance sheet", 1)]
    assert ground(question, "Debtors, Cash and cash equivalents", None, page, passage).level == GROUNDED
    assert ground(question, "Debtors", None, page, passage).reason == "the answer states no number"  # no list
    assert list_items("12, 14 and 16") == [] and list_items("Canton") == []


def test_a_name_a_cited_page_calls_another_kind_than_the_question_asks_for_does_not_ground():
    """"Who was the DJ of ...?": a page that opens "Tom Hale (1950 – 2010) was an English cricketer" says what
    Tom Hale is, so the bridge the question names by its kind is no DJ; the one the album was "DJ'ed by" is."""
    pages = _Pages({"Big Beats": "Big Beats is a compilation album DJ'ed by Sam Rivers and partly produced by Tom Hale.",
                    "Tom Hale (cricketer)": "Tom Hale (1950 – 2010) was an English cricketer born in Leeds. "
                                            "Tom Hale partly produced the compilation album Big Beats."})
    question = "Who was the DJ of the compilation album partly produced by an English cricketer born in Leeds?"
    cited = [("Big Beats", 1), ("Tom Hale (cricketer)", 1)]
    hale = ground(question, "Tom Hale", None, cited, pages)
    assert hale.level == ON_PAGE and "English cricketer" in hale.reason
    assert ground(question, "Sam Rivers", None, cited, pages).level == GROUNDED


def test_a_name_asked_by_its_kind_grounds_only_where_a_cited_page_says_it_is_one():
    """"Which actress ...?": a name is one where a cited page calls it one or the clause that prints it names the
    kind; a name beside it in the sentence that names the question ("the dog Rex") is not."""
    pages = _Pages({"Blue Sky (film)": "Blue Sky is a 1999 film directed by Max Orr that stars Ann Lee and the dog Rex.",
                    "Ann Lee": "Ann Lee is an American actress."})
    question = "Which actress is in the 1999 film directed by Max Orr?"
    cited = [("Blue Sky (film)", 1), ("Ann Lee", 1)]
    assert ground(question, "Ann Lee", None, cited, pages).level == GROUNDED
    rex = ground(question, "Rex", None, cited, pages)
    assert rex.level == ON_PAGE and "actress" in rex.reason
    alone = ground(question, "Ann Lee", None, cited[:1], pages)  # her own page not cited: nothing says she is one
    assert alone.level == ON_PAGE and "no cited page says" in alone.reason


def test_a_name_asked_by_its_kind_is_one_in_the_clause_that_names_the_kind_and_a_definition_is_read_by_its_head():
    """"Which heavy metal band ...?": the vocalist the band's sentence names in another clause ("..., formed by
    vocalist Erik Dahl") is no band, though that sentence prints "band"; "a sports show host" calls a man a host,
    not a show; "Under what name ...?" asks for any name, not one a page calls a "name"."""
    pages = _Pages({"Iron Wolf": "Iron Wolf is a Danish heavy metal band from Copenhagen, formed in 1981 by vocalist "
                                 "Erik Dahl and guitarist Per Holm.",
                    "Old Demos": "Old Demos is a compilation album of rare demo tracks by Iron Wolf."})
    question = "Which Danish heavy metal band from Copenhagen released a compilation album of rare demo tracks?"
    cited = [("Iron Wolf", 1), ("Old Demos", 1)]
    assert ground(question, "Iron Wolf", None, cited, pages).level == GROUNDED
    dahl = ground(question, "Erik Dahl", None, cited, pages)
    assert dahl.level == ON_PAGE and "no cited page says 'Erik Dahl' is one" in dahl.reason
    host = _Pages({"Dan Mill": "Dan Mill (born 1972) is a retired American basketball player and a sports show host on "
                               "Hoop TV's Court Talk."})
    question, cited = "What show does the retired American basketball player Dan Mill host?", [("Dan Mill", 1)]
    assert ground(question, "Court Talk", None, cited, host).level == GROUNDED
    mill = ground("What show does a retired American basketball player born in 1972 host?", "Dan Mill", None, cited, host)
    assert mill.level == ON_PAGE and "calls 'Dan Mill'" in mill.reason
    void = _Pages({"Void (album)": "Void is an album released by the producer Sam Wolf under the pseudonym Bass Union."})
    assert ground("Under what name did Sam Wolf release his album Void?", "Bass Union", None, [("Void (album)", 1)],
                  void).level == GROUNDED


def test_a_kind_printed_inside_another_name_names_that_one_and_a_list_of_examples_is_of_the_kind_before_it():
    """"Awarded the Medal of Honor": "medal" names that medal, not the navy in the same clause; "films, such as
    Blue Sky" says Blue Sky is a film, though the list is a clause of its own; a name that is its clause alone
    is what the next clause says ("JANE T. DOE, Vice President of Treasury")."""
    pages = _Pages({"Jim Stock": "Jim Stock (1923 – 2005) was a United States Navy admiral awarded the Medal of Honor. "
                                 "Jim Stock has appeared in numerous films, such as Blue Sky, as himself."})
    cited = [("Jim Stock", 1)]
    assert ground("What medal was Jim Stock awarded?", "Medal of Honor", None, cited, pages).level == GROUNDED
    navy = ground("What medal was Jim Stock awarded?", "United States Navy", None, cited, pages)
    assert navy.level == ON_PAGE and "no cited page says 'United States Navy' is one" in navy.reason
    assert ground("In what film has Jim Stock appeared?", "Blue Sky", None, cited, pages).level == GROUNDED
    officers = _Passage("Executive officers\nJANE T. DOE, Vice President of Treasury since October 2017; Controller of "
                        "the Company from July 2013 to October 2017.")
    question = "Who is the Vice President of Treasury since October 2017?"
    assert ground(question, "JANE T. DOE", None, [("Executive officers", 1)], officers).level == GROUNDED


def test_who_asks_for_a_person_which_a_name_whose_own_cited_page_never_says_born_he_or_she_is_not():
    """"Founded by who?": the network a show aired on is a name of two capitalised words, but its own page, cited,
    speaks of it as "it"; the founder's page is not cited, and two capitalised words are a person's name."""
    pages = _Pages({"Thumb Show": "Thumb Show is an animated series. It aired on Toon Network in Canada.",
                    "Toon Network": "Toon Network is a television channel. It was founded by Betty Cole in 1992."})
    question, cited = "Thumb Show is on a network founded by who?", [("Thumb Show", 1), ("Toon Network", 1)]
    assert ground(question, "Betty Cole", None, cited, pages).level == GROUNDED
    network = ground(question, "Toon Network", None, cited, pages)
    assert network.level == ON_PAGE and "no person's name" in network.reason


def test_a_name_printed_inside_a_longer_quoted_title_does_not_ground():
    passage = _Pages({"Korn's Groovy Pirate Ghost Mystery": "\"Korn's Groovy Pirate Ghost Mystery\" is an episode of South "
                      "Park in which the song \"Falling Away from Me\" debuted."})
    question, page = "What debuted in the episode of South Park?", [("Korn's Groovy Pirate Ghost Mystery", 1)]
    korn = ground(question, "Korn", None, page, passage)
    assert korn.level == ON_PAGE and "quoted title" in korn.reason
    assert ground(question, "Falling Away from Me", None, page, passage).level == GROUNDED


def test_a_count_written_in_words_grounds_as_the_words_printed():
    """"How many times ...?" answered "two-time": no digit to read, so its words are looked for as a text's are."""
    passage = _Pages({"Dan Roe": "Dan Roe (born 1977) is a former American football player. Dan Roe was a two-time "
                                 "Pro Bowl selection in the National Football League."})
    question, page = "How many times was Dan Roe selected for the Pro Bowl of the National Football League?", [("Dan Roe", 1)]
    assert ground(question, "two-time", None, page, passage).level == GROUNDED
    assert ground(question, "three-time", None, page, passage).level == UNSUPPORTED


def test_places_asked_in_the_plural_keep_the_place_rule_not_the_kind_rule():
    """"Which countries ...?" asks where, as "Which country ...?" does: places printed after "in" ground though no
    page says they are countries."""
    passage = _Passage("Pensions\nThe group operates defined benefit indemnity plans only in Greece.")
    question, page = "Which countries does the group operate defined benefit indemnity plans in?", [("Pensions", 1)]
    assert ground(question, "Greece", None, page, passage).level == GROUNDED


def test_a_name_a_cited_page_calls_no_place_does_not_answer_which_city():
    """"In what city?" asks for a place: a company that a cited page defines as one is none, though it is printed
    after "of" in the sentence that names the question."""
    pages = _Pages({"Jon Luther": "Jon Luther was the chairman and CEO of Acme Restaurant Group, headquartered in Canton.",
                    "Acme Restaurant Group": "Acme Restaurant Group is an American restaurant holding company.",
                    "Canton": "Canton is a town in Norfolk County, Massachusetts."})
    question = "Jon Luther was the chairman and CEO of a restaurant holding company headquartered in what city?"
    cited = [(doc_id, 1) for doc_id in pages.texts]
    assert ground(question, "Canton", None, cited, pages).level == GROUNDED
    assert ground(question, "Acme Restaurant Group", None, cited, pages).level == ON_PAGE


def test_a_number_in_prose_grounds_in_the_sentence_naming_most_of_the_metric_and_an_anaphor_goes_on_about_the_last():
    """Of a page's sentences that state a number, the one naming most of the question's metric holds a single value
    (another naming one of its words holds another metric's); "The increase was due to ..." is about the increase
    the sentence before it names."""
    pages = _Pages({"Note 9": "We paid federal income taxes of $36.5 million in fiscal 2019. Our federal research credits "
                              "were $4.2 million in fiscal 2019. Deferred revenue increased by $12.0 million in 2019. The "
                              "increase was due to higher subscription sales. Marketing costs rose on wider advertising."})
    question, page = "What was the federal income tax paid in fiscal 2019?", [("Note 9", 1)]
    assert ground(question, "$36.5 million", None, page, pages).level == GROUNDED
    assert ground(question, "$4.2 million", None, page, pages).level == ON_PAGE
    why = "What was the reason for the increase in deferred revenue?"
    assert ground(why, "higher subscription sales", None, page, pages).level == GROUNDED
    assert ground(why, "wider advertising", None, page, pages).level == ON_PAGE


class _GroupedTable:
    """A corpus of one page holding one table whose rows are printed under label-only lines (page_cells' "group")."""

    def __init__(self, rows: list[tuple[str, str, float]], column: str = "2019"):
        self.rows, self.column = rows, column

    def page_text(self, doc_id: str, page: int) -> str:
        lines, above = [self.column], ""
        for group, label, value in self.rows:
            lines += [f"{group}:"] if group != above else []
            lines.append(f"{label}  {value:,}")
            above = group
        return "\n".join(lines)

    def page_cells(self, doc_id: str, page: int) -> list[dict]:
        return [{"label": label, "section": "", "group": group, "cells": [(self.column, f"{value:,}", value)]}
                for group, label, value in self.rows]


def test_a_row_is_read_with_the_group_it_is_printed_under_and_a_bridge_does_not_lift_a_groups_part():
    shares = _GroupedTable([("", "Net income", 206_587.0), ("Weighted-average common shares outstanding", "Basic", 57_840.0),
                            ("Weighted-average common shares outstanding", "Diluted", 59_082.0),
                            ("Weighted-average common shares outstanding", "Net income per basic share", 3.57)])
    question, page = "What was the basic weighted-average common shares outstanding in 2019?", [("t1", 1)]
    assert ground(question, "57,840", None, page, shares).level == GROUNDED  # "Basic" under the group the question names
    assert ground(question, "59,082", None, page, shares).level == ON_PAGE  # its row names no word of the question
    assert ground(question, "3.57", None, page, shares).level == ON_PAGE
    # a search's synonyms ("products") are no words the question said: the group's part stays below its total
    costs = _GroupedTable([("Cost of revenue", "Product", 100.0), ("Cost of revenue", "Services", 50.0),
                           ("Cost of revenue", "Total cost of revenue", 150.0)])
    question, bridges = "What was the cost of goods sold in 2019?", ["cost of revenue products"]
    assert ground(question, "150", None, page, costs, bridges=bridges).level == GROUNDED
    assert ground(question, "100", None, page, costs, bridges=bridges).level == ON_PAGE
    # nor does a synonym of the question's ("stock" for inventories) lend a row its group's words ("Acme")
    balance = _GroupedTable([("Current assets", "Merchandise inventories", 5_409.0),
                             ("Acme Inc. Shareholders' Equity", "Preferred stock", 27.0)])
    assert ground("What is the total amount of inventories for Acme in 2019?", "5,409", None, page, balance).level == GROUNDED
    periods = _GroupedTable([("December 31, 2019", "Total", 19_731.0), ("December 31, 2018", "Total", 15_568.0)],
                            "Accounts receivable")
    question = "What was the total accounts receivable in 2018?"
    assert ground(question, "15,568", None, page, periods).level == GROUNDED  # the group is the row's period
    assert ground(question, "19,731", None, page, periods).level == ON_PAGE


def test_a_list_of_a_groups_rows_grounds_when_the_question_names_the_group_and_its_comparative_is_the_groups():
    """"more" inside the group the question quotes asks for no comparison; the items must be that group's rows."""
    debtors = _GroupedTable([("Amounts falling due within one year", "Amounts owed by subsidiaries", 242_976.0),
                             ("Amounts falling due within one year", "Derivative financial instruments", 183.0),
                             ("Amounts falling due after more than one year", "Derivative financial instruments", 3_439.0),
                             ("Amounts falling due after more than one year", "Deferred tax", 31.0)])
    question, page = "What financial items does amounts falling due after more than one year consist of?", [("t1", 1)]
    assert ground(question, "Derivative financial instruments, Deferred tax", None, page, debtors).level == GROUNDED
    assert ground(question, "Amounts owed by subsidiaries, Deferred tax", None, page, debtors).level != GROUNDED


def test_a_verdict_stated_with_its_two_figures_grounds_when_each_grounds_in_its_period_and_the_verdict_agrees():
    """A reader's yes or no to "did X increase", with the figures it rests on: each must be the question's metric in
    its own period, the verdict their direction, and a change it computes theirs."""
    table = _Table("Acme statement of earnings", {"Net earnings as a percent of sales": {"Q2 2023": "20.1", "Q2 2022": "20.0"},
                                                  "Cost of products sold": {"Q2 2023": "32.2", "Q2 2022": "33.0"}})
    question, page = "Did Acme's net earnings as a percent of sales increase in Q2 of FY2023 compared to Q2 of FY2022?", [("d", 1)]
    said = lambda verdict, first, second, change="": ground(
        question, f"{verdict}, net earnings as a percent of sales{change} went from {first}% in Q2 of FY2022 to {second}% "
                  "in Q2 of FY2023.", None, page, table)
    assert said("Yes", "20.0", "20.1").level == GROUNDED
    assert said("Yes", "20.0", "20.1", " rose 0.1 points and").level == GROUNDED  # their difference
    assert said("Yes", "20.0", "20.1", " rose 5 points and").level == ON_PAGE  # no change of theirs
    assert said("No", "20.0", "20.1").level == UNSUPPORTED  # the verdict against its own figures
    assert said("No", "20.1", "20.0").level == ON_PAGE  # each figure read in the other's period
    assert said("No", "33.0", "32.2").level == ON_PAGE  # another row's figures
    assert ground(question, "Yes.", None, page, table).level == ON_PAGE  # a bare verdict, as before


def test_a_change_stated_by_its_two_figures_grounds_when_each_grounds_in_its_period():
    """"How much has X changed?" answered by the change's two figures, each with its period, as a capable reader
    writes it: each must be the question's metric in its own period, a rise or fall it names their direction."""
    table = _Table("Acme provision for income taxes", {"Effective tax rate": {"2022": "23", "2021": "20"},
                                                       "Statutory rate": {"2022": "21", "2021": "21"}})
    question, page = "How much has the effective tax rate of Acme changed between FY2021 and FY2022?", [("d", 1)]
    said = lambda how, first, second: ground(
        question, f"The effective tax rate of Acme has {how} from {first}% in FY2021 to {second}% in FY 2022.", None, page, table)
    assert said("changed", "20", "23").level == GROUNDED
    assert said("increased", "20", "23").level == GROUNDED
    # refused, and then read as before: each figure where "change" is printed
    assert said("decreased", "20", "23").level == ON_PAGE  # the fall it names against its figures
    assert said("changed", "23", "20").level == ON_PAGE  # each figure read in the other's period
    assert said("changed", "21", "23").level == ON_PAGE  # another row's figure
    assert ground("What was the effective tax rate of Acme in FY2022?", "It went from 20% in FY2021 to 23% in FY2022.",
                  None, page, table).level == ON_PAGE  # no change asked: not read as one


def test_a_company_name_its_documents_id_runs_together_is_no_metric_word_of_a_row():
    """"Best Buy" of BESTBUY_2024Q2_10Q is the filing's company, not the row of its Best Buy stores."""
    table = _Table("Domestic segment stores open at the end of the second quarter",
                   {"Acme Co": {"2024": "907", "2023": "930"}, "Outlet Centers": {"2024": "62", "2023": "52"},
                    "Total": {"2024": "969", "2023": "982"}})
    question = "What was the number of Acme Co stores open at the end of the second quarter of FY2024?"
    assert ground(question, "969", None, [("ACMECO_2024Q2_10Q", 17)], table).level == GROUNDED
    assert ground(question, "907", None, [("ACMECO_2024Q2_10Q", 17)], table).level == ON_PAGE


def test_the_change_a_verdict_claims_is_no_word_of_the_metric_its_figures_measure():
    """"change" in "Did the number of stores change?" does not make "Revenue % change" a row the question names, so
    the table's "Total" row is read under its caption, as for "How many stores were open?"."""
    table = _Table("Stores open at the end of the second quarter",
                   {"Revenue % change": {"2024": "-7.1", "2023": "-13.1"}, "Total": {"2024": "969", "2023": "982"}})
    question = "Did the number of stores change between FY2023 and FY2024?"
    answer = "Yes, the number of stores went from 982 in FY2023 to 969 in FY2024."
    assert ground(question, answer, None, [("d", 1)], table).level == GROUNDED


def test_the_one_year_a_question_names_is_part_of_what_it_asks_about_not_a_year_it_offers():
    pages = _Pages({"Ezer Weizman": "Ezer Weizman (born 15 June 1924, died 2005) was the seventh President of Israel. "
                                    "He resigned in 2000, before the presidential election."})
    question = "In what year was the man that resigned as President of Israel before the presidential election, 2000 born?"
    cited = [("Ezer Weizman", 1)]
    assert ground(question, "1924", None, cited, pages).level == GROUNDED
    assert ground(question, "2000", None, cited, pages).level == UNSUPPORTED  # the question's own year
    offered = "Between 2000 and 1924, in which year was the man that resigned as President of Israel born?"
    assert ground(offered, "1924", None, cited, pages).level == GROUNDED  # one of the two it offers


def test_a_question_that_only_names_a_term_is_answered_by_a_clause_not_a_short_value():
    pages = _Pages({"Note 5": "Audit Fees consist of fees billed for the annual audit of our financial statements filed "
                              "with the SEC in each of the fiscal years presented."})
    clause = "fees billed for the annual audit of our financial statements filed with the SEC in each of the fiscal years"
    assert ground("What is Audit Fees?", clause, None, [("Note 5", 1)], pages).level == GROUNDED
    assert ground("What is the name of Audit Fees?", clause, None, [("Note 5", 1)], pages).level == ON_PAGE


class _TablePage:
    """One page of one table: its rows (label → [(column, printed, number)]), printed and as `page_cells` gives them."""

    def __init__(self, rows: dict[str, list[tuple[str, str, float]]], caption: str = ""):
        self.rows, self.caption = rows, caption

    def page_text(self, doc_id: str, page: int) -> str:
        return "\n".join(f"{label}  " + "  ".join(printed for _, printed, _ in cells) for label, cells in self.rows.items())

    def page_cells(self, doc_id: str, page: int) -> list[dict]:
        return [{"label": label, "section": self.caption, "group": "", "cells": cells} for label, cells in self.rows.items()]


def test_a_total_rows_metric_is_its_columns_and_a_total_column_is_the_total_a_question_asks_for():
    columns = ["Fiscal 2018 Net Sales", "Fiscal 2018 Operating income"]
    sales = _TablePage({"Segment A": list(zip(columns, ["$1,000.0", "$100.0"], [1000.0, 100.0])),
                        "Total": list(zip(columns, ["$7,938.3", "$500.0"], [7938.3, 500.0]))})
    question = "What was the total net sales in fiscal year 2018?"
    assert ground(question, "$7,938.3", None, [("d", 1)], sales).level == GROUNDED
    assert ground(question, "$500.0", None, [("d", 1)], sales).level == ON_PAGE  # the total's operating income
    columns = ["Financial assets on which interest is earned £m", "Financial assets on which no interest is earned £m", "Total £m"]
    assets = _TablePage({"Euro": list(zip(columns, ["18.0", "97.9", "115.9"], [18.0, 97.9, 115.9])),
                         "Group total": list(zip(columns, ["62.7", "369.2", "431.9"], [62.7, 369.2, 431.9]))})
    share = "What was the percentage of total financial assets in Euro over the Group total?"
    assert ground(share, "26.83", [115.9, 431.9], [("d", 1)], assets, "115.9 / 431.9 * 100").level == GROUNDED


def test_a_share_printed_as_a_percentage_of_a_whole_answers_a_proportion():
    passage = _Passage("Credit risk\nThe ten largest customers represented 49% (53%) of the total trade receivables in 2019.")
    question = "What is the proportion of the 10 largest customers in total trade receivables in 2019?"
    assert ground(question, "49%", None, [("Credit risk", 1)], passage).level == GROUNDED
    assert names_operation(question, "represented 49% of the total") and not names_operation(question, "grew by 49%")


def test_a_date_or_the_factors_behind_a_metric_are_asked_for_no_number():
    loans = _Passage("Debt\nThe Variable Rate Loans mature in December 2021 and bear interest at LIBOR plus 1.5%.")
    maturity = "What was the maturity date of the Company's Variable Rate Loans?"
    assert not asks_number(maturity) and asks_number("What was the interest rate of the Company's Variable Rate Loans?")
    assert ground(maturity, "December 2021", None, [("Debt", 1)], loans).level == GROUNDED
    factors = "What are the primary factors that caused a negative balance in operating activities in 2019?"
    assert expected_type(factors, "$0.6 million") == "the question asks why or how, the answer is a number"


def test_a_text_value_grounds_in_the_prose_sentence_that_names_most_of_the_question_a_tables_line_aside():
    """A table's line (cells apart by the column gap) names the question's metric more than any sentence does,
    but a text value is printed in the page's prose: the sentences compete among themselves."""
    pages = _Pages({"Note 4": "Customer related costs(2)  83,401  68,744\nOther items include rent, utilities and insurance.\n"
                              "(2) Include advertising and marketing expenses, selling costs and billing expenses."})
    question, place = "What is included in Customer related costs?", [("Note 4", 1)]
    items = "advertising and marketing expenses, selling costs and billing expenses"
    assert ground(question, items, None, place, pages).level == GROUNDED
    others = "rent, utilities and insurance"  # in a sentence that names less of the question
    assert ground(question, others, None, place, pages).level == ON_PAGE


def test_a_change_in_one_year_is_from_the_year_before():
    """"The percentage change in X in 2019" compares 2019 with 2018: a calculation's operands in those two years
    ground, one of 2017 does not."""
    fees = _Table("Fees billed by our auditors:", {"Audit-Related Fees": {"2019": "153,203", "2018": "106,528", "2017": "90,000"}})
    question = "What is the percentage change in audit-related fees in 2019?"
    assert ground(question, "43.81", [153203.0, 106528.0], [("d", 1)], fees,
                  "(153203 - 106528) / 106528 * 100").level == GROUNDED
    assert ground(question, "70.23", [153203.0, 90000.0], [("d", 1)], fees, "(153203 - 90000) / 90000 * 100").level == ON_PAGE


def test_a_total_row_read_with_its_caption_is_not_the_worse_for_the_captions_words():
    """A "Total" row takes its table's caption as its label (`_row_label`); the caption's words do not count against
    it as a label's other words would, so the total of a table whose rows the question does not name is its best cell."""
    columns = ["Fiscal 2023 Stores at Beginning of Second Quarter", "Fiscal 2023 Stores at End of Second Quarter"]
    stores = _TablePage({"Outlet Centers": list(zip(columns, ["16", "18"], [16.0, 18.0])),
                         "Total": list(zip(columns, ["977", "982"], [977.0, 982.0]))},
                        caption="Domestic segment stores open at the beginning and end of the quarters were as follows:")
    question = "What was the total number of stores at the end of the second quarter of fiscal 2023?"
    assert ground(question, "982", None, [("d", 1)], stores).level == GROUNDED
    assert ground(question, "18", None, [("d", 1)], stores).level == ON_PAGE  # one segment's


def test_a_reason_grounds_as_long_as_one_sentence_prints_it_whole():
    """A why-question's answer is a clause, however long, where one sentence prints it; a value of as many words,
    or a reason copied across two sentences, is a passage, not an answer."""
    reason = ("the higher volume of orders placed by new customers in the retail segment during the second half of the "
              "year following the launch of the new product line in the United States as well as the higher average "
              "selling price of the premium models sold through the online store over the holiday season")  # no list
    passage = _Passage(f"Cash flows\nNet cash provided by operating activities increased due to {reason}. We expect it to grow.")
    why = "Why did the net cash provided by operating activities increase?"
    assert len(reason.split()) > 45
    assert ground(why, reason, None, [("Cash flows", 1)], passage).level == GROUNDED
    assert ground(why, f"{reason}. We expect it to grow", None, [("Cash flows", 1)], passage).level != GROUNDED
    assert ground("Which region's customers paid late?", reason, None, [("Cash flows", 1)], passage).level == ON_PAGE


def test_when_asks_for_a_time_which_a_name_without_one_is_not():
    """"When" asks for a time: a year, a century, a date without its year, a time that recurs ("annually"); "in which
    year" asks for a year."""
    passage = _Passage("Aircraft carrier\nAircraft carriers were first developed in the early twentieth century, when "
                       "the Type H Carrier Fighter of Aichi and a Junkers flew from the first of them.")
    question = "The Type H Carrier Fighter flew from a craft that was first developed when?"
    assert ground(question, "early twentieth century", None, [("Aircraft carrier", 1)], passage).level == GROUNDED
    assert ground(question, "Aichi", None, [("Aircraft carrier", 1)], passage).level == ON_PAGE
    assert ground(question, "Junkers", None, [("Aircraft carrier", 1)], passage).level == ON_PAGE  # no "June"
    pigeons = _Passage("Carrier pigeon\nCarrier pigeons were first bred in the nineteenth century as a hardy messenger breed.")
    century = "In which century were carrier pigeons first bred?"  # asks for a time whatever the answer: a name or not
    assert ground(century, "the nineteenth century", None, [("Carrier pigeon", 1)], pigeons).level == GROUNDED
    assert ground(century, "hardy messenger breed", None, [("Carrier pigeon", 1)], pigeons).level == ON_PAGE
    tested = "When is the impairment of goodwill tested?"  # a time that recurs is a time, as a date without its year is
    assert expected_type(tested, "annually, or more frequently where there is an indication of impairment") == ""
    assert expected_type("When was the financial year end?", "Year Ended May 31") == ""
    assert expected_type(tested, "the reporting unit") == "the question asks for a year"  # no time at all
    assert expected_type("In which year was goodwill tested?", "annually") == "the question asks for a year"


def test_a_question_naming_a_metric_but_asking_no_quantity_is_answered_in_words_or_when_it_asks_when_in_years():
    """A metric named ("costs", "production") is no number asked when the question asks something else of it:
    "Third party advisory services" answers what the costs relate to, and "2018" when production ended (a year the
    question does not print is what the answer adds); the same words outside the sentence that names the question
    do not, nor a year for a question that asks no time, nor words for the metric's value. "Which currency" asks for
    a currency, not the amount its sentence names."""
    pages = _Pages({"Note 4": "Strategic alternative evaluation costs primarily related to third party advisory "
                              "services. Restructuring costs primarily related to severance in 2017. IMFT discontinued "
                              "the production of NAND in 2018. Our memory production grew in 2019."})
    page = [("Note 4", 1)]
    related = "What are strategic alternative evaluation costs primarily related to?"
    assert ground(related, "Third party advisory services", None, page, pages).level == GROUNDED
    assert ground(related, "severance", None, page, pages).level == ON_PAGE
    when = "When has IMFT discontinued the production of NAND?"
    assert ground(when, "2018", None, page, pages).level == GROUNDED
    assert ground(when, "2019", None, page, pages).level == ON_PAGE
    assert ground("What are the strategic alternative evaluation costs?", "2018", None, page, pages).level == UNSUPPORTED
    assert ground("What were restructuring costs in 2017?", "severance", None, page, pages).level == UNSUPPORTED
    currency = "In which currency was the total amount of financial assets the smallest?"
    assert expected_type(currency, "Sterling") == ""
    assert expected_type("What was the total amount of financial assets?", "Sterling") == "the question asks for a number"


def test_a_percentage_a_calculation_makes_may_be_in_the_thousands_and_a_heading_or_a_generic_word_states_nothing():
    """A percentage stated without "%" in the thousands is an amount copied, unless the reader's calculation divides
    and multiplies by 100 (a change from a small base). A heading names its topics and grounds none of them as an
    answer, on a page with prose; a generic word alone ("Total") answers nothing."""
    question = "What was the percentage change in the net sales from JPKO between 2017 and 2018?"
    assert unit_type(question, "2,483.6735") == "the question asks for a percentage, the answer is a value in the thousands"
    assert unit_type(question, "2,483.6735", "(2,532 - 98) / 98 * 100") == ""
    assert unit_type(question, "2,434", "2,532 - 98") != ""
    assert unit_type("In which year was the percentage of revenue from services higher?", "2019") == ""  # a year asked
    pages = _Pages({"Note 5": "Cost of Revenue, Gross Profit and Gross Margin\n\nThe gross margin reflects the mix of "
                              "products and services. Total gross margin is the sum of the two."})
    shows, page = "What does the gross margin show?", [("Note 5", 1)]  # the heading names as much of it as the sentence
    assert ground(shows, "mix of products and services", None, page, pages).level == GROUNDED
    assert ground(shows, "Cost of Revenue", None, page, pages).level == ON_PAGE
    assert ground(shows, "Gross Profit", None, page, pages).level == ON_PAGE
    assert ground(shows, "Total", None, page, pages).level == UNSUPPORTED


class _IntroducedTable(_TablePage):
    """A table page whose prose, printed after the table, holds the sentence that introduces it."""

    def __init__(self, rows: dict[str, list[tuple[str, str, float]]], prose: str, caption: str = ""):
        super().__init__(rows, caption)
        self.prose = prose

    def page_text(self, doc_id: str, page: int) -> str:
        return super().page_text(doc_id, page) + "\n\n" + self.prose


def test_the_sentence_introducing_a_table_is_its_caption_and_when_asks_for_no_amount():
    """A "Total" row under a caption that names nothing ("11") totals what the page's one sentence introducing a table
    names, wherever the page prints it; the years of a table's columns, all of them, answer "Which years does the table
    show?". A
    question asking when (or over what period) is not answered with an amount."""
    columns = ["Year Ended December 31 2019", "Year Ended December 31 2018", "Year Ended December 31 2017"]
    rows = {"United States": list(zip(columns, ["$58.0", "$52.0", "$40.1"], [58.0, 52.0, 40.1])),
            "Total": list(zip(columns, ["$66.1", "$62.9", "$45.5"], [66.1, 62.9, 45.5]))}
    intro = ("11. INCOME TAX\n\nThe following table summarizes our U.S. and foreign components of income from continuing "
             "operations before income taxes (in millions):")
    page, cited = _IntroducedTable(rows, intro, caption="11"), [("d", 1)]
    change = "What is the percentage change in total income from continuing operations between 2018 and 2019?"
    assert ground(change, "5.09", [66.1, 62.9], cited, page, "(66.1 - 62.9) / 62.9 * 100").level == GROUNDED
    assert ground(change, "11.54", [58.0, 52.0], cited, page, "(58.0 - 52.0) / 52.0 * 100").level == ON_PAGE  # one country
    bare = _TablePage(rows, caption="11")  # no sentence says what the table is about
    assert ground(change, "5.09", [66.1, 62.9], cited, bare, "(66.1 - 62.9) / 62.9 * 100").level == ON_PAGE
    years = "Which years does the table show?"
    assert ground(years, "2019, 2018, 2017", None, cited, page).level == GROUNDED
    assert ground(years, "2019, 2018, 2017", None, cited, bare).level == GROUNDED  # its columns' years, captioned or not
    assert ground(years, "2019, 2018", None, cited, bare).level != GROUNDED  # all of them
    assert ground(years, "2019, 2018, 2016", None, cited, bare).level != GROUNDED  # and no other
    assert ground("What are the years included in the table?", "2019, 2018, 2017", None, cited, bare).level == GROUNDED
    assert ground("In which year was the total income from continuing operations the largest?", "2017", None, cited,
                  page).level != GROUNDED  # an extreme is read in a row the question names, not in the caption
    period = "Over what period would the expense be recognized?"
    assert expected_type(period, "$23,792") == "the question asks when, the answer is an amount"
    assert expected_type(period, "a weighted-average period of 2.9 years") == ""
    assert expected_type("How much did the expense grow in the period?", "$23,792") == ""


def test_a_plural_names_what_its_singular_names():
    """"international discount rates" names the "discount rate" of "How is the discount rate for international plans
    determined?" as much as a sentence about domestic plans names it: one stemmer cuts a plural's "s"."""
    pages = _Pages({"d": "For domestic plans, the discount rate was determined by comparison against the FTSE pension "
                         "liability index for AA rated corporate instruments. The international discount rates were "
                         "determined by comparison against country specific AA corporate indices, adjusted for duration "
                         "of the obligation."})
    question = "How is the discount rate for international plans determined?"
    answer = "By comparison against country specific AA corporate indices, adjusted for duration of the obligation."
    assert ground(question, answer, None, [("d", 1)], pages).level == GROUNDED


def test_what_the_table_shows_is_its_caption_whole_and_its_units_its_scale_line():
    """"What does the table show?" is answered by the words of the table's caption (its section, or the sentence
    introducing it, less "follows"), all of them, and "What are the units used in the table?" by its "(in thousands)"
    line; a part of the caption, or a row's label, is no answer to either."""
    columns = ["2019 €m", "2018 €m"]
    rows = {"Salaries and fees": list(zip(columns, ["4", "4"], [4.0, 4.0])),
            "Incentive schemes": list(zip(columns, ["2", "3"], [2.0, 3.0]))}
    page, cited = _IntroducedTable(rows, "(in thousands)\n\nAggregate emoluments of the Directors of the Company were as "
                                         "follows:", caption="22"), [("d", 1)]
    shows = "What does the table show?"
    assert ground(shows, "Aggregate emoluments of the Directors of the Company", None, cited, page).level == GROUNDED
    assert ground(shows, "the Directors of the Company", None, cited, page).level != GROUNDED
    assert ground(shows, "Incentive schemes", None, cited, page).level != GROUNDED
    assert ground("What is the units used for the data in the table?", "in thousands", None, cited, page).level == GROUNDED
    assert ground("What does the schedule show?", "Aggregate emoluments of the Directors of the Company", None, cited,
                  page).level != GROUNDED  # a question that says nothing of a table


def test_a_total_column_is_the_total_an_extreme_asks_about_and_what_are_the_years_asks_for_years():
    """"In which currency was the total amount of financial assets the smallest?" is read in the "Total" column, not in
    the columns whose headers name "financial assets" more often; "What are the years ...?" asks for years."""
    columns = ["Total £m", "Fixed rate financial assets £m", "Floating rate financial assets £m"]
    assets = _TablePage({"Sterling": list(zip(columns, ["29.1", "2.0", "0.2"], [29.1, 2.0, 0.2])),
                         "Euro": list(zip(columns, ["115.9", "1.4", "16.6"], [115.9, 1.4, 16.6])),
                         "Renminbi": list(zip(columns, ["42.0", "0.5", "11.9"], [42.0, 0.5, 11.9]))})
    smallest = "In which currency was the total amount of financial assets the smallest?"
    assert ground(smallest, "Sterling", None, [("d", 1)], assets).level == GROUNDED
    assert ground(smallest, "Renminbi", None, [("d", 1)], assets).level != GROUNDED  # the smallest fixed rate assets
    assert expected_type("What are the years included in the table?", "Total") == "the question asks for a year"
    assert expected_type("What was the year over year change in revenue?", "5%") == ""


def test_a_share_printed_answers_a_proportion_as_a_percentage_and_the_total_amount_is_the_total_row():
    """A cell printed as a percentage answers "the proportion of X as a percentage of Y" in X's row (the page printed
    the share), not in another row, nor for a ratio not asked as a percentage, and its calculation over the amounts of
    a table that prints the share; a question naming nothing but "the
    Total amount" and an operation asks about the "Total" row."""
    years = ["Fiscal Years 2017", "Fiscal Years 2018"]
    shares = _TablePage({"Cost of revenue": list(zip(years, ["55%", "50%"], [55.0, 50.0])),
                         "Gross profit": list(zip(years, ["45%", "50%"], [45.0, 50.0]))})
    proportion = "What was the proportion of cost of revenue as a percentage of revenue in 2017?"
    assert ground(proportion, "55%", None, [("d", 1)], shares).level == GROUNDED
    assert ground(proportion, "45%", None, [("d", 1)], shares).level != GROUNDED
    assert ground("What was the ratio of cost of revenue to revenue in 2017?", "55%", None, [("d", 1)],
                  shares).level != GROUNDED  # a ratio not asked as a share: the row does not name it
    columns = ["Years Ended December 31, 2019", "% of total 2019"]
    costs = _TablePage({"Products": list(zip(columns, ["$29,816", "61%"], [29816.0, 61.0])),
                        "Services": list(zip(columns, ["$19,065", "39%"], [19065.0, 39.0])),
                        "Total cost of revenue": list(zip(columns, ["$48,881", "100%"], [48881.0, 100.0]))},
                       caption="A summary of our cost of revenue")
    products = "What is the proportion of products as a percentage of the total cost of revenue in 2019?"
    assert ground(products, "60.9971", [29816.0, 48881.0], [("d", 1)], costs, "($29,816/$48,881) * 100").level == GROUNDED
    assert ground(products, "39.0", [19065.0, 48881.0], [("d", 1)], costs, "($19,065/$48,881) * 100").level != GROUNDED
    columns = ["Years Ended June 30, 2019", "Years Ended June 30, 2018"]
    hedges = _TablePage({"Interest rate swaps": list(zip(columns, ["$30.0", "$28.0"], [30.0, 28.0])),
                         "Foreign exchange contracts": list(zip(columns, ["14.5", "13.0"], [14.5, 13.0])),
                         "Total": list(zip(columns, ["$44.5", "$41.0"], [44.5, 41.0]))}, caption="Cash Flow Hedges")
    change = "What was the percentage change in the Total amount in 2019 from 2018?"
    assert ground(change, "8.54", [44.5, 41.0], [("d", 1)], hedges, "(44.5 - 41.0) / 41.0 * 100").level == GROUNDED
    assert ground(change, "7.14", [30.0, 28.0], [("d", 1)], hedges, "(30.0 - 28.0) / 28.0 * 100").level != GROUNDED
