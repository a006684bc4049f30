"""``jurybox cascade CONFIG``: Trust or Escalate as a fresh run, the next judge called only on the
items the earlier ones are unsure of.

The run goes in rounds (``pipeline.schedule``), one per judge of ``--judges``, cheap first:

1. the first judge judges every item (every presentation order; retests are left out);
2. the labelled items are split at random into a calibration and a test part, exactly as the
   replay splits them (``analysis.cascade.split_labelled``: ``--calibration-share``, ``--seed``);
   the judges judged so far are calibrated on the calibration part
   (``stats.calibrate_cascade``: δ / k per judge), and the items none of them decides (its
   confidence under its threshold) go to the next judge, whose round judges only those —
   calibration items included, since its own threshold is calibrated on the ones reaching it;
3. after the last judge the items nobody decided need a human.

Each judge's verdict and confidence per item come from its records as in the replay
(``analysis.cascade.judge_items``), so the thresholds of a fresh run and of a replay over the
same records agree. The state after every round is a function of the records and the flags:
a run killed at any point and resumed (``jurybox cascade CONFIG --resume DIR ...``, the command
printed on interruption; its manifest records the flags) calls the same judges on the same
items. The run folder is an ordinary run's (judgments.jsonl, manifest.json: ``jurybox analyze``
reads it); ``--out`` gets cascade.json / cascade.md with the test-split outcome and the run's
cost against the strongest judge alone, decisions.jsonl (which judge decided each item, its
verdict) and the needs-a-human files.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from rich.console import Console

from jurybox.analysis import AnalysisOptions, build_frame
from jurybox.analysis.cascade import (
    CascadeOptions,
    JudgeItems,
    costs,
    judge_items,
    routed,
    rule_outcome,
    settings,
    split_labelled,
    stages,
)
from jurybox.analysis.labels import build_labels
from jurybox.analysis.model.cascade import (
    CASCADE_SCHEMA_VERSION,
    CascadeReport,
    FreshRun,
    ItemCounts,
)
from jurybox.analysis.model.compare import GeneratedBy
from jurybox.app.run import execute_prepared, prepare_run
from jurybox.errors import ConfigError, JuryboxError
from jurybox.io.atomic import write_text_atomic
from jurybox.io.datasets import load_human_labels
from jurybox.io.verdicts import _item_json
from jurybox.pipeline.options import RunOptions
from jurybox.pipeline.runner import RunInputs
from jurybox.records import JudgeRecord, Status, WorkUnit
from jurybox.reporting.render.cascade import CascadePaths, write_cascade
from jurybox.stats.cascade import (
    NOBODY,
    CascadeCalibration,
    calibrate_cascade,
    cascade_outcome,
    route,
)
from jurybox.versions import jurybox_version

FloatArray = NDArray[np.float64]
DECISIONS = "decisions.jsonl"
MANIFEST_KEY = "cascade"


def cascade_flags(options: CascadeOptions, *, human: Path | None, out: Path) -> dict[str, Any]:
    """The manifest's record of the cascade (``RunOptions.cascade``): its flags by long name,
    so that the printed resume command repeats them."""
    return {
        "judges": ",".join(options.judges),
        "target": options.target,
        "delta": options.delta,
        "calibration_share": options.calibration_share,
        "seed": options.seed,
        "confidence": options.confidence,
        "human": str(human) if human is not None else None,
        "call_cost": [f"{j}={c:g}" for j, c in (options.call_costs or {}).items()] or None,
        "out": str(out),
    }


def options_of(flags: Mapping[str, Any]) -> CascadeOptions:
    """``CascadeOptions`` from the recorded flags (``cascade_flags``)."""
    costs_given = [str(pair).partition("=") for pair in flags.get("call_cost") or ()]
    return CascadeOptions(
        judges=tuple(str(flags["judges"]).split(",")),
        target=float(flags["target"]),
        delta=float(flags["delta"]),
        calibration_share=float(flags["calibration_share"]),
        seed=int(flags["seed"]),
        confidence=flags["confidence"],
        call_costs={name: float(cost) for name, _, cost in costs_given} or None,
    )


def plan_cascade(inputs: RunInputs, flags: Mapping[str, Any]) -> tuple[RunInputs, CascadeSchedule]:
    """The cascade's judges' units (no retests) and its schedule; ConfigError where the config
    cannot run the cascade (mode, judges, too few labels)."""
    options = options_of(flags)
    config = inputs.config
    if config.task.mode != "pairwise":
        raise ConfigError(
            f"a cascade routes pairwise verdicts against human preferences; task.mode is "
            f"{config.task.mode}",
            field="--judges",
        )
    unknown = [j for j in options.judges if j not in config.judges]
    if unknown:
        raise ConfigError(
            f"--judges names {', '.join(unknown)}, not judges of the config "
            f"({', '.join(config.judges)})",
            field="--judges",
        )
    units = [u for u in inputs.units if u.judge in options.judges and not u.retest]
    human_path = flags.get("human") or (
        config.resolve(config.paths.human_labels) if config.paths.human_labels else None
    )
    human = load_human_labels(human_path, config.labels) if human_path else None
    schedule = CascadeSchedule.plan(replace(inputs, units=units), options, human)
    return replace(inputs, units=units), schedule


@dataclass
class CascadeSchedule:
    """The ``Schedule`` of a fresh-run cascade (``pipeline.schedule``, module docstring)."""

    options: CascadeOptions
    inputs: RunInputs
    ids: list[str]
    gold: NDArray[np.object_]  # per item (``ids`` order), None unlabelled
    cal: NDArray[np.intp]
    test: NDArray[np.intp]
    human: Mapping[str, Mapping[str, Any]] | None
    units: Mapping[tuple[str, str], Sequence[WorkUnit]]
    records: dict[str, JudgeRecord] = field(default_factory=dict)
    failed: set[str] = field(default_factory=set)
    stage: int = 0  # judges whose round is complete
    judged: list[JudgeItems] = field(default_factory=list)
    calibration: CascadeCalibration | None = None
    manifest_key: str = MANIFEST_KEY

    @classmethod
    def plan(
        cls,
        inputs: RunInputs,
        options: CascadeOptions,
        human: Mapping[str, Mapping[str, Any]] | None,
    ) -> CascadeSchedule:
        ids = sorted(inputs.items)
        items = [inputs.items[i] for i in ids]
        prefs = build_labels(items, human, arms_by_query={}).preferences
        found = prefs.drop_duplicates("query_id").set_index("query_id")["label"]
        gold = np.array([found.get(i) for i in ids], dtype=object)
        labelled = np.flatnonzero(pd.notna(gold))
        try:
            cal, test = split_labelled(labelled, options)
        except ValueError as exc:
            raise ConfigError(
                f"{exc} (human labels: the items' `human` field or --human)"
            ) from None
        units: dict[tuple[str, str], list[WorkUnit]] = {}
        for unit in inputs.units:
            units.setdefault((unit.judge, unit.item_id), []).append(unit)
        return cls(options, inputs, ids, gold, cal, test, human, units)

    # --- the Schedule protocol -----------------------------------------------------------------

    def begin(self, records: Iterable[JudgeRecord]) -> None:
        for record in records:
            if record.status != Status.PROVIDER_ERROR:
                self.records[record.key] = record

    def judges(self) -> list[str]:
        self._advance()
        return list(self.options.judges[self.stage :])

    def next_round(self) -> list[WorkUnit]:
        self._advance()
        if self.stage == len(self.options.judges):
            return []
        missing = [u for u in self._round(self.stage) if u.key not in self.records]
        if any(u.key in self.failed for u in missing):
            return []  # redone by --resume, as a plain run's provider errors are
        return missing

    def observe(self, record: JudgeRecord) -> None:
        if record.status == Status.PROVIDER_ERROR:
            self.failed.add(record.key)
        else:
            self.records[record.key] = record

    def recorded(self) -> dict[str, Any]:
        thresholds = self.calibration.thresholds if self.calibration is not None else ()
        return {
            "judges": list(self.options.judges),
            "rounds_done": self.stage,
            "finished": self.finished,
            "thresholds": [t if math.isfinite(t) else None for t in thresholds[: self.stage]],
            "items": len(self.ids),
            "calibration_items": int(self.cal.size),
            "called": {j.judge: int((j.calls > 0).sum()) for j in self.judged},
        }

    # --- rounds --------------------------------------------------------------------------------

    @property
    def finished(self) -> bool:
        return self.stage == len(self.options.judges)

    def open_items(self, stage: int) -> NDArray[np.intp]:
        """Indices of the items no judge before ``stage`` decided (every item at stage 0)."""
        if stage == 0 or self.calibration is None:
            return np.arange(len(self.ids))
        conf = np.vstack([j.confidence for j in self.judged[:stage]])
        return np.flatnonzero(route(self.calibration.thresholds[:stage], conf) == NOBODY)

    def _round(self, stage: int) -> list[WorkUnit]:
        judge = self.options.judges[stage]
        return [u for i in self.open_items(stage) for u in self.units.get((judge, self.ids[i]), ())]

    def _advance(self) -> None:
        """Close every round whose units are all recorded, recalibrating after each."""
        while not self.finished:
            if any(u.key not in self.records for u in self._round(self.stage)):
                return
            self.stage += 1
            self._calibrate()

    def _calibrate(self) -> None:
        frame = build_frame(
            list(self.records.values()),
            human=self.human,
            items=list(self.inputs.items.values()),
            options=AnalysisOptions(),
        )
        kind = self.options.confidence
        self.judged = [
            judge_items(frame.records, judge, self.ids, kind)
            for judge in self.options.judges[: self.stage]
        ]
        conf, agree = self._matrices()
        self.calibration = calibrate_cascade(
            conf[:, self.cal],
            agree[:, self.cal],
            target=self.options.target,
            delta=self.options.delta,
            split_delta=self.options.split_delta,
            min_selected=self.options.min_selected,
        )

    def _matrices(self) -> tuple[FloatArray, NDArray[np.bool_]]:
        """Judges × items confidence and agreement with the gold, every judge of the cascade
        (NaN / False for the judges not judged yet: they decide nothing so far)."""
        k, n = len(self.options.judges), len(self.ids)
        conf = np.full((k, n), np.nan)
        agree = np.zeros((k, n), dtype=bool)
        for row, judged in enumerate(self.judged):
            conf[row] = judged.confidence
            agree[row] = [
                v is not None and v == g for v, g in zip(judged.verdict, self.gold, strict=True)
            ]
        return conf, agree

    # --- the report ----------------------------------------------------------------------------

    def report(self, run_dir: Path) -> tuple[CascadeReport, list[str], list[dict[str, Any]]]:
        """cascade.json's report, the needs-a-human ids (outside calibration) and one decision
        row per item; the run must be finished."""
        assert self.finished and self.calibration is not None
        conf, agree = self._matrices()
        called = np.vstack([j.calls > 0 for j in self.judged])
        cost, basis = costs(self.judged, self.options, called)
        who = self.calibration.route(conf)
        out = cascade_outcome(who[self.test], agree[:, self.test], cost[:, self.test])
        per_item = _strongest_per_item(cost[-1], called[-1])
        out = replace(out, cost_strongest=per_item * self.test.size if per_item else math.nan)
        method = f"{out.method}; the strongest alone: {_ESTIMATED}"
        thresholds, judges = self.calibration.thresholds, self.options.judges
        rule = rule_outcome("cascade", thresholds, out, judges, options=self.options, method=method)
        outside = np.setdiff1d(np.arange(len(self.ids)), self.cal)
        nobody = outside[who[outside] == NOBODY]
        unlabelled = np.flatnonzero(pd.isna(self.gold))
        report = CascadeReport(
            schema_version=CASCADE_SCHEMA_VERSION,
            generated_by=GeneratedBy(package="jurybox", version=jurybox_version()),
            source=str(run_dir),
            settings=settings(self.options, basis),
            items=self._counts(unlabelled),
            stages=stages(self.calibration, self.judged),
            cascade=rule,
            unlabelled=routed(self.calibration, conf[:, unlabelled], self.options)
            if unlabelled.size
            else None,
            needs_human=int(nobody.size),
            method=self.calibration.method,
            notes=[f"costs in {basis}", _FRESH_NOTE],
            fresh_run=self._fresh(run_dir, cost, called, who, basis),
        )
        return report, [self.ids[i] for i in nobody], self._decisions(who, conf)

    def _counts(self, unlabelled: NDArray[np.intp]) -> ItemCounts:
        return ItemCounts(
            n_items=len(self.ids),
            n_missing_a_judge=0,
            n_labelled=int(self.cal.size + self.test.size),
            n_calibration=int(self.cal.size),
            n_test=int(self.test.size),
            n_unlabelled=int(unlabelled.size),
        )

    def _fresh(
        self,
        run_dir: Path,
        cost: FloatArray,
        called: NDArray[np.bool_],
        who: NDArray[np.intp],
        basis: str,
    ) -> FreshRun:
        judges = self.options.judges
        per_item = _strongest_per_item(cost[-1], called[-1])
        alone = per_item * len(self.ids) if per_item is not None else None
        total = float(cost.sum())
        return FreshRun(
            run_dir=str(run_dir),
            items=len(self.ids),
            called={j: int(called[row].sum()) for row, j in enumerate(judges)},
            units={j.judge: int(j.calls.sum()) for j in self.judged},
            cost={j: float(cost[row].sum()) for row, j in enumerate(judges)},
            cost_total=total,
            cost_strongest_alone=alone,
            cost_ratio=total / alone if alone else None,
            cost_basis=basis,
            decided={j: int((who == row).sum()) for row, j in enumerate(judges)},
            needs_human=int((who == NOBODY).sum()),
            method=_ESTIMATED,
        )

    def _decisions(self, who: NDArray[np.intp], conf: FloatArray) -> list[dict[str, Any]]:
        split = np.full(len(self.ids), "unlabelled", dtype=object)
        split[self.cal], split[self.test] = "calibration", "test"
        rows = []
        for i, qid in enumerate(self.ids):
            by = int(who[i])
            rows.append(
                {
                    "query_id": qid,
                    "decided_by": self.options.judges[by] if by != NOBODY else None,
                    "verdict": self.judged[by].verdict[i] if by != NOBODY else None,
                    "confidence": float(conf[by, i]) if by != NOBODY else None,
                    "split": str(split[i]),
                }
            )
        return rows


def _strongest_per_item(cost: FloatArray, called: NDArray[np.bool_]) -> float | None:
    """The strongest judge's mean cost per item where it was called (None: never called)."""
    return float(cost[called].mean()) if called.any() else None


