"""Where ferret keeps its files: the runs folder (MLflow store and artifacts, indexes, compiled
programs, the last answer's rows) and the cache (assembled model weights, converted datasets)."""
from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "sample"  # the project's sample corpus and labeled questions (data/sample_corpus.py)


def runs_dir() -> Path:
    """`$FERRET_RUNS`, else `runs/` in the repository."""
    return Path(os.environ.get("FERRET_RUNS") or REPO / "runs").resolve()


def cache_dir(kind: str) -> Path:
    """`<root>/<kind>`, root being $FERRET_CACHE, else $XDG_CACHE_HOME/ferret, else ~/.cache/ferret."""
    if os.environ.get("FERRET_CACHE"):
        return Path(os.environ["FERRET_CACHE"]) / kind
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ferret" / kind
