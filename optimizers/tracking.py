"""Experiment tracking in MLflow, offline: a SQLite store at `runs/mlflow.db`, artifacts under
`runs/artifacts`, one experiment per dataset. Also the side-by-side view of runs that
`ferret runs list|compare` prints, and the plot both eval and compare draw.

`runs/` is under `$FERRET_HOME`, else under the current directory (the tests point it at a temporary one).
"""
from __future__ import annotations

import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ferret.corpus.store import exclusive
from ferret.paths import PACKAGE, runs_dir

if TYPE_CHECKING:
    from mlflow.tracking import MlflowClient

STATUS_COUNTS = ("n_correct", "n_wrong", "n_needs", "n_clarify", "n_fail", "n_error")


def metric_name(key: str) -> str:
    """MLflow's name for a metric: "@" is not allowed, so "mrr@10" is logged as "mrr_at_10"."""
    return key.replace("@", "_at_")


def tracking_uri() -> str:
    return f"sqlite:///{runs_dir() / 'mlflow.db'}"


def client() -> MlflowClient:
    """The store's client (MLflow is imported here, not with this module: it costs seconds, and a
    command given bad input should say so at once)."""
    import mlflow
    from mlflow.tracking import MlflowClient

    runs_dir().mkdir(parents=True, exist_ok=True)
    mlflow.set_tracking_uri(tracking_uri())
    with _creating_the_store():  # a fresh store's tables are created here
        return MlflowClient(tracking_uri())


def _creating_the_store():
    """One process at a time creates the store's tables or an experiment: two commands started together on
    a fresh store would both create them, and one fail ("table experiments already exists")."""
    return exclusive(runs_dir() / "mlflow.db.lock", f"another command to set up {tracking_uri()}")


def use_experiment(name: str) -> str:
    """Make `name` the active experiment (created with its artifacts under runs/artifacts/NAME)."""
    import mlflow

    mlflow_client = client()
    with _creating_the_store():
        experiment = mlflow_client.get_experiment_by_name(name)
        if experiment is None:
            location = (runs_dir() / "artifacts" / name).as_uri()
            experiment_id = mlflow.create_experiment(name, artifact_location=location)
        else:
            experiment_id = experiment.experiment_id
    mlflow.set_experiment(experiment_id=experiment_id)
    return experiment_id