_ESTIMATED = (
    "the strongest judge on every item, estimated as its mean cost per item where the cascade "
    "called it, times the items"
)
_FRESH_NOTE = (
    "fresh run: each judge was called only on the items that reached it, so the strongest "
    "judge alone and the uncalibrated rule are not measured on the test split"
)


def fresh_cascade(
    config_path: Path,
    options: CascadeOptions,
    *,
    out_dir: Path,
    human: Path | None = None,
    output_dir: Path | None = None,
    resume: Path | None = None,
    console: Console | None = None,
) -> tuple[CascadeReport, CascadePaths]:
    """Run the cascade of ``options.judges`` over CONFIG's dataset, then write cascade.json,
    cascade.md, decisions.jsonl and the needs-a-human files to ``out_dir``.

    Raises ConfigError / DatasetError on bad input before any call; JuryboxError when the run
    ends with a round unfinished (provider errors: the message says how to resume).
    """
    console = console or Console(stderr=True)
    given = RunOptions(cascade=cascade_flags(options, human=human, out=out_dir))
    prepared = prepare_run(
        config_path, given, output_dir=output_dir, resume=resume, console=console
    )
    summary = execute_prepared(prepared)
    schedule = prepared.schedule
    assert isinstance(schedule, CascadeSchedule)
    if not schedule.finished:
        raise JuryboxError(
            f"the cascade stopped in {schedule.options.judges[schedule.stage]}'s round: "
            f"calls failed; resume with {summary.resume_command}"
        )
    report, nobody, decisions = schedule.report(prepared.directory)
    items = prepared.inputs.items
    paths = write_cascade(
        report,
        out_dir,
        needs_human=nobody,
        items=[_item_json(items[qid]) for qid in nobody],
    )
    write_text_atomic(
        out_dir / DECISIONS,
        "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in decisions),
    )
    _print(console, report, paths)
    return report, paths


