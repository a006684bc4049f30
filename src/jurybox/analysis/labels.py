"""Human labels -> tidy tables.

Labels come from items (``Item.human``) and/or a separate mapping ``query_id -> label``; the
mapping wins where both give the same field. One label is a mapping with any of::

    {
      "preferred_arm": "<arm>" | "tie",               # gold preference (pairwise)
      "annotators": {"<name>": "<arm>" | "tie", ...},  # several humans; without preferred_arm
                                                        # the gold is their strict majority
      "scores": {"<arm>": {"<dimension>": number, "total": number}},
      "overall": {"<arm>": number},                     # same as scores[arm]["total"]
      "verdict": "Pass" | "Fail" | {"<arm>": "Pass" | "Fail"},  # criterion gold
      "design": {"stream": "uniform" | "targeted", "stratum": "<name>",
                 "sizes": {"<stratum>": N_h, ...}},     # how `jurybox label` chose the item
    }

A string verdict applies to every arm of the item. A DataFrame of labels is read row by row
with a ``query_id`` column and the same field names (NaN = absent).

Labels chosen by the targeted stream of ``jurybox label`` (``design.stream == "targeted"``)
over-represent the items where judges disagree, so they are kept out of the tables every
figure against humans reads (``preferences``, ``scores``, ``verdicts``): those stay a random
sample. They enter ``design`` (with every other labelled item ``jurybox label`` chose), from
which ``analysis.labelling`` weights each stratum by its size; and ``annotators``, whose
agreement is measured on every item two annotators labelled.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from jurybox.analysis._common import TOTAL, majority_vote
from jurybox.records import Item


def _empty(*columns: str) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})


@dataclass(frozen=True)
class HumanLabels:
    """Tidy human labels.

    ``preferences``: query_id, label (arm or "tie"), source ("gold" or "annotator_majority").
    ``annotators``: query_id, annotator, label. ``scores``: query_id, arm, dimension, score.
    ``verdicts``: query_id, arm, verdict ("Pass" / "Fail"). ``no_majority``: items whose
    annotators split evenly (no gold preference). ``design``: query_id, stream, stratum, label
    (the gold preference, or None) of every item ``jurybox label`` chose; ``strata``: each
    stratum's size as the labels recorded it; ``design_problem``: why the sizes cannot be used.
    """

    preferences: pd.DataFrame = field(default_factory=lambda: _empty("query_id", "label", "source"))
    annotators: pd.DataFrame = field(
        default_factory=lambda: _empty("query_id", "annotator", "label")
    )
    scores: pd.DataFrame = field(
        default_factory=lambda: _empty("query_id", "arm", "dimension", "score")
    )
    verdicts: pd.DataFrame = field(default_factory=lambda: _empty("query_id", "arm", "verdict"))
    no_majority: int = 0
    design: pd.DataFrame = field(
        default_factory=lambda: _empty("query_id", "stream", "stratum", "label")
    )
    strata: Mapping[str, int] = field(default_factory=dict)
    design_problem: str | None = None

    @property
    def empty(self) -> bool:
        return all(t.empty for t in (self.preferences, self.scores, self.verdicts))


def _clean(label: Mapping[str, Any]) -> dict[str, Any]:
    return {
        k: v
        for k, v in label.items()
        if v is not None and not (isinstance(v, float) and math.isnan(v))
    }


def _merged_labels(
    items: Sequence[Item] | None, human: Mapping[str, Mapping[str, Any]] | pd.DataFrame | None
) -> dict[str, dict[str, Any]]:
    merged: dict[str, dict[str, Any]] = {}
    for item in items or ():
        if item.human:
            merged[str(item.id)] = _clean(item.human)
    if isinstance(human, pd.DataFrame):
        if "query_id" not in human.columns:
            raise ValueError("a human-label DataFrame needs a 'query_id' column")
        rows = [{str(k): v for k, v in row.items()} for row in human.to_dict("records")]
        human = {str(row.pop("query_id")): row for row in rows}
    for qid, label in (human or {}).items():
        merged.setdefault(str(qid), {}).update(_clean(label))
    return merged


def _normalise_pref(value: Any, qid: str = "") -> str:
    if not isinstance(value, str):
        raise ValueError(
            f"human label for query '{qid}': a preference must name an arm or 'tie', got {value!r}"
        )
    return "tie" if value.lower() == "tie" else value


def _verdict_rows(qid: str, verdict: Any, arms: Sequence[str]) -> list[tuple[str, str, str]]:
    if isinstance(verdict, Mapping):
        return [(qid, str(arm), _pass_fail(v, qid)) for arm, v in verdict.items()]
    return [(qid, arm, _pass_fail(verdict, qid)) for arm in arms]


def _pass_fail(value: Any, qid: str) -> str:
    text = str(value).strip().capitalize()
    if text not in ("Pass", "Fail"):
        raise ValueError(
            f"human label for query '{qid}': verdict must be Pass or Fail, got {value!r}"
        )
    return text


def _score(value: Any, qid: str, where: str) -> float:
    """A human score as a float; NaN, infinities and non-numbers are refused, naming them."""
    number = (
        float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
    )
    if number is None or not math.isfinite(number):
        raise ValueError(
            f"human label for query '{qid}': {where} must be a finite number, got {value!r}"
        )
    return number


def _score_rows(qid: str, label: Mapping[str, Any]) -> list[tuple[str, str, str, float]]:
    rows: list[tuple[str, str, str, float]] = []
    for arm, dims in (label.get("scores") or {}).items():
        # datasets.load_human_labels stores a bare per-arm number as {"overall": n}: the total.
        rows.extend(
            (qid, str(arm), TOTAL if dim == "overall" else str(dim), _score(s, qid, f"{arm}.{dim}"))
            for dim, s in dims.items()
        )
    for arm, total in (label.get("overall") or {}).items():
        rows.append((qid, str(arm), TOTAL, _score(total, qid, f"overall.{arm}")))
    return rows


def build_labels(
    items: Sequence[Item] | None,
    human: Mapping[str, Mapping[str, Any]] | pd.DataFrame | None,
    *,
    arms_by_query: Mapping[str, Sequence[str]],
) -> HumanLabels:
    """Normalise item labels and a labels mapping into ``HumanLabels`` (see module docstring)."""
    merged = _merged_labels(items, human)
    prefs: list[tuple[str, str, str]] = []
    annot: list[tuple[str, str, str]] = []
    scores: list[tuple[str, str, str, float]] = []
    verdicts: list[tuple[str, str, str]] = []
    design = _Design()
    for qid, label in merged.items():
        targeted = design.add(qid, label.get("design"))
        if "preferred_arm" in label:
            prefs.append((qid, _normalise_pref(label["preferred_arm"], qid), "gold"))
        for name, value in (label.get("annotators") or {}).items():
            if value is not None:
                annot.append((qid, str(name), _normalise_pref(value)))
        if targeted:  # kept out of the random sample the figures against humans read
            continue
        scores.extend(_score_rows(qid, label))
        if "verdict" in label:
            verdicts.extend(_verdict_rows(qid, label["verdict"], arms_by_query.get(qid, ())))
    annotators = pd.DataFrame(annot, columns=["query_id", "annotator", "label"])
    preferences = pd.DataFrame(prefs, columns=["query_id", "label", "source"])
    no_majority = 0
    if not annotators.empty:
        majority = majority_vote(annotators, "query_id", "label")
        gold = set(preferences["query_id"])
        majority = majority[~majority.index.isin(gold)]
        no_majority = int(majority.isna().sum())
        found = majority.dropna().rename("label").reset_index().assign(source="annotator_majority")
        preferences = pd.concat([preferences, found], ignore_index=True)
    return HumanLabels(
        preferences=preferences[~preferences["query_id"].isin(design.targeted)],
        annotators=annotators,
        scores=pd.DataFrame(scores, columns=["query_id", "arm", "dimension", "score"]),
        verdicts=pd.DataFrame(verdicts, columns=["query_id", "arm", "verdict"]),
        no_majority=no_majority,
        design=design.table(preferences),
        strata=design.sizes,
        design_problem=design.problem,
    )


class _Design:
    """The items ``jurybox label`` chose: stream and stratum of each, and the strata's sizes."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str]] = []
        self.targeted: set[str] = set()
        self.sizes: dict[str, int] = {}
        self.problem: str | None = None

    def add(self, qid: str, design: Any) -> bool:
        """Record the item's design; whether it came from the targeted stream."""
        if not isinstance(design, Mapping):
            return False
        stream, stratum = str(design["stream"]), str(design["stratum"])
        self.rows.append((qid, stream, stratum))
        for name, size in design["sizes"].items():
            if self.sizes.setdefault(str(name), int(size)) != int(size) and self.problem is None:
                self.problem = (
                    f"labels record stratum '{name}' with sizes {self.sizes[str(name)]} and "
                    f"{size} (the run changed between labelling sessions)"
                )
        if stream == "targeted":
            self.targeted.add(qid)
            return True
        return False

    def table(self, preferences: pd.DataFrame) -> pd.DataFrame:
        table = pd.DataFrame(self.rows, columns=["query_id", "stream", "stratum"])
        gold = preferences.drop_duplicates("query_id").set_index("query_id")["label"]
        return table.assign(label=table["query_id"].map(gold))
