"""The small-model repairs: code that overrides or completes what the embedded 0.5B model writes, where
it was seen to go wrong. A strong LM does not need them, and each can turn its right reading into a wrong
one, so they are on for the embedded models ("local", "local:PATH") and off for any other LM, unless a
program is told (`repairs=True` or `False` from Python, `--repairs on|off` on the command line):

- list and sum cues (`structured.asked_list`, `structured.asked_aggregate`): a Router "lookup" of a
  question worded as a list is read as a list; the Router's aggregate is kept only when the wording asks
  for one, and a question ending "in total" asks for a sum whatever the Router read;
- the yes/no prefix (`passage_answer.yes_or_no`): a read's answer that states a yes/no question's claim
  begins with its "Yes" or "No";
- the year asked (`passage_answer.stated_year`): a read's sentence that answers "in what year" is the
  one year it states that the question does not;
- multi-hop wording (`programs.hops.hop_needed`): a question worded as a comparison or through a bridge
  ("the film that was shot in ...") is read after the hops search, not before it;
- comparisons in code (`programs.comparison`): which came first, whether both are what the question
  says, what they share, from each compared name's own page (HotpotQA's comparison questions: 10 of its
  100 answered, 10 right, none on the owners' held-out multi-hop set, so never a wrong one seen); for
  any other LM the same comparison only checks a verdict or choice the LM states;
- follow-ups (`conversation.is_new_topic`, `conversation.keeps_turn`): a turn that refers back ("its",
  "And ...?") is a follow-up whatever the rewrite said, and a rewrite that loses the turn's words is
  replaced by the turn resolved in code.

Each step decides by the LM it calls (its own, else DSPy's configured one), so a strong LM set for one
step (`lms={"route": ...}`) gets no repair of that step's output.
"""
from __future__ import annotations

import dspy

EMBEDDED_PREFIX = "local/"  # the model name of every in-process model (`programs.lm.make_lm`)


def step_lm(step: dspy.Module) -> dspy.LM | None:
    """The LM a step calls: its predictor's own, else DSPy's configured one."""
    own = next((predictor.lm for predictor in step.predictors() if predictor.lm is not None), None)
    return own or dspy.settings.lm


def repairs_on(setting: bool | None, lm: dspy.LM | None) -> bool:
    """`setting` when it is set; else (None, "auto") whether `lm` is an embedded model."""
    if setting is not None:
        return setting
    return lm is not None and str(getattr(lm, "model", "")).startswith(EMBEDDED_PREFIX)
