"""Label lines -> one label per item: several annotators, later lines superseding, the design.

A human-label file holds one line per label. ``jurybox label`` appends such lines and adds, on
each, when it was given (``labelled_at``), how the item was chosen (``design``) and ``skipped``
lines for items an annotator passed over. Reading the file:

* Lines are keyed by (query_id, annotator). A later line with the same key **supersedes** the
  earlier one (a relabel after "back"; a ``skipped`` line withdraws the label). Two lines for
  one item without an annotator are still an error: nothing tells them apart.
* One annotator on an item: the label reads as before (``preferred_arm``, ``scores``,
  ``verdict``, ``annotator``, ``notes``).
* Several: preferences go to ``annotators`` (``{name: arm | "tie"}``; the analysis takes their
  strict majority as the gold and measures their agreement), scores are averaged per arm and
  dimension, and a verdict is each arm's strict majority (an even split leaves the arm out).
* ``design`` (``{"stream", "stratum", "sizes"}``) is the latest line's, its stream ``uniform``
  when any annotator's uniform stream drew the item: the analysis weights the item by its
  stratum and keeps targeted items out of its random sample (``docs/labelling.md``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from jurybox.io.datasets._readers import _Where
from jurybox.io.input_files import json_kind

STREAMS = ("uniform", "targeted")
DESIGN_FIELDS = ("stream", "stratum", "sizes")


@dataclass(frozen=True)
class LabelLine:
    """One validated line of a label file."""

    query_id: str
    annotator: str | None
    human: dict[str, Any]  # preferred_arm / scores / verdict / notes; empty when skipped
    design: dict[str, Any] | None
    skipped: bool
    labelled_at: str | None
    where: _Where


def line_extras(
    data: Mapping[str, Any], where: _Where
) -> tuple[dict[str, Any] | None, bool, str | None]:
    """The label-tool keys of a line: its ``design``, ``skipped`` and ``labelled_at``."""
    skipped = data.get("skipped", False)
    if not isinstance(skipped, bool):
        raise where.error(f"expected true or false, got {json_kind(skipped)}", field="skipped")
    stamp = data.get("labelled_at")
    if stamp is not None and not isinstance(stamp, str):
        raise where.error(f"expected text, got {json_kind(stamp)}", field="labelled_at")
    design = data.get("design")
    return (None if design is None else _design(design, where)), skipped, stamp


def _design(value: Any, where: _Where) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise where.error(f"expected a mapping, got {json_kind(value)}", field="design")
    unknown = [key for key in value if key not in DESIGN_FIELDS]
    if unknown:
        allowed = ", ".join(DESIGN_FIELDS)
        raise where.error(f"unknown design field (allowed: {allowed})", f"design.{unknown[0]}")
    stream, stratum, sizes = (value.get(key) for key in DESIGN_FIELDS)
    if stream not in STREAMS:
        raise where.error(f"expected one of {', '.join(STREAMS)}, got {stream!r}", "design.stream")
    if not isinstance(sizes, Mapping) or not sizes:
        raise where.error(f"expected stratum -> size, got {json_kind(sizes)}", "design.sizes")
    for name, size in sizes.items():
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise where.error(f"expected a whole number ≥ 0, got {size!r}", f"design.sizes.{name}")
    if not isinstance(stratum, str) or stratum not in sizes:
        raise where.error(f"expected one of the strata in sizes, got {stratum!r}", "design.stratum")
    if sizes[stratum] == 0:
        raise where.error(f"stratum {stratum!r} has size 0 but holds this item", "design.sizes")
    return {"stream": stream, "stratum": stratum, "sizes": dict(sizes)}


def merge_lines(lines: Iterable[LabelLine]) -> dict[str, Mapping[str, Any]]:
    """One label per item from the file's lines (rules in the module docstring)."""
    latest: dict[str, dict[str | None, LabelLine]] = {}
    for line in lines:
        given = latest.setdefault(line.query_id, {})
        clash = next(iter(given.values()), None) if line.annotator is None else given.get(None)
        if clash is not None:  # an unnamed label beside another: nothing tells them apart
            unit = "row" if line.where.parquet else "line"
            raise line.where.error(
                f"duplicate query_id '{line.query_id}' (first on {unit} {clash.where.line}); "
                "name the annotator of each label to keep several",
                "query_id",
            )
        given.pop(line.annotator, None)  # the latest line of a key goes last, as it came
        given[line.annotator] = line
    labels: dict[str, Mapping[str, Any]] = {}
    for query_id, by_annotator in latest.items():
        kept = [line for line in by_annotator.values() if not line.skipped]
        if kept:
            labels[query_id] = _combined(kept)
    return labels


def _combined(lines: list[LabelLine]) -> dict[str, Any]:
    if len(lines) == 1:
        label = dict(lines[0].human)
    else:
        label = {}
        prefs = {
            str(x.annotator): x.human["preferred_arm"] for x in lines if "preferred_arm" in x.human
        }
        if len(prefs) > 1:
            label["annotators"] = prefs
        elif prefs:
            label["preferred_arm"] = next(iter(prefs.values()))
        scores = _mean_scores([x.human["scores"] for x in lines if "scores" in x.human])
        if scores:
            label["scores"] = scores
        verdict = _majority_verdict([x.human["verdict"] for x in lines if "verdict" in x.human])
        if verdict:
            label["verdict"] = verdict
    designs = [x.design for x in lines if x.design is not None]
    if designs:
        # The item is in a random sample if any annotator's uniform stream drew it.
        uniform = any(design["stream"] == "uniform" for design in designs)
        label["design"] = {**designs[-1], "stream": "uniform" if uniform else "targeted"}
    return label


def _mean_scores(given: list[dict[str, dict[str, float]]]) -> dict[str, dict[str, float]]:
    sums: dict[str, dict[str, list[float]]] = {}
    for scores in given:
        for arm, dims in scores.items():
            for dim, score in dims.items():
                sums.setdefault(arm, {}).setdefault(dim, []).append(score)
    return {arm: {dim: sum(v) / len(v) for dim, v in dims.items()} for arm, dims in sums.items()}


def _majority_verdict(given: list[dict[str, str]]) -> dict[str, str]:
    out = {}
    for arm in dict.fromkeys(arm for verdict in given for arm in verdict):
        votes = [verdict[arm] for verdict in given if arm in verdict]
        passes = votes.count("Pass")
        if passes * 2 != len(votes):
            out[arm] = "Pass" if passes * 2 > len(votes) else "Fail"
    return out
