"""`ferret compile --optimizer settings`: a corpus's retrieval settings chosen from its labeled evidence,
with no LM.

Which search finds a corpus's evidence is a property of the corpus (on TAT-QA's reports BM25 finds more
than dense search, on FinanceBench's filings dense search more than BM25, on HotpotQA's passages the
multi-hop search more than either), and a user's labeled questions with evidence say which. So the
first read's settings (`programs.first_read.ReadSettings`: the lexical weight of every search, 1 BM25
alone to 0 dense alone; the multi-hop search first; the long-text route, where the corpus has chunks)
are searched over a plain grid (`grid`: at most 5 x 2 x 2 = 20 trials, deterministic), each scored on
the train questions by what the first read would be shown: evidence recall@5, then recall_all@5
(`optimizers.retrieval.example_scores`, through the same function the program reads with). Ties keep
the setting nearer the defaults (the grid's order).

The best trial replaces the defaults only when the train questions show that it helps: it finds more of
the evidence than the defaults (recall@5) on significantly more questions than it finds less, by a
one-sided sign test at ALPHA (0.05, the textbook level; not tuned). A mean lifted by a few questions of
a small train split is no evidence of a corpus's property: on FinanceBench's 21 train questions the best
trial won on 4 and lost on 1 (p = 0.19); on HotpotQA's 40 the multi-hop search first won on 11 and lost
on none (p = 0.0005); on TAT-QA's 639 a lexical weight of 0.75 won on 28 and lost on 13 (p = 0.014).

As a prompt compile's `holdout`, the first N train questions can also be held out of the search: the
chosen settings are then kept only when they also score strictly higher there than the defaults
(recall@5, then recall_all@5).
"""
from __future__ import annotations

import itertools
import math
import time
from dataclasses import asdict, dataclass, field

from ferret.corpus.tools import HYBRID, Corpus
from ferret.optimizers.retrieval import SEARCH_DEPTH, averaged, example_scores
from ferret.programs.first_read import ReadSettings, first_read

WEIGHTS = (HYBRID, 0.25, 0.75, 0.0, 1.0)  # the default first: a tie keeps it
K = 5
OBJECTIVE = (f"recall@{K}", f"recall_all@{K}")  # compared in this order
ALPHA = 0.05  # the sign test's level: the textbook one


@dataclass
class Trial:
    settings: ReadSettings
    found: list[dict[str, float]]  # each train question's scores
    seconds: float

    @property
    def scores(self) -> dict[str, float]:
        return averaged(self.found)

    def key(self) -> tuple[float, ...]:
        return tuple(self.scores.get(name, 0.0) for name in OBJECTIVE)

    def as_dict(self) -> dict:
        return {**asdict(self.settings), **self.scores, "seconds": self.seconds}


@dataclass
class SettingsChoice:
    """The search's outcome: the settings kept, the best trial's, every trial on the train questions, the
    sign test of the best against the defaults (questions it found more and less of, p), and the
    holdout's scores of both (when there was one)."""

    settings: ReadSettings
    best: ReadSettings
    trials: list[Trial]
    sign_test: dict[str, float] = field(default_factory=dict)
    holdout: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def kept(self) -> str:
        return "compiled" if self.settings != ReadSettings() else "defaults"


def grid(corpus: Corpus) -> list[ReadSettings]:
    """The settings tried, the defaults first: every weight with and without the multi-hop search first,
    and with the long-text route where the corpus has long documents' chunks (elsewhere it is a no-op)."""
    long_text = (False, True) if corpus.store.conn.execute("SELECT 1 FROM chunks LIMIT 1").fetchone() else (False,)
    return [ReadSettings(weight, hops, long) for long, hops, weight in itertools.product(long_text, (False, True), WEIGHTS)]


def example_recall(corpus: Corpus, examples: list, settings: ReadSettings) -> list[dict[str, float]]:
    """Each example's evidence recall@K, recall_all@K (and the other `retrieval.scores`) of the first read
    at `settings`."""
    return example_scores(corpus, examples, lambda query, doc_id: first_read(
        corpus, query, SEARCH_DEPTH, settings, doc_id=doc_id, context_chars=0).hits, K)


def score(corpus: Corpus, examples: list, settings: ReadSettings) -> dict[str, float]:
    """`example_recall` averaged over the examples."""
    return averaged(example_recall(corpus, examples, settings))


def sign_test(better: list[dict[str, float]], base: list[dict[str, float]]) -> dict[str, float]:
    """The questions on which `better` finds more of the evidence than `base` (recall@K) and fewer, and the
    one-sided sign test's p that it wins that often by chance (ties left out)."""
    wins = sum(a[OBJECTIVE[0]] > b[OBJECTIVE[0]] for a, b in zip(better, base, strict=True))
    losses = sum(a[OBJECTIVE[0]] < b[OBJECTIVE[0]] for a, b in zip(better, base, strict=True))
    n = wins + losses
    p = sum(math.comb(n, i) for i in range(wins, n + 1)) / 2 ** n if n else 1.0
    return {"wins": wins, "losses": losses, "p": round(p, 4)}


def search_settings(corpus: Corpus, trainset: list, holdout: list | None = None, on_trial=None) -> SettingsChoice:
    """The grid's best settings on `trainset` (examples with evidence), kept only when they beat the
    defaults there by the sign test and, when a holdout is given, also score strictly higher than the
    defaults on it (module rules). `on_trial(trial)` is called after each trial."""
    examples = [example for example in trainset if example.get("evidence")]
    if not examples:
        raise ValueError("a settings compile needs train questions with evidence (doc_id, and page where pages count)")
    trials = []
    for settings in grid(corpus):
        started = time.perf_counter()
        trials.append(Trial(settings, example_recall(corpus, examples, settings), round(time.perf_counter() - started, 2)))
        if on_trial is not None:
            on_trial(trials[-1])
    best = max(trials, key=Trial.key)  # max keeps the first of equals: the one nearer the defaults
    tested = sign_test(best.found, trials[0].found)
    if best.settings == ReadSettings() or tested["p"] >= ALPHA:
        return SettingsChoice(ReadSettings(), best.settings, trials, tested)
    held = [example for example in holdout or [] if example.get("evidence")]
    if not held:
        return SettingsChoice(best.settings, best.settings, trials, tested)
    scored = {"defaults": score(corpus, held, ReadSettings()), "compiled": score(corpus, held, best.settings)}
    wins = tuple(scored["compiled"][n] for n in OBJECTIVE) > tuple(scored["defaults"][n] for n in OBJECTIVE)
    return SettingsChoice(best.settings if wins else ReadSettings(), best.settings, trials, tested, scored)