def git_commit() -> str:
    """The repository's commit, with "+dirty" when the working tree has changes; "unknown" for an install
    that is not a checkout."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=PACKAGE, capture_output=True, text=True, check=True).stdout.strip()

    if not (PACKAGE / ".git").exists():
        return "unknown"
    try:
        return git("rev-parse", "--short=12", "HEAD") + ("+dirty" if git("status", "--porcelain", "-uno") else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def run_summaries(run_ids: Iterable[str]) -> list[dict]:
    """Each run as {"run_id", "experiment", "name", "status", "params", "metrics"}; unknown ids raise
    ValueError."""
    import mlflow

    mlflow_client, summaries = client(), []
    for run_id in run_ids:
        try:
            run = mlflow_client.get_run(run_id)
        except mlflow.exceptions.MlflowException:
            raise ValueError(f"no run {run_id!r} in {tracking_uri()}") from None
        experiment = mlflow_client.get_experiment(run.info.experiment_id).name
        summaries.append({"run_id": run_id, "experiment": experiment, "name": run.info.run_name,
                          "status": run.info.status, "params": dict(run.data.params), "metrics": dict(run.data.metrics)})
    return summaries


def recent_runs(experiment: str | None = None, limit: int = 20) -> list[dict]:
    """The latest runs, newest first, of one experiment or of all."""
    mlflow_client = client()
    experiments = mlflow_client.search_experiments()
    ids = [e.experiment_id for e in experiments if experiment is None or e.name == experiment]
    if experiment is not None and not ids:
        raise ValueError(f"no experiment {experiment!r}; experiments: {', '.join(e.name for e in experiments)}")
    runs = mlflow_client.search_runs(ids, order_by=["attributes.start_time DESC"], max_results=limit) if ids else []
    return run_summaries(run.info.run_id for run in runs)


def side_by_side(summaries: list[dict], keys: Iterable[str] | None = None) -> str:
    """A text table: one column per run, one row per param and metric (all of them, or `keys`)."""
    if not summaries:
        return "no runs"
    def values(summary: dict) -> dict:
        return {**summary["params"], **{k: _number(v) for k, v in summary["metrics"].items()}}
    table = [values(summary) for summary in summaries]
    names = list(keys) if keys else sorted({key for row in table for key in row})
    header = ["", *(summary["run_id"][:8] for summary in summaries)]
    rows = [header, ["experiment", *(summary["experiment"] for summary in summaries)]]
    rows += [[name, *(str(row.get(name, "")) for row in table)] for name in names]
    widths = [min(max(len(row[i]) for row in rows), 40) for i in range(len(header))]
    return "\n".join("  ".join(cell[:40].ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows)


def _number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else round(value, 4)


def plot_runs(summaries: list[dict], path: str | Path) -> Path:
    """Left: accuracy against tokens per question, one point per run. Right: each run's questions by
    outcome (correct, wrong answer, needs, clarify, fail, error)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (scatter, bars) = plt.subplots(1, 2, figsize=(12, 4.5))
    labels = [f"{s['params'].get('program', '?')} {s['run_id'][:6]}\n{s['params'].get('lm', '?').split('/')[-1][:24]}"
              for s in summaries]
    for summary, label in zip(summaries, labels):
        metrics = summary["metrics"]
        tokens = metrics.get("avg_input_tokens", 0) + metrics.get("avg_output_tokens", 0)
        scatter.scatter(tokens, metrics.get("accuracy", 0), s=60)
        scatter.annotate(label.replace("\n", " · "), (tokens, metrics.get("accuracy", 0)), fontsize=8,
                         xytext=(4, 4), textcoords="offset points")
    scatter.set(xlabel="tokens per question (input + output)", ylabel="accuracy", ylim=(-0.05, 1.05),
                title="accuracy against cost")
    left = [0.0] * len(summaries)
    for count in STATUS_COUNTS:
        widths = [s["metrics"].get(count, 0) for s in summaries]
        bars.barh(labels, widths, left=left, label=count[2:])
        left = [a + b for a, b in zip(left, widths)]
    bars.tick_params(axis="y", labelsize=8)
    bars.set(xlabel="questions", title="per-question outcome")
    bars.legend(fontsize=8, ncol=len(STATUS_COUNTS), loc="upper center", bbox_to_anchor=(0.5, -0.15))
    return _saved(figure, path)


LEVEL_ORDER = {"grounded": 3, "on_page": 2, "unsupported": 1}


def risk_coverage(rows: list[dict]) -> list[tuple[float, float]]:
    """(coverage, accuracy) had the program stated its k surest answers, for k = 1..n: questions ordered by
    their answer's (or unconfirmed candidate's) grounding level, then the read's confidence; a question with
    neither comes last. Accuracy is `candidate_accuracy` (the answer or the candidate judged)."""
    def sureness(row: dict) -> tuple[int, float]:
        result = row.get("result") or {}
        return LEVEL_ORDER.get(result.get("grounding") or "", 0), float(result.get("confidence") or 0.0)

    ordered = sorted(rows, key=sureness, reverse=True)
    points, right = [], 0.0
    for k, row in enumerate(ordered, start=1):
        right += row.get("candidate_accuracy", row.get("accuracy", 0.0))
        points.append((k / len(rows), right / k))
    return points


def plot_risk_coverage(rows: list[dict], path: str | Path, title: str) -> Path:
    """The risk-coverage curve (`risk_coverage`), with the share the program answered marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6, 4.5))
    points = risk_coverage(rows)
    axis.plot([c for c, _ in points], [a for _, a in points], marker=".")
    answered = sum(1 for row in rows if row.get("answered")) / len(rows) if rows else 0.0
    axis.axvline(answered, linestyle="--", color="grey", label=f"answered ({answered:.2f})")
    axis.set(xlabel="coverage (share of questions answered, surest first)", ylabel="accuracy among them",
             ylim=(-0.05, 1.05), xlim=(0, 1.02), title=title)
    axis.legend(fontsize=8)
    return _saved(figure, path)


def _saved(figure, path: str | Path) -> Path:
    """`figure` laid out, written to `path` (its folder made) as a PNG, and closed."""
    import matplotlib.pyplot as plt

    figure.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path
