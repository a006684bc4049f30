"""``jurybox estimate``: the frozen judge on unlabelled traces, corrected for its errors.

The raw pass rate is what the judge says; the corrected rate (Rogan–Gladen, via
``jurybox.stats.corrected_pass_rate``) removes the judge's known bias using its TPR/TNR on the
labelled test set, and its interval carries the sampling error of both sets.

How many more labels would narrow that interval to a half-width ``h``? ``project_labels``
answers by simulation: it recomputes the same Jeffreys-bootstrap interval for larger labelled
sets with the *expected* counts (the test set's Pass share, TPR and TNR kept, the traces kept)
over a 5 % geometric grid of sizes, and reports the smallest size that reaches ``h``. Traces
alone bound the interval from below; when that floor exceeds ``h`` more traces are needed, not
more labels. A delta-method figure is given beside it as a cross-check.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from rich.console import Console
from scipy import stats as sps

from jurybox.devloop.config import CriterionSetup, Devloop
from jurybox.devloop.judge import judge_dataset
from jurybox.devloop.state import FrozenJudge, read_frozen
from jurybox.errors import ConfigError
from jurybox.providers.base import Provider
from jurybox.stats import CorrectedRate, ProportionInterval, corrected_pass_rate, wilson_interval
from jurybox.stats.prevalence import LabelledCounts, corrected_bounds

PROJECTION_METHOD = (
    "simulation: the Jeffreys-bootstrap interval recomputed at the expected counts of larger "
    "labelled sets (test-set Pass share, TPR and TNR and the traces held fixed), 5% size grid"
)
_GRID_STEP = 1.05
_MAX_LABELLED = 1_000_000
_PROJECTION_DRAWS = 4000
_CHUNK = 32  # sizes per vectorised batch: bounds memory at ~_CHUNK x draws x 3 floats


@dataclass(frozen=True)
class LabelProjection:
    """How many labelled items would bring the corrected interval to ``target_half_width``."""

    target_half_width: float
    current_half_width: float
    n_labelled: int
    n_labelled_needed: int | None  # None: not reachable with labels alone
    additional: int | None
    floor_half_width: float  # with unlimited labels (traces held fixed)
    delta_method_needed: int | None
    traces_needed: int  # delta method: traces for which unlimited labels would reach the target
    method: str


def _counts(sizes: Sequence[int], share_pass: float, tpr: float, tnr: float) -> LabelledCounts:
    n = np.asarray(sizes, float)
    n_pos = np.maximum(np.round(n * share_pass), 1.0)
    n_neg = np.maximum(n - n_pos, 1.0)
    return LabelledCounts(tp=tpr * n_pos, n_pos=n_pos, tn=tnr * n_neg, n_neg=n_neg)


def _half_widths(
    sizes: Sequence[int],
    rates: tuple[float, float, float],
    passes: int,
    m: int,
    *,
    confidence: float,
    seed: int,
) -> NDArray[np.float64]:
    share, tpr, tnr = rates
    out = []
    for start in range(0, len(sizes), _CHUNK):
        chunk = sizes[start : start + _CHUNK]
        low, high = corrected_bounds(
            _counts(chunk, share, tpr, tnr),
            np.full(len(chunk), float(passes)),
            float(m),
            confidence=confidence,
            interval="jeffreys-bootstrap",
            n_bootstrap=_PROJECTION_DRAWS,
            rng=np.random.default_rng(seed),  # common random numbers: a smooth curve in n
        )
        out.append((high - low) / 2)
    return np.concatenate(out)


def _grid(n_now: int) -> list[int]:
    sizes, size = [], float(max(n_now, 2))
    while size < _MAX_LABELLED:
        sizes.append(math.ceil(size))
        size *= _GRID_STEP
    return sorted(set(sizes))


def delta_method_labels(
    rates: tuple[float, float, float], p_obs: float, m: int, target: float, confidence: float
) -> int | None:
    """Labelled size at which the delta-method half-width of Rogan–Gladen reaches ``target``."""
    share, tpr, tnr = rates
    youden = tpr + tnr - 1
    theta = min(1.0, max(0.0, (p_obs + tnr - 1) / youden))
    z = float(sps.norm.ppf(0.5 + confidence / 2))
    fixed = p_obs * (1 - p_obs) / m
    per_label = theta**2 * tpr * (1 - tpr) / share + (1 - theta) ** 2 * tnr * (1 - tnr) / (
        1 - share
    )
    room = (target / z) ** 2 * youden**2 - fixed
    if room <= 0:
        return None
    return max(1, math.ceil(per_label / room))


def traces_for(rates: tuple[float, float, float], p_obs: float, target: float, level: float) -> int:
    """Traces at which, with TPR/TNR known exactly, the delta-method half-width is ``target``."""
    _, tpr, tnr = rates
    z = float(sps.norm.ppf(0.5 + level / 2))
    spread = max(p_obs * (1 - p_obs), 1e-12)
    return max(1, math.ceil(z**2 * spread / (target * (tpr + tnr - 1)) ** 2))


def project_labels(
    frozen: FrozenJudge,
    passes: int,
    m: int,
    *,
    target_half_width: float,
    confidence: float,
    seed: int,
) -> LabelProjection:
    """See the module docstring; the current test set's rates are taken as the truth."""
    labels, verdicts = np.asarray(frozen.labels, bool), np.asarray(frozen.verdicts, bool)
    n_now = int(labels.size)
    tpr = float(np.mean(verdicts[labels])) if labels.any() else 0.0
    tnr = float(np.mean(~verdicts[~labels])) if (~labels).any() else 0.0
    rates = (float(labels.mean()), tpr, tnr)
    sizes = _grid(n_now)
    widths = _half_widths(
        [n_now, *sizes, 10**9], rates, passes, m, confidence=confidence, seed=seed
    )
    current, floor, grid_widths = float(widths[0]), float(widths[-1]), widths[1:-1]
    reached = [size for size, w in zip(sizes, grid_widths, strict=True) if w <= target_half_width]
    needed = max(reached[0], n_now) if reached and floor <= target_half_width else None
    return LabelProjection(
        target_half_width=target_half_width,
        current_half_width=current,
        n_labelled=n_now,
        n_labelled_needed=needed,
        additional=None if needed is None else needed - n_now,
        floor_half_width=floor,
        delta_method_needed=delta_method_labels(
            rates, passes / m, m, target_half_width, confidence
        ),
        traces_needed=traces_for(rates, passes / m, target_half_width, confidence),
        method=PROJECTION_METHOD,
    )


