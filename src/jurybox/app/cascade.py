"""``cascade_to_dir``: replay Trust or Escalate over a run or an import -> cascade.json / .md and
the "needs a human" list.

The use case behind ``jurybox cascade``. The records are a run folder or a judgments.jsonl (a
run, or an import with its companion items); items and human labels are found as ``analyze``
finds them (``app/sources.py``): given, else named by the run's manifest, else the items an
import wrote (whose ``human`` field carries the gold). The analysis is
``jurybox.analysis.cascade``; the files are written by ``jurybox.reporting.render.cascade``.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from jurybox.analysis import AnalysisOptions, build_frame
from jurybox.analysis.cascade import CascadeOptions, CascadeReplay, replay_cascade
from jurybox.app.sources import run_items, run_labels, run_records, run_sources, say_sources
from jurybox.errors import DatasetError
from jurybox.io.verdicts import _item_json
from jurybox.records import Item
from jurybox.reporting.render.cascade import CascadePaths, write_cascade
from jurybox.reporting.view.format import fmt_num, fmt_rate, fmt_value_ci

__all__ = ["CascadeOptions", "cascade_to_dir"]


def cascade_to_dir(
    run: Path,
    options: CascadeOptions,
    *,
    out_dir: Path,
    dataset: Path | None = None,
    human: Path | None = None,
    console: Console | None = None,
) -> tuple[CascadeReplay, CascadePaths]:
    """Replay the cascade of ``options.judges`` over ``run`` and write its files to ``out_dir``.

    Raises:
        DatasetError: no records, a judge missing, too few labelled items, unreadable labels.
    """
    console = console or Console(stderr=True)
    path, records = run_records(run)
    sources = run_sources(path, dataset=dataset, human=human)
    items = run_items(path, sources) or []
    try:
        frame = build_frame(
            records, human=run_labels(sources), items=items, options=AnalysisOptions()
        )
        replay = replay_cascade(frame, options, source=str(path))
    except ValueError as exc:
        raise DatasetError(str(exc), path=str(path)) from None
    by_id = {str(item.id): item for item in items}
    paths = write_cascade(
        replay.report,
        Path(out_dir),
        needs_human=replay.needs_human,
        items=[_item_json(by_id[qid]) for qid in replay.needs_human if qid in by_id],
    )
    say_sources(sources, console)
    _print_summary(replay, paths, console, items)
    return replay, paths


def _print_summary(
    replay: CascadeReplay, paths: CascadePaths, console: Console, items: list[Item]
) -> None:
    report = replay.report
    for rule in (report.cascade, report.strongest_alone, report.uncalibrated):
        if rule is None:  # a fresh run measures the cascade alone
            continue
        agreement = fmt_value_ci(rule.agreement, rule.ci_low, rule.ci_high)
        console.print(
            f"{rule.rule}: agreement {agreement} on {rule.n_decided}/{rule.n_items} test items, "
            f"needs a human {fmt_rate(rule.nobody_share)}, cost × strongest alone "
            f"{fmt_num(rule.cost_ratio, 2)}",
            markup=False,
            soft_wrap=True,
        )
    if not items and replay.needs_human:
        console.print(
            "no items found (pass --dataset): needs_human.items.jsonl holds no texts",
            markup=False,
        )
    console.print(
        f"wrote {paths.json}, {paths.markdown.name}, {paths.needs_human.name} "
        f"({report.needs_human} item(s) need a human), {paths.needs_human_items.name}",
        markup=False,
        soft_wrap=True,
    )
