"""analysis_report.json: ``Report.model_dump``, validated against the JSON Schema generated from
the model, then written atomically."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]

from jurybox.analysis.model import Report
from jurybox.analysis.model import report_schema as model_schema
from jurybox.errors import JuryboxError
from jurybox.io.atomic import write_text_atomic
from jurybox.reporting.view.report import as_report

REPORT_FILE = "analysis_report.json"


class ReportSchemaError(JuryboxError):
    """The analysis produced a report that does not match its published schema (a bug)."""


@lru_cache(maxsize=1)
def report_schema() -> dict[str, Any]:
    """The JSON Schema of analysis_report.json, generated from ``Report``."""
    return model_schema()


def validate_report(report: Mapping[str, Any]) -> None:
    """Raise ``ReportSchemaError`` naming the first offending path when ``report`` is invalid."""
    _reject_non_finite(report, "$")
    validator_cls = jsonschema.validators.validator_for(report_schema())
    validator = validator_cls(report_schema())
    error = jsonschema.exceptions.best_match(validator.iter_errors(report))
    if error is not None:
        where = "$" + "".join(f"[{p!r}]" for p in error.absolute_path)
        raise ReportSchemaError(
            f"analysis report does not match its schema at {where}: {error.message}"
        )


def _reject_non_finite(value: Any, where: str) -> None:
    """NaN and infinity are not JSON: a metric that cannot be computed must be null."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ReportSchemaError(f"analysis report holds a non-finite number at {where}")
    if isinstance(value, dict):
        for key, item in value.items():
            _reject_non_finite(item, f"{where}[{key!r}]")
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _reject_non_finite(item, f"{where}[{index}]")


def write_json_report(report: Report | Mapping[str, Any], out_dir: Path) -> Path:
    """Validate ``report`` and write ``out_dir/analysis_report.json`` atomically."""
    if isinstance(report, Report):
        # JSON mode would write a NaN as null without a word: refuse it first.
        _reject_non_finite(report.model_dump(), "$")
        data = report.model_dump(mode="json")
        validate_report(data)
    else:
        validate_report(report)  # names the offending path before the model sees it
        data = as_report(report).model_dump(mode="json")
    text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    return write_text_atomic(out_dir / REPORT_FILE, text)
