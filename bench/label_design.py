"""Targeted labelling (``jurybox label --targeted``): does the accuracy interval still cover, and
how many labels does it take to decide a judge's level, against the uniform random order?

A simulated panel of three judges over N items, each judged in both presentation orders. An
item is easy (3 in 4) or hard; on each item a judge either knows the answer (right in both
orders), is wrong in both, or is unsure (picks the first shown: right in one order only). The
per-judge shares below give population accuracies of about 0.95 (``strong``), 0.84 (``mid``)
and 0.755 (``weak``, near the 0.70 bar). The strata are computed as ``analysis.labelling`` does:
an item is contested when the judges' consolidated verdicts differ or one flips.

Each data set draws a new population, the annotator's order comes from ``jurybox.app.label``'s
own ``item_order`` (uniform, or targeted with the default ``--oversample 4`` and
``--uniform-share 0.25``), the first m items are labelled with the truth, and each judge's
accuracy (its share of correct judgments per item, averaged) is estimated as ``analyze`` does
with such labels (``stats.stratified_proportion``). For reference, the estimate ``analyze``
made before labels carried a design: Wilson over the judgments of the uniform labels (two per
item).

* Coverage: share of data sets whose 95 % interval holds the population accuracy, at m = 25,
  50, 100, 200, 400 labels.
* Labels to decide: after every 5 labels, whether the interval clears the verdict's 0.70 bar
  (lower bound ≥ 0.70: accurate enough to trust) or falls below it (upper bound < 0.70); the
  labels needed are the first count at which it does either. (The verdict's other rule, an
  estimate below 0.60 is not trusted, reads the point estimate alone and decides on noise at a
  handful of labels, so it is left out.) Looking after every 5 labels is optional stopping: the
  share of decisions on the wrong side of the bar is printed beside it.

Usage: ``python bench/label_design.py [--sims 1000] [--items 600]``.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from statsmodels.stats.proportion import proportion_confint

from jurybox.app.label import LabelOptions, RunToLabel, item_order
from jurybox.app.label_forms import Form
from jurybox.records import Item
from jurybox.stats import stratified_proportion

# judge -> (easy, hard) shares of (knows, wrong, unsure)
PANEL = {
    "strong": ((0.99, 0.0, 0.01), (0.75, 0.10, 0.15)),
    "mid": ((0.88, 0.04, 0.08), (0.45, 0.25, 0.30)),
    "weak": ((0.76, 0.08, 0.16), (0.35, 0.35, 0.30)),
}
HARD = 0.25
COVERAGE_AT = (25, 50, 100, 200, 400)
LOOKS = tuple(range(5, 401, 5))
BAR = 0.70  # the verdict's min_accuracy


def population(rng: np.random.Generator, n: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Per judge, each item's share of correct judgments (1, 0.5 or 0); contested flags."""
    hard = rng.random(n) < HARD
    shares, verdicts, flips = {}, [], np.zeros(n, dtype=bool)
    for judge, (easy_p, hard_p) in PANEL.items():
        kind = np.where(
            hard,
            rng.choice(3, n, p=hard_p),
            rng.choice(3, n, p=easy_p),
        )
        shares[judge] = np.choose(kind, [1.0, 0.0, 0.5])
        flips |= kind == 2
        verdicts.append(np.where(kind == 2, 2, kind))  # 0 right, 1 wrong, 2 flip (a tie)
    disagree = np.ptp(np.vstack(verdicts), axis=0) > 0
    return shares, disagree | flips


def order(contested: np.ndarray, stream: str, seed: int) -> list[int]:
    """``jurybox label``'s order for one annotator (item indices)."""
    ids = [f"i{i}" for i in range(len(contested))]
    strata = {qid: "contested" if c else "settled" for qid, c in zip(ids, contested, strict=True)}
    run = RunToLabel(
        judgments=Path("sim"),
        run_id=f"sim-{seed}",
        mode="pairwise",
        items=tuple(Item(id=qid, question="q", responses={"a": "x", "b": "y"}) for qid in ids),
        strata=strata,
        form=Form("prefer"),
        records=[],
    )
    drawn = item_order(run, LabelOptions(annotator="sim", stream=stream))  # type: ignore[arg-type]
    return [int(qid[1:]) for qid, _ in drawn]


