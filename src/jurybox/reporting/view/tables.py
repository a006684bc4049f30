"""Report dict -> formatted tables, shared by the Markdown, HTML and terminal renderers.

Each renderer draws the same ``Section`` / ``Table`` objects, so a figure shown in
summary_tables.md is character for character the one in report.html. Every number goes through
``view.format`` (the only rounding in jurybox); missing values are an em dash and the reason is kept
as a table note, never silently 0.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from jurybox.reporting.view.format import (
    MISSING,
    fmt_ci,
    fmt_count,
    fmt_estimate,
    fmt_num,
    fmt_p,
    fmt_rate,
    fmt_score,
    fmt_text,
)

Json = Mapping[str, Any]
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


def get(node: Any, *path: str) -> Any:
    """``node[path0][path1]...`` or None when any step is missing."""
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def computed(node: Any) -> TypeGuard[Json]:
    """A report node that exists and was computed (narrows ``node`` to a mapping)."""
    return isinstance(node, Mapping) and node.get("status", "computed") == "computed"


def skip_reason(node: Any) -> str | None:
    """The reason of a skipped section, None when computed or absent."""
    if isinstance(node, Mapping) and node.get("status") == "skipped":
        return str(node.get("reason") or "skipped")
    return None


def cell(table: Table, metric: Any, digits: int = 3, *, interval: bool = True) -> str:
    """A metric's value (with its interval); a null value leaves its reason in the notes."""
    if not isinstance(metric, Mapping):
        return MISSING
    if metric.get("value") is None:
        table.note(_reason_note(metric))
        return MISSING
    if interval:
        return fmt_estimate(metric, "value", digits)
    return fmt_num(metric.get("value"), digits)


def _reason_note(metric: Json) -> str | None:
    reason = metric.get("reason") or (metric.get("status") == "skipped" and "skipped")
    return f"{MISSING} {reason}" if reason else None


def rate_with_counts(table: Table, metric: Any, k_key: str, n_key: str = "n") -> str:
    """``0.870 (174/200)``: a share with the counts it comes from."""
    if not isinstance(metric, Mapping) or metric.get("value") is None:
        return cell(table, metric)
    counts = fmt_count(metric.get(k_key), metric.get(n_key))
    return f"{fmt_rate(metric['value'])} ({counts})"


def p_cell(metric: Any, key: str = "p_value") -> str:
    return fmt_p(metric.get(key)) if isinstance(metric, Mapping) else MISSING


def yes_no(value: Any) -> str:
    return MISSING if value is None else ("yes" if value else "no")


def label(name: str) -> str:
    return "total (overall)" if name == TOTAL else name


def ordered_dims(names: Iterable[str]) -> list[str]:
    """Dimensions in report order with the total last."""
    names = list(names)
    return [n for n in names if n != TOTAL] + [n for n in names if n == TOTAL]


def method_note(table: Table, metric: Any) -> None:
    if isinstance(metric, Mapping) and metric.get("method"):
        table.note(f"Method: {metric['method']}.")


def note_skipped_parts(
    section: Section, node: Any, keys: tuple[str, ...], prefix: str = ""
) -> None:
    for key in keys:
        reason = skip_reason(get(node, key))
        if reason:
            section.subsections_skipped.append((prefix + key.replace("_", " "), reason))


def add_parts(
    section: Section,
    node: Json,
    parts: Sequence[tuple[str, Callable[[Section, Json], None]]],
    prefix: str = "",
) -> None:
    """Build each computed part of ``node`` with its builder, then note the skipped ones."""
    for key, build in parts:
        part = node.get(key)
        if computed(part):
            build(section, part)
    note_skipped_parts(section, node, tuple(key for key, _ in parts), prefix)


def ordered_items(mapping: Json) -> list[tuple[str, Any]]:
    return [(d, mapping[d]) for d in ordered_dims(mapping)]


__all__ = [
    "TOTAL",
    "Cell",
    "Link",
    "Section",
    "Table",
    "add_parts",
    "cell",
    "computed",
    "fmt_ci",
    "fmt_count",
    "fmt_num",
    "fmt_p",
    "fmt_rate",
    "fmt_score",
    "fmt_text",
    "get",
    "label",
    "method_note",
    "note_skipped_parts",
    "ordered_dims",
    "ordered_items",
    "p_cell",
    "rate_with_counts",
    "skip_reason",
    "yes_no",
]
