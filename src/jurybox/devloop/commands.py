"""What the ``split`` / ``calibrate`` / ``estimate`` commands do, minus click: run, write, print."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path

from rich.console import Console

from jurybox.devloop.calibrate import CalibrationReport, calibrate
from jurybox.devloop.config import load_devloop
from jurybox.devloop.estimate import EstimateOptions, EstimateReport, estimate
from jurybox.devloop.report import calibration_lines, estimate_lines, write_report
from jurybox.devloop.split import SPLITS, SplitResult, split_labelled
from jurybox.errors import ConfigError
from jurybox.providers.base import Provider

Echo = Callable[[str], None]


def split_command(
    labelled: Path,
    out_dir: Path,
    *,
    fractions: Mapping[str, float],
    seed: int,
    force: bool,
    echo: Echo,
) -> SplitResult:
    result = split_labelled(labelled, out_dir, fractions=fractions, seed=seed, force=force)
    echo(f"split {labelled} (seed {seed}) into {out_dir}:")
    for name in SPLITS:
        counts = result.counts[name]
        total = sum(counts.values())
        echo(
            f"  {name:5s} {total:4d} items  (Pass {counts['Pass']}, Fail {counts['Fail']})  "
            f"{result.files[name]}"
        )
    echo(f"  manifest with per-item content hashes: {result.manifest_path}")
    return result


def calibrate_command(
    config: Path,
    split: str,
    *,
    freeze: bool = False,
    force: bool = False,
    limit: int | None = None,
    echo: Echo,
    console: Console | None = None,
    providers: Mapping[str, Provider] | None = None,
) -> CalibrationReport:
    loop = load_devloop(config)
    report = calibrate(
        loop, split, freeze=freeze, force=force, limit=limit, console=console, providers=providers
    )
    name = f"calibrate-{report.split}"
    files = write_report(name, report, calibration_lines(report))
    report = dataclasses.replace(report, files=files)
    write_report(name, report, calibration_lines(report))  # the files now list themselves
    for line in calibration_lines(report):
        echo(line)
    return report


def estimate_command(
    config: Path,
    traces: Path | None,
    *,
    target_half_width: float | None = None,
    limit: int | None = None,
    echo: Echo,
    console: Console | None = None,
    providers: Mapping[str, Provider] | None = None,
) -> EstimateReport:
    loop = load_devloop(config)
    if traces is None:
        if loop.config.traces is None:
            raise ConfigError("give --traces, or `traces:` in the config", field="--traces")
        traces = loop.config.resolve(loop.config.traces)
    if target_half_width is not None and not 0 < target_half_width < 0.5:
        raise ConfigError("--target-half-width must be in (0, 0.5)", field="--target-half-width")
    options = EstimateOptions(traces, target_half_width, limit, console, providers)
    report = estimate(loop, options)
    lines = estimate_lines(report)
    files = write_report("estimate", report, lines)
    for line in [*lines, *(f"{kind}: {path}" for kind, path in files.items())]:
        echo(line)
    return report
