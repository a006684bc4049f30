"""Report -> formatted tables, shared by the Markdown, HTML and terminal renderers.

Each renderer draws the same ``Section`` / ``Table`` objects, so a figure shown in
summary_tables.md is character for character the one in report.html. Every number goes through
``view.format`` (the only rounding in jurybox); missing values are an em dash and the reason is kept
as a table note, never silently 0.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from jurybox.analysis.model import Metric, Skipped
from jurybox.analysis.model import Section as Node
from jurybox.reporting.view.format import (
    MISSING,
    few_items,
    fmt_ci,
    fmt_count,
    fmt_num,
    fmt_p,
    fmt_rate,
    fmt_score,
    fmt_text,
    fmt_value_ci,
)

TOTAL = "total"
_NUMERIC = re.compile(r"^[<−\-]?\d")


@dataclass(frozen=True)
class Link:
    """A cell that links to an anchor of report.html (plain text in Markdown)."""

    text: str
    href: str

    def __str__(self) -> str:
        return self.text


Cell = str | Link


@dataclass
class Table:
    """A titled table of formatted cells; ``notes`` explain dashes and methods."""

    id: str
    title: str
    columns: Sequence[str]
    rows: list[list[Cell]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, *cells: Cell) -> None:
        self.rows.append(list(cells))

    def note(self, text: str | None) -> None:
        if text and text not in self.notes:
            self.notes.append(text)

    def numeric_columns(self) -> list[bool]:
        """Per column: every cell is a number or a dash (and one at least is a number)."""
        out = []
        for index in range(len(self.columns)):
            cells = [str(row[index]) for row in self.rows if index < len(row)]
            out.append(
                bool(cells)
                and all(_NUMERIC.match(c) or c == MISSING for c in cells)
                and any(c != MISSING for c in cells)
            )
        return out


@dataclass
class Section:
    """One family of the report: what it answers, its tables, the plots that belong to it."""

    id: str
    title: str
    question: str
    status: str = "computed"
    reason: str | None = None
    tables: list[Table] = field(default_factory=list)
    plots: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    subsections_skipped: list[tuple[str, str]] = field(default_factory=list)

    def table(self, table: Table) -> Table:
        self.tables.append(table)
        return table


# --- helpers shared by the section builders ------------------------------------------------

T = TypeVar("T")
M = TypeVar("M", bound=Metric)
P = TypeVar("P", bound=Node)


def of_judge(entries: Mapping[str, T] | None, judge: str) -> T | None:
    """A judge's entry of a per-judge mapping that may be absent (a section not computed)."""
    return None if entries is None else entries.get(judge)


def present(node: T | Skipped | None) -> T | None:
    """``node`` unless it was skipped (a skipped node renders as an em dash)."""
    return None if isinstance(node, Skipped) else node


def computed(node: Node | Skipped | None) -> bool:
    """A report section that exists and was computed."""
    return isinstance(node, Node) and node.computed


def skip_reason(node: object) -> str | None:
    """The reason of a skipped section or metric, None when computed or absent."""
    if isinstance(node, Skipped | Node) and node.status == "skipped":
        return str(node.reason or "skipped")
    return None


def interval_of(metric: Metric) -> tuple[Any, Any]:
    """A metric's interval ends (None for a metric type without one)."""
    # Metric types declare ci_low/ci_high only where their statistic has an interval.
    return getattr(metric, "ci_low", None), getattr(metric, "ci_high", None)


# The fields that count what a metric rests on, most telling first: items resampled, items
# humans labelled, then units of whatever kind (Cronbach's ``n_items`` are a rubric's
# dimensions: its ``n_subjects`` come first); ``n`` last (judgments, at least the items).
_ITEM_FIELDS = ("n_clusters", "n_labelled", "n_subjects", "n_units", "n_targets", "n_items", "n")


def metric_items(metric: Metric) -> Any:
    """How many items a metric rests on (see ``_ITEM_FIELDS``)."""
    return next((v for k in _ITEM_FIELDS if (v := getattr(metric, k, None)) is not None), None)


def cell(
    table: Table, metric: Metric | Skipped | None, digits: int = 3, *, interval: bool = True
) -> str:
    """A metric's value (with its interval, and `` (<30 items)`` where it rests on fewer); a
    null value leaves its reason in the notes."""
    if metric is None:
        return MISSING
    if isinstance(metric, Skipped) or metric.value is None:
        reason = metric.reason or ("skipped" if isinstance(metric, Skipped) else None)
        table.note(f"{MISSING} {reason}" if reason else None)
        return MISSING
    few = few_items(metric_items(metric))
    if interval:
        return fmt_value_ci(metric.value, *interval_of(metric), digits) + few
    return fmt_num(metric.value, digits) + few


def rate_with_counts(table: Table, metric: M | Skipped | None, count: Callable[[M], Any]) -> str:
    """``0.870 (174/200)``: a share with the counts it comes from."""
    if metric is None or isinstance(metric, Skipped) or metric.value is None:
        return cell(table, metric)
    few = few_items(metric_items(metric))
    return f"{fmt_rate(metric.value)} ({fmt_count(count(metric), metric.n)}){few}"


def yes_no(value: Any) -> str:
    return MISSING if value is None else ("yes" if value else "no")


def label(name: str) -> str:
    return "total (overall)" if name == TOTAL else name


def ordered_dims(names: Iterable[str]) -> list[str]:
    """Dimensions in report order with the total last."""
    names = list(names)
    return [n for n in names if n != TOTAL] + [n for n in names if n == TOTAL]


def method_note(table: Table, method: str | None) -> None:
    if method:
        table.note(f"Method: {method}.")


def note_skipped_parts(
    section: Section, parts: Iterable[tuple[str, object]], prefix: str = ""
) -> None:
    """Name each skipped part (``(name, node)``) under the section's "Not computed here"."""
    for name, node in parts:
        reason = skip_reason(node)
        if reason:
            section.subsections_skipped.append((prefix + name.replace("_", " "), reason))


@dataclass(frozen=True)
class Part(Generic[P]):
    """A sub-section of a family: its report name, its node, and the builder of its tables."""

    name: str
    node: P | None
    build: Callable[[Section, P], None]


def add_parts(section: Section, parts: Sequence[Part[Any]], prefix: str = "") -> None:
    """Build each computed part with its builder, then note the skipped ones."""
    for part in parts:
        if part.node is not None and part.node.computed:
            part.build(section, part.node)
    note_skipped_parts(section, ((part.name, part.node) for part in parts), prefix)


def ordered_items(mapping: Mapping[str, T]) -> list[tuple[str, T]]:
    return [(d, mapping[d]) for d in ordered_dims(mapping)]


__all__ = [
    "TOTAL",
    "Cell",
    "Link",
    "Node",
    "Part",
    "Section",
    "Table",
    "add_parts",
    "cell",
    "computed",
    "few_items",
    "fmt_ci",
    "fmt_count",
    "fmt_num",
    "fmt_p",
    "fmt_rate",
    "fmt_score",
    "fmt_text",
    "label",
    "method_note",
    "metric_items",
    "note_skipped_parts",
    "ordered_dims",
    "ordered_items",
    "present",
    "rate_with_counts",
    "skip_reason",
    "yes_no",
]
