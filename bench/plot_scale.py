"""Plot time against analysis time with many judges: 65 judges x 134 items, rubric and pairwise.

Builds synthetic records in memory (rubric: two arms, two dimensions scored 1-10, response
lengths; pairwise: both orders, gold preferences, judges with a growing position bias), then
times ``build_report`` (the analysis), building every plot spec, and drawing and encoding every
figure as PNG + SVG (``render_plots``). The rule it checks: the plots must not dominate, i.e.
plot time < analysis time. Prints one Markdown row per mode and the SVG/PNG sizes.

With ``--families`` it instead times each step of the analysis apart (the frame, the summary,
every family of ``analysis.report._families`` and the verdict), wall and CPU seconds, best of
``--repeat`` runs, and skips the plots.

Usage: ``python bench/plot_scale.py [--judges 65] [--items 134] [--families [--repeat 3]]``.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from jurybox.analysis import AnalysisOptions
from jurybox.analysis.agreement import analyze_agreement
from jurybox.analysis.bias import analyze_bias
from jurybox.analysis.calibration import analyze_accuracy, analyze_human
from jurybox.analysis.effects import analyze_effects
from jurybox.analysis.evidence import Families
from jurybox.analysis.frame import build_frame
from jurybox.analysis.panels import analyze_panels
from jurybox.analysis.reliability import analyze_reliability
from jurybox.analysis.report import summarize
from jurybox.analysis.verdict import build_verdict
from jurybox.app import build_report
from jurybox.records import Item, JudgeRecord, Status
from jurybox.reporting import render_plots
from jurybox.reporting.plots import build_plot_specs

ARMS = ("control", "treatment")
DIMS = ("accuracy", "clarity")
STAMP = "2026-11-25T00:00:00+00:00"


def _items(n: int, rng: np.random.Generator) -> list[Item]:
    return [
        Item(
            id=f"q{i:03d}",
            question=f"Question {i}?",
            responses={arm: "word " * int(rng.integers(20, 400)) for arm in ARMS},
        )
        for i in range(n)
    ]


def _record(qid: str, judge: str, order: str, **fields: Any) -> JudgeRecord:
    return JudgeRecord(
        key=f"{qid}|{judge}|{order}|r0",
        run_id="bench-plots",
        query_id=qid,
        judge_name=judge,
        judge_model=f"{judge}-model",
        judge_vendor=("openai", "anthropic", "google")[hash(judge) % 3],
        presentation_order=order,
        status=Status.OK,
        parse_success=True,
        raw_response="{}",
        timestamp=STAMP,
        **fields,
    )


def rubric_records(items: list[Item], judges: int, rng: np.random.Generator) -> list[JudgeRecord]:
    records = []
    for item in items:
        base = rng.uniform(4, 7)
        for k in range(judges):
            for arm, quality in zip(ARMS, (base, base + 1.0), strict=True):
                scores = {
                    d: float(np.clip(round(quality + k / 40 + rng.normal(0, 0.8)), 1, 10))
                    for d in DIMS
                }
                records.append(
                    _record(
                        item.id,
                        f"judge-{k:02d}",
                        arm,
                        mode="rubric",
                        positions={"A": arm},
                        scores={arm: scores},
                        overall={arm: float(np.mean(list(scores.values())))},
                    )
                )
    return records


def pairwise_records(
    items: list[Item], judges: int, rng: np.random.Generator
) -> tuple[list[JudgeRecord], dict[str, dict[str, Any]]]:
    records, human = [], {}
    for item in items:
        gold = ARMS[int(rng.random() < 0.6)]
        human[item.id] = {"preferred_arm": gold}
        for k in range(judges):
            for first in ARMS:
                second = ARMS[1] if first == ARMS[0] else ARMS[0]
                winner = first if rng.random() < k / (2 * judges) else gold
                records.append(
                    _record(
                        item.id,
                        f"judge-{k:02d}",
                        f"{first}_first",
                        mode="pairwise",
                        positions={"A": first, "B": second},
                        preference="A" if winner == first else "B",
                        preferred_arm=winner,
                        response_a_label=first,
                        response_b_label=second,
                    )
                )
    return records, human


def _timed(step: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    result = step()
    return result, time.perf_counter() - start


World = tuple[list[JudgeRecord], dict[str, dict[str, Any]] | None, list[Item], AnalysisOptions]


def world(mode: str, judges: int, n_items: int) -> World:
    """The records, gold labels, items and options of one mode's synthetic panel."""
    rng = np.random.default_rng(0)
    items = _items(n_items, rng)
    human = None
    if mode == "rubric":
        records = rubric_records(items, judges, rng)
    else:
        records, human = pairwise_records(items, judges, rng)
    options = AnalysisOptions(score_scale=(1, 10)) if mode == "rubric" else AnalysisOptions()
    return records, human, items, options


