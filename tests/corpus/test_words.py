from ferret.corpus.numbers import EARLY_YEAR, YEAR, YEAR_RANGE
from ferret.corpus.words import first_sentence, sentences, stems


def test_stems_cut_words_to_five_letters_without_function_words_numbers_or_periods():
    assert stems("The translated translation of FY2022's 10-K, 2019 and Q3") == {"trans"}
    assert stems("ACME's days' sales") == {"acme", "day", "sale"}  # a possessive's apostrophe cut, and a plural's "s"


def test_a_plural_meets_its_singular_but_a_word_ending_in_ss_us_or_is_keeps_its_s():
    assert stems("discount rates for pension plans") == stems("the discount rate for a pension plan") == {
        "disco", "rate", "pensi", "plan"}
    assert stems("fees and types") == {"fee", "type"}
    assert stems("What does it do?") == set()  # a function word is no plural
    assert stems("class status basis plus") == {"class", "statu", "basis", "plus"}


def test_two_capitals_are_a_name_but_two_letters_of_a_sentence_and_a_fiscal_years_letters_are_not():
    assert stems("What is the revenue from UK in 2019?") == {"reven", "uk"}
    assert stems("The US's share; let us see") == {"us", "share", "let", "see"}  # "us" only as "US"
    assert stems("FY 2022 sales, IN THE US") == {"sale", "us"}  # a fiscal year's letters, a heading's function words
    assert stems("Part II, Item 8") == {"part", "item"}  # a roman numeral
    assert stems("UK and EU", loose=True) == set()  # pages written apart compare words of three letters


def test_row_words_and_months_are_words_only_when_asked():
    assert stems("Other income less taxes") == {"incom", "taxe"}
    assert stems("Other income less taxes", rows=True) == {"other", "incom", "less", "taxe"}
    assert stems("born in October") == {"born", "octob"}
    assert stems("born in October", months=False) == {"born"}


def test_numbers_are_a_next_searchs_terms_only_when_asked():
    assert stems("the 2011 census") == {"censu"}
    assert stems("the 2011 census", numbers=True) == {"2011", "censu"}


def test_loose_stems_split_hyphens_and_cut_plurals():
    assert stems("a computer-animated film") == {"compu", "film"}
    assert stems("a computer-animated film", loose=True) == {"compu", "anima", "film"}
    assert stems("board games", loose=True) == stems("a board game", loose=True) == {"board", "game"}


def test_sentences_end_at_a_period_but_not_at_an_initial_or_a_title():
    text = "It was recorded by singer-songwriter M. Ward. He toured the U.S. He was born in 1973."
    assert sentences(text) == ["It was recorded by singer-songwriter M. Ward.", "He toured the U.S. He was born in 1973."]
    assert sentences('Elwyn Brooks "E. B." White was a writer. He wrote Charlotte\'s Web!') == [
        'Elwyn Brooks "E. B." White was a writer.', "He wrote Charlotte's Web!"]
    assert len(sentences("Edward Davis Wood Jr. (October 10, 1924 – December 10, 1978) was a filmmaker.")) == 1
    assert len(sentences("Mr. Smith met Dr. Jones at St. Mary's.")) == 1


def test_sentences_do_not_end_before_a_lowercase_word():
    assert sentences("See e.g. the notes. Revenue grew 5%. (a) Items") == ["See e.g. the notes.", "Revenue grew 5%.",
                                                                          "(a) Items"]


def test_lines_end_sentences_only_when_asked():
    page = "Revenue\n2019 2018\nSales rose. Costs fell."
    assert sentences(page) == ["Revenue\n2019 2018\nSales rose.", "Costs fell."]
    assert sentences(page, lines=True) == ["Revenue", "2019 2018", "Sales rose.", "Costs fell."]
    assert first_sentence("Yes. It did.") == "Yes." and first_sentence("  ") == ""


def test_year_is_no_amount_share_or_part_of_another_number():
    assert YEAR.findall("in 2019, FY2017 and (2018)") == ["2019", "2017", "2018"]
    for text in ("$2019", "20190", "2019%", "2019 percent", "2019.5", "1,2019", "1066"):
        assert not YEAR.search(text), text
    assert EARLY_YEAR.findall("founded in 1066, rebuilt in 2019") == ["1066", "2019"]
    assert not EARLY_YEAR.search("$1066")


def test_year_range_is_built_from_the_year():
    assert YEAR_RANGE.findall("from FY2015 - FY2017, and 2019 to 2021") == [("2015", "2017"), ("2019", "2021")]
    assert not YEAR_RANGE.search("$2015 - 2017")
