"""``jurybox analyze``'s terminal summary at 80 columns: no word of its tables is cut or split
across lines, on a terminal (tables fitted, else lines) and off one (a CI log: plain lines)."""

from __future__ import annotations

import io
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from rich.console import Console

from jurybox.analysis.model import Report
from jurybox.app.run import run_from_config
from jurybox.cli import main
from jurybox.reporting import ReportPaths, print_summary

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# Names as long as an imported LLMBar judge's: what made the old tables cut words at 80.
LONG_NAMES = {
    "first_pick": "GPT-4/Vanilla_NoRules",
    "long_pick": "LLaMA2/Vanilla_NoRules",
    "coin": "ChatGPT/Vanilla_NoRules",
}
_BOX = set("│╭╮╰╯─━┃┏┓┗┛═║ ")


@pytest.fixture(scope="module")
def long_named_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/pairwise.yaml on its first 14 items, judges renamed as LLMBar's are."""
    tmp = tmp_path_factory.mktemp("width")
    for name in ("items.jsonl", "human_labels.jsonl"):
        shutil.copy(EXAMPLES / name, tmp / name)
    config = yaml.safe_load((EXAMPLES / "pairwise.yaml").read_text(encoding="utf-8"))
    config["judges"] = {LONG_NAMES[name]: judge for name, judge in config["judges"].items()}
    config["pipeline"]["test_retest_count"] = 0
    config["paths"]["output_dir"] = "run"
    path = tmp / "long.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    run_from_config(path, limit=14, console=Console(quiet=True))
    return tmp / "run"


def _words(text: str) -> Counter[str]:
    """Whitespace-separated words, box glyphs dropped and trailing ``;:,`` taken off (the
    lines form writes ``header: value;``)."""
    words = (word.strip(";:,") for word in text.split())
    return Counter(word for word in words if word and not set(word) <= _BOX)


def _cut(wide: str, narrow: str) -> Counter[str]:
    """Words of the wide rendering missing from the narrow one: cut, folded or truncated."""
    return _words(wide) - _words(narrow)


def _analyze(run: Path, out: Path, columns: int, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("COLUMNS", str(columns))
    result = CliRunner().invoke(
        main, ["analyze", str(run), "--out", str(out), "--no-plots"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    return result.output


def test_no_word_of_analyze_is_split_at_80_columns_off_a_terminal(
    long_named_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wide = _analyze(long_named_run, tmp_path / "report", 400, monkeypatch)
    narrow = _analyze(long_named_run, tmp_path / "report", 80, monkeypatch)  # replaces it
    assert "GPT-4/Vanilla_NoRules" in narrow and "accuracy" in narrow
    assert not _cut(wide, narrow), narrow
    # A log gets plain lines: no box drawn, each row of a table whole on one line.
    assert not set(narrow) & set("│╭╮╰╯─")
    rows = [line for line in narrow.splitlines() if line.startswith("GPT-4/Vanilla_NoRules — ")]
    assert len(rows) == 2 and all("accuracy" in row for row in rows)


def _summary(report: Report, width: int) -> str:
    folder = Path("report")  # short paths: a path longer than the terminal is left whole
    paths = ReportPaths(
        json=folder / "analysis_report.json",
        markdown=folder / "summary_tables.md",
        html=folder / "report.html",
        plots_dir=None,
    )
    console = Console(file=io.StringIO(), width=width, force_terminal=True, color_system=None)
    print_summary(report, paths, console)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert isinstance(text, str)
    return text


@pytest.mark.parametrize("width", [80, 60, 40])
def test_no_word_of_the_terminal_tables_is_split(
    long_named_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, width: int
) -> None:
    out = tmp_path / "report"
    _analyze(long_named_run, out, 400, monkeypatch)
    report = Report.model_validate_json((out / "analysis_report.json").read_text("utf-8"))
    wide, narrow = _summary(report, 400), _summary(report, width)
    # As lines, a row is named by its judge: the "judge" header of the tables is not repeated.
    assert not _cut(wide, narrow) - Counter({"judge": 2}), narrow
    drawn = [line for line in narrow.splitlines() if not line.startswith(("Report:", "Tables:"))]
    assert max(len(line) for line in drawn) <= width  # paths alone are left whole, not cut


def test_a_table_that_fits_is_still_drawn_as_one(
    long_named_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "report"
    _analyze(long_named_run, out, 400, monkeypatch)
    report = Report.model_validate_json((out / "analysis_report.json").read_text("utf-8"))
    text = _summary(report, 80)
    # both tables keep their header rule at 80 columns: fitted, words whole
    assert len(re.findall(r"^ ─{20,}", text, flags=re.MULTILINE)) == 2, text
    narrow = _summary(report, 40)  # no room for the longest words: one line per row
    assert not re.findall(r"^ ─{20,}", narrow, flags=re.MULTILINE), narrow
    assert re.search(r"^GPT-4/Vanilla_NoRules — level: ", narrow, flags=re.MULTILINE), narrow
