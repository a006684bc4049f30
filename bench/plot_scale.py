"""Plot time against analysis time with many judges: 65 judges x 134 items, rubric and pairwise.

Builds synthetic records in memory (rubric: two arms, two dimensions scored 1-10, response
lengths; pairwise: both orders, gold preferences, judges with a growing position bias), then
times ``build_report`` (the analysis), building every plot spec, and drawing and encoding every
figure as PNG + SVG (``render_plots``). The rule it checks: the plots must not dominate, i.e.
plot time < analysis time. Prints one Markdown row per mode and the SVG/PNG sizes.

With ``--families`` it instead times each step of the analysis apart (the frame, the summary,
every family of ``analysis.report._families`` and the verdict), wall and CPU seconds, best of
``--repeat`` runs, and skips the plots.

With ``--run JUDGMENTS DATASET`` it times building the plot specs and drawing each figure of a
real run (e.g. a million records kept by ``bench/analysis_scale.py --data-dir``), CPU and
wall seconds, best of ``--repeat``, after analysing it once (not timed).

With ``--digests`` it prints the SHA-256 of every figure's PNG and SVG for a few synthetic panels
(65 judges x 134 items; 3 judges x 134 items; 3 judges x 800 items, 4,800 points: just under
``plots.dense.MAX_MARKS``), and with ``--compare-tree SRC`` it runs that under this tree's
``src`` and under ``SRC`` (``PYTHONHASHSEED=0`` both) and says which figures differ: a change
that must leave small reports as they were is checked against the tree before it.

Usage: ``python bench/plot_scale.py [--judges 65] [--items 134] [--families [--repeat 3]]``,
``python bench/plot_scale.py --run JUDGMENTS DATASET [--repeat 3]``,
``python bench/plot_scale.py --compare-tree /tmp/base/src``.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
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
from jurybox.reporting.plots.draw import render

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
        judge_vendor=("openai", "anthropic", "google")[int(judge.rsplit("-", 1)[1]) % 3],
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


DIGEST_WORLDS = (("rubric", 65, 134), ("pairwise", 65, 134), ("rubric", 3, 134), ("rubric", 3, 800))


def print_digests() -> None:
    """One line per drawn figure of each digest world: its name and its PNG's and SVG's SHA-256."""
    for mode, judges, n_items in DIGEST_WORLDS:
        records, human, items, options = world(mode, judges, n_items)
        report, frame = build_report(records, human=human, items=items, options=options)
        for spec in build_plot_specs(report, frame):
            if spec.drawn:
                drawn = render(spec)
                png = hashlib.sha256(drawn.png).hexdigest()[:16]
                svg = hashlib.sha256(drawn.svg.encode()).hexdigest()[:16]
                print(f"{mode}-{judges}x{n_items}/{spec.name} {png} {svg}", flush=True)


def compare_tree(other_src: Path) -> int:
    """Run ``--digests`` under this tree's ``src`` and under ``other_src``; print the figures
    whose bytes differ. Exit status 1 when any does."""
    here = Path(__file__).resolve().parents[1] / "src"
    digests = []
    for src in (here, other_src):
        env = {**os.environ, "PYTHONPATH": str(src), "PYTHONHASHSEED": "0"}
        run = [sys.executable, __file__, "--digests"]
        out = subprocess.run(run, env=env, check=True, capture_output=True, text=True).stdout
        digests.append(dict(line.split(" ", 1) for line in out.splitlines()))
    ours, theirs = digests
    differ = sorted(
        name for name in ours.keys() | theirs.keys() if ours.get(name) != theirs.get(name)
    )
    print(f"{len(ours)} figures here, {len(theirs)} in {other_src}; {len(differ)} differ")
    for name in differ:
        print(f"  differs: {name}")
    return 1 if differ else 0


def time_run(judgments: Path, dataset: Path, repeat: int) -> None:
    """Best-of-``repeat`` CPU and wall seconds of the plot specs and of each figure of a run."""
    from rich.console import Console

    from jurybox.app import analyze
    from jurybox.app.sources import declared_scale, run_items, run_judges, run_sources

    read = analyze._judgments(analyze._judgments_file(judgments), Console(stderr=True))
    items = run_items(read.path, run_sources(read.path, dataset=dataset, human=None))
    options = AnalysisOptions(
        judge_families=read.tables.judge_families(),
        score_scale=declared_scale(read.path),
        run_judges=run_judges(read.path),
    )
    report, frame = analyze._streamed_report(
        read, human=None, items=items, options=options, label_source=None
    )
    best: dict[str, tuple[float, float]] = {}

    def keep(step: str, wall: float, cpu: float) -> None:
        old = best.get(step, (float("inf"), float("inf")))
        best[step] = (min(old[0], wall), min(old[1], cpu))

    for _ in range(repeat):
        specs, wall, cpu = _cpu_timed(lambda: build_plot_specs(report, frame))
        keep("plot specs", wall, cpu)
        for spec in (s for s in specs if s.drawn):
            _, wall, cpu = _cpu_timed(functools.partial(render, spec))
            keep(spec.name, wall, cpu)
    print("| step | wall s | CPU s |")
    print("|---|---|---|")
    for step, (wall, cpu) in best.items():
        print(f"| {step} | {wall:.2f} | {cpu:.2f} |")
    total_wall, total_cpu = (sum(v[i] for v in best.values()) for i in (0, 1))
    print(f"| total | {total_wall:.2f} | {total_cpu:.2f} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judges", type=int, default=65)
    parser.add_argument("--items", type=int, default=134)
    parser.add_argument("--families", action="store_true", help="time each family, no plots")
    parser.add_argument("--repeat", type=int, default=1, help="best of N runs (--families, --run)")
    parser.add_argument("--run", nargs=2, type=Path, metavar=("JUDGMENTS", "DATASET"))
    parser.add_argument("--digests", action="store_true", help="SHA-256 of every figure")
    parser.add_argument("--compare-tree", type=Path, metavar="SRC", help="digests vs SRC's")
    args = parser.parse_args(argv)
    if args.digests:
        print_digests()
        return
    if args.compare_tree:
        sys.exit(compare_tree(args.compare_tree))
    print(f"load average before: {os.getloadavg()}; cores: {os.cpu_count()}")
    if args.run:
        judgments, dataset = args.run
        time_run(judgments, dataset, args.repeat)
        print(f"load average after: {os.getloadavg()}")
        return
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