def estimate(y: np.ndarray, contested: np.ndarray, picked: list[int]) -> tuple[float, float, float]:
    strata = np.where(contested[picked], "contested", "settled").astype(object)
    sizes = {"contested": int(contested.sum()), "settled": int((~contested).sum())}
    found = stratified_proportion(y[picked], strata, sizes)
    return found.estimate, found.ci_low, found.ci_high


def per_judgment_wilson(y: np.ndarray, picked: list[int]) -> tuple[float, float]:
    """analyze before labels carried a design: Wilson over both orders' judgments."""
    low, high = proportion_confint(2 * y[picked].sum(), 2 * len(picked), method="wilson")
    return float(low), float(high)


def one(rng: np.random.Generator, items: int, seed: int) -> Iterator[tuple[str, ...]]:
    shares, contested = population(rng, items)
    if contested.all() or not contested.any():
        return
    orders = {s: order(contested, s, seed) for s in ("uniform", "targeted")}
    for judge, y in shares.items():
        truth = float(y.mean())
        for stream, sequence in orders.items():
            decided = None
            for m in sorted(set(LOOKS) | set(COVERAGE_AT)):
                try:
                    _, low, high = estimate(y, contested, sequence[:m])
                except ValueError:  # a stratum not yet labelled
                    continue
                if m in COVERAGE_AT:
                    hit = int(low <= truth <= high)
                    yield ("cover", judge, stream, str(m), str(hit), str(high - low))
                    if stream == "uniform":
                        w_low, w_high = per_judgment_wilson(y, sequence[:m])
                        hit = int(w_low <= truth <= w_high)
                        yield (
                            "cover",
                            judge,
                            "per-judgment Wilson",
                            str(m),
                            str(hit),
                            str(w_high - w_low),
                        )
                if decided is None and m in LOOKS and (low >= BAR or high < BAR):
                    decided = (m, int((low >= BAR) != (truth >= BAR)))
            m, wrong = decided if decided is not None else (999, 0)
            yield ("decide", judge, stream, str(m), str(wrong))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=1000)
    parser.add_argument("--items", type=int, default=600)
    args = parser.parse_args()
    rng = np.random.default_rng(20261129)
    started = time.time()
    rows = [row for seed in range(args.sims) for row in one(rng, args.items, seed)]
    print(
        f"# {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, {platform.platform()}, "
        f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}, {args.sims} data sets of "
        f"{args.items} items, {time.time() - started:.0f} s"
    )
    report(rows)


def report(rows: list[tuple[str, ...]]) -> None:
    cover: dict[tuple[str, str, int], list[tuple[int, float]]] = {}
    decide: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for kind, judge, stream, m, value, *width in rows:
        if kind == "cover":
            cover.setdefault((judge, stream, int(m)), []).append((int(value), float(width[0])))
        else:
            decide.setdefault((judge, stream), []).append((int(m), int(value)))
    print("\ncoverage of the 95 % interval (population accuracy), mean width in brackets")
    print("| judge | order, estimate | " + " | ".join(f"m = {m}" for m in COVERAGE_AT) + " |")
    print("|---|---|" + "---|" * len(COVERAGE_AT))
    for judge in PANEL:
        for stream in ("targeted", "uniform", "per-judgment Wilson"):
            cells = [cover.get((judge, stream, m), []) for m in COVERAGE_AT]
            shown = [
                f"{np.mean([h for h, _ in c]):.3f} ({np.mean([w for _, w in c]):.3f})" if c else "—"
                for c in cells
            ]
            print(f"| {judge} | {stream} | " + " | ".join(shown) + " |")
    print("\nlabels to decide the accuracy check (looks every 5 labels, up to 400)")
    print("| judge | order | median | mean (undecided = 400) | decided by 100 | wrong decisions |")
    print("|---|---|---|---|---|---|")
    for judge in PANEL:
        for stream in ("targeted", "uniform"):
            found = decide.get((judge, stream), [])
            needed = np.array([min(m, 400) for m, _ in found])
            wrong = np.mean([w for m, w in found if m <= 400]) if found else float("nan")
            print(
                f"| {judge} | {stream} | {np.median(needed):.0f} | {needed.mean():.1f} | "
                f"{np.mean(needed <= 100):.2f} | {wrong:.3f} |"
            )


if __name__ == "__main__":
    main()
