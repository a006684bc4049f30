"""YAML's own bombs in a config or rubric file (issue 31 item 7): deep nesting used to end in
PyYAML's RecursionError, and a few lines of aliases expand to billions of values once anything
walks them (a request body, the manifest). Each is a ConfigError naming the file, exit 2."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from jurybox.cli import main
from jurybox.config import MAX_YAML_DEPTH, load_config
from jurybox.errors import ConfigError
from jurybox.rubrics import load_rubric

HEAD = "paths: {dataset: d.jsonl}\njudges:\n  j:\n    provider: fake\n"


def _laughs(levels: int) -> str:
    """An ``extra_body`` whose last key stands for 9 ** ``levels`` strings."""
    lines = ["    extra_body:", '      l0: &l0 ["x","x","x","x","x","x","x","x","x"]']
    for level in range(1, levels):
        aliases = ",".join([f"*l{level - 1}"] * 9)
        lines.append(f"      l{level}: &l{level} [{aliases}]")
    return HEAD.replace("provider: fake", "provider: openai_compatible") + "\n".join(lines) + "\n"


CASES = {
    "flow_nesting": ("x: " + "[" * 100_000 + "]" * 100_000 + "\n", 1, "nested deeper than 100"),
    "block_nesting": (
        "x:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 3_000)),
        MAX_YAML_DEPTH,
        "nested deeper than 100",
    ),
    "billion_laughs": (_laughs(9), None, "more than 100,000 values once its aliases"),
    "self_alias": (HEAD + "    fake: &a {replies: [*a]}\n", 5, "inside its own anchor"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_yaml_bomb_in_a_config_is_a_config_error(tmp_path: Path, name: str) -> None:
    text, line, needle = CASES[name]
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    started = time.perf_counter()
    with pytest.raises(ConfigError, match=needle) as caught:
        load_config(path)
    assert time.perf_counter() - started < 10
    assert (caught.value.path, caught.value.line) == (str(path), line)
    result = CliRunner().invoke(main, ["run", str(path), "--dry-run"])
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit)
    assert needle in result.output and "Traceback" not in result.output


def test_a_rubric_file_is_bounded_the_same_way(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text("name: r\ndimensions: " + "[" * 500 + "]" * 500 + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="nested deeper than 100 levels") as caught:
        load_rubric(str(path))
    assert caught.value.path == str(path)


def test_ordinary_anchors_and_aliases_still_work(tmp_path: Path) -> None:
    (tmp_path / "d.jsonl").write_text("", encoding="utf-8")
    path = tmp_path / "c.yaml"
    text = (
        "paths: {dataset: d.jsonl}\n"
        "judges:\n"
        "  a: &judge {provider: fake, fake: {behavior: first}}\n"
        "  b: *judge\n"
        "  c: {<<: *judge, model: other}\n"
    )
    path.write_text(text, encoding="utf-8")
    config = load_config(path)
    assert config.judges["a"] == config.judges["b"]
    assert config.judges["c"].model == "other"
