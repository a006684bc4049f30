"""The documented layering (DESIGN.md §3, docs/architecture.md) holds: no module imports upward.

``cli > app > (devloop, optimize, reporting) > analysis > pipeline > modes > (prompts, parsing,
providers) > (io, rubrics) > (config, records, errors)``; ``stats`` is a leaf that imports only
numpy, scipy, statsmodels and ``jurybox.errors``. Every import counts — at module level, inside a
function, or under ``TYPE_CHECKING`` — because each one is a dependency a reader has to follow.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "jurybox"

# Lower number = lower layer. A module may import its own part and any lower layer.
LAYERS: dict[str, int] = {
    "errors": 0,
    "redaction": 0,
    "thresholds": 0,
    "pricing": 0,
    "versions": 0,
    "records": 0,
    "config": 0,
    "io": 1,
    "rubrics": 1,
    "prompts": 2,
    "parsing": 2,
    "providers": 2,
    "evaluators": 2,
    "modes": 3,
    "pipeline": 4,
    "analysis": 5,
    "devloop": 6,
    "optimize": 6,
    "reporting": 6,
    "app": 7,
    "ray": 7,  # jurybox.ray: the Ray Data API, beside app
    "cli": 8,
    "__main__": 8,
    "__init__": 8,
}
STATS_ALLOWED = {"jurybox.errors", "jurybox.stats"}
# The one sanctioned exception: the config validates ``provider:`` against the registry's table
# of names (the only list of them). The registry is kept a leaf for that: at run time it imports
# nothing of jurybox's but ``errors`` (tests/providers/test_registry.py checks it).
EXEMPT = {("config", "jurybox.providers.registry")}


def _part(module: str) -> str:
    """``jurybox.io.datasets._fields`` -> ``io``."""
    return module.split(".")[1] if module.count(".") else "__init__"


def _modules() -> list[tuple[str, Path]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(relative.parts)
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        found.append((".".join(parts), path))
    return found


def _imports(path: Path, module: str) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against the importing package
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names = [f"{base}.{alias.name}" for alias in node.names]
            out.extend((node.lineno, name) for name in [base, *names] if name)
    # ``from jurybox import stats`` names the root itself; its imported names are checked.
    return [(line, name) for line, name in out if name.startswith("jurybox.")]


def _violations() -> list[str]:
    problems = []
    for module, path in _modules():
        if module == "jurybox":
            continue
        part = _part(module)
        for line, target in _imports(path, module):
            target_part = _part(target)
            if part == "stats":
                if not any(target == a or target.startswith(a + ".") for a in STATS_ALLOWED):
                    problems.append(f"{module}:{line} (stats is a leaf) imports {target}")
                continue
            if target_part in ("stats", part):
                continue
            if target_part not in LAYERS:  # a name imported from the package root
                continue
            if any(part == p and (target == t or target.startswith(t + ".")) for p, t in EXEMPT):
                continue
            if LAYERS[target_part] > LAYERS[part]:
                problems.append(f"{module}:{line} ({part}) imports upward {target}")
    return sorted(set(problems))


def test_every_part_of_the_package_has_a_layer() -> None:
    parts = {_part(module) for module, _ in _modules() if module != "jurybox"}
    assert parts - set(LAYERS) - {"stats"} == set()


def test_no_module_imports_a_higher_layer() -> None:
    assert _violations() == []


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        ("jurybox.io.labels", "from jurybox.analysis import frame\n", "imports upward"),
        ("jurybox.stats.x", "import jurybox.records\n", "stats is a leaf"),
        ("jurybox.pipeline.x", "def f():\n    from jurybox.app import run\n", "imports upward"),
    ],
)
def test_the_walk_catches_an_upward_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str, source: str, expected: str
) -> None:
    """The check itself can fail: a planted upward import is reported."""
    fake = tmp_path / "jurybox"
    target = fake.joinpath(*module.split(".")[1:]).with_suffix(".py")
    target.parent.mkdir(parents=True)
    target.write_text(source)
    monkeypatch.setattr(__import__(__name__), "PACKAGE", fake)
    assert any(expected in problem for problem in _violations())
