"""The MLflow store is set up by one process at a time: commands started together on a fresh store all run."""
import fcntl
import os
import subprocess
import sys

from ferret.optimizers.tracking import client

USE_EXPERIMENT = "from ferret.optimizers.tracking import use_experiment; use_experiment('hotpotqa')"


def start(tmp_path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", USE_EXPERIMENT], env={**os.environ, "FERRET_HOME": str(tmp_path)},
                            stderr=subprocess.PIPE, text=True)


def test_a_command_waits_while_another_sets_up_the_store(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    with open(runs / "mlflow.db.lock", "a") as held:  # another command is creating the store's tables
        fcntl.flock(held, fcntl.LOCK_EX)
        waiting = start(tmp_path)
        line = waiting.stderr.readline()
        while line and "waiting" not in line:
            line = waiting.stderr.readline()
        assert f"waiting for another command to set up sqlite:///{runs}/mlflow.db" in line
        assert waiting.poll() is None and not (runs / "mlflow.db").exists()
    assert waiting.wait(timeout=120) == 0


def test_commands_started_together_on_a_fresh_store_all_run_and_share_one_experiment(tmp_path, monkeypatch):
    commands = [start(tmp_path) for _ in range(3)]
    assert [command.wait(timeout=180) for command in commands] == [0, 0, 0], [c.stderr.read() for c in commands]
    monkeypatch.setenv("FERRET_HOME", str(tmp_path))
    assert [e.name for e in client().search_experiments()].count("hotpotqa") == 1