FAMILIES: dict[str, Callable[..., Any]] = {
    "agreement": analyze_agreement,
    "bias": analyze_bias,
    "effects": analyze_effects,
    "reliability": analyze_reliability,
    "human_calibration": analyze_human,
    "panels": analyze_panels,
    "accuracy_vs_gold": analyze_accuracy,
}


def _cpu_timed(step: Callable[[], Any]) -> tuple[Any, float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = step()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def family_seconds(mode: str, judges: int, n_items: int) -> dict[str, tuple[float, float]]:
    """(wall, CPU) seconds of every step of ``build_report``'s analysis, run one by one."""
    records, human, items, options = world(mode, judges, n_items)
    out: dict[str, tuple[float, float]] = {}
    frame, *out["frame"] = _cpu_timed(
        lambda: build_frame(records, human=human, items=items, options=options)
    )
    summary, *out["summary"] = _cpu_timed(lambda: summarize(frame, options))
    sections = {}
    for name, analyze in FAMILIES.items():
        sections[name], *out[name] = _cpu_timed(lambda f=analyze: f(frame, options))
    evidence = Families(
        summary,
        sections["bias"],
        sections["reliability"],
        sections["human_calibration"],
        sections["accuracy_vs_gold"],
    )
    _, *out["verdict"] = _cpu_timed(lambda: build_verdict(frame, evidence, options))
    return {step: (wall, cpu) for step, (wall, cpu) in out.items()}


def print_families(judges: int, n_items: int, repeat: int) -> None:
    """One Markdown row per step: best-of-``repeat`` wall and CPU seconds per mode."""
    best: dict[tuple[str, str], tuple[float, float]] = {}
    for mode in ("pairwise", "rubric"):
        for _ in range(repeat):
            for step, (wall, cpu) in family_seconds(mode, judges, n_items).items():
                old = best.get((mode, step), (float("inf"), float("inf")))
                best[(mode, step)] = (min(old[0], wall), min(old[1], cpu))
    steps = list(dict.fromkeys(step for _, step in best))
    print("| step | pairwise wall s | pairwise CPU s | rubric wall s | rubric CPU s |")
    print("|---|---|---|---|---|")
    for step in [*steps, "total"]:
        cells = []
        for mode in ("pairwise", "rubric"):
            rows = [v for (m, s), v in best.items() if m == mode and step in (s, "total")]
            cells += [f"{sum(r[0] for r in rows):.2f}", f"{sum(r[1] for r in rows):.2f}"]
        print(f"| {step} | {' | '.join(cells)} |", flush=True)


def measure(mode: str, judges: int, n_items: int) -> dict[str, Any]:
    records, human, items, options = world(mode, judges, n_items)
    (report, frame), analysis_s, analysis_cpu = _cpu_timed(
        lambda: build_report(records, human=human, items=items, options=options)
    )
    specs, specs_s = _timed(lambda: build_plot_specs(report, frame))
    rendered, render_s = _timed(lambda: render_plots(report, frame))
    return {
        "mode": mode,
        "records": len(records),
        "analysis_s": analysis_s,
        "analysis_cpu": analysis_cpu,
        "specs_s": specs_s,
        "render_s": render_s,
        "drawn": len(rendered),
        "not_drawn": sum(not s.drawn for s in specs),
        "svg_kb": sum(len(p.svg) for p in rendered) / 1024,
        "png_kb": sum(len(p.png) for p in rendered) / 1024,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judges", type=int, default=65)
    parser.add_argument("--items", type=int, default=134)
    parser.add_argument("--families", action="store_true", help="time each family, no plots")
    parser.add_argument("--repeat", type=int, default=1, help="best of N runs (--families)")
    args = parser.parse_args(argv)
    print(f"load average before: {os.getloadavg()}; cores: {os.cpu_count()}")
    if args.families:
        print_families(args.judges, args.items, args.repeat)
        print(f"load average after: {os.getloadavg()}")
        return
    print(
        "| mode | records | analysis s (CPU s) | plot specs s | draw PNG+SVG s | figures "
        "(not drawn) | SVG KB | PNG KB |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for mode in ("rubric", "pairwise"):
        r = measure(mode, args.judges, args.items)
        print(
            f"| {r['mode']} | {r['records']} | {r['analysis_s']:.1f} ({r['analysis_cpu']:.1f}) | "
            f"{r['specs_s']:.2f} | "
            f"{r['render_s']:.1f} | {r['drawn']} ({r['not_drawn']}) | {r['svg_kb']:.0f} | "
            f"{r['png_kb']:.0f} |",
            flush=True,
        )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
