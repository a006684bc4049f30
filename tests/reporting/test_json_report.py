from __future__ import annotations

import json
import math
import os
import stat
from pathlib import Path

import jsonschema
import pytest

from jurybox.analysis.model import Report
from jurybox.analysis.model import report_schema as model_schema
from jurybox.reporting import ReportSchemaError, report_schema, validate_report
from jurybox.reporting.render.json_report import REPORT_FILE, write_json_report

from .conftest import Built


def test_written_report_validates_against_the_published_schema(built: Built) -> None:
    data = json.loads(built.paths.json.read_text(encoding="utf-8"))
    jsonschema.validate(data, report_schema())
    assert data["schema_version"] == 1
    assert data == built.report.model_dump(mode="json")  # full precision, nothing rounded
    assert set(data["summary"]["excluded"]["by_status"]) <= {
        "unparsed",
        "provider_error",
        "refused",
        "truncated",
        "skipped",
    }


def test_excluded_counts_by_status_are_in_the_report(rubric: Built) -> None:
    excluded = rubric.report.summary.excluded
    assert excluded.by_status == {"unparsed": 2, "provider_error": 1}
    assert excluded.total == 3


def test_invalid_report_is_refused_before_anything_is_written(
    rubric: Built, tmp_path: Path
) -> None:
    broken = rubric.report.model_dump(mode="json")
    del broken["verdict"]
    with pytest.raises(ReportSchemaError, match="verdict"):
        write_json_report(broken, tmp_path)
    assert not (tmp_path / REPORT_FILE).exists()
    broken = rubric.report.model_dump(mode="json")
    broken["agreement"]["status"] = "maybe"
    with pytest.raises(ReportSchemaError, match="agreement"):
        validate_report(broken)


def test_nan_is_refused(rubric: Built) -> None:
    broken = rubric.report.model_dump(mode="json")
    broken["summary"]["failures"]["judge-openai"]["failure_rate"] = math.nan
    with pytest.raises(ReportSchemaError, match="non-finite"):
        validate_report(broken)


def test_nan_in_a_report_model_is_refused_not_written_as_null(
    rubric: Built, tmp_path: Path
) -> None:
    summary = rubric.report.summary
    failures = dict(summary.failures)
    failures["judge-openai"] = failures["judge-openai"].model_copy(
        update={"failure_rate": math.nan}
    )
    broken = rubric.report.model_copy(
        update={"summary": summary.model_copy(update={"failures": failures})}
    )
    with pytest.raises(ReportSchemaError, match="non-finite"):
        write_json_report(broken, tmp_path)
    assert not (tmp_path / REPORT_FILE).exists()


def test_atomic_write_leaves_no_temporary_file_and_honours_the_umask(
    rubric: Built, tmp_path: Path
) -> None:
    old = os.umask(0o022)
    try:
        path = write_json_report(rubric.report, tmp_path)
        write_json_report(rubric.report, tmp_path)  # replacing an existing file
    finally:
        os.umask(old)
    assert [p.name for p in tmp_path.iterdir()] == [REPORT_FILE]
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_a_report_model_is_written_as_its_dump(rubric: Built, tmp_path: Path) -> None:
    model = Report.model_validate(rubric.report)
    path = write_json_report(model, tmp_path)
    written = path.read_text(encoding="utf-8")
    assert written == rubric.paths.json.read_text(encoding="utf-8")  # same bytes as the dict
    assert json.loads(written) == model.model_dump(mode="json")


def test_the_schema_is_generated_from_the_model() -> None:
    assert report_schema() == model_schema()
    assert report_schema()["title"] == "Report"
