"""The layers point one way: `ferret.corpus` imports nothing of the programs or optimizers,
`ferret.programs` nothing of the optimizers, `ferret.signatures` nothing of the three (the root `ferret`
and `ferret.cli` sit above all of them). Checked on the source, with `ast`, so that an import inside a
function or under `TYPE_CHECKING` counts as much as one at the top of a module."""
from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

FORBIDDEN = {
    "ferret.corpus": ("ferret.programs", "ferret.optimizers"),
    "ferret.programs": ("ferret.optimizers",),
    "ferret.signatures": ("ferret.corpus", "ferret.programs", "ferret.optimizers"),
}


def package_dir(package: str) -> Path:
    """The folder `package` is installed from (`corpus/` for ferret.corpus), found without importing it."""
    return Path(importlib.util.find_spec(package).submodule_search_locations[0])


def module_name(package: str, path: Path) -> str:
    parts = path.relative_to(package_dir(package)).with_suffix("").parts
    return ".".join([package, *(parts[:-1] if parts[-1] == "__init__" else parts)])


def imported(source: str, module: str, is_package: bool = False) -> list[tuple[int, str]]:
    """(line, module) of every module the source imports, relative imports resolved against `module`;
    `from A import B` counts A.B too (B may be a module: `from ferret import programs`)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")[:len(module.split(".")) - node.level + is_package]
                base = ".".join(anchor + ([base] if base else []))
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names if alias.name != "*"]
    return found


def violations(source: str, module: str, is_package: bool = False) -> list[str]:
    """The imports of `module` (its source) that its layer forbids."""
    layer = next((name for name in FORBIDDEN if module == name or module.startswith(name + ".")), None)
    if layer is None:
        return []
    found = {}  # one line each: `from ferret.programs.lm import make_lm` is one import of ferret.programs.lm
    for line, name in imported(source, module, is_package):
        if any(name == above or name.startswith(above + ".") for above in FORBIDDEN[layer]):
            found.setdefault(line, f"{module}:{line} imports {name}")
    return list(found.values())


@pytest.mark.parametrize("package", list(FORBIDDEN))
def test_no_layer_imports_a_layer_above_it(package):
    paths = sorted(package_dir(package).rglob("*.py"))
    assert paths, f"no sources found for {package}"
    found = [problem for path in paths for problem in violations(
        path.read_text(encoding="utf-8"), module_name(package, path), path.name == "__init__.py")]
    assert not found, "\n".join(found)


def test_the_check_sees_every_form_of_import():
    """The check itself: it finds a forbidden import however it is written, and lets the allowed ones by."""
    assert violations("from ferret.programs.lm import make_lm", "ferret.corpus.summaries")
    assert violations("def f():\n    import ferret.optimizers.datasets", "ferret.programs.bench")
    assert violations("from ferret import optimizers", "ferret.programs.chat")
    assert violations("from ..programs import hops", "ferret.corpus.tools")
    assert violations("from .. import corpus", "ferret.signatures", is_package=True)  # ferret.corpus
    assert violations("from . import router", "ferret.signatures", is_package=True) == []
    assert violations("from ferret.corpus.words import stems", "ferret.signatures.types")
    assert violations("from ferret.corpus.words import stems", "ferret.programs.hops") == []
    assert violations("from ferret.optimizers import datasets", "ferret.cli.bench") == []
    assert violations("import ferret.programsx", "ferret.corpus.ingest") == []  # a prefix of a name is no import of it
