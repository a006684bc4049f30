"""Report building blocks shared by the metric families.

A family section is ``{"status": "computed" | "skipped", "reason": str | None, ...}``. A metric is
the flattened frozen result of a ``jurybox.stats`` call: its headline number under ``value``, its
sample size under ``n``, the variant under ``method`` and every other field of the result as is.
When a statistic cannot be computed (``ValueError`` from ``jurybox.stats``), the metric keeps its
place with ``value: null`` and the reason, so that nothing is silently 0 and nothing is NaN.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

Json = dict[str, Any]

TOTAL = "total"  # the pseudo-dimension holding a record's overall score

# The headline field of each stats result type, reported as "value".
_PRIMARY = {
    "KappaResult": "kappa",
    "FleissKappaResult": "kappa",
    "AlphaResult": "alpha",
    "ICCResult": "icc",
    "CronbachAlphaResult": "alpha",
    "WilcoxonResult": "statistic",
    "EffectSizeResult": "estimate",
    "RankBiserialResult": "estimate",
    "TOSTResult": "mean_diff",
    "McNemarResult": "statistic",
    "CorrelationResult": "rho",
    "KruskalResult": "statistic",
    "BinomialTestResult": "proportion",
    "ProportionInterval": "estimate",
    "PercentAgreement": "estimate",
    "RoganGladenResult": "estimate",
    "CorrectedRate": "estimate",
    "WinRateResult": "estimate",
    "TprTnrResult": "youden",
}
_N_FIELDS = ("n", "n_subjects", "n_targets", "n_units", "n_items")


def skipped(reason: str, **extra: Any) -> Json:
    """A family or sub-section that could not be computed, with the reason."""
    return {"status": "skipped", "reason": reason, **extra}


def computed(**content: Any) -> Json:
    """A family or sub-section that was computed."""
    return {"status": "computed", "reason": None, **content}


def unavailable(reason: str, n: int, method: str | None = None) -> Json:
    """A metric that has no value, kept in place with its reason."""
    return {"value": None, "n": int(n), "method": method, "reason": reason}


def from_result(result: Any, **extra: Any) -> Json:
    """Flatten a frozen ``jurybox.stats`` result into a metric dict (see module docstring)."""
    kind = type(result).__name__
    data: Json = {}
    for f in dataclasses.fields(result):
        data[f.name] = getattr(result, f.name)
    primary = _PRIMARY.get(kind)
    if primary is not None and primary in data:
        data["value"] = data.pop(primary)
    if "n" not in data:
        data["n"] = next((data[k] for k in _N_FIELDS if k in data), None)
    for key, value in list(data.items()):
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            data[key] = from_result(value)
    data.setdefault("reason", None)
    data.update(extra)
    return data


def attempt(fn: Callable[..., Any], *args: Any, n: int, **kwargs: Any) -> Json:
    """Call a stats function and flatten its result; a ``ValueError`` becomes a reasoned null.

    Warnings the statistic raises (e.g. low discrimination) are kept in the metric.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn(*args, **kwargs)
        except ValueError as exc:
            return unavailable(str(exc), n)
    data = from_result(result)
    if data.get("n") is None:
        data["n"] = int(n)  # results without a sample-size field (e.g. McNemar's)
    if caught:
        data["warnings"] = [str(w.message) for w in caught]
    return data


def value_of(metric: Mapping[str, Any] | None, key: str = "value") -> float | None:
    """A metric's number, or None when the metric is absent or has no value."""
    if not metric:
        return None
    found = metric.get(key)
    return None if found is None else float(found)


def _scalar(obj: Any) -> Any:
    if isinstance(obj, bool | np.bool_):
        return bool(obj)
    if isinstance(obj, int | np.integer):
        return int(obj)
    if isinstance(obj, float | np.floating):
        number = float(obj)
        return number if math.isfinite(number) else None
    return obj if obj is None or isinstance(obj, str) else str(obj)


def json_safe(obj: Any) -> Any:
    """Recursively turn numpy types and tuples into JSON types; NaN and infinities become None.

    Metrics set their own reasons before this runs; this is the last guard against NaN.
    """
    if isinstance(obj, Mapping):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple | set | frozenset):
        return [json_safe(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [json_safe(v) for v in obj.tolist()]
    return _scalar(obj)


def rate(successes: int, n: int) -> float | None:
    """A plain share, None when the denominator is 0 (callers add the reason)."""
    return successes / n if n else None


def majority_vote(frame: pd.DataFrame, by: str | list[str], column: str) -> pd.Series:
    """The strict plurality label of ``column`` within each ``by`` group; groups whose top count
    is shared get None (no majority), so that a split panel is never silently resolved."""
    keys = [by] if isinstance(by, str) else list(by)
    table = frame.groupby([*keys, column]).size().reset_index(name="count")
    top = table.groupby(keys)["count"].transform("max")
    winners = table[table["count"] == top]
    unique = winners.groupby(keys)[column].transform("size") == 1
    result = winners[unique].set_index(keys)[column]
    groups = table[keys].drop_duplicates().set_index(keys).index
    found = result.reindex(groups).astype(object)
    return found.where(found.notna(), None)