def _print(console: Console, report: CascadeReport, paths: CascadePaths) -> None:
    from jurybox.reporting.view.format import fmt_num, fmt_value_ci  # noqa: PLC0415

    rule, run = report.cascade, report.fresh_run
    assert run is not None
    called = ", ".join(f"{j} {n}" for j, n in run.called.items())
    decided = ", ".join(f"{j} {n}" for j, n in run.decided.items())
    console.print(
        f"cascade: items judged by {called}; decided by {decided}, needs a human "
        f"{run.needs_human}; cost {fmt_num(run.cost_total, 2)} ({run.cost_basis}) against "
        f"{fmt_num(run.cost_strongest_alone, 2)} for {report.settings.judges[-1]} alone "
        f"(× {fmt_num(run.cost_ratio, 2)}, estimated)",
        markup=False,
        soft_wrap=True,
    )
    console.print(
        f"test split: agreement {fmt_value_ci(rule.agreement, rule.ci_low, rule.ci_high)} on "
        f"{rule.n_decided}/{rule.n_items} items (target {report.settings.target:g})",
        markup=False,
        soft_wrap=True,
    )
    console.print(
        f"wrote {paths.json}, {paths.markdown.name}, {DECISIONS}, {paths.needs_human.name}",
        markup=False,
        soft_wrap=True,
    )
