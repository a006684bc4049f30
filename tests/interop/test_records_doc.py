"""The judgments.jsonl record format is documented from its schema (#15)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import jsonschema

from interop.conftest import invoke
from jurybox.io.record_schema import fields_table, record_schema
from jurybox.records import JudgeRecord
from shared_paths import PROJECT_ROOT

DOC = PROJECT_ROOT / "docs" / "records.md"
START, END = "<!-- fields:start -->", "<!-- fields:end -->"


def test_schema_records_prints_a_schema_that_every_field_is_in() -> None:
    result = invoke("schema", "--records")
    assert result.exit_code == 0
    printed = json.loads(result.output)
    assert printed == record_schema()
    names = [field.name for field in dataclasses.fields(JudgeRecord)]
    assert list(printed["properties"]) == names
    assert all(printed["properties"][name]["description"] for name in names)
    jsonschema.Draft202012Validator.check_schema(printed)


def test_real_records_validate_against_it(pairwise_run: Path) -> None:
    validator = jsonschema.Draft202012Validator(record_schema())
    path = pairwise_run / "examples/results/pairwise/judgments.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    for line in lines:
        validator.validate(json.loads(line))
    broken = {**json.loads(lines[0]), "status": "fine"}
    assert not validator.is_valid(broken)  # the schema does constrain: status is an enum


def test_the_doc_table_is_the_schema() -> None:
    text = DOC.read_text(encoding="utf-8")
    table = text.split(START, 1)[1].split(END, 1)[0].strip()
    assert table == fields_table(), (
        "docs/records.md is out of date; regenerate its table with "
        "python -c 'from jurybox.io.record_schema import fields_table; print(fields_table())'"
    )
