"""``jurybox calibrate``: measure each criterion's judge against the human labels of a split.

On dev it is the inner loop: TPR and TNR with Wilson intervals against the criterion's targets,
and every disagreement with the judge's reasoning, so the prompt can be refined. On test
(``freeze=True``) it is the one measurement of a frozen prompt: allowed once per prompt hash; a
different prompt on the same test set is refused unless ``force``, and is then reported as a
reused test set. Every call appends one history line per criterion with its prompt hash.

Pass is the positive class throughout, as in ``jurybox.stats``: TPR = P(judge Pass | human Pass),
TNR = P(judge Fail | human Fail). A false pass is a human Fail the judge passed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from rich.console import Console

from jurybox.devloop.config import CriterionSetup, Devloop, judge_identity
from jurybox.devloop.judge import Judged, judge_dataset, prompt_file
from jurybox.devloop.split import SplitName, item_label, item_response
from jurybox.devloop.state import (
    TestUse,
    append_history,
    check_test_allowed,
    iteration,
    test_use,
    utc_now,
    write_frozen,
)
from jurybox.errors import ConfigError
from jurybox.providers.base import Provider
from jurybox.records import Item
from jurybox.rubrics.criteria import Targets
from jurybox.stats import TprTnrResult, tpr_tnr


@dataclass(frozen=True)
class Disagreement:
    """An item where the judge and the human label differ."""

    item_id: str
    kind: Literal["false pass", "false fail"]
    question: str
    response: str
    reasoning: str


@dataclass(frozen=True)
class Confusion:
    """Counts with Pass as the positive class."""

    tp: int  # human Pass, judge Pass
    fn: int  # human Pass, judge Fail (false fail)
    tn: int  # human Fail, judge Fail
    fp: int  # human Fail, judge Pass (false pass)


@dataclass(frozen=True)
class CriterionCalibration:
    """One criterion's figures on one split."""

    criterion: str
    describe: str
    split: SplitName
    prompt_hash: str
    iteration: int
    n_items: int
    confusion: Confusion
    rates: TprTnrResult | None
    rates_note: str | None  # why TPR/TNR are undefined, when they are
    targets: Targets
    disagreements: tuple[Disagreement, ...]
    failures: Mapping[str, str]  # item id -> status: error (excluded from the rates)
    labels: Mapping[str, str]  # item id -> human Pass/Fail, every item measured
    verdicts: Mapping[str, str]  # item id -> judge Pass/Fail, answered items only
    run_dir: Path
    provider_calls: int
    frozen: bool = False
    test_reused: bool = False
    earlier_test_prompts: tuple[str, ...] = ()

    @property
    def n_answered(self) -> int:
        c = self.confusion
        return c.tp + c.fn + c.tn + c.fp


@dataclass(frozen=True)
class CalibrationReport:
    """``calibrate``'s result over every criterion of the config (code criteria first)."""

    split: SplitName
    config_path: Path
    run_dir: Path
    confidence: float
    limit: int | None
    criteria: tuple[CriterionCalibration, ...]
    files: Mapping[str, Path] = field(default_factory=dict)


def check_request(split: str, *, freeze: bool) -> SplitName:
    """Only dev is iterated on; test is measured only to freeze."""
    if split not in ("dev", "test"):
        raise ConfigError(f"calibrate runs on dev or test, not {split!r}", field="--split")
    if split == "test" and not freeze:
        raise ConfigError(
            "the test split is measured once, on a frozen prompt: add --freeze (iterate on dev)",
            field="--split",
        )
    if freeze and split != "test":
        raise ConfigError("--freeze measures the test split: use --split test", field="--freeze")
    return "dev" if split == "dev" else "test"


def confusion(labels: Mapping[str, str], verdicts: Mapping[str, str]) -> Confusion:
    pairs = [(labels[i], verdicts[i]) for i in labels if i in verdicts]
    return Confusion(
        tp=sum(h == "Pass" and j == "Pass" for h, j in pairs),
        fn=sum(h == "Pass" and j == "Fail" for h, j in pairs),
        tn=sum(h == "Fail" and j == "Fail" for h, j in pairs),
        fp=sum(h == "Fail" and j == "Pass" for h, j in pairs),
    )


def rates_of(
    labels: Mapping[str, str], verdicts: Mapping[str, str], confidence: float
) -> tuple[TprTnrResult | None, str | None]:
    ids = [i for i in labels if i in verdicts]
    try:
        result = tpr_tnr(
            [labels[i] == "Pass" for i in ids],
            [verdicts[i] == "Pass" for i in ids],
            confidence=confidence,
        )
    except ValueError as exc:  # no answered items, or only one class among them
        return None, str(exc)
    return result, None


def disagreements(items: Mapping[str, Item], judged: Judged) -> tuple[Disagreement, ...]:
    found = []
    for item_id, verdict in sorted(judged.verdicts.items()):
        label = item_label(items[item_id])
        if label == verdict:
            continue
        kind: Literal["false pass", "false fail"] = (
            "false pass" if verdict == "Pass" else "false fail"
        )
        item = items[item_id]
        reason = judged.reasoning(item_id)
        found.append(Disagreement(item_id, kind, item.question, item_response(item), reason))
    return tuple(sorted(found, key=lambda d: (d.kind, d.item_id)))


