"""Multi-hop search in code: the names a text prints, what a question still needs, comparisons and
nested references, and the hops themselves on a small passage corpus (tests/conftest.py HOP_PASSAGES)."""
from __future__ import annotations

from ferret.programs.hops import bridges, hop_needed, hop_search, linked, names, parts, remaining_terms

BRIDGE_QUESTION = "Who directed the film that was shot in or around Leland, North Carolina in 1986?"
COMPARISON = "Which band was formed first, The Exies or Circus Diablo?"


def test_names_are_capitalised_runs_and_quoted_phrases_without_a_leading_function_word():
    text = ('The film Maximum Overdrive was shot in Leland in 1986. The Exies covered "Baby Love" '
            "with the Duke of Wellington.")
    assert names(text) == ["Maximum Overdrive", "Leland", "Exies", "Baby Love", "Duke of Wellington"]
    assert names("In 1986 it rained.") == []  # a year or a lone function word is no name


def test_remaining_terms_are_the_question_words_the_passage_does_not_hold():
    passage = "The film Maximum Overdrive was shot in and around Leland in 1986."
    assert remaining_terms(BRIDGE_QUESTION, passage) == ["directed", "north", "carolina"]


def test_a_bridge_on_the_page_the_question_names_counts_the_title_and_an_initial_ends_no_sentence():
    question = "From 1945-1949 Dick Humbert played for an NFL team based in what state?"
    hits = [{"doc_id": "Dick Humbert", "title": "Dick Humbert",
             "text": "Dick Humbert was a football end. He played for the Philadelphia Eagles (1941, 1945–1949)."},
            {"doc_id": "Brooklyn Dodgers (NFL)", "title": "Brooklyn Dodgers (NFL)",
             "text": "The Dodgers were an NFL team based in the All-America Football Conference."}]
    # "He played ..." shares "played" and, on Dick Humbert's page, his name: as many words as the other
    assert [name for name, _ in bridges(question, hits)][:2] == ["Philadelphia Eagles", "All-America Football Conference"]
    # a page the question does not name (a filing's file name) lends its sentences no words
    untitled = [{**hits[0], "title": "Football players 1945"}, hits[1]]
    assert [name for name, _ in bridges(question, untitled)][0] == "All-America Football Conference"
    album = [{"doc_id": "Transfiguration of Vincent", "title": "Transfiguration of Vincent",
              "text": "Transfiguration of Vincent is the third studio album by singer-songwriter M. Ward. It was released in 2003."}]
    assert [name for name, _ in bridges("Transfiguration of Vincent is an album by a singer from what state?", album)] == ["M. Ward"]


def test_parts_are_names_joined_by_and_or_or_but_not_places_or_periods():
    assert parts(COMPARISON) == ["Exies", "Circus Diablo"]
    assert parts("Are Christopher Nolan and Sathish Kalathil both film directors?") == [
        "Christopher Nolan", "Sathish Kalathil"]
    assert parts(BRIDGE_QUESTION) == []  # "Leland, North Carolina" is one place
    assert parts("Has AMCOR's quick ratio improved between FY2023 and FY2022?") == []  # two periods of one table


def test_a_hop_is_needed_for_a_comparison_or_a_thing_named_through_another():
    assert hop_needed(COMPARISON) == "it compares Exies, Circus Diablo"
    assert "the film that was" in hop_needed(BRIDGE_QUESTION)
    assert hop_needed("What was Leland's population in 2010?") == ""


def test_linked_is_a_title_that_is_the_name_without_its_parenthesis():
    assert linked("Blue Velvet", "Blue Velvet (film)") and linked("Exies", "The Exies")
    assert not linked("Stephen King", "Maximum Overdrive")


def test_the_bridge_a_first_hop_passage_names_brings_its_page_into_the_top_k(hop_corpus):
    plain = [hit["doc_id"] for hit in hop_corpus.search_text(BRIDGE_QUESTION, top_k=3, hybrid=True)]
    assert "Maximum Overdrive" not in plain  # one search does not reach the second hop
    hops = hop_search(hop_corpus, BRIDGE_QUESTION, 3)
    assert "Maximum Overdrive" in hops.bridges and hops.parts == []
    assert [(hit["doc_id"], hit["via"]) for hit in hops.hits] == [
        (plain[0], ""), (plain[1], ""), ("Maximum Overdrive", "Maximum Overdrive")]
    assert hops.hits[2]["text"].startswith("Maximum Overdrive\nMaximum Overdrive is a horror picture")


def test_a_comparison_searches_each_part(hop_corpus):
    plain = [hit["doc_id"] for hit in hop_corpus.search_text(COMPARISON, top_k=2, hybrid=True)]
    assert not {"The Exies", "Circus Diablo"} <= set(plain)
    hops = hop_search(hop_corpus, COMPARISON, 2)
    assert hops.parts == ["Exies", "Circus Diablo"]
    assert {hit["doc_id"] for hit in hops.hits} == {"The Exies", "Circus Diablo"}


def test_hop_search_stays_in_its_scope_and_cuts_passages(hop_corpus):
    hops = hop_search(hop_corpus, BRIDGE_QUESTION, 5, doc_id="Leland, North Carolina", context_chars=40)
    assert {hit["doc_id"] for hit in hops.hits} == {"Leland, North Carolina"}
    assert all(len(hit["text"].strip("…")) <= 40 for hit in hops.hits)
