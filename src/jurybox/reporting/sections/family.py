"""What a report family's section is: its report key, title, question, plots and builder.

Each family module declares one ``Family``; ``sections.FAMILIES`` lists them once, in reading
order, and every renderer walks that list. A new statistic of a family is one field on its
model (``jurybox.analysis.model``) and one ``Family.row`` declaration here: the row is shown in
the family's "More figures" table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from jurybox.analysis.model import Metric, Report, Skipped
from jurybox.reporting.view.tables import Node, Section, Table, cell, skip_reason

N = TypeVar("N", bound=Node)


@dataclass(frozen=True)
class Row(Generic[N]):
    """One declared figure of a family: a title and how to read its metric from the model."""

    title: str
    metric: Callable[[N], Metric | Skipped | None]
    digits: int = 3


@dataclass(frozen=True)
class Family(Generic[N]):
    """One family of the report and how its section is built.

    ``node`` reads the family from the report; ``build`` fills the section from it and runs only
    when the family was computed (a skipped family renders its reason instead).
    """

    key: str
    title: str
    question: str
    node: Callable[[Report], N]
    build: Callable[[Section, N], None]
    plots: tuple[str, ...] = ()
    rows: list[Row[N]] = field(default_factory=list)

    @property
    def id(self) -> str:
        """The HTML id of the section ("accuracy_vs_gold" -> "accuracy")."""
        return self.key.replace("_vs_gold", "")

    def row(
        self, title: str, metric: Callable[[N], Metric | Skipped | None], digits: int = 3
    ) -> Row[N]:
        """Declare one more figure of this family (shown after the family's own tables)."""
        declared = Row(title, metric, digits)
        self.rows.append(declared)
        return declared

    def section(self, report: Report) -> Section:
        """The section: built when computed, marked skipped (with the reason) when not."""
        node = self.node(report)
        section = Section(id=self.id, title=self.title, question=self.question)
        section.plots.extend(self.plots)
        reason = skip_reason(node)
        if reason is not None:
            section.status, section.reason = "skipped", reason
            return section
        self.build(section, node)
        if self.rows:
            table = section.table(Table(f"{self.id}-more", "More figures", ("Figure", "Value")))
            for declared in self.rows:
                table.add(declared.title, cell(table, declared.metric(node), declared.digits))
        return section
