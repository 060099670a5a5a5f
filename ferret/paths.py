"""Where ferret keeps its files: the runs folder (MLflow store and artifacts, indexes, compiled
programs, the last answer's rows) and the cache (assembled model weights, converted datasets)."""
from __future__ import annotations

import os
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]  # the installed package; in a checkout, the repository
SAMPLE = PACKAGE / "data" / "sample"  # the sample corpus and labeled questions, package data (data/sample_corpus.py)


def runs_dir() -> Path:
    """`runs/` under $FERRET_HOME, else under the current directory."""
    return (Path(os.environ.get("FERRET_HOME") or ".") / "runs").resolve()


def cache_dir(kind: str) -> Path:
    """`<root>/<kind>`, root being $FERRET_CACHE, else $XDG_CACHE_HOME/ferret, else ~/.cache/ferret."""
    if os.environ.get("FERRET_CACHE"):
        return Path(os.environ["FERRET_CACHE"]) / kind
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ferret" / kind
