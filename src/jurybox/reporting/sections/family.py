"""What a report family's section is: its report key, title, question, plots and builder.

Each family module declares one ``Family``; ``sections.FAMILIES`` lists them once, in reading
order, and every renderer walks that list.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from jurybox.reporting.view.tables import Json, Section, skip_reason


@dataclass(frozen=True)
class Family:
    """One family of the report and how its section is built.

    ``build`` fills the section from the family's report node; it runs only when the family
    was computed (a skipped family renders its reason instead).
    """

    key: str
    title: str
    question: str
    build: Callable[[Section, Json], None]
    plots: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        """The HTML id of the section ("accuracy_vs_gold" -> "accuracy")."""
        return self.key.replace("_vs_gold", "")


def family_section(report: Json, family: Family) -> Section:
    """The section of ``family``: built when computed, marked skipped (with the reason) when
    it was skipped or is absent from the report."""
    node = report.get(family.key)
    section = Section(id=family.id, title=family.title, question=family.question)
    section.plots.extend(family.plots)
    reason = skip_reason(node) if node is not None else "not in this report"
    if reason is not None:
        section.status, section.reason = "skipped", reason
        return section
    family.build(section, node or {})
    return section
