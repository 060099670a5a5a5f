from ferret.corpus.snippets import snippet

PENSIONS = ("At 31 March 2019 the Group operated a number of pension plans for the benefit of its employees throughout "
            "the world, with rights depending on the practices in the countries concerned. Defined benefit schemes "
            "provide benefits based on the employees' length of pensionable service and their final salary. Defined "
            "contribution schemes offer employees individual funds that are converted into benefits at retirement.\n\n"
            "The Group operates defined benefit indemnity plans in Greece and Turkey. Defined contribution schemes "
            "are provided in Egypt, Hungary and Spain.")
TAX = ("Fiscal Year Ended August 31,\n2019  2018\nDeferred tax assets:\nNet operating loss carry forward  $183,297  $119,259\n"
       "Receivables  6,165  7,111\nInventories  9,590  7,634\nCompensated absences  10,401  8,266\n"
       "Accrued expenses  81,731  81,912\nDomestic federal and state tax credits  42,464  70,153\n"
       "Foreign jurisdiction tax credits  15,345  25,887\nCash flow hedges  9,878  —\nOther  21,907  18,176\n"
       "Total deferred tax assets before valuation allowances  489,689  445,785\n"
       "Less valuation allowances  (287,604)  (223,487)\nNet deferred tax assets  $202,085  $222,298")


def test_a_long_passage_shows_the_run_of_sentences_that_holds_most_of_the_question():
    shown = snippet(PENSIONS, "Which countries does the group operate defined benefit indemnity plans in?", 200)
    assert "indemnity plans in Greece and Turkey" in shown
    assert shown.startswith("…") and len(shown.strip("…")) <= 200
    # the first window the words of the question open (its function words "the", "in" among them) held no answer
    assert "Greece" not in PENSIONS[:200]


def test_a_passage_that_fits_or_holds_no_word_of_the_query_is_shown_from_its_start():
    assert snippet(PENSIONS, "indemnity", len(PENSIONS)) == PENSIONS
    shown = snippet(PENSIONS, "What was the revenue?", 120)
    assert shown == PENSIONS[:120] + "…"


def test_a_table_keeps_its_header_above_the_rows_the_question_names():
    shown = snippet(TAX, "What were the foreign jurisdiction tax credits in 2019?", 200, table=True)
    assert shown.startswith("Fiscal Year Ended August 31,\n2019  2018\n")
    assert "Foreign jurisdiction tax credits  15,345  25,887" in shown
    assert "Net operating loss" not in shown and len(shown) <= 200 + 2 * len("…\n")
    assert not snippet(TAX, "foreign jurisdiction tax credits", 200).startswith("Fiscal")  # a passage not a table
