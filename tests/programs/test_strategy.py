"""The loop's policy, without an LM: escalation order, no repeated failures, backtracking, replanning."""
from programs.strategy import Attempt, Policy, Strategy, ladder


def test_ladder_escalates_by_cost_and_scope():
    rungs = ladder("hybrid", ["structured", "long_text"], document_scoped=True)
    assert [(s.method, s.scope) for s in rungs] == [
        ("lexical", "document"), ("lexical", "global"),
        ("annotations", "document"), ("annotations", "global"),
        ("semantic", "document"), ("semantic", "global"),
        ("select", "document"),
    ]
    structured = ladder("structured", [], document_scoped=False)
    assert [s.method for s in structured] == ["annotations", "lexical", "semantic"]
    assert ladder("long_text", [], document_scoped=True)[0] == Strategy("select", "document")


def test_a_failed_strategy_is_never_repeated_for_the_same_item():
    policy = Policy(ladder("hybrid", [], document_scoped=True))
    first = policy.next("revenue 2022")
    policy.record(Attempt("revenue 2022", first, succeeded=False))
    second = policy.next("revenue 2022")
    assert second != first and (second.method, second.scope) == ("lexical", "global")
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
    assert policy.next(item) == Strategy("lexical", "anchor", "seg:11")
    policy.record(Attempt(item, Strategy("lexical", "anchor", "seg:11"), succeeded=False))
    assert policy.next(item) == Strategy("lexical", "anchor", "seg:10")
    policy.record(Attempt(item, Strategy("lexical", "anchor", "seg:10"), succeeded=False))
    assert policy.next(item) == Strategy("lexical", "global")


def test_replan_after_repeated_failure():
    policy = Policy(ladder("hybrid", [], document_scoped=False), replan_after=2)
    policy.record(Attempt("a", Strategy("lexical", "global"), succeeded=True))
    policy.record(Attempt("b", Strategy("lexical", "global"), succeeded=False))
    assert not policy.should_replan()
    policy.record(Attempt("b", Strategy("semantic", "global"), succeeded=False))
    assert policy.should_replan()


def test_a_reworded_item_after_a_failure_still_escalates_and_success_resets():
    policy = Policy(ladder("hybrid", [], document_scoped=False))
    policy.record(Attempt("revenue?", policy.next("revenue?"), succeeded=False))
    assert policy.next("total revenue 2023") == Strategy("annotations", "global")
    policy.record(Attempt("total revenue 2023", Strategy("annotations", "global"), succeeded=True))
    assert policy.next("operating income 2023") == Strategy("lexical", "global")
