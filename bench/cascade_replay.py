"""Trust or Escalate replayed on LLMBar over many random calibration/test splits (issue 36).

The shared LLMBar release (366 labelled pairs, every judge in both orders) is imported with
``jurybox import llmbar``; a cheaper judge then a stronger one (ChatGPT then GPT-4) form the
cascade, each judge's confidence being the agreement of its two orders. For every seed, half the
items calibrate and the other half measure, exactly as ``jurybox cascade --seed S`` does:

* ``cascade``: both judges calibrated (δ/2 each, the default);
* ``cascade, δ per judge``: the paper's code (each stage at δ);
* ``strongest alone``: GPT-4 alone, calibrated under the same guarantee;
* ``uncalibrated``: "escalate when the cheap judge's two orders disagree", GPT-4 deciding where
  its own orders agree, no calibration.

Per target: the share of splits whose test agreement is below the target (the guarantee allows
δ; a split where the rule decided nothing cannot miss), the share of splits where the rule
decided nothing, the misses among the splits where it decided something (the test half's own
sampling error included: ~180 test items), the mean share of test items decided,
and the mean cost against GPT-4 alone, in calls and priced (``--call-cost``, default ChatGPT 1,
GPT-4 20: the 2023 list prices of gpt-3.5-turbo and gpt-4 per input token differ 20-fold).

Usage: ``python bench/cascade_replay.py [--splits 1000] [--targets 0.8,0.85,0.9] [--delta 0.1]
[--data ../shared/data/llmbar]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import os
import platform
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from jurybox.analysis import AnalysisOptions, build_frame, import_verdicts, load_imported
from jurybox.analysis.cascade import CascadeInputs, CascadeOptions, cascade_inputs, replay_inputs
from jurybox.analysis.model.cascade import CascadeReport, RuleOutcome

RULES = ("cascade", "cascade, δ per judge", "strongest alone", "uncalibrated")


def load(data: Path, judges: tuple[str, str], prices: dict[str, float]) -> list[CascadeInputs]:
    """The inputs twice: costs in calls, and in calls × prices."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "llmbar.jsonl"
        import_verdicts("llmbar", data, path)
        records, items = load_imported(path)
    frame = build_frame(records, items=items, options=AnalysisOptions())
    plain = CascadeOptions(judges=judges, confidence="orders")
    priced = dataclasses.replace(plain, call_costs=prices)
    return [cascade_inputs(frame, plain), cascade_inputs(frame, priced)]


def outcomes(report: CascadeReport, paper: CascadeReport) -> dict[str, RuleOutcome]:
    return {
        "cascade": report.cascade,
        "cascade, δ per judge": paper.cascade,
        "strongest alone": report.strongest_alone,
        "uncalibrated": report.uncalibrated,
    }


def replay_splits(
    inputs: list[CascadeInputs], target: float, delta: float, splits: int
) -> dict[str, dict[str, list[float]]]:
    """Per rule: agreement (NaN when nothing was decided), decided share, cost ratios."""
    found: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for seed in range(splits):
        opts = CascadeOptions(
            judges=inputs[0].judges, target=target, delta=delta, seed=seed, confidence="orders"
        )
        plain = replay_inputs(inputs[0], opts, source="llmbar").report
        paper = replay_inputs(inputs[0], dataclasses.replace(opts, split_delta=False), source="")
        priced = replay_inputs(inputs[1], opts, source="llmbar").report
        priced_paper = dataclasses.replace(opts, split_delta=False)
        priced_rules = outcomes(priced, replay_inputs(inputs[1], priced_paper, source="").report)
        for rule, out in outcomes(plain, paper.report).items():
            row = found[rule]
            row["agreement"].append(np.nan if out.agreement is None else out.agreement)
            row["decided"].append(out.n_decided / out.n_items)
            row["calls"].append(out.cost_ratio or np.nan)
            row["priced"].append(priced_rules[rule].cost_ratio or np.nan)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=1000)
    parser.add_argument("--targets", default="0.8,0.85,0.9")
    parser.add_argument("--delta", type=float, default=0.1)
    parser.add_argument("--data", type=Path, default=Path("../shared/data/llmbar"))
    parser.add_argument("--judges", default="ChatGPT,GPT-4")
    parser.add_argument("--call-cost", default="ChatGPT=1,GPT-4=20")
    args = parser.parse_args()
    cheap, strong = args.judges.split(",")
    prices = {k: float(v) for k, v in (pair.split("=") for pair in args.call_cost.split(","))}
    inputs = load(args.data, (cheap, strong), prices)
    start = datetime.datetime.now(datetime.UTC)
    print(f"# {start:%Y-%m-%d %H:%M} UTC, {platform.platform()}, {os.cpu_count()} CPUs, ")
    print(f"# load {os.getloadavg()[0]:.1f}; {args.splits} splits; δ = {args.delta}; ")
    print(f"# {len(inputs[0].ids)} items; prices {prices}\n")
    print(
        "| target | rule | misses the target | decided nothing | misses when deciding "
        "| items decided | cost, calls | cost, priced |"
    )
    print("|---|---|---|---|---|---|---|---|")
    failures = []
    for target in (float(t) for t in args.targets.split(",")):
        began = time.perf_counter()
        found = replay_splits(inputs, target, args.delta, args.splits)
        for rule in RULES:
            row = {k: np.asarray(v) for k, v in found[rule].items()}
            decided = ~np.isnan(row["agreement"])
            miss = float(np.mean(decided & (np.nan_to_num(row["agreement"], nan=1.0) < target)))
            when = miss / np.mean(decided) if decided.any() else float("nan")
            print(
                f"| {target:.2f} | {rule} | {miss:.3f} | {np.mean(~decided):.3f} | {when:.3f} "
                f"| {np.mean(row['decided']):.3f} | {np.nanmean(row['calls']):.2f} "
                f"| {np.nanmean(row['priced']):.2f} |",
                flush=True,
            )
            if rule in ("cascade", "strongest alone") and miss > args.delta:
                failures.append(f"FAIL target {target}: {rule} misses in {miss:.3f} of splits")
        print(f"<!-- target {target}: {time.perf_counter() - began:.0f} s -->", flush=True)
    print(f"\ncheck: the calibrated rules miss the target in ≤ δ = {args.delta} of splits")
    print("\n".join(failures) if failures else "all pass")


if __name__ == "__main__":
    main()
