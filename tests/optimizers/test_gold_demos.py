"""A labeled demo of the read stands on the passages the read would be shown, by a read's own checks."""
import dspy

from ferret.optimizers.gold_demos import GoldEvidenceFewShot, read_demo
from ferret.programs.iterative import IterativeRetriever


def example(question, answer, **labels):
    return dspy.Example(question=question, answer=answer, doc_id="report", **labels).with_inputs("question", "doc_id")


def test_a_gold_derivation_over_printed_operands_is_the_demos_calculation_and_its_result_the_answer(small_corpus):
    program = IterativeRetriever(small_corpus)
    # two rows: no table rung's question, so the read sees it
    demo = read_demo(program, example("How much more revenue did Enterprise earn than Consumer in 2023?", "1,150",
                                      derivation="2,400 - 1,250"))
    assert demo.calculation == {"expression": "2400 - 1250"} and demo.answer == "1,150"  # as code computed it
    cited = [demo.passages[n - 1] for n in demo.sources]  # the passages that print its operands
    assert all("2,400" in text or "1,250" in text for text in cited) and "2,400" in "".join(cited) and "1,250" in "".join(cited)
    assert demo.passages[0].startswith("[1] page ")  # as the read is shown them inside one document
    printed = read_demo(program, example("What was total revenue last year?", "3,650", derivation="3,650"))
    assert printed.calculation == {"expression": ""} and printed.answer == "3,650"


def test_a_gold_the_passages_do_not_print_gives_no_demo(small_corpus):
    program = IterativeRetriever(small_corpus)
    assert read_demo(program, example("Who audited the annual report?", "KPMG")) is None
    assert read_demo(program, example("What was total revenue last year?", "3,900")) is None
    assert read_demo(program, example("How much more revenue did Enterprise earn than Consumer in 2023?", "600",
                                      derivation="2,400 - 1,250")) is None  # 1,150


def test_the_compiled_copy_holds_k_demos_and_the_student_is_unchanged(small_corpus):
    student = IterativeRetriever(small_corpus)
    routes = list(student.route.demos)
    trainset = [example("Who audited the annual report?", "KPMG"), example("What was total revenue last year?", "3,650"),
                example("What was Consumer revenue the year before?", "1,100"),
                example("What was Enterprise revenue last year?", "2,400"),
                example("What was total revenue in 2023?", "3,650")]  # answered in code: never the read's demo
    compiled = GoldEvidenceFewShot(k=2).compile(student, trainset=trainset)
    assert len(compiled.read.predict.demos) == 2 and not student.read.predict.demos
    assert {demo.answer for demo in compiled.read.predict.demos} <= {"3,650", "1,100", "2,400"}
    assert compiled.route.demos == routes
