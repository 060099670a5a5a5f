"""The README's results table, written from the MLflow runs of one commit, so that the table and the
commit it names never disagree.

    python docs/results.py                   # the README's table from the runs in runs/mlflow.db
    python docs/results.py --run             # first run each row's `ferret eval` (hours on the embedded model)
    python docs/results.py --check           # exit 1 if the README's table is not the one the runs give

Each row is `ferret eval --dataset D --data DATA/D --program P --split S --limit N --json` on the
embedded model: the held-out test split of each set (no rule or setting was chosen looking at its
questions) beside the dev split. The table is taken from the newest commit with every test row run (else the
newest of those with the most rows; a row not run there says so); runs started from a working tree with changes ("+dirty"), and runs with the long-text
read on (`--long-text on`, not the program's default), are never used. `$FERRET_HOME` says where the
runs are, as for the `ferret` command.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

from ferret.optimizers.tracking import client
from ferret.programs.lm import LOCAL_MODEL

README = Path(__file__).resolve().parents[1] / "README.md"
START, END = "<!-- results: written by docs/results.py -->", "<!-- end of results -->"
SIZES = {"test": (("hotpotqa", 15), ("tatqa", 16), ("financebench", 16)),
         "dev": (("hotpotqa", 30), ("tatqa", 16), ("financebench", 20))}
ROWS = [(dataset, split, limit, program) for split, sizes in SIZES.items() for dataset, limit in sizes
        for program in ("iterative", "oneshot")]
NAMES = {"hotpotqa": "HotpotQA", "tatqa": "TAT-QA", "financebench": "FinanceBench"}


def command(dataset: str, split: str, limit: int, program: str, data: str = "../shared/data") -> list[str]:
    return ["ferret", "eval", "--dataset", dataset, "--data", f"{data}/{dataset}", "--program", program,
            "--split", split, "--limit", str(limit), "--json"]


def runs_by_commit() -> dict[str, dict[tuple, dict]]:
    """{commit: {row: the newest finished run of that row at that commit}}."""
    mlflow_client, found = client(), {}
    for dataset in dict.fromkeys(dataset for dataset, _, _, _ in ROWS):
        experiment = mlflow_client.get_experiment_by_name(dataset)
        if experiment is None:
            continue
        for run in mlflow_client.search_runs([experiment.experiment_id], "attributes.status = 'FINISHED'",
                                             order_by=["attributes.start_time DESC"], max_results=5000):
            params = run.data.params
            row = (dataset, params.get("split"), int(params.get("limit") or 0), params.get("program"))
            commit = params.get("git_commit", "unknown")
            if (row in ROWS and not params.get("compiled")
                    and params.get("lm") == LOCAL_MODEL and params.get("long_text") != "True"
                    and re.fullmatch(r"[0-9a-f]{7,40}", commit)):
                found.setdefault(commit, {}).setdefault(row, run)
    return found


def _row(run, dataset: str, split: str, limit: int, program: str) -> str:
    m = run.data.metrics
    rungs = ", ".join(f"{name[5:-9]} {int(m[name])}/{int(m.get(name[:-9] + '_correct', 0))}"
                      for name in sorted(m) if name.startswith("rung_") and name.endswith("_answered"))
    cells = [f"{NAMES[dataset]} {split} {limit}", program, f"{m['accuracy']:.3f}",
             f"{m['evidence_recall_at_5']:.2f} / {m['evidence_recall_all_at_5']:.2f}", f"{m['answered_rate']:.2f}",
             f"{m.get('grounded_accuracy', 0):.2f}", f"{m.get('wrong_grounded_rate', 0):.3f}",
             f"{m['avg_lm_calls']:.2f}", f"{m['avg_seconds']:.0f}", rungs, run.info.run_id[:8]]
    return "| " + " | ".join(cells) + " |"


def chosen_commit(found: dict[str, dict[tuple, dict]]) -> str:
    """The newest commit with every test row run, else the newest of those with the most rows."""
    by_age = sorted(found, key=lambda commit: -max(run.info.start_time for run in found[commit].values()))
    complete = [commit for commit in by_age if all(row in found[commit] for row in ROWS if row[1] == "test")]
    return complete[0] if complete else max(by_age, key=lambda commit: len(found[commit]))


def table() -> str:
    found = runs_by_commit()
    if not found:
        raise SystemExit("no finished run of any row; run: python docs/results.py --run")
    commit = chosen_commit(found)
    runs = found[commit]
    lines = [START, f"At commit {commit[:7]}, the embedded model (`--lm local`); each row is "
             f"`{' '.join(command('D', 'S', 'N', 'P'))}`.", "",
             "| set | program | accuracy | evidence recall@5 / all@5 | answered | grounded accuracy | wrong grounded "
             "| LM calls | s/question | answered by (answered/right) | MLflow run |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    lines += [_row(runs[row], *row) if row in runs else f"| {NAMES[row[0]]} {row[1]} {row[2]} | {row[3]} | not run at this "
              f"commit |" + " |" * 8 for row in ROWS]
    return "\n".join([*lines, END])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", action="store_true", help="run every row's eval first, one after another")
    parser.add_argument("--data", default="../shared/data", help="the folder holding the datasets' folders")
    parser.add_argument("--check", action="store_true", help="only compare the README's table with the runs'")
    args = parser.parse_args()
    if args.run:
        for row in ROWS:
            subprocess.run(command(*row, data=args.data), check=True)
    text = README.read_text(encoding="utf-8")
    if START not in text or END not in text:
        raise SystemExit(f"{README} has no results markers ({START} ... {END})")
    before, rest = text.split(START, 1)
    new = before + table() + rest.split(END, 1)[1]
    if args.check:
        return 0 if new == text else 1
    README.write_text(new, encoding="utf-8")
    print(f"{README}: results table written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
