"""The first screen of compare.html / compare.md: per comparison, did run B do better?

One ``AnswerView`` per run compared with the baseline: a line per paired judge ("better",
"worse" or "no evidence" on its headline figure, with both runs' trust levels), the links to
each run's own report, and what changed between the two configs (a table, and the own
instructions / template as unified diffs). ``RunLinks`` makes every link relative to the folder
the page is written in, so that it opens the run's report.html wherever the two sit.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from jurybox.analysis.model.compare import CompareReport, Headline, RunComparison
from jurybox.reporting.explorer.links import items_href
from jurybox.reporting.view.format import few_items, fmt_num, fmt_p, fmt_text, fmt_value_ci
from jurybox.reporting.view.tables import Link, Table

_NO_REPORT = (
    "no report.html found in the run folder (RUN/report/report.html or RUN/report.html): "
    "write one with `jurybox analyze RUN` (into RUN/report) and compare again to link its items"
)


@dataclass(frozen=True)
class RunLinks:
    """Each run's report.html as a link from the page's folder (run label -> href)."""

    reports: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, report: CompareReport, page_dir: Path | None) -> RunLinks:
        """Links from ``page_dir`` (None: no links, e.g. a page not written to a file)."""
        if page_dir is None:
            return cls()
        hrefs = {}
        for run in report.runs:
            if run.report is not None:
                relative = os.path.relpath(Path(run.report).resolve(), page_dir.resolve())
                hrefs[run.label] = "/".join(quote(part) for part in Path(relative).parts)
        return cls(hrefs)

    def report(self, run: str) -> str | None:
        return self.reports.get(run)

    def item(self, run: str, item: str) -> str | None:
        """The run's explorer opened on one item, or None without a report."""
        base = self.reports.get(run)
        return base + items_href(item=item) if base is not None else None

    def cell(self, run: str, item: str) -> Link | str:
        href = self.item(run, item)
        return Link(item, href) if href is not None else item


@dataclass(frozen=True)
class AnswerLine:
    judge: str
    answer: str  # better / worse / no evidence
    figure: str  # the headline figure and its test, formatted
    trust: str  # both runs' trust levels


@dataclass
class AnswerView:
    """One comparison's first screen."""

    id: str
    title: str
    answer: str  # the line above the judges: "B did better for 1 of 3 judges ..."
    tone: str  # better / worse / none: the box's colour
    lines: list[AnswerLine]
    reports: list[tuple[str, str | None]]  # (text, href or None)
    changes: Table
    diffs: list[tuple[str, list[str]]]  # (setting, unified diff lines)
    notes: list[str] = field(default_factory=list)


def build_answers(report: CompareReport, links: RunLinks) -> list[AnswerView]:
    return [
        _answer_view(comparison, index, links)
        for index, comparison in enumerate(report.comparisons, start=1)
    ]


def _answer_view(comparison: RunComparison, index: int, links: RunLinks) -> AnswerView:
    a, b = comparison.run_a, comparison.run_b
    lines = [_line(headline, a, b) for headline in comparison.headlines or []]
    counts = {kind: sum(line.answer == kind for line in lines) for kind in ("better", "worse")}
    view = AnswerView(
        id=f"answer{index}",
        title=f"Did {b} judge better than {a}?",
        answer=_summary_line(a, b, counts, len(lines)),
        tone="worse" if counts["worse"] else "better" if counts["better"] else "none",
        lines=lines,
        reports=[(f"{run}'s report", links.report(run)) for run in (a, b)],
        changes=_changes_table(comparison, index),
        diffs=[
            (change.setting, change.diff)
            for change in comparison.config_changes or []
            if change.diff is not None
        ],
    )
    missing = [run for run in (a, b) if links.report(run) is None]
    if missing:
        view.notes.append(f"{' and '.join(missing)}: {_NO_REPORT}")
    return view


def _summary_line(a: str, b: str, counts: Mapping[str, int], judges: int) -> str:
    if judges == 0:
        return f"No judge of {a} has a counterpart in {b}: nothing to compare."
    said = [f"better for {counts['better']}"] if counts["better"] else []
    said += [f"worse for {counts['worse']}"] if counts["worse"] else []
    if not said:
        return f"No evidence that {b} judged better or worse than {a}, for any of {judges} judges."
    rest = judges - counts["better"] - counts["worse"]
    tail = f"; no evidence for {rest}" if rest else ""
    return f"{b} judged {' and '.join(said)} of {judges} judges{tail}."


def _judge(headline: Headline) -> str:
    if headline.judge_a == headline.judge_b:
        return headline.judge_a
    return f"{headline.judge_a} → {headline.judge_b}"


def _line(headline: Headline, a: str, b: str) -> AnswerLine:
    levels = f"{a}: {_level(headline.trust_a)}, {b}: {_level(headline.trust_b)}"
    return AnswerLine(
        judge=_judge(headline),
        answer=headline.answer,
        figure=_figure(headline),
        trust=f"trust {levels}",
    )


def _level(level: str | None) -> str:
    return level.replace("_", " ") if level is not None else "unknown"


def _figure(headline: Headline) -> str:
    if headline.measure is None:
        return headline.reason or "nothing to measure"
    digits = 3 if headline.measure == "accuracy" else 2
    name = "accuracy" if headline.measure == "accuracy" else "mean |score − human score|"
    change = f"{name} {fmt_num(headline.value_a, digits)} → {fmt_num(headline.value_b, digits)}"
    diff = fmt_value_ci(headline.difference, headline.ci_low, headline.ci_high, digits)
    over = f"{fmt_num(headline.n_items)} items"
    diff += few_items(headline.n_items)
    if headline.measure == "score error":
        over += f" ({fmt_num(headline.n_units)} responses)"
    text = f"{change} over {over} (B − A {diff}"
    if headline.p_value is None:
        return f"{text}); {headline.reason or 'no test'}"
    test = "sign test over items" if headline.measure == "accuracy" else "paired t over items"
    text += f"; {test} p {fmt_p(headline.p_value)}"
    if (headline.n_tested or 0) > 1:
        text += f", Holm-adjusted over {headline.n_tested} judges {fmt_p(headline.p_adjusted)}"
    return text + ")"


def _changes_table(comparison: RunComparison, index: int) -> Table:
    a, b = comparison.run_a, comparison.run_b
    table = Table(f"changes{index}", f"What changed from {a} to {b}", ["Setting", a, b])
    for change in comparison.config_changes or []:
        table.add(change.setting, fmt_text(change.value_a), fmt_text(change.value_b))
    if comparison.config_skipped:
        table.note(comparison.config_skipped)
    elif not table.rows:
        table.note("The two runs' configs and own prompts are the same.")
    table.note(
        "Values as the manifests keep them (JSON; — where unset); paths.output_dir left out."
    )
    return table
