"""Shared checks of analysis reports."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import jsonschema

from jurybox.analysis import analyze_records, report_schema
from jurybox.analysis.model import Report


def _metrics(node: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(node, dict):
        if {"value", "n", "reason"} <= node.keys():
            yield path, node
        for key, child in node.items():
            yield from _metrics(child, f"{path}.{key}")
    elif isinstance(node, list):
        for index, child in enumerate(node):
            yield from _metrics(child, f"{path}[{index}]")


def _sections(node: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(node, dict):
        if node.get("status") in ("computed", "skipped") and "reason" in node:
            yield path, node
        for key, child in node.items():
            yield from _sections(child, f"{path}.{key}")
    elif isinstance(node, list):
        for index, child in enumerate(node):
            yield from _sections(child, f"{path}[{index}]")


def analyze(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """``analyze_records`` as the JSON ``analysis_report.json`` holds."""
    return analyze_records(*args, **kwargs).model_dump(mode="json")


def assert_valid_report(report: dict[str, Any]) -> None:
    """Valid against the JSON Schema, strict JSON (no NaN), every metric and section well formed,
    and read back by the typed model into the same JSON, key order included."""
    text = json.dumps(report, allow_nan=False)
    assert json.dumps(Report.model_validate(report).model_dump(mode="json")) == text
    schema = report_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(report)
    for path, metric in _metrics(report):
        assert isinstance(metric["n"], int), f"{path}: n is not an integer"
        if metric["value"] is None:
            assert metric["reason"], f"{path}: null value without a reason"
    for path, section in _sections(report):
        if section["status"] == "skipped":
            assert section["reason"], f"{path}: skipped without a reason"


def get(report: dict[str, Any], dotted: str) -> Any:
    """report['a']['b']... from 'a.b...'."""
    node: Any = report
    for key in dotted.split("."):
        node = node[key]
    return node
