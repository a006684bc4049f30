"""Reports of the loop: printed text, Markdown and JSON files in the run folder.

This is the only place the loop's numbers are rounded; the JSON keeps them whole.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jurybox.devloop.calibrate import CalibrationReport, CriterionCalibration
from jurybox.devloop.estimate import CriterionEstimate, EstimateReport, LabelProjection
from jurybox.io.atomic import write_text_atomic
from jurybox.stats import ProportionInterval

_SNIPPET = 160


def _ci(interval: ProportionInterval) -> str:
    return f"{interval.estimate:.3f}  [{interval.ci_low:.3f}, {interval.ci_high:.3f}]"


def _target(value: float | None, estimate: float) -> str:
    if value is None:
        return "no target"
    return f"target {value:.2f}: {'met' if estimate >= value else 'BELOW'}"


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _SNIPPET else flat[: _SNIPPET - 3] + "..."


def _reuse_line(hashes: tuple[str, ...]) -> str:
    earlier = ", ".join(h[:12] for h in hashes)
    return (
        f"  TEST SET REUSED: already measured with prompt(s) {earlier}; these figures are "
        "optimistic (the test set has become a dev set). Label a fresh test set."
    )


def criterion_calibration_lines(result: CriterionCalibration, confidence: float) -> list[str]:
    c = result.confusion
    lines = [
        f"criterion {result.criterion}  [{result.describe}]  prompt {result.prompt_hash[:12]}  "
        f"(iteration {result.iteration} on {result.split})",
        f"  items {result.n_items}, answered {result.n_answered}, failed {len(result.failures)}"
        f"  |  TP {c.tp}  FN {c.fn}  TN {c.tn}  FP {c.fp}  (Pass = positive)",
    ]
    if result.rates is None:
        lines.append(f"  TPR/TNR undefined: {result.rates_note}")
    else:
        level = f"{confidence:.0%} Wilson"
        tpr, tnr = result.rates.tpr, result.rates.tnr
        lines.append(f"  TPR {_ci(tpr)} ({level})  {_target(result.targets.tpr, tpr.estimate)}")
        lines.append(f"  TNR {_ci(tnr)} ({level})  {_target(result.targets.tnr, tnr.estimate)}")
    if result.test_reused:
        lines.append(_reuse_line(result.earlier_test_prompts))
    if result.frozen:
        lines.append(f"  frozen: prompt {result.prompt_hash[:12]} is the judge `estimate` uses")
    for item_id, error in sorted(result.failures.items()):
        lines.append(f"  failed   {item_id}: {_short(error)}")
    lines.append(f"  disagreements: {len(result.disagreements)}")
    for d in result.disagreements:
        human = "Fail" if d.kind == "false pass" else "Pass"
        lines.append(f"  - {d.kind:10s} {d.item_id}  (human {human})")
        lines.append(f"      question:  {_short(d.question)}")
        lines.append(f"      response:  {_short(d.response)}")
        lines.append(f"      reasoning: {_short(d.reasoning) or '(none given)'}")
    return lines


def calibration_lines(report: CalibrationReport) -> list[str]:
    limit = f", first {report.limit} items" if report.limit else ""
    lines = [f"calibrate on {report.split}{limit}  (config {report.config_path})", ""]
    for result in report.criteria:
        lines += [*criterion_calibration_lines(result, report.confidence), ""]
    lines.append(f"history: {report.run_dir / 'history.jsonl'}")
    lines += [f"{kind}: {path}" for kind, path in report.files.items()]
    return lines


def _projection_lines(projection: LabelProjection) -> list[str]:
    p, target = projection, f"±{projection.target_half_width:.3f}"
    if p.n_labelled_needed is None:
        return [
            f"  to reach {target}: not reachable by labelling alone; with unlimited labels the "
            f"traces still leave ±{p.floor_half_width:.3f}",
            f"      judge about {p.traces_needed:,} traces (delta method), then project again",
            f"      projection by {p.method}",
        ]
    delta = p.delta_method_needed
    check = f"; delta method: {delta:,}" if delta is not None else ""
    return [
        f"  to reach {target} (now ±{p.current_half_width:.3f}): about {p.additional:,} more "
        f"labelled items (test set {p.n_labelled} -> {p.n_labelled_needed:,}{check})",
        f"      projection by {p.method}",
    ]


def criterion_estimate_lines(result: CriterionEstimate, confidence: float) -> list[str]:
    lines = [
        f"criterion {result.criterion}  [{result.describe}]  frozen prompt "
        f"{result.prompt_hash[:12]} ({result.frozen_at}), {result.n_test} labelled test items",
        f"  traces {result.n_traces}, judged {result.n_traces - len(result.failures)}, "
        f"failed {len(result.failures)}",
    ]
    if result.raw is not None:
        lines.append(f"  raw pass rate        {_ci(result.raw)}  ({confidence:.0%} Wilson)")
    if result.corrected is None:
        lines.append(f"  {result.corrected_note}")
    else:
        c = result.corrected
        lines.append(f"  corrected pass rate  {c.estimate:.3f}  [{c.ci_low:.3f}, {c.ci_high:.3f}]")
        lines.append(f"      {c.method}; test-set TPR {c.tpr:.3f}, TNR {c.tnr:.3f}")
    lines += [f"  warning: {text}" for text in result.warnings]
    if result.test_reused:
        lines.append("  TEST SET REUSED when this prompt was frozen: TPR/TNR are optimistic")
    if result.projection is not None:
        lines += _projection_lines(result.projection)
    return lines


def estimate_lines(report: EstimateReport) -> list[str]:
    limit = f", first {report.limit} traces" if report.limit else ""
    lines = [f"estimate on {report.traces}{limit}  (config {report.config_path})", ""]
    for result in report.criteria:
        lines += [*criterion_estimate_lines(result, report.confidence), ""]
    return lines


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    return value


def write_report(
    name: str, report: CalibrationReport | EstimateReport, lines: list[str]
) -> dict[str, Path]:
    """``<run_dir>/<name>.json`` (every figure unrounded) and ``<name>.md`` (the printed text)."""
    report.run_dir.mkdir(parents=True, exist_ok=True)
    json_path, md_path = report.run_dir / f"{name}.json", report.run_dir / f"{name}.md"
    data = _plain(report)
    write_text_atomic(json_path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    text = "\n".join(lines)
    write_text_atomic(md_path, f"# jurybox {name}\n\n```text\n{text}\n```\n")
    return {"json": json_path, "markdown": md_path}
