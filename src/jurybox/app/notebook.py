"""What ``jurybox.run`` and ``jurybox.analyze`` return: the summary and the report, each showing
itself as HTML in a notebook (``_repr_html_``, rendered by ``reporting.render.notebook``)."""

from __future__ import annotations

from dataclasses import dataclass, fields

from jurybox.analysis.model import Report
from jurybox.pipeline.summary import RunSummary
from jurybox.reporting.render.notebook import report_html, run_html


@dataclass(frozen=True)
class RunResult(RunSummary):
    """``RunSummary``, shown in a notebook as what the run wrote and produced."""

    @classmethod
    def of(cls, summary: RunSummary) -> RunResult:
        return cls(**{f.name: getattr(summary, f.name) for f in fields(summary)})

    def _repr_html_(self) -> str:
        return run_html(self)


class AnalysisResult(Report):
    """``Report``, shown in a notebook as its trust verdict: the panel line and one row per
    judge (level, reason, figures)."""

    def _repr_html_(self) -> str:
        return report_html(self)
