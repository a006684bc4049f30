"""Bad datasets and configs: one-line errors naming file, line and field; exit status 2.

Each case is checked twice: the library raises DatasetError / ConfigError with ``.path``,
``.line`` and ``.field`` set, and the CLI prints exactly one ``error:`` line and exits 2 with no
traceback (``export-pairs`` for datasets, ``run CONFIG --dry-run`` for configs).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest
from click.testing import CliRunner, Result

from jurybox.cli import main
from jurybox.config import load_config
from jurybox.errors import ConfigError, DatasetError, InputError
from jurybox.io.datasets import load_dataset

MARK = "# <-"  # marks the line a config error must point at


def jline(**fields: object) -> str:
    return json.dumps(fields)


def item(item_id: str = "1", **extra: object) -> str:
    base: dict[str, object] = {
        "id": item_id,
        "question": "q",
        "responses": {"control": "a", "treatment": "b"},
    }
    return json.dumps({**base, **extra})


def parquet_with_null_question(path: Path) -> None:
    table = pa.table(
        {
            "id": ["a", "b", "c"],
            "question": ["q", None, "q"],
            "responses": [{"x": "1", "y": "2"}] * 3,
        }
    )
    pq.write_table(table, path)


@dataclass(frozen=True)
class DataCase:
    name: str
    filename: str
    content: bytes | Callable[[Path], None] | None  # None: the file is not created
    line: int | None
    field: str | None
    needle: str


DATA_CASES = [
    DataCase(
        "duplicate_id",
        "d.jsonl",
        "\n".join([item("a"), item("b"), item("a")]).encode(),
        3,
        "id",
        "duplicate id 'a' (first on line 1)",
    ),
    DataCase(
        "missing_question",
        "d.jsonl",
        (item("a") + "\n" + jline(id="b", responses={"control": "a", "treatment": "b"})).encode(),
        2,
        "question",
        "missing",
    ),
    DataCase("id_wrong_type", "d.jsonl", item(["x"]).encode(), 1, "id", "got a list"),  # type: ignore[arg-type]
    DataCase(
        "invalid_utf8",
        "d.jsonl",
        (item("a") + "\n" + item("b") + "\n").encode() + b'{"id": "c\xff"}\n',
        3,
        None,
        "invalid UTF-8 (byte 0xff",
    ),
    DataCase("empty_file", "d.jsonl", b"", None, None, "empty file"),
    DataCase("blank_lines_only", "d.jsonl", b"\n\n  \n", None, None, "empty file"),
    DataCase(
        "invalid_json_line",
        "d.jsonl",
        (item("a") + '\n{"id": "b", "question": }\n').encode(),
        2,
        None,
        "invalid JSON",
    ),
    DataCase("not_an_object", "d.jsonl", b'["a", "b"]\n', 1, None, "expected a JSON object"),
    DataCase(
        "responses_not_mapping",
        "d.jsonl",
        jline(id="a", question="q", responses=["x", "y"]).encode(),
        1,
        "responses",
        "mapping of arm -> text",
    ),
    DataCase(
        "response_not_text",
        "d.jsonl",
        jline(id="a", question="q", responses={"control": "x", "treatment": 3}).encode(),
        1,
        "responses.treatment",
        "expected text, got number",
    ),
    DataCase(
        "empty_responses",
        "d.jsonl",
        jline(id="a", question="q", responses={}).encode(),
        1,
        "responses",
        "no responses",
    ),
    DataCase(
        "different_arms",
        "d.jsonl",
        "\n".join(
            [
                item("a"),
                item("b"),
                jline(id="c", question="q", responses={"control": "x", "other": "y"}),
                jline(id="d", question="q", responses={"x": "y"}),
            ]
        ).encode(),
        3,
        "responses",
        "first item ('a', line 1) has [control, treatment]",
    ),
    DataCase(
        "unknown_field_typo",
        "d.jsonl",
        item("a", expected_anwser="4").encode(),
        1,
        "expected_anwser",
        "put extra data under metadata",
    ),
    DataCase(
        "preferred_arm_not_an_arm",
        "d.jsonl",
        item("a", human={"preferred_arm": "treatmnt"}).encode(),
        1,
        "human.preferred_arm",
        "allowed: control, treatment, tie",
    ),
    DataCase(
        "verdict_not_pass_fail",
        "d.jsonl",
        item("a", human={"verdict": {"control": "Maybe"}}).encode(),
        1,
        "human.verdict.control",
        "expected 'Pass' or 'Fail'",
    ),
    DataCase(
        "score_not_number",
        "d.jsonl",
        item("a", human={"scores": {"control": {"overall": "high"}}}).encode(),
        1,
        "human.scores.control.overall",
        "expected a number",
    ),
    DataCase(
        "authors_unknown_arm",
        "d.jsonl",
        item("a", authors={"control": "openai", "baseline": "google"}).encode(),
        1,
        "authors.baseline",
        "not an arm of this item",
    ),
    DataCase(
        "context_not_text",
        "d.jsonl",
        item("a", contexts=["ok", 7]).encode(),
        1,
        "contexts[1]",
        "expected text",
    ),
    DataCase(
        "json_list_bad_element",
        "d.json",
        f"[\n{item('a')},\n{jline(id='b', question='', responses={'control': 'x'})}\n]".encode(),
        3,
        "question",
        "non-empty text",
    ),
    DataCase(
        "csv_cell_count_after_multiline_record",
        "d.csv",
        b'id,question,responses.control,responses.treatment\n1,"a\nb",x,y\n2,q,x\n',
        4,
        None,
        "3 cells but the header has 4",
    ),
    DataCase(
        "csv_invalid_json_cell",
        "d.csv",
        b'id,question,responses,metadata\n1,q,"{""a"": ""x""}","{not json"\n',
        2,
        "metadata",
        "invalid JSON in cell",
    ),
    DataCase(
        "csv_invalid_utf8",
        "d.csv",
        b"id,question,responses.a\n1,caf\xe9,x\n",
        2,
        None,
        "invalid UTF-8",
    ),
    DataCase(
        "csv_duplicate_header",
        "d.csv",
        b"id,question,id\n1,q,2\n",
        1,
        None,
        "duplicate 'id' column name",
    ),
    DataCase("csv_header_only", "d.csv", b"id,question,responses.a\n", None, None, "no items"),
    DataCase(
        "csv_missing_response_column",
        "d.csv",
        b"id,question\n1,q\n",
        2,
        "responses",
        "missing field",
    ),
    DataCase(
        "parquet_null_question",
        "d.parquet",
        parquet_with_null_question,
        2,
        "question",
        "(Parquet row 2",
    ),
    DataCase("not_parquet", "d.parquet", b"id,question\n", None, None, "not a readable Parquet"),
    DataCase("unsupported_type", "d.txt", b"hello", None, None, "unsupported file type '.txt'"),
    DataCase("missing_file", "nope.jsonl", None, None, None, "file not found"),
]


def make_dataset(case: DataCase, folder: Path) -> Path:
    path = folder / case.filename
    if callable(case.content):
        case.content(path)
    elif case.content is not None:
        path.write_bytes(case.content)
    return path


def location(path: Path, line: int | None) -> str:
    return f"{path}:{line}" if line is not None else str(path)


def assert_one_line_exit_2(result: Result, *needles: str) -> str:
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert isinstance(result.exception, SystemExit)  # not an unhandled exception
    message = result.stderr.strip()
    assert "Traceback" not in result.output
    assert "\n" not in message, message
    assert message.startswith("error: ")
    for needle in needles:
        assert needle in message, (needle, message)
    return message


@pytest.mark.parametrize("case", DATA_CASES, ids=lambda case: case.name)
def test_bad_dataset_library(case: DataCase, tmp_path: Path) -> None:
    path = make_dataset(case, tmp_path)
    with pytest.raises(DatasetError) as caught:
        load_dataset(path)
    error = caught.value
    assert (error.path, error.line, error.field) == (str(path), case.line, case.field)
    assert case.needle in str(error)
    assert str(error).startswith(location(path, case.line))


@pytest.mark.parametrize("case", DATA_CASES, ids=lambda case: case.name)
def test_bad_dataset_cli(case: DataCase, tmp_path: Path) -> None:
    path = make_dataset(case, tmp_path)
    out = tmp_path / "pairs.json"
    result = CliRunner().invoke(main, ["export-pairs", str(path), "--out", str(out)])
    needles = [location(path, case.line), case.needle]
    if case.field is not None:
        needles.append(f"field '{case.field}'")
    assert_one_line_exit_2(result, *needles)
    assert not out.exists()


def test_export_pairs_cli_refuses_three_arms(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(jline(id="a", question="q", responses={"x": "1", "y": "2", "z": "3"}))
    out = tmp_path / "pairs.json"
    result = CliRunner().invoke(main, ["export-pairs", str(path), "--out", str(out)])
    assert_one_line_exit_2(result, "exactly two arms", "--arms", "field 'arms'")
    result = CliRunner().invoke(
        main, ["export-pairs", str(path), "--out", str(out), "--arms", "z", "x"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())[0]["response_a"] == "3"


# --- configs -----------------------------------------------------------------------------------

BASE_CONFIG = """\
judges:
  gpt:
    provider: openai
    model: some-model
    api_key_env: OPENAI_API_KEY
    temperature: 0.0
  scripted:
    provider: fake
