"""What the subcommands share: argument types that reject bad input in one line, the common options,
and SIGTERM handled as Ctrl-C."""
from __future__ import annotations

import argparse
import re
import signal
from collections.abc import Iterator
from contextlib import contextmanager

from ferret.programs import DEFAULT_ITERATIONS, PROGRAM_NAMES

DEFAULT_INDEX = "runs/index"
SUMMARIES_HELP = ("what writes the summaries of long documents' chunks: 'extractive' (code, the default) or an LM "
                  "as for --lm ('local' the embedded model); by default what the index's were written with, and "
                  "another rewrites them")
MAX_ITERATIONS = 20  # of the iterative loop; each costs up to a few LM calls
MAX_THREADS = 64
MAX_QUESTIONS = 1_000_000  # --limit, --train, --val: more than any split holds
MAX_SEEDS = 100  # eval --seeds: each a run over the split


class Parser(argparse.ArgumentParser):
    """Bad input gets one line naming the value and what is allowed, and exit code 2 (no usage dump)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def count(low: int, high: int):
    """An argparse type: a whole number from `low` to `high`."""

    def whole_number(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is out of range: allowed {low} to {high}")
        return value

    return whole_number


def words(text: str) -> str:
    """An argparse type: text with something in it (a question, a query)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is empty")
    return text


def repairs(text: str) -> bool | None:
    """An argparse type: the small-model repairs, "auto" (None: decided by the LM), "on" or "off"."""
    choices = {"auto": None, "on": True, "off": False}
    if text not in choices:
        raise argparse.ArgumentTypeError(f"{text!r} is not one of auto, on, off")
    return choices[text]


def on_off(text: str) -> bool:
    """An argparse type: "on" or "off"."""
    if text not in ("on", "off"):
        raise argparse.ArgumentTypeError(f"{text!r} is not one of on, off")
    return text == "on"


def run_id(text: str) -> str:
    """An argparse type: an MLflow run id (32 hex digits), checked before the store is opened."""
    if not re.fullmatch(r"[0-9a-f]{32}", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not an MLflow run id (32 hex digits, as `ferret runs list` shows)")
    return text


def program_options(parser: argparse.ArgumentParser, lm_help: str = "LiteLLM model string, or 'local' (default; also env FERRET_LM)") -> None:
    """The program that answers, its LM and the small-model repairs (`programs.repairs`: None, True, False)."""
    parser.add_argument("--program", choices=PROGRAM_NAMES, default="iterative")
    parser.add_argument("--lm", help=lm_help)
    parser.add_argument("--repairs", type=repairs, default=None, metavar="auto|on|off",
                        help="the code's repairs of what a small model writes (list and sum cues, the yes/no prefix, "
                             "follow-up turns, comparisons in code, the read after the hops "
                             "search): 'auto' (default) is on for the embedded models "
                             "and off for any other LM")


def iterations_option(parser: argparse.ArgumentParser, default: int | None = None) -> None:
    parser.add_argument("--max-iterations", type=count(1, MAX_ITERATIONS), default=default,
                        help=f"iterative program only (default {default or DEFAULT_ITERATIONS}: the first read and "
                             "the hops read; more runs the ladder of searches after them)")


def long_text_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--long-text", type=on_off, default=None, metavar="on|off",
                        help="iterative program only: read a question about one long document (or routed to "
                             "long_text) first inside the chunks of it that best match (default: the program's)")


def accept_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--accept", choices=["grounded", "on_page"], default="grounded",
                        help="lowest grounding stated as an answer: 'grounded' (default: the value's row, column or "
                             "sentence is the question's) or 'on_page' (printed on the cited page); below it the "
                             "answer is a fail with an unconfirmed candidate")


def dataset_options(parser: argparse.ArgumentParser, datasets: str) -> None:
    """The options `eval` and `compile` share: the dataset, its index, the program and its LM."""
    parser.add_argument("--dataset", required=True, help=datasets)
    parser.add_argument("--data", required=True, help="the dataset's folder (or the JSONL file for jsonl)")
    parser.add_argument("--index", help="index directory (default runs/indexes/DATASET; documents are ingested)")
    program_options(parser, "the program's LM: LiteLLM model string, or 'local' (default; env FERRET_LM)")


def ray_options(parser: argparse.ArgumentParser, what: str, workers: bool = True) -> None:
    parser.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS",
                        help=f"{what}: a local Ray on this machine, or the cluster at ADDRESS (auto, HOST:6379, "
                             "ray://HOST:10001) started with `ray start --head`")
    if workers:
        parser.add_argument("--workers", type=count(1, MAX_THREADS),
                            help="with --ray: workers, one CPU each (default: this machine's cores, or the cluster's CPUs)")


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """`kill` and job schedulers (SIGTERM) stop an ingest, an eval or a compile as Ctrl-C does, keeping its work."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"stopped by signal {signal.Signals(signum).name}")

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