@dataclass(frozen=True)
class CriterionEstimate:
    """One criterion's figures on the traces."""

    criterion: str
    describe: str
    prompt_hash: str
    frozen_at: str
    n_traces: int
    failures: Mapping[str, str]
    raw: ProportionInterval | None
    corrected: CorrectedRate | None
    corrected_note: str | None  # why there is no corrected rate, when there is none
    warnings: tuple[str, ...]
    projection: LabelProjection | None
    test_reused: bool
    n_test: int
    run_dir: Path
    provider_calls: int


@dataclass(frozen=True)
class EstimateReport:
    config_path: Path
    traces: Path
    run_dir: Path
    confidence: float
    limit: int | None
    target_half_width: float | None
    criteria: tuple[CriterionEstimate, ...]


def corrected_from(
    frozen: FrozenJudge, unlabelled: Sequence[int], *, confidence: float, seed: int
) -> tuple[CorrectedRate | None, str | None, tuple[str, ...]]:
    """``corrected_pass_rate`` with its refusals and warnings turned into report text."""
    if not unlabelled:
        return None, "corrected rate undefined: no trace was judged", ()
    if not frozen.labels:
        return None, "corrected rate undefined: the judge answered no labelled test item", ()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = corrected_pass_rate(
                frozen.labels, frozen.verdicts, unlabelled, confidence=confidence, rng=seed
            )
        except ValueError as exc:
            return None, f"corrected rate undefined: {exc}", ()
    return result, None, tuple(dict.fromkeys(str(w.message) for w in caught))  # deduplicated


@dataclass(frozen=True)
class EstimateOptions:
    traces: Path
    target_half_width: float | None = None
    limit: int | None = None
    console: Console | None = None
    providers: Mapping[str, Provider] | None = None


def estimate(loop: Devloop, options: EstimateOptions) -> EstimateReport:
    """Judge the traces with every frozen criterion; raw and corrected pass rates.

    Raises:
        ConfigError: a criterion was never frozen, or changed since it was frozen — checked for
            every criterion before any judge is called.
    """
    frozen = {s.name: read_frozen(loop.criterion_dir(s), s.name) for s in loop.criteria}
    for setup in loop.criteria:
        if frozen[setup.name].prompt_hash != setup.prompt_hash:
            raise ConfigError(
                f"criterion '{setup.name}' changed since it was frozen (frozen prompt "
                f"{frozen[setup.name].prompt_hash[:12]}, now {setup.short_hash}): restore it, or "
                "freeze the new prompt on test (--force: the test set is then reused)",
                path=str(setup.source),
            )
    results = [_estimate_one(loop, setup, frozen[setup.name], options) for setup in loop.criteria]
    return EstimateReport(
        config_path=loop.path,
        traces=options.traces,
        run_dir=loop.run_dir,
        confidence=loop.config.confidence,
        limit=options.limit,
        target_half_width=options.target_half_width,
        criteria=tuple(results),
    )


def _estimate_one(
    loop: Devloop, setup: CriterionSetup, frozen: FrozenJudge, options: EstimateOptions
) -> CriterionEstimate:
    judged = judge_dataset(
        loop,
        setup,
        options.traces,
        kind="traces",
        limit=options.limit,
        console=options.console,
        providers=options.providers,
    )
    verdicts = [int(v == "Pass") for v in judged.verdicts.values()]
    level = loop.config.confidence
    raw = wilson_interval(sum(verdicts), len(verdicts), level) if verdicts else None
    corrected, note, caught = corrected_from(
        frozen, verdicts, confidence=level, seed=loop.config.random_seed
    )
    projection = None
    if corrected is not None and options.target_half_width is not None:
        projection = project_labels(
            frozen,
            sum(verdicts),
            len(verdicts),
            target_half_width=options.target_half_width,
            confidence=level,
            seed=loop.config.random_seed,
        )
    return CriterionEstimate(
        criterion=setup.name,
        describe=setup.describe(),
        prompt_hash=setup.prompt_hash,
        frozen_at=frozen.frozen_at,
        n_traces=len(judged.records),
        failures=judged.failures,
        raw=raw,
        corrected=corrected,
        corrected_note=note,
        warnings=caught,
        projection=projection,
        test_reused=frozen.test_reused,
        n_test=len(frozen.labels),
        run_dir=judged.run_dir,
        provider_calls=judged.provider_calls,
    )