task:
  mode: pairwise
pipeline:
  concurrency: 4
paths:
  dataset: d.jsonl
  output_dir: out
"""


@dataclass(frozen=True)
class ConfigCase:
    name: str
    text: str  # the line carrying MARK is where the error must point
    field: str | None
    needles: tuple[str, ...]


def edit(old: str, new: str) -> str:
    assert old in BASE_CONFIG
    return BASE_CONFIG.replace(old, new)


CONFIG_CASES = [
    ConfigCase(
        "unknown_top_level_key",
        BASE_CONFIG + f"judgez: {{}}  {MARK}\n",
        "judgez",
        ("Extra inputs are not permitted",),
    ),
    ConfigCase(
        "unknown_judge_key",
        edit("    temperature: 0.0\n", f"    temprature: 0.5  {MARK}\n"),
        "judges.gpt.temprature",
        ("Extra inputs are not permitted",),
    ),
    ConfigCase(
        "wrong_type",
        edit("    temperature: 0.0\n", f"    temperature: hot  {MARK}\n"),
        "judges.gpt.temperature",
        ("valid number",),
    ),
    ConfigCase(
        "unknown_provider",
        edit("    provider: fake\n", f"    provider: mistral  {MARK}\n"),
        "judges.scripted.provider",
        ("'anthropic'", "'openai'", "'google'", "'local'", "'fake'"),
    ),
    ConfigCase(
        "missing_model_for_vendor",
        edit("  gpt:\n", f"  gpt:  {MARK}\n").replace("    model: some-model\n", ""),
        "judges.gpt",
        ("needs a `model`",),
    ),
    ConfigCase(
        "bad_mode",
        edit("  mode: pairwise\n", f"  mode: debate  {MARK}\n"),
        "task.mode",
        ("'rubric'", "'pairwise'", "'ranking'", "'criterion'"),
    ),
    ConfigCase(
        "bad_position_bias_mode",
        edit("  concurrency: 4\n", f"  position_bias_mode: sometimes  {MARK}\n"),
        "pipeline.position_bias_mode",
        ("'both'", "'random'", "'fixed'"),
    ),
    ConfigCase(
        "negative_concurrency",
        edit("  concurrency: 4\n", f"  concurrency: -1  {MARK}\n"),
        "pipeline.concurrency",
        ("greater than 0",),
    ),
    ConfigCase(
        "zero_judge_concurrency",
        edit("    provider: fake\n", f"    provider: fake\n    concurrency: 0  {MARK}\n"),
        "judges.scripted.concurrency",
        ("greater than 0",),
    ),
    ConfigCase(
        "batch_size_too_big",
        edit("  mode: pairwise\n", f"  mode: pairwise\n  batch_size: 50  {MARK}\n"),
        "task.batch_size",
        ("less than or equal to 20",),
    ),
    ConfigCase(
        "unknown_fake_behavior",
        edit("    provider: fake\n", f"    provider: fake\n    fake: {{behavior: lazy}}  {MARK}\n"),
        "judges.scripted.fake.behavior",
        ("'schema'", "'first'"),
    ),
    ConfigCase(
        "missing_dataset_path",
        edit("paths:\n  dataset: d.jsonl\n", f"paths:  {MARK}\n"),
        "paths.dataset",
        ("Field required",),
    ),
    ConfigCase(
        "missing_paths_section",
        BASE_CONFIG.split("paths:", maxsplit=1)[0],
        "paths",
        ("Field required",),
    ),
    ConfigCase(
        "judges_not_a_mapping",
        "judges:  " + MARK + "\n  - provider: fake\npaths:\n  dataset: d.jsonl\n",
        "judges",
        ("valid dictionary",),
    ),
    ConfigCase(
        "yaml_syntax_error",
        edit("  mode: pairwise\n", f"  mode: pairwise\n  arms: [control, treatment  {MARK}\n"),
        None,
        ("invalid YAML",),
    ),
    ConfigCase("top_level_list", "- judges\n- paths\n", None, ("expected a mapping",)),
]


def expected_line(text: str) -> int | None:
    for number, line in enumerate(text.splitlines(), start=1):
        if MARK in line:
            return number
    return None


def write_config(folder: Path, text: str) -> Path:
    (folder / "d.jsonl").write_text(item("a") + "\n" + item("b") + "\n", encoding="utf-8")
    path = folder / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("case", CONFIG_CASES, ids=lambda case: case.name)
def test_bad_config_library(case: ConfigCase, tmp_path: Path) -> None:
    path = write_config(tmp_path, case.text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    error = caught.value
    line = expected_line(case.text)
    if case.name == "yaml_syntax_error":
        # PyYAML reports where it noticed the problem: the line after the unclosed bracket.
        assert error.line is not None and line is not None and line <= error.line <= line + 1
    else:
        assert error.line == line
    assert (error.path, error.field) == (str(path), case.field)
    for needle in case.needles:
        assert needle in str(error), (needle, str(error))


@pytest.mark.parametrize("case", CONFIG_CASES, ids=lambda case: case.name)
def test_bad_config_cli(case: ConfigCase, tmp_path: Path) -> None:
    path = write_config(tmp_path, case.text)
    result = CliRunner().invoke(main, ["run", str(path), "--dry-run"])
    needles = [str(path), *case.needles]
    if case.field is not None:
        needles.append(f"field '{case.field}'")
    assert_one_line_exit_2(result, *needles)


def test_valid_config_dry_run_succeeds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The control for the cases above: the unedited config passes the same path."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")  # a dry run checks keys too
    path = write_config(tmp_path, BASE_CONFIG)
    result = CliRunner().invoke(main, ["run", str(path), "--dry-run"])
    assert result.exit_code == 0, (result.output, result.exception)
    assert not (tmp_path / "out" / "judgments.jsonl").exists()


def test_empty_judges_is_named(tmp_path: Path) -> None:
    text = "judges: {}\npaths:\n  dataset: d.jsonl\n"
    path = write_config(tmp_path, text)
    with pytest.raises(ConfigError, match="at least one judge is required under `judges`"):
        load_config(path)
    result = CliRunner().invoke(main, ["run", str(path), "--dry-run"])
    assert_one_line_exit_2(result, str(path), "judges")


def test_config_file_missing_or_not_utf8(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    result = CliRunner().invoke(main, ["run", str(missing), "--dry-run"])
    assert_one_line_exit_2(result, str(missing), "file not found")
    broken = tmp_path / "broken.yaml"
    broken.write_bytes(b"judges:\n  x: \xff\n")
    with pytest.raises(ConfigError, match="UTF-8") as caught:
        load_config(broken)
    assert caught.value.path == str(broken)
    assert_one_line_exit_2(CliRunner().invoke(main, ["run", str(broken), "--dry-run"]), "UTF-8")


def test_config_naming_a_missing_dataset(tmp_path: Path) -> None:
    path = write_config(tmp_path, edit("  dataset: d.jsonl\n", "  dataset: missing.jsonl\n"))
    config = load_config(path)  # the config itself is valid
    with pytest.raises(DatasetError, match="file not found") as caught:
        load_dataset(config.resolve(config.paths.dataset), config.dataset)
    assert caught.value.path == str(tmp_path / "missing.jsonl")
    result = CliRunner().invoke(main, ["run", str(path), "--dry-run"])
    assert_one_line_exit_2(result, str(tmp_path / "missing.jsonl"), "file not found")


def test_config_naming_a_bad_dataset(tmp_path: Path) -> None:
    path = write_config(tmp_path, BASE_CONFIG)
    dataset = tmp_path / "d.jsonl"
    dataset.write_text(item("a") + "\n" + item("a") + "\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["run", str(path), "--dry-run"])
    assert_one_line_exit_2(result, f"{dataset}:2", "field 'id'", "duplicate id 'a'")


def test_config_with_a_bad_column_mapping(tmp_path: Path) -> None:
    path = write_config(tmp_path, BASE_CONFIG + "dataset:\n  columns: {prompt: question}\n")
    result = CliRunner().invoke(main, ["run", str(path), "--dry-run"])
    assert_one_line_exit_2(result, "field 'dataset.columns.prompt'", "unknown field 'prompt'")


def test_every_error_is_an_input_error() -> None:
    """The CLI maps InputError to exit 2; both error kinds must stay inside it."""
    assert issubclass(DatasetError, InputError)
    assert issubclass(ConfigError, InputError)
