"""The loop's policy, without an LM: escalation order (cost, granularity, scope), no repeated failures,
backtracking, replanning."""
from ferret.programs.strategy import Attempt, Policy, Strategy, ladder


def test_ladder_escalates_by_cost_fine_before_coarse_inside_the_document_first():
    rungs = ladder("hybrid", ["structured", "long_text"], document_scoped=True)
    assert [(s.method, s.scope) for s in rungs] == [
        ("hybrid", "document"), ("annotations", "document"), ("semantic", "document"), ("select", "document"),
        ("hybrid", "global"), ("annotations", "global"), ("semantic", "global"),
    ]
    assert [s.granularity for s in rungs[:4]] == ["passage", "fact", "passage", "section"]
    structured = ladder("structured", [], document_scoped=False)
    assert [s.method for s in structured] == ["annotations", "hybrid", "semantic"]
    long_text = ladder("long_text", ["structured"], document_scoped=True)
    assert [s.method for s in long_text[:4]] == ["select", "annotations", "hybrid", "semantic"]  # coarse start
    assert long_text[0].describe() == "select search for sections, document"
    # the Router's bucket and filters narrow each method once; then the same method searches everywhere
    narrowed = ladder("structured", ["long_text"], document_scoped=False, filtered=True)
    assert [(s.method, s.scope) for s in narrowed] == [
        ("annotations", "filtered"), ("annotations", "global"), ("hybrid", "filtered"), ("hybrid", "global"),
        ("semantic", "filtered"), ("semantic", "global")]


def test_a_failed_strategy_is_never_repeated_for_the_same_item():
    policy = Policy(ladder("hybrid", [], document_scoped=True))
    first = policy.next("revenue 2022")
    policy.record(Attempt("revenue 2022", first, succeeded=False))
    second = policy.next("revenue 2022")
    assert second != first and (second.method, second.scope) == ("annotations", "document")
    policy.record(Attempt("revenue 2022", second, succeeded=False))
    seen = {first, second}
    while (strategy := policy.next("revenue 2022")) is not None:
        assert strategy not in seen
        seen.add(strategy)
        policy.record(Attempt("revenue 2022", strategy, succeeded=False))
    assert len(seen) == len(policy.rungs)
    assert policy.next("another item") is None  # nothing above the failures is left


def test_failure_backtracks_to_the_best_earlier_anchor_before_escalating():
    policy = Policy(ladder("hybrid", [], document_scoped=True))
    policy.record(Attempt("segment revenue", policy.next("segment revenue"), True,
                          anchors=[("seg:10", 0.4), ("seg:11", 0.9)]))
    item = "operating income"
    policy.record(Attempt(item, policy.next(item), succeeded=False))
    assert policy.next(item) == Strategy("neighbors", "anchor", "seg:11")
    policy.record(Attempt(item, Strategy("neighbors", "anchor", "seg:11"), succeeded=False))
    assert policy.next(item) == Strategy("neighbors", "anchor", "seg:10")
    policy.record(Attempt(item, Strategy("neighbors", "anchor", "seg:10"), succeeded=False))
    assert policy.next(item) == Strategy("annotations", "document")


def test_replan_after_every_second_failure_in_a_row():
    policy = Policy(ladder("hybrid", [], document_scoped=False), replan_after=2)
    policy.record(Attempt("a", Strategy("hybrid", "global"), succeeded=True))
    replans = []
    for method in ("hybrid", "annotations", "semantic", "select"):
        policy.record(Attempt("b", Strategy(method, "global"), succeeded=False))
        replans.append(policy.should_replan())
    assert replans == [False, True, False, True]


def test_a_reworded_item_after_a_failure_still_escalates_and_success_resets():
    policy = Policy(ladder("hybrid", [], document_scoped=False))
    policy.record(Attempt("revenue?", policy.next("revenue?"), succeeded=False))
    assert policy.next("total revenue 2023") == Strategy("annotations", "global")
    policy.record(Attempt("total revenue 2023", Strategy("annotations", "global"), succeeded=True))
    assert policy.next("operating income 2023") == Strategy("hybrid", "global")