@dataclass(frozen=True)
class _Options:
    limit: int | None
    console: Console | None
    providers: Mapping[str, Provider] | None
    force: bool


def _measure(
    loop: Devloop,
    setup: CriterionSetup,
    split: SplitName,
    options: _Options,
    use: TestUse | None,
) -> CriterionCalibration:
    dataset = setup.split.files[split]
    judged = judge_dataset(
        loop,
        setup,
        dataset,
        kind=split,
        limit=options.limit,
        console=options.console,
        providers=options.providers,
    )
    items = {item.id: item for item in setup.split.items(split)[: options.limit]}
    labels = {item_id: item_label(item) for item_id, item in items.items()}
    rates, note = rates_of(labels, judged.verdicts, loop.config.confidence)
    return CriterionCalibration(
        criterion=setup.name,
        describe=setup.describe(),
        split=split,
        prompt_hash=setup.prompt_hash,
        iteration=iteration(loop.run_dir, setup.name, split),
        n_items=len(items),
        confusion=confusion(labels, judged.verdicts),
        rates=rates,
        rates_note=note,
        targets=setup.criterion.targets,
        disagreements=disagreements(items, judged),
        failures=judged.failures,
        labels=labels,
        verdicts=judged.verdicts,
        run_dir=judged.run_dir,
        provider_calls=judged.provider_calls,
        frozen=split == "test",
        test_reused=use is not None and use.reused_by(setup.prompt_hash),
        earlier_test_prompts=tuple(
            h for h in (use.prompt_hashes if use else ()) if h != setup.prompt_hash
        ),
    )


def history_entry(
    result: CriterionCalibration, setup: CriterionSetup, options: _Options
) -> dict[str, Any]:
    c, rates = result.confusion, result.rates
    return {
        "timestamp": utc_now(),
        "criterion": result.criterion,
        "kind": setup.criterion.kind,
        "split": result.split,
        "prompt_hash": result.prompt_hash,
        "judge": result.describe,
        "iteration": result.iteration,
        "n_items": result.n_items,
        "n_answered": result.n_answered,
        "n_failed": len(result.failures),
        "tp": c.tp,
        "fn": c.fn,
        "tn": c.tn,
        "fp": c.fp,
        "tpr": rates.tpr.estimate if rates else None,
        "tnr": rates.tnr.estimate if rates else None,
        "targets": setup.criterion.targets.model_dump(),
        "frozen": result.frozen,
        "forced": options.force and result.test_reused,
        "test_reused": result.test_reused,
        "limit": options.limit,
        "run_folder": str(result.run_dir),
        "split_manifest_sha256": setup.split.manifest_sha256,
        "criterion_file": str(setup.source),
    }


def frozen_state(
    result: CriterionCalibration, setup: CriterionSetup, loop: Devloop, use: TestUse
) -> dict[str, Any]:
    hashes = list(use.prompt_hashes)
    if setup.prompt_hash not in hashes:
        hashes.append(setup.prompt_hash)
    return {
        "criterion": setup.name,
        "prompt_hash": setup.prompt_hash,
        "frozen_at": utc_now(),
        "judge": judge_identity(setup.judge, loop.config.max_tokens) if setup.judge else "code",
        "criterion_file": str(setup.source),
        "prompt_file": str(prompt_file(loop, setup)),
        "test_reused": result.test_reused,
        "test_prompt_hashes": hashes,
        "limit": options_limit(result, setup),
        "test": {
            "run_folder": str(result.run_dir),
            "tpr": result.rates.tpr.estimate if result.rates else None,
            "tnr": result.rates.tnr.estimate if result.rates else None,
            "items": [
                {"id": item_id, "label": label, "verdict": result.verdicts.get(item_id)}
                for item_id, label in result.labels.items()
            ],
        },
    }


def options_limit(result: CriterionCalibration, setup: CriterionSetup) -> int | None:
    """The --limit in force when the test set was measured (None: the whole test split)."""
    whole = len(setup.split.ids("test"))
    return result.n_items if result.n_items < whole else None


def calibrate(
    loop: Devloop,
    split: str,
    *,
    freeze: bool = False,
    force: bool = False,
    limit: int | None = None,
    console: Console | None = None,
    providers: Mapping[str, Provider] | None = None,
) -> CalibrationReport:
    """Judge the split with every criterion, compare with the labels, record the iteration.

    Test-set rules are checked for every criterion before any judge is called.
    """
    name = check_request(split, freeze=freeze)
    options = _Options(limit, console, providers, force)
    uses: dict[str, TestUse] = {}
    if name == "test":
        for setup in loop.criteria:
            uses[setup.name] = check_test_allowed(
                loop.run_dir, setup.name, setup.prompt_hash, force=force
            )
    results = []
    for setup in loop.criteria:
        use = uses.get(setup.name)
        result = _measure(loop, setup, name, options, use)
        append_history(loop.run_dir, history_entry(result, setup, options))
        if name == "test":
            state = frozen_state(result, setup, loop, use or test_use(loop.run_dir, setup.name))
            write_frozen(loop.criterion_dir(setup), state)
        results.append(result)
    return CalibrationReport(
        split=name,
        config_path=loop.path,
        run_dir=loop.run_dir,
        confidence=loop.config.confidence,
        limit=limit,
        criteria=tuple(results),
    )
