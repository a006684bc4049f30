"""A judgments file with a bad line: ``analyze``, ``export`` and ``compare`` exit with status 2 and
one line naming the file, the line and the field (never a traceback, never a crash of pyarrow's
parser), and nothing is written. And the Parquet file ``export`` writes analyses as its run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from jurybox.cli import main

GOLDEN = Path(__file__).parents[1] / "data" / "golden_modes" / "pairwise_both.jsonl"
LINES = GOLDEN.read_text(encoding="utf-8").splitlines()


def _run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _literal(field: str, text: str) -> bytes:
    record = json.loads(LINES[1])
    record[field] = "@@"
    return json.dumps(record).replace('"@@"', text).encode("utf-8")


BAD: dict[str, tuple[bytes, str]] = {
    "wrong type": (_literal("repeat", '"2"'), "field 'repeat': expected an integer"),
    "wrong nested type": (_literal("overall", '{"control": "7"}'), "field 'overall.control'"),
    "not utf-8": (_literal("error", '"caf\xe9"').replace(b"\xc3\xa9", b"\xe9"), "invalid UTF-8"),
    "infinity": (_literal("cost_usd", "Infinity"), "Infinity is not a JSON number (column"),
    "nan": (_literal("cost_usd", "NaN"), "field 'cost_usd': NaN is not a number here"),
    "huge number": (_literal("repeat", "9" * 5000), "a number of 5,000 characters"),
    "deep nesting": (_literal("extra", "[" * 100_000 + "]" * 100_000), "nested deeper than 100"),
    "missing field": (_literal("judge_name", "null"), "field 'judge_name': missing or null"),
}


@pytest.fixture
def clean(tmp_path: Path) -> Path:
    return _file(tmp_path / "clean.jsonl", b"")


def _file(path: Path, bad: bytes) -> Path:
    body = "\n".join(LINES[:1]).encode() + b"\n\n" + bad + b"\n" + "\n".join(LINES[2:]).encode()
    path.write_bytes(body + b"\n" if bad else "\n".join(LINES).encode() + b"\n")
    return path


@pytest.mark.parametrize("case", sorted(BAD))
def test_analyze_export_and_compare_exit_2_naming_the_line(
    tmp_path: Path, clean: Path, case: str
) -> None:
    line, says = BAD[case]
    path = _file(tmp_path / "judgments.jsonl", line)
    out = tmp_path / "out"
    for args in (
        ("analyze", str(path), "--out", str(out), "--no-plots"),
        ("export", str(path), "--out", str(out / "x.csv")),
        ("compare", str(clean), str(path), "--out", str(out)),
    ):
        result = _run(*args)
        assert result.exit_code == 2, (args[0], result.output)
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert f"{path}:3" in result.output and says in result.output, result.output
        assert "Traceback" not in result.output
    assert not out.exists()


def test_the_parquet_export_analyses_as_its_judgments(tmp_path: Path) -> None:
    path = tmp_path / "judgments.jsonl"
    shutil.copy(GOLDEN, path)
    exported = tmp_path / "judgments.parquet"
    assert _run("export", str(path), "--out", str(exported)).exit_code == 0
    for source, out in ((path, "from_jsonl"), (exported, "from_parquet")):
        result = _run("analyze", str(source), "--out", str(tmp_path / out), "--no-plots")
        assert result.exit_code == 0, result.output
    reports = [
        json.loads((tmp_path / out / "analysis_report.json").read_text(encoding="utf-8"))
        for out in ("from_jsonl", "from_parquet")
    ]
    for report in reports:
        report.pop("generated_by")
    assert reports[0] == reports[1]
