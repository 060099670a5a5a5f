"""ferret installs as one import name, `ferret`, and works outside a checkout."""
import subprocess
import sys
from pathlib import Path

import ferret
import ferret.data
from ferret.paths import SAMPLE, runs_dir


def _python(code: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_import_ferret_is_light_and_installs_no_generic_top_level_names(tmp_path):
    done = _python("import sys, importlib.util, ferret\n"
                   "print(*sorted(m for m in ('dspy', 'torch', 'mlflow') if m in sys.modules))\n"
                   "print(*[n for n in ('corpus', 'programs', 'optimizers', 'signatures', 'data') "
                   "if importlib.util.find_spec(n)])", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    heavy, generic = done.stdout.split("\n")[:2]
    assert heavy == "" and generic == "", done.stdout


def test_every_public_name_resolves_to_its_part():
    for name in ferret.__all__:
        assert getattr(ferret, name).__module__.startswith("ferret."), name
    assert ferret.Corpus.__module__ == "ferret.corpus.tools"
    assert ferret.IterativeRetriever.__module__ == "ferret.programs.iterative"


def test_python_m_ferret_is_the_command(tmp_path):
    done = subprocess.run([sys.executable, "-m", "ferret", "ask", "   "], capture_output=True, text=True, cwd=tmp_path,
                          timeout=300)
    assert done.returncode == 2 and "ferret ask: error: argument question: '   ' is empty" in done.stderr, done.stderr


def test_the_sample_corpus_is_package_data():
    assert SAMPLE.parent == Path(ferret.data.__file__).parent
    assert (SAMPLE / "qa.jsonl").is_file() and len(list(SAMPLE.glob("*/*.pdf"))) >= 20


def test_runs_live_under_ferret_home_else_the_current_directory(monkeypatch, tmp_path):
    monkeypatch.setenv("FERRET_HOME", str(tmp_path / "home"))
    assert runs_dir() == tmp_path / "home" / "runs"
    monkeypatch.delenv("FERRET_HOME")
    monkeypatch.chdir(tmp_path)
    assert runs_dir() == tmp_path / "runs"
