"""``jurybox run --until``: judge items in a seeded order, in blocks, and stop each judge as soon
as an anytime-valid confidence sequence has answered the question asked.

Two questions (``parse_until``):

* ``decided``: is the judge accurate enough to be trusted? Per item, the judge's accuracy against
  the gold preference (``preferred_arm`` of the item's ``human`` field or of the labels file
  ``paths.human_labels``): the share of its judgments of the item (every presentation order and
  repeat; retests left out) whose preferred arm is the gold one, a failed judgment counting as
  wrong as in the trust verdict's headline accuracy. The unit is the item. The judge stops once
  the sequence's interval lies wholly above ``trust.min_accuracy`` (the bar the verdict's
  accuracy check asks the interval to clear: it can be trusted) or wholly below it (it never
  will be). Items without a gold label are judged in their block but add nothing.
* ``win_rate±h``: how often does the treatment arm win? Per item, the mean over its judgments of
  1 (treatment preferred), ½ (tie) or 0 (control), failures left out: a verdict that flips with
  the order counts as a tie, as in the report's win rate. The judge stops once the interval's
  half-width is ≤ h.

Either way a judge also stops when its plan is done. The sequence is ``stats.betting_cs``
(Waudby-Smith & Ramdas 2024, aGRAPA bets, 95 %): valid at every step at once, so looking after
every block costs no error (a fixed-n interval looked at as often would be wrong far more often
than 5 %: bench/sequential_stopping.py).

The order: the items sorted by SHA-256 of (``pipeline.random_seed``, item id), cut into blocks of
``BLOCK_ITEMS``; every judge goes through the same blocks, a block at a time. A block counts once
each of its units has a record that a resume keeps (any status but ``provider_error``, which a
resume redoes), so the state after any block is a function of the records alone: a run killed
at any point and resumed replays the records, continues the same order and stops at the same
block. A unit that failed with a provider error holds its judge (no further block this session);
``--resume`` redoes it, as in a plain run. The manifest's ``until`` entry says where each judge
stands: stopped or not, why, after how many items and units, with the interval.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from jurybox.errors import ConfigError
from jurybox.io.datasets import load_human_labels
from jurybox.pipeline.units import resolve_arms
from jurybox.records import Item, JudgeRecord, Status, WorkUnit
from jurybox.stats.sequential import ConfidenceSequence, betting_cs
from jurybox.thresholds import TrustThresholds

if TYPE_CHECKING:
    from jurybox.config import RunConfig
    from jurybox.pipeline.runner import RunInputs

BLOCK_ITEMS = 20  # items per block: the stop is looked at after each
CONFIDENCE = 0.95  # the report's intervals are 95 %
MANIFEST_KEY = "until"
ORDER = "items sorted by SHA-256 of (pipeline.random_seed, item id)"
Metric = Literal["accuracy", "win_rate"]
_SPEC = re.compile(r"^\s*win_rate\s*(?:±|\+-|\+/-)\s*([0-9]*\.?[0-9]+)\s*$")


@dataclass(frozen=True)
class UntilTarget:
    """What ``--until`` asks: ``accuracy`` decided against the trust bar, or the win rate to ±h."""

    metric: Metric
    half_width: float | None = None

    @property
    def spec(self) -> str:
        """The canonical spelling (recorded, and printed in resume commands)."""
        return "decided" if self.metric == "accuracy" else f"win_rate±{self.half_width:g}"


def parse_until(text: str) -> UntilTarget:
    """``decided`` or ``win_rate±H`` (``+-`` and ``+/-`` for ±), H in (0, 0.5].

    Raises ConfigError (field ``--until``) on anything else.
    """
    if text.strip() == "decided":
        return UntilTarget("accuracy")
    found = _SPEC.match(text)
    half = float(found.group(1)) if found else math.nan
    if not 0 < half <= 0.5:
        raise ConfigError(
            f"--until {text!r}: expected `decided` (stop each judge once its accuracy against the "
            "gold labels is shown above or below trust.min_accuracy) or `win_rate±H` with H in "
            "(0, 0.5], e.g. win_rate±0.03 (`+-` for ±)",
            field="--until",
        )
    return UntilTarget("win_rate", half)


def stop_rule(
    target: UntilTarget, bar: float, low: float, high: float
) -> tuple[str | None, str | None]:
    """(stop, outcome) for an interval [low, high]: ``decided`` ``above`` / ``below`` the bar,
    ``precision`` ``within`` ±h, or (None, None) to go on."""
    if target.metric == "accuracy":
        if low >= bar:
            return "decided", "above"
        return ("decided", "below") if high < bar else (None, None)
    assert target.half_width is not None
    return ("precision", "within") if (high - low) / 2 <= target.half_width else (None, None)


def item_order(seed: int, ids: Iterable[str]) -> list[str]:
    """The items in their seeded order (``ORDER``): an item keeps its place whatever else the
    dataset holds."""
    return sorted(ids, key=lambda i: hashlib.sha256(f"{seed}\x00{i}".encode()).digest())


def gold_labels(config: RunConfig, items: Iterable[Item]) -> dict[str, str]:
    """Item id -> gold preference (an arm or ``tie``): the items' ``human.preferred_arm``, the
    labels file's (``paths.human_labels``, read as the ``labels:`` section says) winning where
    both give one."""
    found = {item.id: item.human.get("preferred_arm") for item in items if item.human}
    if config.paths.human_labels is not None:
        labels = load_human_labels(config.resolve(config.paths.human_labels), config.labels)
        found.update({qid: label.get("preferred_arm") for qid, label in labels.items()})
    return {
        qid: "tie" if str(value).lower() == "tie" else str(value)
        for qid, value in found.items()
        if isinstance(value, str) and value
    }


def check_until(config: RunConfig, *, batch: bool) -> None:
    """Refuse ``--until`` where it cannot apply, before anything is judged."""
    if config.task.mode != "pairwise":
        raise ConfigError(
            f"--until needs pairwise judging (task.mode is {config.task.mode}): it stops on the "
            "accuracy of preferences against gold labels, or on the win rate",
            field="--until",
        )
    if batch:
        raise ConfigError(
            "--until judges block by block and looks after each; provider batches (--batch, "
            "pipeline.batch) take hours per round: use one or the other",
            field="--until",
        )


@dataclass
class _Judge:
    """Where one judge stands: blocks folded into its sequence, and its stop."""

    name: str
    blocks_done: int = 0
    items_done: int = 0
    units_done: int = 0
    cs: ConfidenceSequence | None = None
    stop: str | None = None  # decided | precision | plan_done
    outcome: str | None = None  # above | below (decided), within (precision)
    held: bool = False  # a unit of its block failed this session: wait for --resume


@dataclass
class _Seen:
    ok: bool
    arm: str | None


@dataclass
class UntilSchedule:
    """The ``Schedule`` of a ``--until`` run (``pipeline.schedule``)."""

    target: UntilTarget
    bar: float
    blocks: list[list[str]]
    units: Mapping[tuple[str, str], Sequence[WorkUnit]]  # (judge, item) -> its units
    gold: Mapping[str, str]
    arms: tuple[str, str]  # control, treatment
    states: dict[str, _Judge]
    seen: dict[str, _Seen] = field(default_factory=dict)
    failed: set[str] = field(default_factory=set)  # provider errors of this session
    manifest_key: str = MANIFEST_KEY
    method: str = ""

    @classmethod
    def plan(
        cls, inputs: RunInputs, target: UntilTarget, thresholds: TrustThresholds | None = None
    ) -> UntilSchedule:
        """The schedule of ``inputs``' units under ``target``; the trust bar from
        ``thresholds``, else the config's ``trust`` section."""
        config = inputs.config
        order = item_order(config.pipeline.random_seed, inputs.items)
        units: dict[tuple[str, str], list[WorkUnit]] = {}
        for unit in inputs.units:
            units.setdefault((unit.judge, unit.item_id), []).append(unit)
        gold = gold_labels(config, inputs.items.values()) if target.metric == "accuracy" else {}
        if target.metric == "accuracy" and not gold.keys() & set(order):
            raise ConfigError(
                "--until decided needs gold labels to measure accuracy against: no item has a "
                "human preferred_arm (in the dataset's `human` field or paths.human_labels)",
                field="--until",
            )
        arms = resolve_arms(config, list(inputs.items.values()))
        return cls(
            target=target,
            bar=(thresholds or config.trust).min_accuracy,
            blocks=[order[i : i + BLOCK_ITEMS] for i in range(0, len(order), BLOCK_ITEMS)],
            units=units,
            gold=gold,
            arms=(arms[0], arms[1]),
            states={name: _Judge(name) for name in dict.fromkeys(u.judge for u in inputs.units)},
        )

    # --- the Schedule protocol -----------------------------------------------------------------

    def begin(self, records: Iterable[JudgeRecord]) -> None:
        for record in records:
            if record.status != Status.PROVIDER_ERROR:
                self.seen[record.key] = _Seen(record.status == Status.OK, record.preferred_arm)

    def judges(self) -> list[str]:
        self._advance()
        return [name for name, state in self.states.items() if state.stop is None]

    def next_round(self) -> list[WorkUnit]:
        self._advance()
        units: list[WorkUnit] = []
        for state in self.states.values():
            if state.stop is not None or state.held:
                continue
            missing = [u for u in self._block_units(state) if u.key not in self.seen]
            if any(u.key in self.failed for u in missing):
                state.held = True  # redone by --resume, as a plain run's provider errors are
                continue
            units += missing
        return units

    def observe(self, record: JudgeRecord) -> None:
        if record.status == Status.PROVIDER_ERROR:
            self.failed.add(record.key)
        else:
            self.seen[record.key] = _Seen(record.status == Status.OK, record.preferred_arm)

    def recorded(self) -> dict[str, Any]:
        return {
            "until": self.target.spec,
            "metric": self.target.metric,
            **self._goal(),
            "confidence": CONFIDENCE,
            "method": self.method or "betting confidence sequence (Waudby-Smith & Ramdas 2024)",
            "unit": "item",
            "order": ORDER,
            "order_sha256": hashlib.sha256(
                "\n".join(i for block in self.blocks for i in block).encode()
            ).hexdigest(),
            "block_items": BLOCK_ITEMS,
            "items_planned": sum(len(block) for block in self.blocks),
            "judges": {name: self._judge_entry(state) for name, state in self.states.items()},
        }

    # --- blocks and stops ----------------------------------------------------------------------

    def _block_units(self, state: _Judge) -> list[WorkUnit]:
        block = self.blocks[state.blocks_done]
        return [u for item in block for u in self.units.get((state.name, item), ())]

    def _advance(self) -> None:
        """Fold every block whose units are all recorded into its judge's sequence, in order,
        and stop the judge where the question is answered."""
        for state in self.states.values():
            while state.stop is None:
                units = self._block_units(state)
                if any(u.key not in self.seen for u in units):
                    break
                self._fold(state, units)

    def _fold(self, state: _Judge, units: list[WorkUnit]) -> None:
        block = self.blocks[state.blocks_done]
        values = [v for v in (self._value(state.name, item) for item in block) if v is not None]
        if values:
            state.cs = betting_cs(values, CONFIDENCE, previous=state.cs)
            self.method = state.cs.method
        state.blocks_done += 1
        state.items_done += len(block)
        state.units_done += len(units)
        state.stop, state.outcome = self._decision(state.cs)
        if state.stop is None and state.blocks_done == len(self.blocks):
            state.stop = "plan_done"

    def _decision(self, cs: ConfidenceSequence | None) -> tuple[str | None, str | None]:
        if cs is None:
            return None, None
        # The running intersection is monotone: the last interval is the tightest yet.
        return stop_rule(self.target, self.bar, cs.ci_low, cs.ci_high)

    def _value(self, judge: str, item: str) -> float | None:
        """The item's observation for the judge's sequence (module docstring); None: none."""
        units = [u for u in self.units.get((judge, item), ()) if not u.retest]
        seen = [self.seen[u.key] for u in units]
        if self.target.metric == "accuracy":
            gold = self.gold.get(item)
            if gold is None or not seen:
                return None
            return float(np.mean([s.ok and s.arm == gold for s in seen]))
        control, treatment = self.arms
        points = {treatment: 1.0, "tie": 0.5, control: 0.0}
        scores = [points[s.arm] for s in seen if s.ok and s.arm in points]
        return float(np.mean(scores)) if scores else None

    def _goal(self) -> dict[str, Any]:
        if self.target.metric == "accuracy":
            return {"threshold": self.bar, "threshold_source": "trust.min_accuracy"}
        control, treatment = self.arms
        return {"half_width": self.target.half_width, "treatment": treatment, "control": control}

    def _judge_entry(self, state: _Judge) -> dict[str, Any]:
        planned = sum(len(self.units.get((state.name, i), ())) for b in self.blocks for i in b)
        cs = state.cs
        entry: dict[str, Any] = {
            "stopped_early": state.stop in ("decided", "precision"),
            "stop": state.stop,
            "outcome": state.outcome,
            "trusted": {"above": True, "below": False}.get(state.outcome or ""),
            "items_judged": state.items_done,
            "items_measured": cs.n if cs is not None else 0,
            "blocks": state.blocks_done,
            "units_judged": state.units_done,
            "units_planned": planned,
            "estimate": cs.estimate if cs is not None else None,
            "ci_low": cs.ci_low if cs is not None else None,
            "ci_high": cs.ci_high if cs is not None else None,
        }
        entry["statement"] = self._statement(state, entry)
        return entry

    def _statement(self, state: _Judge, entry: Mapping[str, Any]) -> str:
        what = "accuracy" if self.target.metric == "accuracy" else "win rate"
        shown = (
            f"{what} {entry['estimate']:.3f} (anytime-valid {CONFIDENCE:.0%} interval "
            f"{entry['ci_low']:.3f}–{entry['ci_high']:.3f} over {entry['items_measured']} items)"
            if state.cs is not None
            else f"no {what} measured yet"
        )
        after = f"after {state.items_done} of {self._n()} items"
        if state.stop == "decided":
            side = "above" if state.outcome == "above" else "below"
            trust = "can be trusted" if side == "above" else "cannot be trusted"
            return f"stopped {after}: {shown} lies {side} {self.bar:.2f}: {trust}"
        if state.stop == "precision":
            return f"stopped {after}: {shown} is within ±{self.target.half_width:g}"
        if state.stop == "plan_done":
            return f"judged every item, undecided: {shown}"
        return f"running, {after}: {shown}"

    def _n(self) -> int:
        return sum(len(block) for block in self.blocks)
